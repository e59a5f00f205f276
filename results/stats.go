package results

import (
	"math"
	"slices"
	"sort"
)

// Stats describe the samples of one metric in one state. With fewer than two samples Stddev
// and CV are 0 and mean nothing; renderers show "n/a".
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Stddev float64 `json:"stddev"` // sample standard deviation (n-1)
	CV     float64 `json:"cv"`     // Stddev / Mean, as a fraction
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Describe computes the statistics of xs.
func Describe(xs []float64) Stats {
	s := Stats{N: len(xs)}
	if s.N == 0 {
		return s
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[s.N-1]
	if s.N%2 == 1 {
		s.Median = sorted[s.N/2]
	} else {
		s.Median = (sorted[s.N/2-1] + sorted[s.N/2]) / 2
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(s.N)
	if s.N < 2 {
		return s
	}
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.Stddev = math.Sqrt(ss / float64(s.N-1))
	if s.Mean != 0 {
		s.CV = s.Stddev / math.Abs(s.Mean)
	}
	return s
}

// Summarize computes, per workload and metric, the statistics of every state (in the order of
// the records) and each state's change against the state it is compared with. Failed samples
// are left out of the statistics; they stay in the samples.
func Summarize(samples []Sample, states []StateRecord, workloads []string, policy Policy) []Summary {
	var out []Summary
	for _, w := range workloads {
		var metrics []string
		units := map[string]string{}
		for _, s := range samples {
			if s.Workload != w {
				continue
			}
			for _, m := range s.Metrics {
				if _, seen := units[m.Name]; !seen {
					metrics = append(metrics, m.Name)
					units[m.Name] = m.Unit
				}
			}
		}
		for _, metric := range metrics {
			values := map[string][]float64{}
			byRound := map[string]map[int]float64{}
			for _, st := range states {
				byRound[st.Name] = map[int]float64{}
				for _, s := range samples {
					if s.Workload == w && s.State == st.Name && s.Error == "" && s.Invalid == "" {
						if v, ok := s.Value(metric); ok {
							values[st.Name] = append(values[st.Name], v)
							byRound[st.Name][s.Round] = v
						}
					}
				}
			}
			dir := DirectionOf(metric)
			for _, st := range states {
				xs := values[st.Name]
				sum := Summary{Workload: w, Metric: metric, Unit: units[metric], State: st.Name, SideOf: st.SideOf, Stats: Describe(xs), Centre: CentreOf(xs)}
				if st.CompareTo != "" && st.Unavailable == "" {
					c := Compare(values[st.CompareTo], xs, dir, policy.Alpha, policy.CVLimit, policy.MinChangeOf(w, metric, st.OwnState(st.Name)))
					c.Baseline = st.CompareTo
					for _, b := range states {
						if b.Name == st.CompareTo {
							c.BaselineSide = b.SideOf
						}
					}
					c.Paired = PairedRatios(byRound[st.CompareTo], byRound[st.Name], dir)
					sum.Comparison = &c
				}
				out = append(out, sum)
			}
		}
	}
	return out
}

// DecideFamily decides the gated comparisons of a result together: their p-values are
// adjusted as one family over every case, workload and state (Holm), so that a run without
// any real change fails with probability at most alpha however many gates it has. Comparisons
// of metrics that are not gated keep the verdict of their own p and never fail the run. With
// no gates recorded (results written before gates existed) every comparison is gated.
func (r *Result) DecideFamily() {
	pol := r.Settings.Policy
	type ref struct{ c, s int }
	var floors []float64
	var gated []ref
	var ps []float64
	for ci := range r.Cases {
		for si := range r.Cases[ci].Summaries {
			s := &r.Cases[ci].Summaries[si]
			if s.Comparison == nil {
				continue
			}
			s.Comparison.Gated = r.gated(s.Workload, s.Metric)
			s.Comparison.PAdjusted, s.Comparison.Family = 0, 0
			if s.Comparison.Gated && s.Comparison.NBase > 0 && s.Comparison.NState > 0 {
				gated = append(gated, ref{ci, si})
				ps = append(ps, s.Comparison.P)
				floors = append(floors, pol.MinChangeOf(s.Workload, s.Metric, s.OwnState(s.State)))
			}
		}
	}
	for i, adj := range Holm(ps) {
		c := r.Cases[gated[i].c].Summaries[gated[i].s].Comparison
		c.PAdjusted, c.Family = adj, len(ps)
		c.Decide(adj, pol.Alpha, pol.CVLimit, floors[i])
	}
}

// gated reports whether a workload's metric is one of its gates.
func (r *Result) gated(workload, metric string) bool {
	if r.Settings.Gates == nil {
		return true
	}
	return slices.Contains(r.Settings.Gates[workload], metric)
}
