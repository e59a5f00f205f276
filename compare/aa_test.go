package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/results"
)

// inVirtualTime marks a result as measured in a guest in virtual time on image sha.
func inVirtualTime(r *results.Result, sha string) *results.Result {
	r.Environment.VM = &results.VMInfo{Accel: "tcg", Clock: "virtual", Icount: "shift=2,sleep=off,align=off", QEMU: "7.2.22", CPU: "qemu64,-cx16",
		Image: results.KernelImage{SHA256: sha, Release: "6.12.118"}}
	return r
}

// TestAAOfTwoBootsOfOneKernel: the A/B of one image in two guests in virtual time is an A/A:
// each gated median of B against the same state of A is a move, and the floor is the largest
// (clamped); two images, or the wall clock, are no A/A.
func TestAAOfTwoBootsOfOneKernel(t *testing.T) {
	off := []float64{2.630, 2.628, 2.633, 2.625, 2.631}
	offB := []float64{2.622, 2.620, 2.625, 2.618, 2.623} // about -0.30%
	on := []float64{3.148, 3.150, 3.146, 3.152, 3.149}
	onB := []float64{3.152, 3.154, 3.150, 3.156, 3.153} // about +0.13%
	a := inVirtualTime(result("nsp00a1", "A", "6.12.118", scenarioText, map[string][]float64{"off": off, "on": on}), "aaaa")
	b := inVirtualTime(result("nsp00b1", "B", "6.12.118", scenarioText, map[string][]float64{"off": offB, "on": onB}), "aaaa")
	ab, err := Kernels(a, b, "nsp0aa1", nil)
	if err != nil {
		t.Fatal(err)
	}
	aa, ok := results.AAOf(ab)
	if !ok {
		t.Fatal("two guests of one image in virtual time are not read as an A/A")
	}
	moves := map[string]float64{}
	for _, m := range aa.Moves {
		moves[m.State+" "+m.Metric] = m.Change
	}
	if len(moves) != 2 || math.Abs(moves["off throughput"]+0.0030) > 0.0002 || math.Abs(moves["on throughput"]-0.0013) > 0.0002 {
		t.Fatalf("moves %v, want off -0.30%% and on +0.13%%", moves)
	}
	if floor, ok := aa.Floor(); !ok || math.Abs(floor-0.0030) > 0.0002 {
		t.Errorf("floor %g, want the largest move, 0.30%%", floor)
	}
	if why := aa.Why(); !strings.Contains(why, "A/A of pair (run nsp0aa1") || !strings.Contains(why, "at most 0.30% (tcp4 throughput off)") {
		t.Errorf("why: %s", why)
	}
	if aa.Clock != "virtual icount=shift=2,sleep=off,align=off qemu=7.2.22 cpu=qemu64,-cx16" || aa.Kernel != "6.12.118" {
		t.Errorf("clock %q, kernel %q", aa.Clock, aa.Kernel)
	}

	other := inVirtualTime(result("nsp00b2", "B", "6.12.118", scenarioText, map[string][]float64{"off": offB, "on": onB}), "bbbb")
	if ab2, err := Kernels(a, other, "nsp0ab2", nil); err != nil {
		t.Fatal(err)
	} else if _, ok := results.AAOf(ab2); ok {
		t.Error("two images read as an A/A")
	}
	wallA := result("nsp00a3", "A", "6.12.118", scenarioText, map[string][]float64{"off": off, "on": on})
	wallB := result("nsp00b3", "B", "6.12.118", scenarioText, map[string][]float64{"off": offB, "on": onB})
	if ab3, err := Kernels(wallA, wallB, "nsp0ab3", nil); err != nil {
		t.Fatal(err)
	} else if _, ok := results.AAOf(ab3); ok {
		t.Error("a run on the wall clock read as an A/A")
	}
}

// TestFloorClamps: an A/A whose medians agreed exactly still leaves a floor; a noisy one never
// makes it coarser than the host's default.
func TestFloorClamps(t *testing.T) {
	for _, tc := range []struct {
		moves []float64
		want  float64
	}{
		{[]float64{0, 0}, results.MinAAFloor},
		{[]float64{0.002, -0.004, 0.001}, 0.004},
		{[]float64{0.09}, results.DefaultMinChange},
	} {
		var aa results.Repeatability
		for _, c := range tc.moves {
			aa.Moves = append(aa.Moves, results.Move{Workload: "tcp4", State: "off", Metric: results.Throughput, Change: c})
		}
		if got, ok := aa.Floor(); !ok || got != tc.want {
			t.Errorf("moves %v: floor %g, want %g", tc.moves, got, tc.want)
		}
	}
	if _, ok := (results.Repeatability{}).Floor(); ok {
		t.Error("an A/A without moves gives a floor")
	}
}

