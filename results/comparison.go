package results

import (
	"fmt"
	"math"
	"sort"

	"golang.org/x/perf/benchmath"

	"github.com/nsperf/nsperf/internal/mwu"
	"github.com/nsperf/nsperf/scenarios"
)

// Confidence is the level of every interval nsperf reports.
const Confidence = 0.95

// DefaultAlpha is the significance level of comparisons (benchstat's).
const DefaultAlpha = 0.05

// DefaultCVLimit is the coefficient of variation above which a comparison that finds no
// significant difference is called too noisy rather than "no change".
const DefaultCVLimit = 0.05

// DefaultMinChange is the smallest change worth a verdict: a significant change below it is
// negligible, and a change whose CI lies within it either way is equivalence.
const DefaultMinChange = 0.02

// Verdicts of a comparison.
const (
	Improved   = "improved"
	Regressed  = "regressed"
	NoChange   = "no significant change"
	TooNoisy   = "too noisy"
	TooFewRuns = "too few runs" // a side has no valid run
	// Undecided: no difference can be shown with these runs, whatever they measure: the
	// smallest p their number allows is above alpha (over the gated family, Holm). More runs
	// decide; "too noisy" is for when more runs of the same noise would be needed.
	Undecided = "undecided"
	// Negligible: significant, but smaller than the minimum change that matters.
	Negligible = "negligible"
	// Changed: significant, for a metric with no better direction (raw CPU utilisation).
	Changed = "changed"
	// Equivalent: the change's CI lies within ±min change: nothing changed that matters (a
	// positive statement, unlike NoChange, which says only that no change was shown).
	Equivalent = "equivalent"
)

// Decided reports whether a comparison is settled: a change that matters either way, or no
// change that matters (equivalence, or a negligible change whose CI stays within the
// minimum change).
func Decided(c Comparison) bool {
	switch c.Verdict {
	case Improved, Regressed, Equivalent:
		return true
	case Negligible:
		return c.within()
	}
	return false
}

// FinitePercent reports whether v, a change as a fraction, prints as a percentage: neither v
// nor 100*v is past float64's range, nor NaN. A ratio of two figures can be neither (1e15 over
// 1e-300), and JSON has no Inf or NaN to write one with.
func FinitePercent(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(100*v, 0)
}

// Moved: the medians differ, by a ratio or from 0.
func (c Comparison) Moved() bool { return c.Change != 0 || c.FromZero }

// rise is the change with its sign, a rise from 0 counting as +1 (no figure is negative).
func (c Comparison) rise() float64 {
	if c.FromZero {
		return 1
	}
	return c.Change
}

// ChangeHolds reports whether the change satisfies a condition on it (an expectation's
// "change: >= +5%"): a rise from 0 is above every percentage.
func (c Comparison) ChangeHolds(cond scenarios.Condition) bool {
	if c.FromZero {
		return cond.Holds(math.Inf(1))
	}
	return cond.Holds(c.Change)
}

// within: the change's CI lies inside ±MinChange.
func (c Comparison) within() bool {
	return c.MinChange > 0 && c.HasCI && c.ChangeLo > -c.MinChange && c.ChangeHi < c.MinChange
}

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
	Baseline string `json:"baseline"`
	// BaselineSide places Baseline in a merged result (off@A: side A, state off).
	BaselineSide SideOf  `json:"baseline_side,omitzero"`
	Change       float64 `json:"change"`    // median / baseline median - 1
	ChangeLo     float64 `json:"change_lo"` // its 95% CI; NaN-free: equal to Change when not computable
	ChangeHi     float64 `json:"change_hi"`
	HasCI        bool    `json:"has_ci"`
	P            float64 `json:"p"`
	Alpha        float64 `json:"alpha"`
	Verdict      string  `json:"verdict"`
	Note         string  `json:"note,omitempty"` // e.g. how many runs a verdict needs
	Paired       *Paired `json:"paired,omitempty"`
	// FromZero: the baseline's median is 0 (retransmits that were none), or so near it that the
	// ratio is past float64's range, and the state's is above it: a rise with no ratio, so
	// Change is 0, there is no CI, and the reports say "from 0" where a percentage would be.
	FromZero bool `json:"from_zero,omitempty"`
	// Gated: the metric decides the run's outcome (a gate of its workload); its p is
	// adjusted for the run's family of gated comparisons (Holm), and PAdjusted decides.
	Gated     bool    `json:"gated,omitempty"`
	PAdjusted float64 `json:"p_adjusted,omitempty"`
	// Family is how many gated comparisons its p was adjusted with (0 or 1: alone).
	Family    int     `json:"family,omitempty"`
	MinChange float64 `json:"min_change,omitempty"`
	// What the decision needs besides p: sample sizes, spreads, the metric's direction.
	NBase     int     `json:"n_base"`
	NState    int     `json:"n_state"`
	CVBase    float64 `json:"cv_base"`
	CVState   float64 `json:"cv_state"`
	Direction int     `json:"direction"`
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

