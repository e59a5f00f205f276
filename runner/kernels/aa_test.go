package kernels

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/fixture"
	"github.com/nsperf/nsperf/vm"
)

// aaResult is the merged result of an A/A of the pair scenario in virtual time: one image in
// two guests, B's "off" 0.3% below A's.
func aaResult(t *testing.T) *results.Result {
	t.Helper()
	off := []float64{2.630, 2.628, 2.633, 2.625, 2.631}
	offB := []float64{2.622, 2.620, 2.625, 2.618, 2.623}
	on := []float64{3.148, 3.150, 3.146, 3.152, 3.149}
	rs := []*results.Result{
		fixture.PairResult("nsp00a1", "A", "6.12.118", fixture.PairScenario, map[string][]float64{"off": off, "on": on}),
		fixture.PairResult("nsp00b1", "B", "6.12.118", fixture.PairScenario, map[string][]float64{"off": offB, "on": on}),
	}
	for _, r := range rs {
		r.Environment.VM = &results.VMInfo{Accel: "tcg", Clock: vm.ClockVirtual, Icount: vm.IcountOptions, QEMU: "7.2.22", CPU: vm.TCGCPUModel,
			Image: results.KernelImage{SHA256: "aaaa", Release: "6.12.118"}}
	}
	ab, err := compare.Kernels(rs[0], rs[1], "nsp0aa1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ab
}

// TestVirtualFloorFollowsTheAA: a guest in virtual time decides with VirtualMinChange until an
// A/A of the scenario is kept, then with that A/A's largest move, saying so; a floor set on
// the command line or in the scenario, or the wall clock, is left as it is; another run length
// is another A/A; an unreadable A/A file falls back and says why.
func TestVirtualFloorFollowsTheAA(t *testing.T) {
	dir := t.TempDir()
	plan := func(s *scenarios.Scenario, o scenarios.Overrides) Plan {
		return Plan{Scenario: s, ScenarioArg: "pair", Overrides: o, AADir: dir, VM: vm.Options{Kernels: []vm.Kernel{{Label: "A"}, {Label: "B"}}}}
	}
	short := scenarios.Overrides{Duration: 2 * time.Second, Omit: -1}
	p := plan(pairScenario(t), short)

	req := p.guestRequest(0, vm.ClockVirtual)
	if req.Run.MinChange == nil || *req.Run.MinChange != results.VirtualMinChange || !strings.Contains(req.Run.Policy.MinChangeFrom, "no A/A of pair") {
		t.Fatalf("before any A/A: min change %v, from %q", req.Run.MinChange, req.Run.Policy.MinChangeFrom)
	}
	if wall := p.guestRequest(0, vm.ClockWall); wall.Run.MinChange != nil || wall.Run.Policy.MinChangeFrom != "" {
		t.Errorf("on the wall clock the floor changed: %v %q", wall.Run.MinChange, wall.Run.Policy.MinChangeFrom)
	}

	var progress bytes.Buffer
	p.keepAA(aaResult(t), &progress)
	if !strings.Contains(progress.String(), "later runs of pair in virtual time decide each series with its largest shift over the A/A on record: tcp4 throughput off 0.31%, tcp4 throughput on 0.1%") {
		t.Errorf("progress: %s", progress.String())
	}
	req = p.guestRequest(1, vm.ClockVirtual)
	if req.Run.MinChange == nil || *req.Run.MinChange < 0.0029 || *req.Run.MinChange > 0.0031 || req.Run.Policy.AA == nil || !strings.Contains(req.Run.Policy.MinChangeFrom, "an A/A of pair (run nsp0aa1") {
		t.Fatalf("after the A/A: min change %v, from %q", req.Run.MinChange, req.Run.Policy.MinChangeFrom)
	}
	// Each series has its own floor: "on" did not shift (the lowest floor), "off" 0.30%.
	if pol := req.Run.Policy; pol.MinChangeOf("tcp4", results.Throughput, "on") != results.MinAAFloor || pol.MinChangeOf("tcp4", results.Throughput, "off") != 0.0031 || pol.MinChangeOf("tcp4", "cpu_sender", "off") != 0.0031 {
		t.Errorf("series floors %+v", pol.Floors)
	}

	// The guest decides with what the host sent, and its result says where it came from.
	guest, err := req.Plan(t.Context(), pairScenario(t), &recordingMachine{})
	if err != nil {
		t.Fatal(err)
	}
	if pol := runner.ResolvePolicy(guest.Scenario, guest.Run); pol.MinChange != *req.Run.MinChange || !strings.Contains(pol.MinChangeFrom, "an A/A of pair") {
		t.Errorf("the guest's policy %+v", pol)
	}

	if req := plan(pairScenario(t), scenarios.Overrides{Duration: 10 * time.Second, Omit: -1}).guestRequest(0, vm.ClockVirtual); *req.Run.MinChange != results.VirtualMinChange {
		t.Errorf("another run length took the 2 s A/A: %g", *req.Run.MinChange)
	}
	own := 0.01
	given := plan(pairScenario(t), short)
	given.Run.MinChange = &own
	if req := given.guestRequest(0, vm.ClockVirtual); *req.Run.MinChange != own || req.Run.Policy.AA != nil {
		t.Errorf("--min-change 1%% became %g", *req.Run.MinChange)
	}
	set := pairScenario(t)
	pct := scenarios.Percent(0.03)
	set.MinChange = &pct
	if req := plan(set, short).guestRequest(0, vm.ClockVirtual); req.Run.MinChange != nil {
		t.Errorf("the scenario's min_change was replaced by %g", *req.Run.MinChange)
	}

	if err := os.WriteFile(p.aaFile(), []byte(`{"aas": [{"moves": [{"change": "x"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	req = p.guestRequest(0, vm.ClockVirtual)
	if *req.Run.MinChange != results.VirtualMinChange || !strings.Contains(req.Run.Policy.MinChangeFrom, "not usable") {
		t.Errorf("a broken A/A file: %g, %q", *req.Run.MinChange, req.Run.Policy.MinChangeFrom)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || filepath.Ext(entries[0].Name()) != ".json" {
		t.Errorf("the A/A directory holds %v", entries)
	}
}

// TestAAsKeptAndLargestTaken: each A/A of a scenario is added to those on record, the latest
// five kept; the floor is the largest shift over them, and the table says of how many.
func TestAAsKeptAndLargestTaken(t *testing.T) {
	dir := t.TempDir()
	p := Plan{Scenario: pairScenario(t), ScenarioArg: "pair", AADir: dir, VM: vm.Options{Kernels: []vm.Kernel{{Label: "A"}, {Label: "B"}}}}
	first := aaResult(t) // shift 0.30%
	var progress bytes.Buffer
	p.keepAA(first, &progress)
	// A second A/A whose boots landed closer: the first one's shift stays the floor.
	closer := aaResult(t)
	for i := range closer.Cases[0].Samples {
		if s := &closer.Cases[0].Samples[i]; s.State == "off@B" {
			s.Metrics[0].Value *= 1.002
		}
	}
	closer.RunID = "nsp0aa2"
	p.keepAA(closer, &progress)
	req := p.guestRequest(0, vm.ClockVirtual)
	if *req.Run.MinChange != 0.0031 || !strings.Contains(req.Run.Policy.MinChangeFrom, "(run nsp0aa1") || !strings.Contains(req.Run.Policy.MinChangeFrom, "its largest shift over the 2 A/As on record: tcp4 throughput off 0.31%") {
		t.Errorf("floor %g from %q, want the first A/A's 0.31%% of 2", *req.Run.MinChange, req.Run.Policy.MinChangeFrom)
	}
	for range keptAAs {
		p.keepAA(closer, &progress)
	}
	aas, err := readAAs(p.aaFile())
	if err != nil || len(aas) != keptAAs {
		t.Fatalf("%d A/As kept (%v), want %d", len(aas), err, keptAAs)
	}
	if req := p.guestRequest(0, vm.ClockVirtual); *req.Run.MinChange >= 0.0031 || strings.Contains(req.Run.Policy.MinChangeFrom, "nsp0aa1") {
		t.Errorf("the oldest A/A still sets the floor: %g from %q", *req.Run.MinChange, req.Run.Policy.MinChangeFrom)
	}
}
