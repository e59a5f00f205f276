package results

import (
	"fmt"
	"math"
	"time"
)

// The practical floor (Policy.MinChange) follows the instrument. On a host, or a guest on the
// wall clock, a run's figures move by a few percent between runs of the same kernel, and the
// default floor (DefaultMinChange) is made for that. In virtual time the same kernel repeats
// to a few tenths of a percent (docs/method.md, "Virtual time: repeatability"), so a floor of
// 2% would call a real 1% regression negligible. There the floor is what an A/A of the
// scenario on the same clock showed: the largest move of a gated median between two guests of
// one kernel, which is how far apart two boots of the same code land.

// VirtualMinChange is the floor of a run in virtual time whose scenario has no A/A on record:
// the largest move of a gated median measured between boots of one kernel on this project's
// development machine (veth-bigtcp, 2 s runs, three boots: 0.45%), rounded up. An A/A of the
// scenario (Repeatability) replaces it.
const VirtualMinChange = 0.005

// Lowest and highest floor an A/A gives: one A/A whose medians happened to agree exactly would
// otherwise call any significant change a real one, and a noisy A/A never makes the floor
// coarser than the host's.
const (
	MinAAFloor = 0.001
	MaxAAFloor = DefaultMinChange
)

// Repeatability is what an A/A of a scenario in virtual time showed: the same kernel in two
// guests (run SCENARIO --kernel K --kernel K), each gated median of kernel B against kernel A.
type Repeatability struct {
	Scenario string    `json:"scenario"`
	RunID    string    `json:"run_id"`
	Date     time.Time `json:"date"`
	Kernel   string    `json:"kernel"` // the release both guests booted
	Clock    string    `json:"clock"`  // Clock.Key
	Runs     int       `json:"runs"`   // rounds per state
	Moves    []Move    `json:"moves"`
}

// Move is one gated median of kernel B against the same state of kernel A in an A/A.
type Move struct {
	Workload string  `json:"workload"`
	State    string  `json:"state"`
	Metric   string  `json:"metric"`
	Change   float64 `json:"change"` // median B / median A - 1
}

// Largest is the largest move, by size, and its series; ok false when there is none.
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

// Floor is the minimum change a run on the A/A's clock decides with: the largest move,
// within [MinAAFloor, MaxAAFloor]. ok false when the A/A has no move to derive it from.
func (a Repeatability) Floor() (float64, bool) {
	m, ok := a.Largest()
	if !ok {
		return 0, false
	}
	return min(max(math.Abs(m.Change), MinAAFloor), MaxAAFloor), true
}

// Why says where the floor comes from, for the table's policy line: "virtual time: an A/A of
// veth-bigtcp (run nsp1234, 2026-12-06, 10 runs, 6.12.118) moved a gated median at most
// 0.31% (tcp6 throughput off)".
func (a Repeatability) Why() string {
	m, _ := a.Largest()
	return fmt.Sprintf("virtual time: an A/A of %s (run %s, %s, %d runs, %s) moved a gated median at most %.2f%% (%s %s %s)",
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
			if cmp == nil || !cmp.Gated || s.Side == "" || cmp.BaselineSide.Side == s.Side || cmp.BaselineSide.Of != s.Of || cmp.NBase == 0 || cmp.NState == 0 {
				continue
			}
			aa.Moves = append(aa.Moves, Move{Workload: s.Workload, State: s.Of, Metric: s.Metric, Change: cmp.Change})
		}
	}
	return aa, len(aa.Moves) > 0
}

// HostFloorSource is where the default floor comes from.
const HostFloorSource = "the default, made for the host's run-to-run noise"

// FloorSource says where the policy's minimum change comes from, printable: what the run
// recorded, else the host's default.
func (p Policy) FloorSource() string {
	if p.MinChangeFrom == "" {
		return HostFloorSource
	}
	return Printable(p.MinChangeFrom)
}
