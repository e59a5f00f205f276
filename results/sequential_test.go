package results

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sequence runs one adaptive comparison of a metric whose state b is shifted by shift (CV cv,
// one run per state and round) and returns its final verdict and rounds.
func sequence(rng *rand.Rand, seq Sequential, shift, cv float64) (string, int) {
	c := Case{States: []StateRecord{{Name: "a"}, {Name: "b", CompareTo: "a"}}}
	gates := map[string][]string{"w": {Throughput}}
	max := seq.Looks[len(seq.Looks)-1]
	for round := 1; round <= max; round++ {
		for _, st := range []string{"a", "b"} {
			v := 10e9 * (1 + cv*rng.NormFloat64())
			if st == "b" {
				v *= 1 + shift
			}
			c.Samples = append(c.Samples, Sample{Round: round, State: st, Workload: "w", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: v}}})
		}
		if k := seq.Look(round); k >= 0 {
			sums, open := DecideLook(c, []string{"w"}, gates, seq.Alpha[k], DefaultCVLimit, DefaultMinChange)
			if len(open) == 0 || round == max {
				for _, s := range sums {
					if s.Comparison != nil {
						return s.Comparison.Verdict, round
					}
				}
			}
		}
	}
	return "", max
}

func TestSequentialDesign(t *testing.T) {
	seq := NewSequential(20, 0.05, 1)
	if !slices.Equal(seq.Looks, []int{5, 7, 10, 14, 20}) || seq.Alpha[0] != 0.01 {
		t.Fatalf("design %v", seq)
	}
	// The first look can decide: 5 runs per state reach p = 2/C(10,5) = 0.0079 <= 0.01.
	if 2/binomial(10, 5) > seq.Alpha[0] {
		t.Fatalf("the first look cannot reach its alpha")
	}
	rng := rand.New(rand.NewPCG(7, 7))

	// A/A: ending regressed or improved is a false alarm; at most alpha of the sequences.
	alarms := 0
	const aa = 2000
	for i := 0; i < aa; i++ {
		if v, _ := sequence(rng, seq, 0, 0.05); v == Regressed || v == Improved {
			alarms++
		}
	}
	t.Logf("A/A: %d of %d sequences alarmed", alarms, aa)
	if float64(alarms) > 0.05*aa {
		t.Errorf("A/A: %d of %d sequences ended significant, want at most 5%%", alarms, aa)
	}

	// A collapse (as the vxlan's 99.9%, or a token bucket) is decided at the first look.
	for i := 0; i < 100; i++ {
		if v, rounds := sequence(rng, seq, -0.5, 0.08); v != Regressed || rounds > 5 {
			t.Fatalf("collapse: %s after %d rounds", v, rounds)
		}
	}

	// A 5% effect under 3% CV: 6 fixed runs at alpha 0.05 often miss it; the adaptive design
	// goes on past 6 rounds and decides it.
	fixed, adaptive, late := 0, 0, 0
	const small = 500
	for i := 0; i < small; i++ {
		var a, b []float64
		for r := 0; r < 6; r++ {
			a, b = append(a, 100*(1+0.03*rng.NormFloat64())), append(b, 95*(1+0.03*rng.NormFloat64()))
		}
		if Compare(a, b, HigherIsBetter, 0.05, DefaultCVLimit, DefaultMinChange).Verdict == Regressed {
			fixed++
		}
		v, rounds := sequence(rng, seq, -0.05, 0.03)
		if v == Regressed {
			adaptive++
			if rounds > 6 {
				late++
			}
		}
	}
	t.Logf("5%% effect, CV 3%%: 6 fixed runs decide %d of %d, adaptive %d (%d after more than 6 rounds)", fixed, small, adaptive, late)
	if adaptive <= fixed || float64(adaptive) < 0.9*small || late == 0 {
		t.Errorf("adaptive %d, fixed %d, late %d of %d", adaptive, fixed, late, small)
	}
}
