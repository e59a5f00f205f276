package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The practical floor (Policy.MinChange) follows the instrument. On a host, or a guest on the
// wall clock, a run's figures move by a few percent between runs of the same kernel, and the
// default floor (DefaultMinChange) is made for that. In virtual time two boots of the same
// kernel land 0.3% to 1.4% apart, series by series (docs/method.md, "Virtual time:
// repeatability and the floor"), so a floor of 2% would call a real 1% regression negligible
// in a series that repeats to 0.3%. There each series' floor is what the scenario's A/As on
// the same clock showed of it: its largest shift between two guests of one kernel.

// VirtualMinChange is the floor of a run in virtual time whose scenario has no A/A on record:
// the largest shift of a gated series in the seven A/As measured on this project's
// development machine (veth-bigtcp, 2 s runs: 1.39%, a series whose flow is reordered inside
// the guest now and then; docs/method.md), rounded up. Without an A/A nothing says how far a
// scenario's series land apart between boots, so the default is the worst seen; an A/A of
// the scenario gives each series its own floor (Repeatability, SeriesFloors).
const VirtualMinChange = 0.014

// Lowest and highest floor an A/A gives: one A/A whose medians happened to agree exactly would
// otherwise call any significant change a real one, and a noisy A/A never makes the floor
// coarser than the host's.
const (
	MinAAFloor = 0.001
	MaxAAFloor = DefaultMinChange
)

// Repeatability is what an A/A of a scenario in virtual time showed: the same kernel in two
// guests (run SCENARIO --kernel K --kernel K), each gated series of kernel B against kernel A.
type Repeatability struct {
	Scenario string    `json:"scenario"`
	RunID    string    `json:"run_id"`
	Date     time.Time `json:"date"`
	Kernel   string    `json:"kernel"` // the release both guests booted
	Clock    string    `json:"clock"`  // Clock.Key
	Runs     int       `json:"runs"`   // rounds per state
	Moves    []Move    `json:"moves"`
}

// Move is one gated series of kernel B against the same state of kernel A in an A/A.
type Move struct {
	Workload string `json:"workload"`
	State    string `json:"state"`
	Metric   string `json:"metric"`
	// Change is the shift of B against A (Hodges-Lehmann: the median of the ratios of every
	// run of B to every run of A, minus 1), what the A/A says of the offset between two boots.
	// Not the ratio of the medians: a series whose runs fall into two regimes (a flow reordered
	// inside the guest or not, docs/method.md) has a median that jumps between them, and with
	// 5 runs the medians of two boots moved 1.6% where the shift was 0.06%.
	Change float64 `json:"change"`
	// MedianChange is median B / median A - 1, as the comparison reports it.
	MedianChange float64 `json:"median_change"`
}

// Largest is the largest shift, by size, and its series; ok false when there is none.
func (a Repeatability) Largest() (Move, bool) {
	var out Move
	found := false
	for _, m := range a.Moves {
		if !found || math.Abs(m.Change) > math.Abs(out.Change) {
			out, found = m, true
		}
	}
	return out, found
}

// Floor is the minimum change a run on the A/A's clock decides with: the largest shift,
// rounded up to 0.01%, within [MinAAFloor, MaxAAFloor]. ok false when the A/A has no shift
// to derive it from.
func (a Repeatability) Floor() (float64, bool) {
	m, ok := a.Largest()
	if !ok {
		return 0, false
	}
	return floorOf(m.Change), true
}

// SeriesFloors are the floors of each series of several A/As of one scenario: the largest
// shift of the series over them, rounded up to 0.01%, within [MinAAFloor, MaxAAFloor]; sorted
// by workload, metric and state. A series shifts by its own amount between boots (a
// scenario's "off" state whose flow is reordered now and then by 1.4%, its "on" state by
// 0.3%), so each is decided against its own.
func SeriesFloors(aas []Repeatability) []SeriesFloor {
	largest := map[SeriesFloor]float64{}
	for _, aa := range aas {
		for _, m := range aa.Moves {
			key := SeriesFloor{Workload: m.Workload, Metric: m.Metric, State: m.State}
			largest[key] = max(largest[key], math.Abs(m.Change))
		}
	}
	var out []SeriesFloor
	for key, shift := range largest {
		key.MinChange = floorOf(shift)
		out = append(out, key)
	}
	slices.SortFunc(out, func(a, b SeriesFloor) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.State, b.State))
	})
	return out
}

// floorOf is the floor of a shift: rounded up to the next hundredth of a percent (the table
// prints it as it is), within [MinAAFloor, MaxAAFloor].
func floorOf(shift float64) float64 {
	up := math.Ceil(math.Abs(shift)*1e4-1e-9) / 1e4
	return min(max(up, MinAAFloor), MaxAAFloor)
}

