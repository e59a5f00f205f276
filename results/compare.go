package results

import (
	"fmt"
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval nsperf reports.
const Confidence = 0.95

// DefaultAlpha is the significance level of comparisons (benchstat's).
const DefaultAlpha = 0.05

// DefaultCVLimit is the coefficient of variation above which a comparison that finds no
// significant difference is called too noisy rather than "no change".
const DefaultCVLimit = 0.05

// Verdicts of a comparison.
const (
	Improved   = "improved"
	Regressed  = "regressed"
	NoChange   = "no significant change"
	TooNoisy   = "too noisy"
	TooFewRuns = "too few runs"
)

// Method says how the statistics are computed, for the report.
const Method = "centre: median with its distribution-free 95% CI; change: ratio of medians - 1 (as benchstat), " +
	"95% CI from the Hodges-Lehmann/Moses interval of log ratios; p: Mann-Whitney U test (benchstat's engine, " +
	"golang.org/x/perf/benchmath); significant when p <= alpha; not significant with a CV above the limit: too noisy"

// Centre is the median of a sample with its confidence interval.
type Centre struct {
	Median  float64  `json:"median"`
	Lo      *float64 `json:"lo,omitempty"` // nil when n is too small for an interval: see Warning
	Hi      *float64 `json:"hi,omitempty"`
	Warning string   `json:"warning,omitempty"`
}

// CentreOf computes the median and its 95% CI (benchmath's assume-nothing summary).
func CentreOf(xs []float64) Centre {
	if len(xs) == 0 {
		return Centre{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64(nil), xs...), &benchmath.DefaultThresholds), Confidence)
	c := Centre{Median: s.Center}
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
		c.Lo, c.Hi = &s.Lo, &s.Hi
	}
	if len(s.Warnings) > 0 {
		c.Warning = s.Warnings[0].Error()
	}
	return c
}

// Comparison is a state against the state it is compared with, for one workload and metric.
type Comparison struct {
	Baseline string  `json:"baseline"`
	Change   float64 `json:"change"`    // median / baseline median - 1
	ChangeLo float64 `json:"change_lo"` // its 95% CI; NaN-free: equal to Change when not computable
	ChangeHi float64 `json:"change_hi"`
	HasCI    bool    `json:"has_ci"`
	P        float64 `json:"p"`
	Alpha    float64 `json:"alpha"`
	Verdict  string  `json:"verdict"`
	Note     string  `json:"note,omitempty"` // e.g. how many runs a verdict needs
	Paired   *Paired `json:"paired,omitempty"`
}

// Paired summarises the per-round ratios state/baseline of alternating runs.
type Paired struct {
	Rounds int     `json:"rounds"`
	Median float64 `json:"median"` // median ratio
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Better int     `json:"better"` // rounds in which the state did better than its baseline
}

// noRuns is the note of a comparison in which a side has no valid run.
const noRuns = "no runs to compare"

// Compare decides what a state's sample says against its baseline's for a metric of
// direction dir. cvLimit <= 0 takes DefaultCVLimit, alpha <= 0 DefaultAlpha.
func Compare(base, state []float64, dir Direction, alpha, cvLimit float64) Comparison {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if cvLimit <= 0 {
		cvLimit = DefaultCVLimit
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	c := Comparison{Alpha: alpha, P: 1}
	if len(base) == 0 || len(state) == 0 {
		c.Verdict, c.Note = TooFewRuns, noRuns
		return c
	}
	b, s := benchmath.NewSample(append([]float64(nil), base...), th), benchmath.NewSample(append([]float64(nil), state...), th)
	mb, ms := median(b.Values), median(s.Values)
	if mb != 0 {
		c.Change = ms/mb - 1
	}
	c.ChangeLo, c.ChangeHi = c.Change, c.Change
	if lo, hi, ok := shiftCI(b.Values, s.Values, Confidence); ok {
		c.ChangeLo, c.ChangeHi, c.HasCI = lo, hi, true
	}
	cmp := benchmath.AssumeNothing.Compare(b, s)
	c.P = cmp.P
	significant := cmp.P <= alpha
	switch {
	case !significant && len(cmp.Warnings) > 0 && minSamples(alpha) > min(len(base), len(state)):
		c.Verdict = TooFewRuns
		c.Note = fmt.Sprintf("need at least %d runs per state for p <= %g", minSamples(alpha), alpha)
	case significant && (ms-mb)*float64(dir) > 0:
		c.Verdict = Improved
	case significant && ms != mb:
		c.Verdict = Regressed
	case max(Describe(base).CV, Describe(state).CV) > cvLimit:
		c.Verdict = TooNoisy
		c.Note = fmt.Sprintf("CV %.1f%% / %.1f%% above %.0f%%", 100*Describe(base).CV, 100*Describe(state).CV, 100*cvLimit)
	default:
		c.Verdict = NoChange
	}
	return c
}

// minSamples is the smallest equal sample size at which the two-sided exact U test can reach
// p <= alpha: 2 / C(2n, n).
func minSamples(alpha float64) int {
	for n := 1; n < 50; n++ {
		if 2/binomial(2*n, n) <= alpha {
			return n
		}
	}
	return 50
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// shiftCI is the Hodges-Lehmann/Moses distribution-free confidence interval of the shift
// between two samples, computed on log values so that it is a ratio, and returned as a
// relative change. It needs positive values and enough runs for the interval to exist.
func shiftCI(base, state []float64, level float64) (lo, hi float64, ok bool) {
	n, m := len(base), len(state)
	var diffs []float64
	for _, x := range base {
		for _, y := range state {
			if x <= 0 || y <= 0 {
				return 0, 0, false
			}
			diffs = append(diffs, math.Log(y)-math.Log(x))
		}
	}
	sort.Float64s(diffs)
	// The largest k with P(U <= k-1) <= (1-level)/2 under the exact null distribution of U:
	// the interval is [diffs[k-1], diffs[nm-k]] (1-based).
	dist := uDistribution(n, m)
	total := binomial(n+m, n)
	cum, k := 0.0, 0
	for u := 0; u < len(dist); u++ {
		cum += dist[u] / total
		if cum > (1-level)/2 {
			break
		}
		k = u + 1
	}
	if k == 0 {
		return 0, 0, false
	}
	return math.Exp(diffs[k-1]) - 1, math.Exp(diffs[n*m-k]) - 1, true
}

// uDistribution counts, for each u, the arrangements of n and m items whose Mann-Whitney U
// is u (no ties).
func uDistribution(n, m int) []float64 {
	// f[i][j][u]: arrangements of i and j items with statistic u, built up by the last item.
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for u := range f[i][j] {
				if u-j >= 0 && u-j < len(f[i-1][j]) {
					f[i][j][u] += f[i-1][j][u-j] // the last item is from the first sample
				}
				if u < len(f[i][j-1]) {
					f[i][j][u] += f[i][j-1][u]
				}
			}
		}
	}
	return f[n][m]
}

// PairedRatios compares alternating runs round by round.
func PairedRatios(base, state map[int]float64, dir Direction) *Paired {
	var ratios []float64
	better := 0
	for round, b := range base {
		s, ok := state[round]
		if !ok || b == 0 {
			continue
		}
		ratios = append(ratios, s/b)
		if (s-b)*float64(dir) > 0 {
			better++
		}
	}
	if len(ratios) == 0 {
		return nil
	}
	sort.Float64s(ratios)
	return &Paired{Rounds: len(ratios), Median: median(ratios), Min: ratios[0], Max: ratios[len(ratios)-1], Better: better}
}
