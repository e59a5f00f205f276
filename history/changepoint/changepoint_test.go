package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// series is n points of level 100 with noise of the given CV, stepping by step (a fraction)
// at index at (at < 0: no step); seeded, so every run of the test sees the same numbers.
func series(seed uint64, n, at int, step, cv float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 42))
	xs := make([]float64, n)
	for i := range xs {
		level := 100.0
		if at >= 0 && i >= at {
			level *= 1 + step
		}
		xs[i] = level * (1 + cv*rng.NormFloat64())
	}
	return xs
}

// TestKnownSteps: steps of 3% to 50% under noise of CV 1-10%, whenever the step is at least
// three times the noise: each is found, as the only change point, in the right direction, at
// its place ± 1 run in at least 97% of the series and ± 2 runs in all. At exactly three times
// the noise a few noisy points can look like the old level: in one series here (-3%, CV 1%,
// seed 2) the runs 12 and 13 after the step read 97.4 and 99.8, and the data itself puts the
// change at 14.
func TestKnownSteps(t *testing.T) {
	checked, off := 0, 0
	for _, step := range []float64{0.03, 0.05, 0.10, 0.50, -0.03, -0.10} {
		for _, cv := range []float64{0.01, 0.02, 0.05, 0.10} {
			if abs(step) < 3*cv {
				continue
			}
			for seed := uint64(1); seed <= 5; seed++ {
				for _, at := range []int{12, 30, 55} {
					xs := series(seed, 70, at, step, cv)
					cps := Detect(xs, Options{})
					if len(cps) != 1 || cps[0].Index < at-2 || cps[0].Index > at+2 {
						t.Errorf("step %+.0f%% at %d, CV %.0f%%, seed %d: change points %+v", 100*step, at, 100*cv, seed, cps)
						continue
					}
					if cps[0].Index < at-1 || cps[0].Index > at+1 {
						off++
						t.Logf("step %+.0f%% at %d, CV %.0f%%, seed %d: found at %d", 100*step, at, 100*cv, seed, cps[0].Index)
					}
					if (cps[0].Change > 0) != (step > 0) {
						t.Errorf("step %+.0f%%: change %+.3f", 100*step, cps[0].Change)
					}
					checked++
				}
			}
		}
	}
	if checked < 100 || float64(off) > 0.03*float64(checked) {
		t.Errorf("%d series checked, %d found more than one run off", checked, off)
	}
	t.Logf("%d series, %d found more than one run off", checked, off)
}

// TestFalsePositives: of 200 series without a step (CV 5%), at most 5% have any change point.
func TestFalsePositives(t *testing.T) {
	with := 0
	for seed := uint64(1); seed <= 200; seed++ {
		if cps := Detect(series(1000+seed, 60, -1, 0, 0.05), Options{}); len(cps) > 0 {
			with++
		}
	}
	t.Logf("%d of 200 step-free series have a change point", with)
	if with > 10 {
		t.Errorf("%d of 200 step-free series have a change point, want at most 10", with)
	}
}

// TestOutlier: one run far off is not a change point, at any place in the series.
func TestOutlier(t *testing.T) {
	for _, at := range []int{0, 1, 20, 38, 39} {
		xs := series(7, 40, -1, 0, 0.02)
		xs[at] *= 1.6
		if cps := Detect(xs, Options{}); len(cps) > 0 {
			t.Errorf("an outlier at %d: %+v", at, cps)
		}
	}
}

// TestDeterministic: the same series, the same answer; two steps are both found.
func TestDeterministic(t *testing.T) {
	xs := series(3, 90, 30, -0.05, 0.01)
	for i := 60; i < 90; i++ {
		xs[i] *= 1.3
	}
	a, b := Detect(xs, Options{}), Detect(slices.Clone(xs), Options{})
	if !slices.Equal(a, b) {
		t.Errorf("two answers: %+v / %+v", a, b)
	}
	if len(a) != 2 || a[0].Index != 30 || a[1].Index != 60 {
		t.Errorf("two steps: %+v", a)
	}
	if big := Detect(xs, Options{Magnitude: 0.2}); len(big) != 1 || big[0].Index != 60 {
		t.Errorf("--magnitude 20%%: %+v", big)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// BenchmarkAnalyze1000x500: change points of 1,000 series of 500 runs each (CV 5%, a step in
// every tenth), what `history analyze` computes over a large history.
func BenchmarkAnalyze1000x500(b *testing.B) {
	all := make([][]float64, 1000)
	for i := range all {
		at := -1
		if i%10 == 0 {
			at = 250
		}
		all[i] = series(uint64(i), 500, at, -0.1, 0.05)
	}
	for b.Loop() {
		found := 0
		for _, xs := range all {
			found += len(Detect(xs, Options{}))
		}
		b.ReportMetric(float64(found), "changepoints")
	}
}

// TestStepFromNearZero: a step from 0, or from a level so near it that the ratio is past
// float64's range (a stored result's 1e-300 runs, then 1e15), is found as a rise from 0 with
// no ratio, above any magnitude: never a change of +Inf (the history's table would print
// "+Inf%" and its JSON could not encode it), nor of 0 (dropped below the magnitude).
func TestStepFromNearZero(t *testing.T) {
	for _, before := range []float64{1e-300, 5e-324, 0} {
		xs := slices.Repeat([]float64{before}, 10)
		xs = append(xs, slices.Repeat([]float64{1e15}, 10)...)
		cps := Detect(xs, Options{Magnitude: 0.05})
		if len(cps) != 1 || cps[0].Index != 10 || !cps[0].FromZero || cps[0].Change != 0 {
			t.Errorf("from %g: change points %+v, want one from 0 at 10", before, cps)
		}
		for _, cp := range cps {
			if math.IsNaN(cp.Change) || math.IsInf(cp.Change, 0) || math.IsInf(100*cp.Change, 0) {
				t.Errorf("from %g: change point %+v", before, cp)
			}
		}
	}
}