// TestVirtualFloorDecidesSmallChanges: the same 0.8% regression of B, measured to a few tenths
// of a percent, is "negligible" under the host's 2% and "regressed" under a floor derived from
// an A/A; the table says where the floor comes from.
func TestVirtualFloorDecidesSmallChanges(t *testing.T) {
	off := []float64{2.630, 2.628, 2.633, 2.625, 2.631, 2.629}
	slower := make([]float64, len(off))
	for i, v := range off {
		slower[i] = v * 0.992
	}
	on := []float64{3.148, 3.150, 3.146, 3.152, 3.149, 3.151}
	verdict := func(pol results.Policy) (string, string) {
		a := inVirtualTime(result("nsp00a4", "A", "6.12.118", scenarioText, map[string][]float64{"off": off, "on": on}), "aaaa")
		b := inVirtualTime(result("nsp00b4", "B", "6.12.118", scenarioText, map[string][]float64{"off": slower, "on": on}), "bbbb")
		a.Settings.Policy = pol
		ab, err := Kernels(a, b, "nsp0ab4", nil)
		if err != nil {
			t.Fatal(err)
		}
		var table bytes.Buffer
		if err := results.Table(&table, ab); err != nil {
			t.Fatal(err)
		}
		return throughputVerdicts(ab)["off@B vs off@A"], table.String()
	}
	if v, _ := verdict(results.Policy{Alpha: 0.05, MinChange: results.DefaultMinChange}); v != results.Negligible {
		t.Errorf("under the host's floor: %s, want negligible", v)
	}
	aa := results.Repeatability{Scenario: "pair", RunID: "nsp0aa5", Runs: 6, Kernel: "6.12.118",
		Moves: []results.Move{{Workload: "tcp4", State: "off", Metric: results.Throughput, Change: -0.0021}}}
	floor, _ := aa.Floor()
	v, table := verdict(results.Policy{Alpha: 0.05, MinChange: floor, MinChangeFrom: aa.Why(), AA: &aa})
	if v != results.Regressed {
		t.Errorf("under the A/A's floor %g: %s, want regressed", floor, v)
	}
	for _, want := range []string{"min change 0.21%", "min change from: virtual time: an A/A of pair (run nsp0aa5"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

// TestAAShiftIgnoresRegimes: runs that fall into two regimes (a flow reordered inside the guest
// or not) make the median of 5 jump between them: three of A's runs high and one of B's move
// the medians by -1.2%, while the runs of both boots interleave. The A/A's move is the shift
// of the series (Hodges-Lehmann), near 0, not the medians' ratio.
func TestAAShiftIgnoresRegimes(t *testing.T) {
	offA := []float64{2.40, 2.46, 2.41, 2.47, 2.46}
	offB := []float64{2.41, 2.44, 2.42, 2.49, 2.43}
	on := []float64{3.148, 3.150, 3.146, 3.152, 3.149}
	a := inVirtualTime(result("nsp00a6", "A", "6.12.118", scenarioText, map[string][]float64{"off": offA, "on": on}), "aaaa")
	b := inVirtualTime(result("nsp00b6", "B", "6.12.118", scenarioText, map[string][]float64{"off": offB, "on": on}), "aaaa")
	ab, err := Kernels(a, b, "nsp0aa6", nil)
	if err != nil {
		t.Fatal(err)
	}
	aa, ok := results.AAOf(ab)
	if !ok {
		t.Fatal("no A/A")
	}
	for _, m := range aa.Moves {
		if m.State != "off" {
			continue
		}
		if math.Abs(m.MedianChange+0.0122) > 0.0005 || math.Abs(m.Change) > 0.002 {
			t.Errorf("off: medians moved %+.2f%% (want -1.22%%), shift %+.2f%% (want within 0.2%%)", 100*m.MedianChange, 100*m.Change)
		}
	}
	if floor, _ := aa.Floor(); floor > 0.002 {
		t.Errorf("floor %g: the regimes' jump of the medians became the floor", floor)
	}
}

// TestSeriesFloors: each series decides with its own floor (an A/A's shift of it): the same
// 0.8% regression is negligible in a series whose boots land 1.4% apart and regressed in one
// whose boots land 0.3% apart; a series without a floor of its own takes the largest.
func TestSeriesFloors(t *testing.T) {
	off := []float64{2.630, 2.628, 2.633, 2.625, 2.631, 2.629}
	on := []float64{3.148, 3.150, 3.146, 3.152, 3.149, 3.151}
	slower := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = v * 0.992
		}
		return out
	}
	a := inVirtualTime(result("nsp00a7", "A", "6.12.118", scenarioText, map[string][]float64{"off": off, "on": on}), "aaaa")
	b := inVirtualTime(result("nsp00b7", "B", "6.12.118", scenarioText, map[string][]float64{"off": slower(off), "on": slower(on)}), "bbbb")
	a.Settings.Policy = results.Policy{Alpha: 0.05, MinChange: 0.014, Floors: []results.SeriesFloor{
		{Workload: "tcp4", Metric: results.Throughput, State: "off", MinChange: 0.014},
		{Workload: "tcp4", Metric: results.Throughput, State: "on", MinChange: 0.003},
	}}
	ab, err := Kernels(a, b, "nsp0ab7", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := throughputVerdicts(ab)
	if v["off@B vs off@A"] != results.Negligible || v["on@B vs on@A"] != results.Regressed {
		t.Errorf("verdicts %v: want off negligible (floor 1.4%%), on regressed (floor 0.3%%)", v)
	}
	var table bytes.Buffer
	if err := results.Table(&table, ab); err != nil || !strings.Contains(table.String(), "min change of each series its own, at most 1.4%") {
		t.Errorf("the table's policy line (%v):\n%s", err, table.String())
	}
	back := storedAndRead(t, ab)
	if err := back.Recompute(); err != nil {
		t.Fatal(err)
	}
	if v := throughputVerdicts(back); v["on@B vs on@A"] != results.Regressed {
		t.Errorf("after storing and recomputing: %v", v)
	}
	if got := (results.Policy{MinChange: 0.014, Floors: a.Settings.Policy.Floors}).MinChangeOf("tcp6", results.Throughput, "on"); got != 0.014 {
		t.Errorf("a series without a floor: %g, want the largest", got)
	}
}