// Compare measures a state's sample against its baseline's for a metric of direction dir and
// decides it with its own p. alpha <= 0 takes DefaultAlpha, cvLimit <= 0 DefaultCVLimit;
// minChange 0 decides without a minimum change.
func Compare(base, state []float64, dir Direction, alpha, cvLimit, minChange float64) Comparison {
	c := Measure(base, state, dir)
	c.Decide(c.P, alpha, cvLimit, minChange)
	return c
}

// Measure computes what a comparison rests on: the change of the medians, its CI, the
// Mann-Whitney p, the sample sizes and spreads. Decide turns it into a verdict.
func Measure(base, state []float64, dir Direction) Comparison {
	c := Comparison{P: 1, NBase: len(base), NState: len(state), Direction: int(dir)}
	if len(base) == 0 || len(state) == 0 {
		return c
	}
	th := &benchmath.Thresholds{CompareAlpha: DefaultAlpha}
	b, s := benchmath.NewSample(append([]float64(nil), base...), th), benchmath.NewSample(append([]float64(nil), state...), th)
	mb, ms := median(b.Values), median(s.Values)
	if change := ms/mb - 1; mb != 0 && FinitePercent(change) {
		c.Change = change
	} else if ms > mb {
		c.FromZero = true
	}
	c.ChangeLo, c.ChangeHi = c.Change, c.Change
	if lo, hi, ok := shiftCI(b.Values, s.Values, Confidence); ok && !c.FromZero && FinitePercent(lo) && FinitePercent(hi) {
		c.ChangeLo, c.ChangeHi, c.HasCI = lo, hi, true
	}
	// Not benchmath's Compare: its p (go-moremath's MannWhitneyUTest) is wrong with ties when
	// the sizes differ (issue 31).
	c.P = mwu.P(b.Values, s.Values)
	c.CVBase, c.CVState = Describe(base).CV, Describe(state).CV
	return c
}

// Decide sets the verdict from p (the comparison's own, or one adjusted for a family of
// comparisons) at significance level alpha.
func (c *Comparison) Decide(p, alpha, cvLimit, minChange float64) {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if cvLimit <= 0 {
		cvLimit = DefaultCVLimit
	}
	c.Alpha, c.MinChange, c.Note = alpha, minChange, ""
	if c.NBase == 0 || c.NState == 0 {
		c.Verdict, c.Note = TooFewRuns, noRuns
		return
	}
	significant := p <= alpha
	switch {
	case significant && minChange > 0 && !c.FromZero && math.Abs(c.Change) < minChange:
		c.Verdict, c.Note = Negligible, fmt.Sprintf("below %.4g%%", 100*minChange)
	case !significant && c.within():
		c.Verdict, c.Note = Equivalent, fmt.Sprintf("within ±%.4g%%", 100*minChange)
	case !significant && mwu.MinP(c.NBase, c.NState)*float64(max(c.Family, 1)) > alpha:
		c.Verdict, c.Note = Undecided, c.undecidedNote(alpha)
	case significant && c.Direction == int(NoDirection) && c.Moved():
		c.Verdict = Changed
	case significant && c.rise()*float64(c.Direction) > 0:
		c.Verdict = Improved
	case significant && c.Moved():
		c.Verdict = Regressed
	case max(c.CVBase, c.CVState) > cvLimit:
		c.Verdict = TooNoisy
		c.Note = fmt.Sprintf("CV %.1f%% / %.1f%% above %.0f%%", 100*c.CVBase, 100*c.CVState, 100*cvLimit)
	default:
		c.Verdict = NoChange
	}
}

