package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nsperf/nsperf/topo/runstate"
)

// While runs make and remove their directories beside the guests, whoever looks at vm-*
// (cleanup, a test beside them checking that nothing is left) sees each one with its lock
// held: never just made and not yet locked, never half removed with the lock file gone.
func TestGuestDirIsLockedWhileNamed(t *testing.T) {
	parent := t.TempDir()
	var done atomic.Bool
	seen := make(chan []string, 1)
	go func() {
		var bad []string
		for !done.Load() {
			dirs, _ := filepath.Glob(filepath.Join(parent, "vm-*"))
			for _, d := range dirs {
				if held, missing := runstate.LockHeld(filepath.Join(d, "lock")); !held || missing {
					if _, err := os.Stat(d); err == nil { // still there when looked at again
						bad = append(bad, fmt.Sprintf("%s (held %v, lock missing %v)", filepath.Base(d), held, missing))
					}
				}
			}
		}
		seen <- bad
	}()
	for i := 0; i < 20; i++ {
		dir, lock, err := makeLockedDir(parent, "modules")
		if err != nil {
			done.Store(true)
			t.Fatal(err)
		}
		// A tree whose removal takes a while, like an installed module tree.
		for j := 0; j < 300; j++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.ko", j)), nil, 0o644)
		}
		if err := removeLockedDir(dir, lock); err != nil {
			t.Error(err)
		}
	}
	done.Store(true)
	if bad := <-seen; len(bad) > 0 {
		t.Errorf("a live run's directory was seen unlocked %d times, first %s", len(bad), bad[0])
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left: %v", entries)
	}
}

// A run killed between making its directory and naming it, or while removing it, leaves a
// hidden directory nobody holds: Leftovers lists it, for cleanup to remove, and says what it
// was; a live run's hidden directory is not listed.
func TestHiddenGuestDirOfAKilledRun(t *testing.T) {
	parent := t.TempDir()
	killed := filepath.Join(parent, removingPrefix+"vm-modules-123")
	os.MkdirAll(killed, 0o755)
	os.WriteFile(filepath.Join(killed, "lock"), nil, 0o600)
	live, lock, err := makeLockedDir(parent, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	hiddenLive := filepath.Join(parent, removingPrefix+filepath.Base(live))
	if err := os.Rename(live, hiddenLive); err != nil { // as removeLockedDir does first
		t.Fatal(err)
	}
	all, err := leftoversIn(parent)
	if err != nil {
		t.Fatal(err)
	}
	var left []Leftover
	for _, l := range all {
		if l.Dir != "" { // guests of others running beside the test are QEMU processes only
			left = append(left, l)
		}
	}
	if len(left) != 1 || left[0].Dir != killed || left[0].Kind() != "modules installed for a guest" {
		t.Fatalf("leftovers %v, want only %s", left, killed)
	}
	if err := left[0].Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("%s not removed: %v", killed, err)
	}
}

// TestRenamedAwayIsNoLeftover: a directory listed and then renamed away by its run (to be
// removed) before its lock is looked at is no leftover: it has no lock file and no time to go
// by, and looked like a killed run's to a check beside it. One that is there, without a lock,
// an hour old, is.
func TestRenamedAwayIsNoLeftover(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "vm-modules-1")
	if !gone(dir) {
		t.Fatal("a directory that is not there is not gone")
	}
	os.MkdirAll(dir, 0o755)
	if gone(dir) {
		t.Error("a directory that is there is gone")
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	all, _ := leftoversIn(parent)
	if !slices.ContainsFunc(all, func(l Leftover) bool { return l.Dir == dir }) {
		t.Errorf("a directory without a lock an hour old: not among %v", all)
	}
}

// TestLockedDirRecordsItsMaker: a guest's lock file says which process made it (this one, and
// its ancestors), so that once the run is killed, a test beside it, or a reader, can tell whose
// leftover it is.
func TestLockedDirRecordsItsMaker(t *testing.T) {
	dir, lock, err := makeLockedDir(t.TempDir(), "modules")
	if err != nil {
		t.Fatal(err)
	}
	defer removeLockedDir(dir, lock)
	made := runstate.ReadLineage(filepath.Join(dir, "lock"))
	if len(made) == 0 || made[0].PID != os.Getpid() || !made.Includes(runstate.OwnLineage()[0]) {
		t.Errorf("the lock records %v, want this process first", made)
	}
	if held, missing := runstate.LockHeld(filepath.Join(dir, "lock")); !held || missing {
		t.Errorf("writing the record let the lock go (held %v, missing %v)", held, missing)
	}
}
