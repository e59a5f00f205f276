package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestPreferFree: the CPUs other guests are pinned to come first, the most taken first, so
// that the plans, which take from the end, choose the free ones; among equals the order stays
// (the last CPUs last, as before).
func TestPreferFree(t *testing.T) {
	for _, tc := range []struct {
		allowed []int
		busy    map[int]int
		want    []int
	}{
		{[]int{0, 1}, nil, []int{0, 1}},
		{[]int{0, 1}, map[int]int{1: 1}, []int{1, 0}},
		{[]int{0, 1, 2, 3}, map[int]int{3: 2, 2: 1}, []int{3, 2, 0, 1}},
		{[]int{0, 1}, map[int]int{0: 1, 1: 1}, []int{0, 1}},
		{[]int{0, 1}, map[int]int{7: 3}, []int{0, 1}},
	} {
		if got := preferFree(tc.allowed, tc.busy); !slices.Equal(got, tc.want) {
			t.Errorf("preferFree(%v, %v) = %v, want %v", tc.allowed, tc.busy, got, tc.want)
		}
	}
	// Two runs on a host of two CPUs: the second run's guest is pinned where the first's is not.
	first := PlanPinning(preferFree([]int{0, 1}, nil), 1)
	second := PlanPinning(preferFree([]int{0, 1}, map[int]int{first.VCPUs[0][0]: 1}), 1)
	if first.VCPUs[0][0] == second.VCPUs[0][0] {
		t.Errorf("both guests on CPU %d", first.VCPUs[0][0])
	}
}

// TestBusyCPUs: a live guest's directory (its lock held) counts its recorded vCPUs' CPUs; a
// dead one's (the lock free) does not. CPU numbers no host has keep the count apart from the
// guests of other runs beside the test.
func TestBusyCPUs(t *testing.T) {
	testenv.RequireRoot(t)
	if err := os.MkdirAll(Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	mk := func(cpus string, hold bool) {
		// Held as a fixture first: the leftover checks of guest tests beside this one, in
		// other lanes, leave the dead guest's directory alone (testenv.HoldFixture).
		name := fmt.Sprintf("vm-busytest-%d-%s", os.Getpid(), cpus)
		testenv.HoldFixture(t, name)
		dir := filepath.Join(Dir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lock.Close() })
		if hold {
			if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, vcpusFile), []byte(cpus+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("4001", true)
	mk("4002", false) // the lock file is there, and free: a run that ended
	busy := busyCPUs()
	if busy[4001] != 1 || busy[4002] != 0 {
		t.Errorf("busy: 4001 -> %d (want 1), 4002 -> %d (want 0)", busy[4001], busy[4002])
	}
}
