package runstate_test

// The tests that need root, in the external test package: testenv asks runstate which runs
// are alive, so runstate's own package cannot import it.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// TestStateFileWriteReplacesSymlink: a symlink planted at a state file's path is replaced when
// the state file is written, never followed.
func TestStateFileWriteReplacesSymlink(t *testing.T) {
	testenv.RequireRoot(t)
	o, err := runstate.Claim(plan.NewRunID(), "test", false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	os.Remove(runstate.Path(o.RunID))
	os.Symlink(victim, runstate.Path(o.RunID))
	if err := o.Save(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me\n" {
		t.Errorf("the symlink's target was written: %q", data)
	}
	if st, err := os.Lstat(runstate.Path(o.RunID)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("state file is not a regular file: %v", err)
	}
	// Who made the run, for a test beside it to tell its own leftovers from others'.
	if read, err := runstate.Read(o.RunID); err != nil || len(read.MadeBy) == 0 || read.MadeBy[0].PID != os.Getpid() {
		t.Errorf("the state file does not record this process as the run's maker: %+v %v", read, err)
	}
}

// BenchmarkProcessSweep is the teardown's one pass over /proc that finds the processes in a
// run's namespaces (none here: the cost of looking).
func BenchmarkProcessSweep(b *testing.B) {
	testenv.RequireRoot(b)
	targets := map[[2]uint64]bool{{1, 1}: true}
	for b.Loop() {
		if pids := runstate.ProcessesIn(targets); len(pids) != 0 {
			b.Fatal(pids)
		}
	}
}

// TestLockMeasuringWaitsQuietly: a caller without a progress writer that finds the measuring
// lock held (another nsperf run measuring beside it) waits without a word, and stops at its
// context's end; it panicked writing the wait to nil.
func TestLockMeasuringWaitsQuietly(t *testing.T) {
	testenv.RequireRoot(t)
	held, _, err := runstate.LockMeasuring(context.Background(), "holder", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := runstate.LockMeasuring(ctx, "waiter", false, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting without progress: %v", err)
	}
}

// TestClaimWhileOthersLook: a run claiming its id while others look whether runs are alive
// (a cleanup beside it, a test checking what is left: each holds a lock file shared for a
// moment) gets its id; the look used to fail the claim with "resource temporarily
// unavailable".
func TestClaimWhileOthersLook(t *testing.T) {
	testenv.RequireRoot(t)
	ids := make(chan plan.RunID, 1)
	stop := make(chan struct{})
	looked := make(chan struct{})
	go func() {
		defer close(looked)
		var id plan.RunID
		for {
			select {
			case <-stop:
				return
			case id = <-ids:
			default:
			}
			if id != "" {
				runstate.Alive(id)
			}
		}
	}()
	for i := 0; i < 300; i++ {
		id := plan.NewRunID()
		ids <- id
		o, err := runstate.Claim(id, "test", false)
		if errors.Is(err, fs.ErrExist) {
			continue // the id of a run beside the test: taken, as Claim says
		}
		if err != nil {
			t.Errorf("claim %d: %v", i, err)
			continue
		}
		o.Release()
	}
	close(stop)
	<-looked
}
