package mwu

import (
	"math"
	"sort"
)

// MaxExactProduct is the largest n*m for which P counts the permutation distribution exactly;
// above it the normal approximation with the tie correction is as good to the third digit,
// and the count would cost (n*m)^2/2 steps.
const MaxExactProduct = 50 * 50

// P is the two-sided p of the Mann-Whitney U test (Wilcoxon rank-sum) of x against y: twice
// the smaller of the two tails of x's rank sum, over every way to split the pooled values into
// groups of len(x) and len(y) (the probability of a rank sum at most x's, and of one at least
// x's), at most 1. Tied values take their mid-rank, and the distribution is that of the tied
// ranks themselves (conditional on the ties), so p is exact with ties and with n != m, and
// P(x, y) == P(y, x). Above MaxExactProduct, the normal approximation with the tie-corrected
// variance and a continuity correction.
//
// Twice the smaller tail is the definition MinP assumes: no split is more extreme than complete
// separation, whose tail is at least 1/C(n+m, n), so p is never below MinP(n, m) and a tie can
// never make a comparison decidable that its sample sizes cannot decide. Counting both sides at
// the observed distance from the mean instead (coin's exact test) lets ties, which make the
// distribution asymmetric, leave one side empty: 2 runs against 5, completely separated, read
// p = 1/21 = 0.048 when two of the five tied and 2/21 = 0.095 when they did not. (go-moremath's
// exact branch, which nsperf used before, doubles the tail of min(U1, U2) under U1's
// distribution, which ties make wrong in another way.)
func P(x, y []float64) float64 {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 1
	}
	ranks := doubledRanks(x, y)
	// W2: twice the rank sum of x; its mean is n(N+1), an integer too.
	w2 := 0
	for _, r := range ranks[:n] {
		w2 += r
	}
	mean2 := n * (n + m + 1)
	if n*m > MaxExactProduct {
		return normalP(w2, mean2, n, m, ranks)
	}
	dist, total := rankSumDistribution(ranks, n)
	lower, upper := 0.0, 0.0
	for s, ways := range dist {
		if s <= w2 {
			lower += ways
		}
		if s >= w2 {
			upper += ways
		}
	}
	return min(1, 2*min(lower, upper)/total)
}

// doubledRanks are the mid-ranks of the pooled values (x first, then y), doubled so that a
// tie's mid-rank (k + (t-1)/2) is an integer.
func doubledRanks(x, y []float64) []int {
	all := append(append([]float64(nil), x...), y...)
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return all[order[a]] < all[order[b]] })
	ranks := make([]int, len(all))
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && all[order[j]] == all[order[i]] {
			j++
		}
		// positions i..j-1 (0-based) hold ranks i+1..j; their mid-rank doubled is i+1+j.
		for k := i; k < j; k++ {
			ranks[order[k]] = i + 1 + j
		}
		i = j
	}
	return ranks
}

// rankSumDistribution counts, for each s, the subsets of n of the ranks whose sum is s, and
// returns the counts with their total C(len(ranks), n). Each rank is one item, so tied ranks
// are distinct items with equal values, as in the permutation test.
func rankSumDistribution(ranks []int, n int) ([]float64, float64) {
	maxSum := 0
	sorted := append([]int(nil), ranks...)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	for _, r := range sorted[:n] {
		maxSum += r
	}
	// f[j][s]: subsets of j of the ranks seen so far with sum s.
	f := make([][]float64, n+1)
	for j := range f {
		f[j] = make([]float64, maxSum+1)
	}
	f[0][0] = 1
	for i, r := range ranks {
		for j := min(i+1, n); j >= 1; j-- {
			prev, cur := f[j-1], f[j]
			for s := maxSum; s >= r; s-- {
				if prev[s-r] != 0 {
					cur[s] += prev[s-r]
				}
			}
		}
	}
	return f[n], binomial(len(ranks), n)
}

// normalP is the normal approximation of P: U = W - n(n+1)/2 has mean nm/2 and variance
// nm/12 ((N+1) - sum(t^3-t)/(N(N-1))) over the groups of t tied values.
func normalP(w2, mean2, n, m int, ranks []int) float64 {
	N := float64(n + m)
	groups := map[int]float64{}
	for _, r := range ranks {
		groups[r]++
	}
	ties := 0.0
	for _, t := range groups {
		ties += t*t*t - t
	}
	sd := math.Sqrt(float64(n*m) / 12 * ((N + 1) - ties/(N*(N-1))))
	if sd == 0 {
		return 1 // every value the same
	}
	dev := math.Max(0, math.Abs(float64(w2-mean2))/2-0.5)
	return min(1, math.Erfc(dev/sd/math.Sqrt2))
}
