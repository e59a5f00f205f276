// Package changepoint finds where a series of run results moved: E-divisive means (Matteson
// and James) to place candidate change points, a Welch t-test to decide each, in sliding
// windows, with a split pass at a looser p-value and a merge pass that removes the weakest
// change point until every one left passes (the method of Apache Otava, docs/MATH.md). A
// minimum segment length keeps a single outlying run from being a change point. Everything
// is deterministic: the same series gives the same change points.
package changepoint

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Options tune the detection; zero fields take the defaults.
type Options struct {
	PValue     float64 // a change point needs p below this (default 0.001)
	Magnitude  float64 // and |after/before - 1| at least this (default 0)
	MinSegment int     // runs on each side of a change point, at least (default 3)
	Window     int     // points per window of the split pass (default 50)
}

// Defaults.
const (
	DefaultPValue     = 0.001
	DefaultMinSegment = 3
	DefaultWindow     = 50
)

func (o Options) withDefaults() Options {
	if o.PValue <= 0 {
		o.PValue = DefaultPValue
	}
	if o.MinSegment < 2 {
		o.MinSegment = DefaultMinSegment
	}
	if o.Window < 2*o.MinSegment {
		o.Window = max(DefaultWindow, 2*o.MinSegment)
	}
	return o
}

// ChangePoint is a place where a series moved: xs[Index] is the first point of the new level.
type ChangePoint struct {
	Index  int     `json:"index"`
	Before float64 `json:"before"` // mean of the segment before
	After  float64 `json:"after"`  // mean of the segment after
	Change float64 `json:"change"` // After/Before - 1
	P      float64 `json:"p"`      // Welch's t-test between the two segments
	// FromZero: Before is 0, or so near it that After/Before is past float64's range, and
	// After is above it: a rise with no ratio (Change is 0), above any magnitude.
	FromZero bool `json:"from_zero,omitempty"`
}

// Detect returns the change points of a series, in order.
func Detect(xs []float64, opt Options) []ChangePoint {
	opt = opt.withDefaults()
	if len(xs) < 2*opt.MinSegment {
		return nil
	}
	candidates := split(xs, opt)
	return merge(xs, candidates, opt)
}

// split runs E-divisive in windows that overlap by half, with a p-value ten times looser than
// the final one, and collects every change point found.
func split(xs []float64, opt Options) []int {
	loose := math.Min(opt.PValue*10, 0.5)
	found := map[int]bool{}
	step := max(opt.Window/2, 1)
	for start := 0; ; start += step {
		end := min(start+opt.Window, len(xs))
		for _, i := range eDivisive(xs[start:end], loose, opt.MinSegment) {
			found[start+i] = true
		}
		if end == len(xs) {
			break
		}
	}
	out := make([]int, 0, len(found))
	for i := range found {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// eDivisive bisects a window hierarchically: in each segment, the split that maximises the
// energy statistic Q̂; the best split of all segments is kept if its t-test passes, until
// none does.
func eDivisive(xs []float64, pvalue float64, minSeg int) []int {
	n := len(xs)
	if n < 2*minSeg {
		return nil
	}
	// prefix[i][j] = Σ_{a<i, b<j} |x_a - x_b|: any block of pairwise distances in O(1).
	prefix := make([][]float64, n+1)
	for i := range prefix {
		prefix[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			prefix[i][j] = prefix[i-1][j] + prefix[i][j-1] - prefix[i-1][j-1] + math.Abs(xs[i-1]-xs[j-1])
		}
	}
	block := func(a, b, c, d int) float64 { // Σ_{a<=i<b, c<=j<d} |x_i - x_j|
		return prefix[b][d] - prefix[a][d] - prefix[b][c] + prefix[a][c]
	}
	bounds := []int{0, n}
	var points []int
	for {
		best, bestQ := -1, 0.0
		for k := 0; k+1 < len(bounds); k++ {
			a, b := bounds[k], bounds[k+1]
			for tau := a + minSeg; tau <= b-minSeg; tau++ {
				l, r := float64(tau-a), float64(b-tau)
				between := 2 * block(a, tau, tau, b) / (l * r)
				within := 0.0
				if l > 1 {
					within += block(a, tau, a, tau) / (l * (l - 1))
				}
				if r > 1 {
					within += block(tau, b, tau, b) / (r * (r - 1))
				}
				q := l * r / (l + r) * (between - within)
				if q > bestQ {
					best, bestQ = tau, q
				}
			}
		}
		if best < 0 {
			return points
		}
		k, _ := slices.BinarySearch(bounds, best)
		if p := tTest(xs[bounds[k-1]:best], xs[best:bounds[k]]); p >= pvalue {
			return points
		}
		bounds = slices.Insert(bounds, k, best)
		points = append(points, best)
	}
}

// merge removes the weakest change point, tested against its neighbours' segments, until
// every one left has p below the p-value, the magnitude asked, and segments of the minimum
// length on both sides.
func merge(xs []float64, points []int, opt Options) []ChangePoint {
	for {
		if len(points) == 0 {
			return nil
		}
		cps := make([]ChangePoint, len(points))
		weakest, weakestScore := -1, -1.0
		for i, idx := range points {
			lo, hi := 0, len(xs)
			if i > 0 {
				lo = points[i-1]
			}
			if i+1 < len(points) {
				hi = points[i+1]
			}
			left, right := xs[lo:idx], xs[idx:hi]
			cp := ChangePoint{Index: idx, Before: mean(left), After: mean(right), P: tTest(left, right)}
			// No ratio from 0, nor from a level so near it that the ratio is past float64's
			// range (1e15 over 1e-300): a report would print it as "+Inf%", and JSON has no Inf.
			if change := cp.After/cp.Before - 1; cp.Before != 0 && !math.IsNaN(change) && !math.IsInf(100*change, 0) {
				cp.Change = change
			} else if cp.After > cp.Before {
				cp.FromZero = true
			}
			cps[i] = cp
			// Failing points are ranked: short segments first, then by p.
			score := -1.0
			switch {
			case len(left) < opt.MinSegment || len(right) < opt.MinSegment:
				score = 2
			case cp.P >= opt.PValue || (!cp.FromZero && math.Abs(cp.Change) < opt.Magnitude):
				score = cp.P
			}
			if score > weakestScore {
				weakest, weakestScore = i, score
			}
		}
		if weakestScore < 0 {
			return cps
		}
		points = slices.Delete(points, weakest, weakest+1)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// tTest is the two-sided p-value of Student's t-test with the variance pooled over both
// segments: the noise of a run does not change with its level, and a short segment's own
// variance (Welch's test) is too unsure to judge it by; 1 when it cannot be computed, 0 for
// two constant segments that differ.
func tTest(a, b []float64) float64 {
	na, nb := float64(len(a)), float64(len(b))
	if na < 1 || nb < 1 || na+nb < 3 {
		return 1
	}
	ma, mb := mean(a), mean(b)
	ss := 0.0
	for _, x := range a {
		ss += (x - ma) * (x - ma)
	}
	for _, x := range b {
		ss += (x - mb) * (x - mb)
	}
	df := na + nb - 2
	se := math.Sqrt(ss / df * (1/na + 1/nb))
	if se == 0 {
		if ma == mb {
			return 1
		}
		return 0
	}
	t := (ma - mb) / se
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}
