package results

import (
	"fmt"
	"math"
)

// FirstLook is the round of an adaptive run's first look: with five runs per state the exact
// Mann-Whitney test can reach p = 2/C(10,5) = 0.0079, the smallest p a first look must be able
// to reach (see Sequential).
const FirstLook = 5

// Sequential is the group-sequential design of adaptive runs (`runs: auto`). The run looks
// after the rounds in Looks; at each look every gated comparison is tested at Alpha[k], and
// the run stops when all of them are decided (regressed or improved beyond the minimum
// change, or equivalent within it). The alphas are spent so that they sum to the run's alpha
// (Bonferroni over the looks; Holm over the gated comparisons within a look): whatever the
// dependence between looks, the chance that a run without any real change ends regressed or
// improved is at most alpha. Looks grow by about 40% (5, 7, 10, 14, 20, ...), so that a small
// effect gets more runs and a collapse stops at the first look.
type Sequential struct {
	Looks []int
	Alpha []float64
}

// NewSequential plans the looks of an adaptive run of at most maxRuns rounds, spending alpha
// over them, and over cases (each case is a family of its own at alpha/cases).
func NewSequential(maxRuns int, alpha float64, cases int) Sequential {
	var looks []int
	for n := FirstLook; n < maxRuns; n = int(math.Round(float64(n) * 1.4)) {
		looks = append(looks, n)
	}
	looks = append(looks, maxRuns)
	if cases < 1 {
		cases = 1
	}
	per := alpha / float64(len(looks)) / float64(cases)
	s := Sequential{Looks: looks}
	for range looks {
		s.Alpha = append(s.Alpha, per)
	}
	return s
}

// Look returns the index of the look after round (1-based), or -1.
func (s Sequential) Look(round int) int {
	for k, n := range s.Looks {
		if n == round {
			return k
		}
	}
	return -1
}

// String is the design for the report.
func (s Sequential) String() string {
	return fmt.Sprintf("looks after rounds %v, each at alpha %.4g", s.Looks, s.Alpha[0])
}

// DecideLook decides a case's comparisons at one look: summaries at the look's alpha, the
// gated ones Holm-adjusted together. It returns the summaries and the gated comparisons that
// are not decided yet.
func DecideLook(c Case, workloads []string, gates map[string][]string, alpha, cvLimit, minChange float64) ([]Summary, []string) {
	r := Result{Cases: []Case{c}, Settings: Settings{Gates: gates, Policy: Policy{Alpha: alpha, CVLimit: cvLimit, MinChange: minChange}}}
	r.Cases[0].Summaries = Summarize(c.Samples, c.States, workloads, r.Settings.Policy)
	r.DecideFamily()
	var open []string
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Comparison.Gated && !Decided(*s.Comparison) {
			open = append(open, fmt.Sprintf("%s %s %s: %s", s.Workload, s.Metric, s.State, s.Comparison.Verdict))
		}
	}
	return r.Cases[0].Summaries, open
}
