package topo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// victimNamespace makes a namespace nsperf did not create, with a process in it, and removes
// both when the test ends.
func victimNamespace(t *testing.T, name string) (pid int) {
	t.Helper()
	testenv.NewNetNS(t, name)
	sleeper := exec.Command("ip", "netns", "exec", name, "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sleeper.Wait(); close(done) }()
	t.Cleanup(func() { sleeper.Process.Kill(); <-done })
	return sleeper.Process.Pid
}
func alive(pid int) bool { return runstate.Running(pid) } // exists and is not a zombie

func writeStateFile(t *testing.T, id RunID, content string) {
	t.Helper()
	if err := runstate.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runstate.Path(id), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(runstate.Path(id)); os.Remove(runstate.LockPath(id)) })
}

// TestCleanupLeavesWhatStateFilesClaim: forged state files name a namespace nsperf never
// made, a path out of /run/netns, a directory, and a state file is a symlink; cleanup --all
// and down touch none of it, and say why.
func TestCleanupLeavesWhatStateFilesClaim(t *testing.T) {
	testenv.RequireRoot(t)
	victim := fmt.Sprintf("victim%04x", os.Getpid()&0xffff)
	pid := victimNamespace(t, victim)
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious")
	os.WriteFile(precious, []byte("keep me\n"), 0o644)

	writeStateFile(t, "nsp0f01", fmt.Sprintf(`{"run_id":"nsp0f01","pid":0,"namespaces":[%q],"dirs":[%q]}`, victim, dir))
	writeStateFile(t, "nsp0f02", fmt.Sprintf(`{"run_id":"nsp0f02","pid":0,"namespaces":["../../proc/%d/ns/net"]}`, pid))
	writeStateFile(t, "nsp0f03", `{"run_id":"nsp0f03","pid":0,"namespaces":["nsp0f03-x"],"dirs":["/"]}`)
	writeStateFile(t, "nsp0f04", "this is not json")
	// A symlinked state file whose target looks valid and names the victim's namespace.
	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte(`{"run_id":"nsp0f05","pid":0,"namespaces":["nsp0f05-client"]}`), 0o644)
	os.Remove(runstate.Path("nsp0f05"))
	if err := os.Symlink(target, runstate.Path("nsp0f05")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(runstate.Path("nsp0f05")); os.Remove(runstate.LockPath("nsp0f05")) })

	left, err := FindLeftovers(true)
	if err != nil {
		t.Fatal(err)
	}
	problems := 0
	for _, l := range left {
		if !strings.HasPrefix(string(l.RunID), "nsp0f0") {
			continue
		}
		var sfe *runstate.StateFileError
		if !errors.As(l.Problem, &sfe) {
			t.Errorf("run %s: listed for removal (%s), want a state file problem", l.RunID, l.Reason)
		}
		if _, err := l.Remove(); err == nil {
			t.Errorf("run %s: removing a forged run succeeded", l.RunID)
		}
		problems++
	}
	if problems != 5 {
		t.Errorf("%d state file problems reported, want 5", problems)
	}
	if o, err := runstate.Read("nsp0f05"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("symlinked state file read: %+v, %v", o, err)
	}
	if !exists(filepath.Join(runstate.NetnsDir, victim)) || !alive(pid) {
		t.Error("the victim namespace or its process is gone")
	}
	if !exists(precious) || !exists(target) {
		t.Error("a file a state file named was removed")
	}
}