// DescribeFloors says the floors of the series in one line: "tcp4 throughput off 0.54%, tcp4
// throughput on 0.27%".
func DescribeFloors(floors []SeriesFloor) string {
	parts := make([]string, len(floors))
	for i, f := range floors {
		parts[i] = fmt.Sprintf("%s %s %s %.4g%%", f.Workload, f.Metric, f.State, 100*f.MinChange)
	}
	return strings.Join(parts, ", ")
}

// LargestFloor is the floor of several A/As of one scenario: that of the one with the largest
// shift, and that A/A; ok false when none has a shift.
func LargestFloor(aas []Repeatability) (Repeatability, float64, bool) {
	var out Repeatability
	floor, found := 0.0, false
	for _, aa := range aas {
		if f, ok := aa.Floor(); ok && (!found || f > floor) {
			out, floor, found = aa, f, true
		}
	}
	return out, floor, found
}

// Why says where the floor comes from, for the table's policy line: "virtual time: an A/A of
// veth-bigtcp (run nsp1234, 2026-12-06, 10 runs, 6.12.118) shifted a gated series at most
// 0.31% (tcp6 throughput off)".
func (a Repeatability) Why() string {
	m, _ := a.Largest()
	return fmt.Sprintf("virtual time: an A/A of %s (run %s, %s, %d runs, %s) shifted a gated series at most %.2f%% (%s %s %s)",
		a.Scenario, a.RunID, a.Date.Format("2006-01-02"), a.Runs, a.Kernel, 100*math.Abs(m.Change), m.Workload, m.Metric, m.State)
}

// VirtualDefaultWhy says why a run in virtual time decided with VirtualMinChange.
func VirtualDefaultWhy(scenario string) string {
	return fmt.Sprintf("virtual time: no A/A of %s on this clock on record; `nsperf run %s --kernel K --kernel K` measures one", scenario, scenario)
}

// AAOf reads an A/A from the merged result of an A/B run of two kernels: the gated
// comparisons of each state of kernel B with the same state of kernel A. ok false when r is
// not an A/A in virtual time: not two kernels, kernels of different images or modules, or
// another clock.
func AAOf(r *Result) (Repeatability, bool) {
	if len(r.Kernels) != 2 || ClockOf(r).Name != "virtual" {
		return Repeatability{}, false
	}
	a, b := r.Kernels[0].Environment.VM, r.Kernels[1].Environment.VM
	if a == nil || b == nil || a.Image.SHA256 == "" || a.Image.SHA256 != b.Image.SHA256 || a.Modules != b.Modules {
		return Repeatability{}, false
	}
	aa := Repeatability{Scenario: r.Scenario.Name, RunID: r.RunID, Date: r.End, Kernel: a.Image.Release, Clock: ClockOf(r).Key(), Runs: r.Settings.Runs}
	for _, c := range r.Cases {
		for _, s := range c.Summaries {
			cmp := s.Comparison
			if cmp == nil || !cmp.Gated || s.Side == "" || cmp.BaselineSide.Side == s.Side || cmp.BaselineSide.Of != s.Of {
				continue
			}
			shift, ok := hodgesLehmann(c.values(s.Workload, cmp.Baseline, s.Metric), c.values(s.Workload, s.State, s.Metric))
			if !ok {
				continue
			}
			aa.Moves = append(aa.Moves, Move{Workload: s.Workload, State: s.Of, Metric: s.Metric, Change: shift, MedianChange: cmp.Change})
		}
	}
	return aa, len(aa.Moves) > 0
}

// values are the figures of a metric in the valid samples of a workload and state.
func (c Case) values(workload, state, metric string) []float64 {
	var out []float64
	for _, s := range c.Samples {
		if s.Workload == workload && s.State == state && s.Error == "" && s.Invalid == "" {
			if v, ok := s.Value(metric); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// hodgesLehmann is the shift of state against base as a ratio - 1: the median of the log
// ratios of every pair, the point estimate whose interval shiftCI gives. ok false without
// figures, or with one at or below 0.
func hodgesLehmann(base, state []float64) (float64, bool) {
	var diffs []float64
	for _, x := range base {
		for _, y := range state {
			if x <= 0 || y <= 0 {
				return 0, false
			}
			diffs = append(diffs, math.Log(y)-math.Log(x))
		}
	}
	n := len(diffs)
	if n == 0 {
		return 0, false
	}
	mid := nthSmallest(diffs, n/2)
	if n%2 == 0 {
		mid = (mid + nthSmallest(diffs, n/2-1)) / 2
	}
	return math.Exp(mid) - 1, true
}
