// Package mwu is the arithmetic of the two-sided Mann-Whitney U test that decides before any
// run whether a comparison can be decided at all: the smallest p its sample sizes allow, and
// the runs per state a family of comparisons needs.
package mwu

// MinP is the smallest two-sided p the exact Mann-Whitney test can give for samples of n and m
// values (complete separation, no ties): 2 / C(n+m, n).
func MinP(n, m int) float64 {
	if n <= 0 || m <= 0 {
		return 1
	}
	return min(1, 2/binomial(n+m, n))
}

// RunsToDecide is the fewest runs per state (both states alike) with which a comparison
// adjusted together with family-1 others (Holm: its p multiplied by family at worst) can reach
// alpha.
func RunsToDecide(alpha float64, family int) int {
	family = max(family, 1)
	for n := 1; n < 1000; n++ {
		if MinP(n, n)*float64(family) <= alpha {
			return n
		}
	}
	return 1000
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