// undecidedNote says why a comparison cannot be decided with its runs, and how many it needs:
// "4 runs per state give p >= 0.029, above alpha 0.05 / 2 gated comparisons; use at least 5".
func (c *Comparison) undecidedNote(alpha float64) string {
	runs := fmt.Sprintf("%d runs per state give", c.NBase)
	if c.NBase != c.NState {
		runs = fmt.Sprintf("%d and %d runs give", c.NBase, c.NState)
	}
	if c.NBase == 1 && c.NState == 1 {
		runs = "1 run per state gives"
	}
	family := ""
	if c.Family > 1 {
		family = fmt.Sprintf(" / %d gated comparisons", c.Family)
	}
	return fmt.Sprintf("%s p >= %.3f, above alpha %g%s; use at least %d", runs, mwu.MinP(c.NBase, c.NState), alpha, family, mwu.RunsToDecide(alpha, c.Family))
}

// Holm adjusts p-values for a family of comparisons (Holm-Bonferroni, step-down): the
// family-wise error rate stays at most alpha under any dependence between them.
func Holm(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, len(ps))
	running, m := 0.0, len(ps)
	for rank, i := range idx {
		adj := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// SortedMedian is the median of sorted values (of none: NaN).
func SortedMedian(sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return median(sorted)
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
	logs := func(v []float64) ([]float64, bool) {
		out := make([]float64, len(v))
		for i, x := range v {
			if x <= 0 {
				return nil, false
			}
			out[i] = math.Log(x)
		}
		return out, true
	}
	lx, okx := logs(base)
	ly, oky := logs(state)
	if !okx || !oky {
		return 0, 0, false
	}
	diffs := make([]float64, 0, n*m)
	for _, x := range lx {
		for _, y := range ly {
			diffs = append(diffs, y-x)
		}
	}
	// The interval is [diffs[k-1], diffs[nm-k]] (1-based), k the largest with
	// P(U <= k-1) <= (1-level)/2 under the null distribution of U.
	k := 0
	if n*m <= maxExactProduct {
		k = exactCriticalU(n, m, level)
	} else {
		k = normalCriticalU(base, state, level)
	}
	if k <= 0 {
		return 0, 0, false
	}
	// Two order statistics of n*m differences: selected, not sorted (1000 runs per state
	// are a million differences per metric).
	low := nthSmallest(diffs, k-1)
	high := nthSmallest(diffs, n*m-k)
	return math.Exp(low) - 1, math.Exp(high) - 1, true
}

// nthSmallest returns the element that would be at index i (0-based) if v were sorted, in
// linear expected time (quickselect with the median of three); v is reordered.
func nthSmallest(v []float64, i int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three as the pivot: sorted or constant input stays linear.
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		a, b := lo, hi
		for a <= b {
			for v[a] < pivot {
				a++
			}
			for v[b] > pivot {
				b--
			}
			if a <= b {
				v[a], v[b] = v[b], v[a]
				a++
				b--
			}
		}
		switch {
		case i <= b:
			hi = b
		case i >= a:
			lo = a
		default:
			return v[i]
		}
	}
	return v[i]
}

// maxExactProduct is the largest n*m whose U distribution is counted exactly: its cost grows
// as (n*m)^2 (at 100 runs per state, 1.7 s and 427 MB). Above it the normal approximation is
// as good as exact to the rank, as scipy and benchstat use it.
const maxExactProduct = 50 * 50

// exactCriticalU is k under the exact null distribution of U (no ties).
func exactCriticalU(n, m int, level float64) int {
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
	return k
}

// normalCriticalU is k under the normal approximation of U: mean nm/2, variance
// nm/12 ((n+m+1) - sum(t^3-t)/((n+m)(n+m-1))) with t the sizes of the groups of tied values.
func normalCriticalU(base, state []float64, level float64) int {
	n, m := float64(len(base)), float64(len(state))
	all := append(append([]float64(nil), base...), state...)
	sort.Float64s(all)
	ties := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	N := n + m
	sd := math.Sqrt(n * m / 12 * ((N + 1) - ties/(N*(N-1))))
	z := normalQuantile(1 - (1-level)/2)
	return int(math.Floor(n*m/2 - z*sd))
}

// normalQuantile is the standard normal distribution's quantile function.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

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
		if !ok || b == 0 || math.IsInf(s/b, 0) {
			continue // no ratio: from 0, or from a figure so near it that the ratio is past float64's range
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
