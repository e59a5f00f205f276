package testenv

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// TestLeftoversOfLiveRunsAreOthers: what a run alive beside a test made (its lock held: a
// user's run, another package's build) is not the test's leftover; once that run has ended,
// what it left is.
func TestLeftoversOfLiveRunsAreOthers(t *testing.T) {
	RequireRoot(t)
	var id plan.RunID
	for {
		id = plan.RunID(fmt.Sprintf("nsp%04x", rand.IntN(1<<16)))
		if _, err := os.Lstat(runstate.LockPath(id)); os.IsNotExist(err) {
			break
		}
	}
	lock, alive, err := runstate.LockRun(id)
	if err != nil || alive {
		t.Fatalf("lock of %s: %v (alive %v)", id, err, alive)
	}
	state := runstate.Path(id)
	t.Cleanup(func() { os.Remove(state); os.Remove(runstate.LockPath(id)) })
	for what, item := range map[string]string{"state files": state, "network namespaces": string(id) + "-client", "links in the root namespace": string(id) + "-br"} {
		if !ofOthers(what, item, runstate.Dir) {
			t.Errorf("%s %s of a live run counted as the test's", what, item)
		}
	}
	if ofOthers("state files", filepath.Join(runstate.Dir, "vm", "vm-nosuchguest"), runstate.Dir) || ofOthers("processes", "999999999 iperf3", runstate.Dir) {
		t.Error("a guest or process of nobody counted as another's")
	}
	runstate.UnlockRun(id, lock, false)
	if ofOthers("state files", state, runstate.Dir) {
		t.Errorf("%s of an ended run is not the test's", state)
	}
}

// TestLeftoversMadeByOthers: what other nsperf work on the machine left when it was killed (a
// run's state file, a guest's directory, their locks not held) is not this test's: its record
// of who made it names processes that are not this one nor its children. What this process
// made, or what records no maker, is.
func TestLeftoversMadeByOthers(t *testing.T) {
	RequireRoot(t)
	other := runstate.Lineage{{PID: 1, Start: startOf(t, 1)}}
	mine := runstate.OwnLineage()
	var id plan.RunID
	for {
		id = plan.RunID(fmt.Sprintf("nsp%04x", rand.IntN(1<<16)))
		if _, err := os.Lstat(runstate.LockPath(id)); os.IsNotExist(err) {
			break
		}
	}
	state := runstate.Path(id)
	t.Cleanup(func() { os.Remove(state) })
	guest := filepath.Join(runstate.Dir, "vm", fmt.Sprintf("vm-lineagetest%04x", rand.IntN(1<<16)))
	if err := os.MkdirAll(guest, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(guest) })
	for _, c := range []struct {
		name   string
		madeBy runstate.Lineage
		others bool
	}{
		{"another process's", other, true},
		{"this process's", mine, false},
		{"unknown maker's", nil, false},
	} {
		data, _ := json.Marshal(runstate.StateFile{RunID: id, Scenario: "test", MadeBy: c.madeBy})
		os.WriteFile(state, data, 0o600)
		lock, _ := json.Marshal(map[string]any{"made_by": c.madeBy})
		os.WriteFile(filepath.Join(guest, "lock"), lock, 0o600)
		for what, item := range map[string]string{"state files": state, "network namespaces": string(id) + "-client", "guest directory": guest} {
			kind := what
			if what == "guest directory" {
				kind = "state files"
			}
			if got := ofOthers(kind, item, runstate.Dir); got != c.others {
				t.Errorf("%s %s of a killed run, %s: counted as another's %v, want %v", what, item, c.name, got, c.others)
			}
		}
	}
}

// startOf is a process's start time, as a lineage records it.
func startOf(t *testing.T, pid int) uint64 {
	st, ok := procstat.ReadPID(pid)
	if !ok {
		t.Fatalf("no process %d", pid)
	}
	return st.StartTime()
}

// TestPostgresOfOthers: a PostgreSQL process whose data directory another test process made
// (the history tests' server while a guest test checks for leftovers) is not this test's; one
// in a data directory this process registered is.
func TestPostgresOfOthers(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "postgres") // comm "postgres"
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip("no /bin/sleep")
	}
	if err := os.WriteFile(bin, sleep, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	cmd := exec.Command(bin, "30")
	cmd.Dir = data
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := fmt.Sprint(cmd.Process.Pid)
	for i := 0; i < 100; i++ { // until it has exec'd
		if comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm")); string(comm) == "postgres\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !postgresOfOthers(pid) {
		t.Error("a postgres in a data directory this process did not make is this test's")
	}
	ownPostgres.Store(data, true)
	defer ownPostgres.Delete(data)
	if postgresOfOthers(pid) {
		t.Error("a postgres in this process's data directory is another's")
	}
}

// TestFixturesAreOthers: a killed run's guest that a test makes on purpose, and holds, is not
// the leftover of a test beside it; once that test has ended, the same directory is.
func TestFixturesAreOthers(t *testing.T) {
	RequireRoot(t)
	name := fmt.Sprintf("vm-fixturetest%04x", rand.IntN(1<<16))
	dir := filepath.Join(runstate.Dir, "vm", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if ofOthers("state files", dir, runstate.Dir) || Fixture(name) {
		t.Fatal("an unlocked guest directory nobody holds counted as another's")
	}
	t.Run("held", func(t *testing.T) {
		HoldFixture(t, name)
		if !ofOthers("state files", dir, runstate.Dir) || !Fixture(name) {
			t.Error("a guest another test makes on purpose counted as this test's leftover")
		}
	})
	if ofOthers("state files", dir, runstate.Dir) || Fixture(name) {
		t.Error("the fixture is still held after its test ended")
	}
}