// TestCleanupLeavesUnmarkedNamespace: a namespace named like a run's, without nsperf's marker
// and without a state file, is the user's: cleanup lists it and leaves it alone.
func TestCleanupLeavesUnmarkedNamespace(t *testing.T) {
	testenv.RequireRoot(t)
	name := "nsp0aaa-mine"
	pid := victimNamespace(t, name)
	left, err := FindLeftovers(true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range left {
		if l.RunID != "nsp0aaa" {
			continue
		}
		found = true
		rm, err := l.Remove()
		if err != nil || len(rm.Removed) != 0 || len(rm.LeftAlone) != 1 || !strings.Contains(rm.LeftAlone[0], "marker") {
			t.Errorf("Remove = %+v, %v; want %s left alone for want of the marker", rm, err, name)
		}
	}
	if !found {
		t.Errorf("%s not listed", name)
	}
	if !exists(filepath.Join(runstate.NetnsDir, name)) || !alive(pid) {
		t.Error("the unmarked namespace or its process is gone")
	}
}

// TestCleanupSparesLiveRun: while a run is alive (its lock held), cleanup neither lists nor
// removes it, with or without its state file; down refuses it.
func TestCleanupSparesLiveRun(t *testing.T) {
	_, l := buildDefault(t)
	t.Cleanup(func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
	})
	aside := runstate.Path(l.ID) + ".aside"
	for _, withStateFile := range []bool{true, false} {
		if !withStateFile { // as in the moment before a build records its first namespace
			os.Rename(runstate.Path(l.ID), aside)
		}
		left, err := FindLeftovers(true)
		if err != nil {
			t.Fatal(err)
		}
		for _, lo := range left {
			if lo.RunID == l.ID {
				t.Errorf("state file %v: live run listed as a leftover (%s)", withStateFile, lo.Reason)
			}
		}
	}
	os.Rename(aside, runstate.Path(l.ID))
	if _, err := Down(l.owner); err == nil || !strings.Contains(err.Error(), "in progress") {
		t.Errorf("Down of a live run: %v", err)
	}
	for _, ns := range l.owner.Namespaces {
		if !runstate.IsNamespaceMount(filepath.Join(runstate.NetnsDir, ns)) {
			t.Errorf("namespace %s of the live run is gone", ns)
		}
	}
}

// TestCleanupHalfDeletedNamespace: a deletion killed between unmount and unlink leaves an empty
// file in /run/netns; cleanup removes it and goes on.
func TestCleanupHalfDeletedNamespace(t *testing.T) {
	_, l := buildDefault(t)
	l.Keep() // as if its process had been killed
	half := filepath.Join(runstate.NetnsDir, l.owner.Namespaces[0])
	if err := unix.Unmount(half, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	if !exists(half) || runstate.IsNamespaceMount(half) {
		t.Fatal("the unmounted namespace file should remain, unmounted")
	}
	removeLeftover(t, l.ID)
	if exists(half) {
		t.Error("the unmounted namespace file is still there")
	}
}

// TestStaleProcessIDMeansNothing: a state file whose process id now belongs to another
// process (here: init) does not keep a dead run alive.
func TestStaleProcessIDMeansNothing(t *testing.T) {
	_, l := buildDefault(t)
	l.Keep()
	l.owner.Kept = false
	l.owner.PID = 1
	if err := l.owner.Save(); err != nil {
		t.Fatal(err)
	}
	removeLeftover(t, l.ID)
}

func removeLeftover(t *testing.T, id RunID) {
	t.Helper()
	left, err := FindLeftovers(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, lo := range left {
		if lo.RunID == id {
			if _, err := lo.Remove(); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("run %s not listed as a leftover: %+v", id, left)
}

// TestOrphanLockFile: a run's lock file with nothing else of its run (a run killed between
// claiming its id and recording it) is a leftover once it is old, and goes; a new one (a run
// about to lock it) and a held one (a live run) stay.
func TestOrphanLockFile(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	if err := runstate.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	lockFile := func(age time.Duration) RunID {
		for {
			id := NewRunID()
			f, err := os.OpenFile(runstate.LockPath(id), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue // another run's id
			}
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			t.Cleanup(func() { os.Remove(runstate.LockPath(id)) })
			then := time.Now().Add(-age)
			if err := os.Chtimes(runstate.LockPath(id), then, then); err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	old, fresh, held := lockFile(2*staleLockAge), lockFile(0), lockFile(2*staleLockAge)
	f, err := os.OpenFile(runstate.LockPath(held), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	left, err := FindLeftovers(false)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[RunID]Leftover{}
	for _, l := range left {
		listed[l.RunID] = l
	}
	if _, ok := listed[fresh]; ok {
		t.Errorf("a new lock file (a run about to lock it) listed as a leftover")
	}
	if _, ok := listed[held]; ok {
		t.Errorf("a held lock file (a live run) listed as a leftover")
	}
	l, ok := listed[old]
	if !ok || l.Reason != lockOnly {
		t.Fatalf("the old lock file of run %s: %+v, want a leftover (%s)", old, l, lockOnly)
	}
	rm, err := l.Remove()
	if err != nil || !slices.Contains(rm.Removed, runstate.LockPath(old)) {
		t.Errorf("remove: %+v %v", rm, err)
	}
	if exists(runstate.LockPath(old)) {
		t.Error("the old lock file is still there")
	}
	if !exists(runstate.LockPath(fresh)) || !exists(runstate.LockPath(held)) {
		t.Error("cleanup removed a new or a held lock file")
	}
}
