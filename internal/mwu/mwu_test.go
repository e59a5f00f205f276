package mwu

import (
	"math"
	"testing"
)

func TestMinPAndRuns(t *testing.T) {
	for _, c := range []struct {
		n, m int
		p    float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 1, 1}, {0, 5, 1}} {
		if got := MinP(c.n, c.m); math.Abs(got-c.p) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %g, want %g", c.n, c.m, got, c.p)
		}
	}
	for _, c := range []struct {
		alpha  float64
		family int
		want   int
	}{{0.05, 1, 4}, {0.05, 2, 5}, {0.05, 4, 5}, {0.05, 8, 6}, {0.01, 1, 5}} {
		if got := RunsToDecide(c.alpha, c.family); got != c.want {
			t.Errorf("RunsToDecide(%g, %d) = %d, want %d", c.alpha, c.family, got, c.want)
		}
	}
}
