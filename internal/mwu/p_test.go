package mwu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForceP is the two-sided permutation p of the Mann-Whitney statistic, twice the smaller
// tail, by enumeration of every split of the pooled values into groups of len(x) and len(y),
// U counted pair by pair (ties count a half): written without ranks, so that it checks P's
// rank arithmetic.
func bruteForceP(x, y []float64) float64 {
	all := append(append([]float64(nil), x...), y...)
	n, N := len(x), len(all)
	u := func(in []bool) float64 {
		s := 0.0
		for i := range all {
			for j := range all {
				if in[i] && !in[j] {
					switch {
					case all[i] > all[j]:
						s++
					case all[i] == all[j]:
						s += 0.5
					}
				}
			}
		}
		return s
	}
	in := make([]bool, N)
	for i := range n {
		in[i] = true
	}
	observed := u(in)
	lower, upper, total := 0, 0, 0
	var walk func(i, left int)
	walk = func(i, left int) {
		if left == 0 {
			total++
			if v := u(in); v <= observed+1e-9 {
				lower++
			}
			if v := u(in); v >= observed-1e-9 {
				upper++
			}
			return
		}
		if N-i < left {
			return
		}
		in[i] = true
		walk(i+1, left-1)
		in[i] = false
		walk(i+1, left)
	}
	clear(in)
	walk(0, n)
	return math.Min(1, 2*float64(min(lower, upper))/float64(total))
}

func TestPAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 31))
	draw := func(k int, tied bool) []float64 {
		xs := make([]float64, k)
		for i := range xs {
			if tied {
				xs[i] = float64(rng.IntN(4)) // four values: ties in nearly every sample
			} else {
				xs[i] = rng.Float64()
			}
		}
		return xs
	}
	checked := 0
	for n := 1; n <= 8; n++ {
		for m := 1; m <= 8; m++ {
			for trial := range 6 {
				tied := trial%2 == 0
				x, y := draw(n, tied), draw(m, tied)
				if trial == 5 { // separated: the smallest p these sizes give
					for i := range y {
						y[i] += 10
					}
				}
				want := bruteForceP(x, y)
				if got := P(x, y); math.Abs(got-want) > 1e-12 {
					t.Fatalf("P(%v, %v) = %.6f, brute force %.6f", x, y, got, want)
				}
				// No tie makes p smaller than the sizes allow (issue 42, item 6).
				if got := P(x, y); got < MinP(n, m)-1e-12 {
					t.Fatalf("P(%v, %v) = %.6f, below MinP(%d, %d) = %.6f", x, y, got, n, m, MinP(n, m))
				}
				if got := P(y, x); math.Abs(got-want) > 1e-12 {
					t.Fatalf("P(%v, %v) swapped = %.6f, brute force %.6f", y, x, got, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d sample pairs agree with the enumeration", checked)
}

// Ties with unequal sizes: the cases go-moremath got wrong (issue 31, item 2), and the ones
// the distance from the mean made decidable where the sizes are not (issue 42, item 6): a
// completely separated pair reads MinP whether or not values of a group tie.
func TestPTiesUnequalSizes(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{5, 5, 6}, []float64{0, 1}, 0.2},                         // C(5,3) = 10 splits, the observed one alone in its tail: 2/10 = MinP(3, 2)
		{[]float64{10, 10.2}, []float64{6.1, 6, 6.2, 5.9, 6}, 2.0 / 21},    // moremath: 0.0000; the distance from the mean: 1/21 = 0.048
		{[]float64{6.1, 6, 6.2, 5.9, 6}, []float64{10, 10.2}, 2.0 / 21},    // moremath: 0.0952
		{[]float64{10, 10.2}, []float64{6.1, 6.05, 6.2, 5.9, 6}, 2.0 / 21}, // the same without the tie
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},                      // no ties: 2 / C(6,3)
		{[]float64{3, 3, 3}, []float64{3, 3}, 1},                           // all tied
	} {
		if got := P(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(%v, %v) = %.4f, want %.4f", c.x, c.y, got, c.want)
		}
	}
}

// Above MaxExactProduct the normal approximation serves; where both can be computed they agree.
func TestPNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		x, y := make([]float64, 50), make([]float64, 50)
		for i := range x {
			x[i], y[i] = float64(rng.IntN(20)), float64(rng.IntN(20)+trial%3)
		}
		ranks := doubledRanks(x, y)
		w2 := 0
		for _, r := range ranks[:50] {
			w2 += r
		}
		exact, normal := P(x, y), normalP(w2, 50*101, 50, 50, ranks)
		if math.Abs(exact-normal) > 0.01 {
			t.Errorf("trial %d: exact %.4f, normal %.4f", trial, exact, normal)
		}
	}
	if p := P(make([]float64, 60), make([]float64, 60)); p != 1 {
		t.Errorf("60 equal values each: p %g", p)
	}
}
