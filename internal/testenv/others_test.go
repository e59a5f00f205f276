package testenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

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
