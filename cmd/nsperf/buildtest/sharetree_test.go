package buildtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/clitest"
	"github.com/nsperf/nsperf/vm"
)

// TestWholeKernelTestsShareATree: the whole-kernel tests' scenario (testdata/tcp-tso.yaml)
// asks for the minimal kernel config of the scenario reproduce chooses for TestReproduceRevert's
// patch, so that on a fresh machine the three tests that build whole kernels share one tree and
// build one base kernel cold, not two (a cold one took 519 s here, the second, with ccache
// warm, 287 s).
func TestWholeKernelTestsShareATree(t *testing.T) {
	file := clitest.Seeds + "tcp-backlog-ack-defer.patch"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := claims.Read(file, data)
	if err != nil {
		t.Fatal(err)
	}
	series, err := patches.ReadMessages(file, data)
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	name, _, err := reproduce.Choose(rep, series, shipped)
	if err != nil {
		t.Fatal(err)
	}
	var chosen *scenarios.Scenario
	for _, s := range shipped {
		if s.Name == name {
			chosen = s
		}
	}
	tso, err := scenarios.Load(wholeScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	onA, offA := vm.MinimalFragment([]*scenarios.Scenario{chosen})
	onB, offB := vm.MinimalFragment([]*scenarios.Scenario{tso})
	if fmt.Sprint(onA, offA) != fmt.Sprint(onB, offB) {
		t.Errorf("the minimal configs differ: %s (reproduce's choice) asks for\n%v\nwithout %v;\ntcp-tso.yaml for\n%v\nwithout %v", name, onA, offA, onB, offB)
	}
}
