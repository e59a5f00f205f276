package results

import (
	"fmt"
	"math"
	"sort"
)

// SideMetric is a counter that moved between a state and the state it is compared with,
// beyond the noise, as lkp-tests lists them under a regression report: information, never
// gated.
type SideMetric struct {
	Workload string  `json:"workload"`
	State    string  `json:"state"`
	Baseline string  `json:"baseline"`
	Counter  string  `json:"counter"` // "client/eth0 tx_packets", "ns server TcpExtTCPOFOQueue", "cpu 1 net_rx"
	BaseMean float64 `json:"base_mean"`
	BaseCV   float64 `json:"base_cv"`
	Mean     float64 `json:"mean"`
	CV       float64 `json:"cv"`
	// Change is the ratio of the means - 1; FromZero when the counter did not move in the
	// baseline (Change is then 0).
	Change   float64 `json:"change"`
	FromZero bool    `json:"from_zero,omitempty"`
	P        float64 `json:"p"` // Mann-Whitney, two-sided
	// PAdjusted is P adjusted (Holm) over the Shown counters of the comparison.
	PAdjusted float64 `json:"p_adjusted"`
	Shown     int     `json:"shown"`
	Tested    int     `json:"tested"` // counters that moved in either state
}

// sideMetrics are, per workload and compared state, the counters whose change is beyond the
// noise: p <= alpha, the means further apart than the two standard deviations together, and
// at least the minimum change. Their p-values are then adjusted for the number shown.
func sideMetrics(c *Case, policy Policy) []SideMetric {
	alpha := policy.Alpha
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	var out []SideMetric
	for _, w := range caseWorkloads(c.Samples) {
		for _, st := range c.States {
			if st.CompareTo == "" || st.Unavailable != "" {
				continue
			}
			base, state := flatSeries(c.Samples, w, st.CompareTo), flatSeries(c.Samples, w, st.Name)
			if base.samples == 0 || state.samples == 0 {
				continue
			}
			out = append(out, compareCounters(w, st, base, state, alpha, policy.MinChange)...)
		}
	}
	return out
}

// series are a state's counters, sample by sample: counter -> values (0 where a sample did
// not report it: a delta that did not move), one per sample.
type series struct {
	values  map[string][]float64
	samples int
}

func flatSeries(samples []Sample, workload, state string) series {
	s := series{values: map[string][]float64{}}
	var flats []map[string]float64
	for _, sm := range samples {
		if sm.Workload == workload && sm.State == state && sm.Error == "" && sm.Invalid == "" && sm.Counters != nil {
			flats = append(flats, sm.Counters.Flat())
			s.samples++
		}
	}
	for _, f := range flats {
		for k := range f {
			if _, ok := s.values[k]; !ok {
				s.values[k] = make([]float64, len(flats))
			}
		}
	}
	for i, f := range flats {
		for k, v := range f {
			s.values[k][i] = v
		}
	}
	return s
}

func compareCounters(workload string, st StateRecord, base, state series, alpha, minChange float64) []SideMetric {
	keys := map[string]bool{}
	for k := range base.values {
		keys[k] = true
	}
	for k := range state.values {
		keys[k] = true
	}
	tested := 0
	var shown []SideMetric
	for _, k := range sortedKeys(keys) {
		xs, ys := orZeros(base.values[k], base.samples), orZeros(state.values[k], state.samples)
		a, b := Describe(xs), Describe(ys)
		if a.Max == a.Min && b.Max == b.Min && a.Mean == b.Mean {
			continue // did not change at all
		}
		tested++
		p := Measure(xs, ys, NoDirection).P
		change := math.Inf(1)
		if a.Mean != 0 {
			change = b.Mean/a.Mean - 1
		}
		beyondNoise := math.Abs(b.Mean-a.Mean) > a.Stddev+b.Stddev
		if p > alpha || !beyondNoise || math.Abs(change) < max(minChange, 0.01) {
			continue
		}
		m := SideMetric{Workload: workload, State: st.Name, Baseline: st.CompareTo, Counter: k,
			BaseMean: a.Mean, BaseCV: a.CV, Mean: b.Mean, CV: b.CV, Change: change, P: p}
		if math.IsInf(change, 1) {
			m.Change, m.FromZero = 0, true
		}
		shown = append(shown, m)
	}
	ps := make([]float64, len(shown))
	for i, m := range shown {
		ps[i] = m.P
	}
	for i, adj := range Holm(ps) {
		shown[i].PAdjusted, shown[i].Shown, shown[i].Tested = adj, len(shown), tested
	}
	// The largest changes first, as lkp orders them.
	size := func(m SideMetric) float64 {
		if m.FromZero {
			return math.Inf(1)
		}
		return math.Abs(m.Change)
	}
	sort.SliceStable(shown, func(i, j int) bool { return size(shown[i]) > size(shown[j]) })
	return shown
}

func orZeros(v []float64, n int) []float64 {
	if v == nil {
		return make([]float64, n)
	}
	return v
}

func caseWorkloads(samples []Sample) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range samples {
		if !seen[s.Workload] {
			seen[s.Workload] = true
			out = append(out, s.Workload)
		}
	}
	return out
}

// SideMetricTables renders a case's side metrics as lkp does (`%stddev %change %stddev`), one
// block per workload and compared state.
func SideMetricTables(c Case, maxRows int) []string {
	if maxRows == 0 {
		return nil
	}
	if maxRows < 0 {
		maxRows = math.MaxInt
	}
	var out []string
	var block []string
	key, rows := "", 0
	flush := func() {
		if rows > maxRows {
			block = append(block, fmt.Sprintf("  ... and %d more (--side-metrics all; cases[].side_metrics in the result, and the HTML report)", rows-maxRows))
		}
		out = append(out, block...)
		block, rows = nil, 0
	}
	for _, m := range c.SideMetrics {
		if k := m.Workload + "\x00" + m.State; k != key {
			flush()
			key = k
			block = append(block, fmt.Sprintf("side metrics %s %s vs %s (information, never gated; %d of %d counters that moved; p adjusted (Holm) over the %d shown):",
				m.Workload, m.State, m.Baseline, m.Shown, m.Tested, m.Shown),
				fmt.Sprintf("  %14s %7s %9s %14s %7s  %-7s %s", m.Baseline, "%stddev", "%change", m.State, "%stddev", "p adj", "counter"))
		}
		if rows++; rows > maxRows {
			continue
		}
		block = append(block, fmt.Sprintf("  %14s %6.0f%% %9s %14s %6.0f%%  %-7s %s",
			formatCount(m.BaseMean), 100*m.BaseCV, formatChange(m), formatCount(m.Mean), 100*m.CV, formatPAdj(m.PAdjusted), m.Counter))
	}
	flush()
	return out
}

func formatCount(v float64) string {
	if math.Abs(v) >= 1e6 {
		return fmt.Sprintf("%.4g", v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func formatChange(m SideMetric) string {
	if m.FromZero {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*m.Change)
}

func formatPAdj(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
