package results

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// aaResult is an A/A run: every metric has the same distribution in both states (CV between
// 3% and 10%, as seen here), n runs per state, k metrics, all gated.
func aaResult(rng *rand.Rand, n, k int, gated bool, shift float64) *Result {
	c := Case{States: []StateRecord{{Name: "a"}, {Name: "b", CompareTo: "a"}}}
	gates := map[string][]string{}
	var metrics []string
	for m := 0; m < k; m++ {
		metrics = append(metrics, fmt.Sprintf("m%02d", m))
	}
	if gated {
		gates["w"] = metrics
	} else {
		gates["w"] = []string{}
	}
	for round := 1; round <= n; round++ {
		for _, st := range []string{"a", "b"} {
			s := Sample{Round: round, State: st, Workload: "w"}
			for m, name := range metrics {
				cv := 0.03 + 0.07*float64(m)/float64(k)
				v := 100 * (1 + cv*rng.NormFloat64())
				if st == "b" {
					v *= 1 + shift
				}
				s.Metrics = append(s.Metrics, Metric{Name: name, Unit: "count", Value: v})
			}
			c.Samples = append(c.Samples, s)
		}
	}
	r := &Result{Cases: []Case{c}, Settings: Settings{Gates: gates, Policy: Policy{Alpha: 0.05, CVLimit: 0.05}}}
	r.Cases[0].Summaries = Summarize(c.Samples, c.States, []string{"w"}, r.Settings.Policy)
	return r
}

func falseAlarm(r *Result) bool {
	for _, s := range r.Cases[0].Summaries {
		// The metrics are no tool's, so they have no direction: a significant move in either
		// direction is "changed", and an alarm all the same.
		if s.Comparison != nil && (s.Comparison.Verdict == Regressed || s.Comparison.Verdict == Improved || s.Comparison.Verdict == Changed) {
			return true
		}
	}
	return false
}

// TestFamilyWiseFalseAlarms: 1,000 A/A runs with 14 gated metrics (6 runs per state): with
// the Holm correction at most alpha of them show any significant change; without it, about
// 1-(1-alpha)^14 do, which is why the correction exists.
func TestFamilyWiseFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	corrected, raw := 0, 0
	const runs = 1000
	for i := 0; i < runs; i++ {
		r := aaResult(rng, 6, 14, true, 0)
		if falseAlarm(r) {
			raw++
		}
		r.DecideFamily()
		if falseAlarm(r) {
			corrected++
		}
	}
	t.Logf("A/A runs with a false alarm: %d of %d corrected (Holm), %d uncorrected", corrected, runs, raw)
	if float64(corrected) > 0.05*runs {
		t.Errorf("%d of %d A/A runs alarmed with the correction, want at most 5%%", corrected, runs)
	}
	if float64(raw) < 0.3*runs {
		t.Errorf("only %d of %d A/A runs alarmed without the correction: the test cannot tell", raw, runs)
	}
}

// TestMinChangeAndEquivalence: a significant 1.4% CPU difference is negligible, a CI within
// ±2% is equivalence, a 10% drop is a regression.
func TestMinChangeAndEquivalence(t *testing.T) {
	base := []float64{100, 100.2, 99.9, 100.1, 99.8, 100.05}
	small := []float64{101.4, 101.6, 101.3, 101.5, 101.2, 101.45}
	if c := Compare(base, small, HigherIsBetter, 0.05, 0.05, 0.02); c.Verdict != Negligible || c.P > 0.05 {
		t.Errorf("+1.4%%: %s p=%.3f", c.Verdict, c.P)
	}
	if c := Compare(base, small, HigherIsBetter, 0.05, 0.05, 0); c.Verdict != Improved {
		t.Errorf("+1.4%% without min change: %s", c.Verdict)
	}
	same := []float64{100.1, 99.9, 100.2, 99.95, 100, 100.15}
	if c := Compare(base, same, HigherIsBetter, 0.05, 0.05, 0.02); c.Verdict != Equivalent || FormatComparison(c)[:12] != "= equivalent" {
		t.Errorf("equal: %s %q", c.Verdict, FormatComparison(c))
	}
	drop := []float64{90, 90.3, 89.8, 90.1, 89.9, 90.2}
	if c := Compare(base, drop, HigherIsBetter, 0.05, 0.05, 0.02); c.Verdict != Regressed {
		t.Errorf("-10%%: %s", c.Verdict)
	}
}

// TestCollapseIsNoCPUImprovement: a vxlan whose throughput collapsed by 99.9% spends less
// CPU per second but far more per Gbit: the efficiency metric regresses, raw CPU is only
// "changed".
func TestCollapseIsNoCPUImprovement(t *testing.T) {
	c := Case{States: []StateRecord{{Name: "ok"}, {Name: "collapsed", CompareTo: "ok"}}}
	for round := 1; round <= 6; round++ {
		f := 1 + 0.01*float64(round%3)
		c.Samples = append(c.Samples,
			Sample{Round: round, State: "ok", Workload: "tcp4", Metrics: WithEfficiency([]Metric{{Throughput, "bit/s", 10e9 * f}, {CPUSender, "%", 90 * f}})},
			Sample{Round: round, State: "collapsed", Workload: "tcp4", Metrics: WithEfficiency([]Metric{{Throughput, "bit/s", 10e6 * f}, {CPUSender, "%", 0.3 * f}})})
	}
	sums := Summarize(c.Samples, c.States, []string{"tcp4"}, Policy{MinChange: DefaultMinChange})
	got := map[string]string{}
	for _, s := range sums {
		if s.Comparison != nil {
			got[s.Metric] = s.Comparison.Verdict
		}
	}
	if got[Throughput] != Regressed || got[CPUSender+"_per_gbit"] != Regressed || got[CPUSender] != Changed {
		t.Errorf("verdicts %v", got)
	}
}
