package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/mwu"
	"github.com/nsperf/nsperf/scenarios"
)

func TestMannWhitneyAgainstEnumeration(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"4v4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}},
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}},
		{"5v5 interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}},
		{"5v6 overlapping", []float64{10.1, 10.4, 9.8, 10.0, 10.3}, []float64{10.6, 10.2, 10.9, 11.0, 10.7, 10.5}},
		{"6v6 partly", []float64{8.1, 8.3, 8.2, 9.0, 8.8, 8.5}, []float64{8.9, 9.2, 9.4, 8.4, 9.1, 9.6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// mwu.P is checked against an enumeration of every split (internal/mwu).
			want := mwu.P(tc.x, tc.y)
			got := Compare(tc.x, tc.y, HigherIsBetter, 0, 0, 0).P
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("p = %v, want %v (exact)", got, want)
			}
		})
	}
}

func TestMannWhitneyTies(t *testing.T) {
	// With ties p is the exact permutation p of the tied ranks, and identical samples give 1.
	x, y := []float64{1, 2, 2, 3, 4}, []float64{2, 3, 3, 4, 5}
	if got, want := Compare(x, y, HigherIsBetter, 0, 0, 0).P, mwu.P(x, y); math.Abs(got-want) > 1e-12 {
		t.Errorf("ties: p = %v, enumeration %v", got, want)
	}
	same := []float64{7, 7, 7, 7, 7}
	if c := Compare(same, same, HigherIsBetter, 0, 0, 0); c.P != 1 || c.Verdict != NoChange {
		t.Errorf("identical samples: %+v", c)
	}
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, st  []float64
		dir       Direction
		verdict   string
		wantNote  bool
		wantPLess float64
	}{
		{"higher is better, up", []float64{10, 10.1, 10.2, 10.05}, []float64{11, 11.1, 11.2, 11.05}, HigherIsBetter, Improved, false, 0.05},
		{"higher is better, down", []float64{10, 10.1, 10.2, 10.05}, []float64{5, 5.1, 5.2, 5.05}, HigherIsBetter, Regressed, false, 0.05},
		{"latency down is better", []float64{50, 51, 52, 53}, []float64{40, 41, 42, 43}, LowerIsBetter, Improved, false, 0.05},
		{"zero variance, different", []float64{5, 5, 5, 5}, []float64{6, 6, 6, 6}, HigherIsBetter, Improved, false, 0.05},
		{"three runs can never be significant", []float64{1, 2, 3}, []float64{7, 8, 9}, HigherIsBetter, Undecided, true, 1.01},
		{"one run", []float64{10}, []float64{20}, HigherIsBetter, Undecided, true, 1.01},
		{"no change, quiet", []float64{10, 10.01, 10.02, 10.03, 10.04}, []float64{10.005, 10.015, 10.025, 10.035, 10.045}, HigherIsBetter, NoChange, false, 1.01},
		{"no change, noisy", []float64{8, 12, 9, 11, 10}, []float64{9, 11, 10, 12, 8.5}, HigherIsBetter, TooNoisy, true, 1.01},
		{"no runs", nil, []float64{1}, HigherIsBetter, TooFewRuns, true, 1.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.base, tc.st, tc.dir, 0, 0, 0)
			if c.Verdict != tc.verdict || (c.Note != "") != tc.wantNote || c.P >= tc.wantPLess {
				t.Errorf("Compare = %+v, want verdict %q", c, tc.verdict)
			}
		})
	}
	if mwu.RunsToDecide(0.05, 1) != 4 || mwu.RunsToDecide(0.01, 1) != 5 {
		t.Errorf("runs to decide: %d %d", mwu.RunsToDecide(0.05, 1), mwu.RunsToDecide(0.01, 1))
	}
}

// The Moses interval by hand: n = m = 5, alpha = 0.05. P(U <= 2) = 4/252 <= 0.025 <
// P(U <= 3) = 7/252, so k = 3 and the interval is the 3rd smallest and the 3rd largest of the
// 25 log ratios.
func TestShiftCIByHand(t *testing.T) {
	base := []float64{100, 102, 104, 106, 108}
	state := []float64{110, 111, 113, 115, 119}
	var d []float64
	for _, x := range base {
		for _, y := range state {
			d = append(d, math.Log(y)-math.Log(x))
		}
	}
	sort.Float64s(d)
	lo, hi, ok := shiftCI(base, state, 0.95)
	if !ok || !near(lo, math.Exp(d[2])-1) || !near(hi, math.Exp(d[22])-1) {
		t.Fatalf("shiftCI = %v, %v, %v; want %v, %v", lo, hi, ok, math.Exp(d[2])-1, math.Exp(d[22])-1)
	}
	if _, _, ok := shiftCI([]float64{1, 2}, []float64{3, 4}, 0.95); ok {
		t.Error("an interval from 2+2 runs, which cannot reach 95%")
	}
	dist := uDistribution(5, 5)
	if dist[0] != 1 || dist[1] != 1 || dist[2] != 2 || dist[3] != 3 || len(dist) != 26 {
		t.Errorf("U distribution for 5+5 starts %v", dist[:4])
	}
}

// The median CI comes from benchmath: for 6 values at 95% it is [min, max] (order statistics
// 1 and 6), and 5 values are too few for an interval.
func TestCentre(t *testing.T) {
	c := CentreOf([]float64{5, 1, 3, 2, 6, 4})
	if c.Median != 3.5 || c.Lo == nil || *c.Lo != 1 || *c.Hi != 6 || c.Warning != "" {
		t.Errorf("6 values: %+v", c)
	}
	if c := CentreOf([]float64{1, 2, 3, 4, 5}); c.Lo != nil || c.Warning == "" {
		t.Errorf("5 values: %+v", c)
	}
}

// TestLargeSamplesUseTheNormalApproximation: above the exact U distribution's size the
// interval comes from the normal approximation, which agrees with the exact one where both
// are computed, and 1000 runs per state give the right answer at once (make bench times it).
func TestLargeSamplesUseTheNormalApproximation(t *testing.T) {
	for _, n := range []int{20, 35, 50} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		exact, normal := exactCriticalU(n, n, Confidence), normalCriticalU(xs, xs, Confidence)
		if d := exact - normal; d < -1 || d > 1 {
			t.Errorf("n=m=%d: exact k %d, normal k %d", n, exact, normal)
		}
	}
	base, state := make([]float64, 1000), make([]float64, 1000)
	for i := range base {
		noise := 1 + 0.05*math.Sin(float64(i)*1.7) // deterministic spread of ±5%
		base[i], state[i] = 10e9*noise, 11e9*(1+0.05*math.Cos(float64(i)*2.3))
	}
	c := Compare(base, state, HigherIsBetter, DefaultAlpha, DefaultCVLimit, DefaultMinChange)
	if !c.HasCI || c.ChangeLo > 0.10 || c.ChangeHi < 0.10 || c.P > 0.001 || c.Verdict != Improved {
		t.Errorf("1000 runs per state, +10%%: %+v", c)
	}
}

// TestOversizedResultRefused: a result with more samples of one state and workload than a run
// measures is refused as input with a sentence, before any statistics are computed.
func TestOversizedResultRefused(t *testing.T) {
	r := testResult()
	var samples []Sample
	for i := 0; i <= MaxRunsPerState; i++ {
		samples = append(samples, Sample{Round: i + 1, State: "off", Workload: "tcp4", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: 1e9}}})
	}
	r.Cases[0].Samples = samples
	var b bytes.Buffer
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	_, _, err := Parse("big.json", b.Bytes())
	var input *InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), "more than 1000 samples of state off, workload tcp4") {
		t.Errorf("an oversized result: %v", err)
	}
}

// BenchmarkCompare1000 is one comparison of 1000 runs per state (make bench): the normal
// approximation keeps it to milliseconds, where the exact interval would need (n*m)^2.
func BenchmarkCompare1000(b *testing.B) {
	base, state := make([]float64, 1000), make([]float64, 1000)
	for i := range base {
		base[i], state[i] = 10e9*(1+0.05*math.Sin(float64(i))), 11e9*(1+0.05*math.Cos(float64(i)))
	}
	for b.Loop() {
		Compare(base, state, HigherIsBetter, DefaultAlpha, DefaultCVLimit, DefaultMinChange)
	}
}

// TestAbsurdValueRefused: a stored result with a value beyond any measurement is refused at
// parse time with the sample named; the plots and statistics never see it.
func TestAbsurdValueRefused(t *testing.T) {
	r := testResult()
	r.Cases[0].Samples[1].Metrics[0].Value = 1e17
	var b bytes.Buffer
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	_, _, err := Parse("r.json", b.Bytes())
	if err == nil || !strings.Contains(err.Error(), "sample of round") || !strings.Contains(err.Error(), "beyond any measurement") {
		t.Errorf("an absurd value: %v", err)
	}
}

// TestControlCharactersEscaped: a stored label or kernel string with ESC or a newline is
// shown escaped, never sent to a terminal raw.
func TestControlCharactersEscaped(t *testing.T) {
	r := testResult()
	r.Label, r.Environment.KernelRelease = "\x1b[2Jgone\nfake line", "6.18\r"
	var b bytes.Buffer
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Parse("r.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Label != `\x1b[2Jgone\nfake line` || got.Environment.KernelRelease != `6.18\r` || len(warnings) != 2 {
		t.Errorf("label %q, kernel %q, warnings %v", got.Label, got.Environment.KernelRelease, warnings)
	}
	var table bytes.Buffer
	Table(&table, got)
	if strings.ContainsAny(table.String(), "\x1b\r") {
		t.Errorf("control characters in the table: %q", table.String())
	}
}

// TestUndecidedReasons: when the runs cannot reach alpha whatever they measure (after Holm's
// correction over the gated family), the verdict says so with the arithmetic and the runs
// needed, instead of calling the data too noisy.
func TestUndecidedReasons(t *testing.T) {
	for _, c := range []struct {
		n, gates int
		want     string // "" for decided
	}{
		{3, 1, "undecided: 3 runs per state give p >= 0.100, above alpha 0.05; use at least 4"},
		{3, 2, "undecided: 3 runs per state give p >= 0.100, above alpha 0.05 / 2 gated comparisons; use at least 5"},
		{4, 1, ""},
		{4, 2, "undecided: 4 runs per state give p >= 0.029, above alpha 0.05 / 2 gated comparisons; use at least 5"},
		{5, 1, ""},
		{5, 2, ""},
	} {
		states := []StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}
		var samples []Sample
		for i := 0; i < c.n; i++ {
			for st, v := range map[string]float64{"off": 10 + 0.1*float64(i), "on": 12 + 0.1*float64(i)} {
				samples = append(samples, Sample{Round: i + 1, State: st, Workload: "tcp4", Metrics: []Metric{
					{Name: Throughput, Unit: "bit/s", Value: v * 1e9}, {Name: RTTMean, Unit: "us", Value: 100 / v}}})
			}
		}
		gates := []string{Throughput, RTTMean}[:c.gates]
		r := &Result{Settings: Settings{Policy: Policy{Alpha: 0.05, CVLimit: 0.05, MinChange: 0.02}, Gates: map[string][]string{"tcp4": gates}},
			Cases: []Case{{States: states, Samples: samples, Summaries: Summarize(samples, states, []string{"tcp4"}, Policy{Alpha: 0.05})}}}
		r.DecideFamily()
		var got string
		for _, s := range r.Cases[0].Summaries {
			if s.Metric == Throughput && s.Comparison != nil {
				got = FormatComparison(*s.Comparison)
			}
		}
		decided := strings.HasSuffix(got, "improved")
		switch {
		case c.want == "" && !decided:
			t.Errorf("n=%d, %d gates: %q, want a decision", c.n, c.gates, got)
		case c.want != "" && !strings.HasSuffix(got, c.want):
			t.Errorf("n=%d, %d gates: %q, want %q", c.n, c.gates, got, c.want)
		}
	}
}

// A comparison's p with ties and unequal sizes is the exact permutation p, the same both ways
// round: go-moremath's, which benchmath passed through, read 0.0000 one way and 0.0952 the
// other for these samples (issue 31, item 2); twice the smaller tail, it is MinP for these
// completely separated samples, 2/21 and 2/10 (issue 42, item 6; the distance from the mean
// read 1/21 and 1/10).
func TestMeasurePTiesUnequalSizes(t *testing.T) {
	base, state := []float64{10, 10.2}, []float64{6.1, 6, 6.2, 5.9, 6}
	ab, ba := Measure(base, state, HigherIsBetter), Measure(state, base, HigherIsBetter)
	if math.Abs(ab.P-2.0/21) > 1e-12 || math.Abs(ba.P-2.0/21) > 1e-12 {
		t.Errorf("p %.4f and swapped %.4f, want 2/21 = 0.0952 both", ab.P, ba.P)
	}
	if p := Measure([]float64{0, 1}, []float64{5, 5, 6}, HigherIsBetter).P; math.Abs(p-0.2) > 1e-12 {
		t.Errorf("p %.4f, want 0.2000", p)
	}
}

// The change's interval has no asymmetry of the kind the p had: U's distribution without ties
// is symmetric for any n and m, so swapping the samples gives the interval of the inverse
// ratio, also with ties and unequal sizes.
func TestShiftCISwapped(t *testing.T) {
	base, state := []float64{10, 10, 10.2, 10.2, 10.4, 10, 10.2}, []float64{6, 6, 6.1, 6.2, 5.9, 6}
	lo, hi, ok := shiftCI(base, state, Confidence)
	lo2, hi2, ok2 := shiftCI(state, base, Confidence)
	if !ok || !ok2 || math.Abs((1+lo)*(1+hi2)-1) > 1e-12 || math.Abs((1+hi)*(1+lo2)-1) > 1e-12 {
		t.Errorf("interval [%g, %g], swapped [%g, %g]: not each other's inverse", lo, hi, lo2, hi2)
	}
}

// TestTieDecidesNothing: 2 runs against 5, completely separated, cannot reach p < 0.05 (MinP
// is 2/21 = 0.095), and a tie among the five does not change that (issue 42, item 6: it read
// p = 0.048, "regressed").
func TestTieDecidesNothing(t *testing.T) {
	for _, base := range [][]float64{{6.1, 6, 6.2, 5.9, 6}, {6.1, 6.05, 6.2, 5.9, 6}} {
		c := Compare(base, []float64{10, 10.2}, -1, 0.05, 0.05, 0.02)
		if c.P < 0.09 || c.Verdict == Regressed || c.Verdict == Improved {
			t.Errorf("base %v: p=%.4f, %s", base, c.P, c.Verdict)
		}
	}
}

// TestChangeFromZero: a baseline median of 0 (retransmits that were none), or one so near 0
// that the ratio is past float64's range (a stored result's 1e-300), gives no ratio: the
// comparison is a rise "from 0", never +Inf%, NaN or a +0.0% change judged negligible; it has
// no CI and no paired ratio of those rounds, decides by p in the metric's direction, holds
// every "change: >=" expectation, prints without Inf or NaN in the table and the one-line
// forms, and encodes as JSON.
func TestChangeFromZero(t *testing.T) {
	ge := scenarios.Condition{Op: ">=", Value: 0.05}
	le := scenarios.Condition{Op: "<=", Value: 0.05}
	for _, tc := range []struct {
		name     string
		base, st []float64
		dir      Direction
		fromZero bool
		verdict  string
	}{
		{"retransmits from none", []float64{0, 0, 0, 0, 0, 0}, []float64{100, 101, 102, 100, 103, 99}, LowerIsBetter, true, Regressed},
		{"throughput from none", []float64{0, 0, 0, 0, 0, 0}, []float64{1e9, 1.1e9, 1.2e9, 1e9, 1.3e9, 0.9e9}, HigherIsBetter, true, Improved},
		{"a baseline of 1e-300", []float64{1e-300, 1e-300, 1e-300, 1e-300, 1e-300, 1e-300}, []float64{1e15, 1e15, 1e15, 1e15, 1e15, 2e14}, HigherIsBetter, true, Improved},
		{"a subnormal baseline", []float64{5e-324, 5e-324, 5e-324, 5e-324}, []float64{10, 11, 12, 13}, NoDirection, true, Changed},
		{"none to none", []float64{0, 0, 0, 0}, []float64{0, 0, 0, 0}, HigherIsBetter, false, NoChange},
		{"a fall to none", []float64{10, 11, 12, 13, 14, 15}, []float64{0, 0, 0, 0, 0, 0}, HigherIsBetter, false, Regressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.base, tc.st, tc.dir, 0.05, 0.05, 0.02)
			if c.FromZero != tc.fromZero || c.Verdict != tc.verdict {
				t.Errorf("Compare = %+v, want from zero %v, %s", c, tc.fromZero, tc.verdict)
			}
			for _, v := range []float64{c.Change, c.ChangeLo, c.ChangeHi, c.CVBase, c.CVState, c.P} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("a figure of the comparison is %v: %+v", v, c)
				}
			}
			if tc.fromZero && (c.Change != 0 || c.HasCI || !c.ChangeHolds(ge) || c.ChangeHolds(le)) {
				t.Errorf("from 0: change %v, CI %v, holds >= 5%% %v, <= 5%% %v", c.Change, c.HasCI, c.ChangeHolds(ge), c.ChangeHolds(le))
			}
			base, state := map[int]float64{}, map[int]float64{}
			for i := range tc.base {
				base[i], state[i] = tc.base[i], tc.st[i]
			}
			c.Paired = PairedRatios(base, state, tc.dir)
			check := ClaimCheck{Claim: 1, Metric: "throughput", Measured: &c}
			for _, out := range []string{FormatComparison(c), FormatChangeCI(c), check.Line()} {
				if strings.Contains(out, "Inf") || strings.Contains(out, "NaN") || (tc.fromZero && !strings.Contains(out, "from 0")) {
					t.Errorf("printed %q", out)
				}
			}
			if _, err := json.Marshal(c); err != nil {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

// TestNoInfFromATinyBaseline: a stored result whose baseline runs are 1e-300 (a value the
// reader takes: at most MaxMetricValue, not negative) against runs of 1e15 prints no Inf or
// NaN in any format of this package, its median's ±CI and its drift included, and its JSON
// encodes.
func TestNoInfFromATinyBaseline(t *testing.T) {
	var samples []Sample
	for round, off := range []float64{1e-300, 1e-300, 1e-300, 1e-300, 1e15, 1e15} {
		samples = append(samples, sample(round+1, "off", "tcp4", off, 60), sample(round+1, "on", "tcp4", 1e15, 60))
	}
	r := testResult()
	r.Settings.Gates = map[string][]string{"tcp4": {Throughput}}
	r.Cases[0].Samples = samples
	r.Cases[0].Summaries = Summarize(samples, testStates, []string{"tcp4"}, Policy{})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"table":     func(b *bytes.Buffer) error { return Table(b, r) },
		"netdev":    func(b *bytes.Buffer) error { return Netdev(b, r) },
		"markdown":  func(b *bytes.Buffer) error { return Markdown(b, r) },
		"csv":       func(b *bytes.Buffer) error { return CSV(b, r) },
		"json":      func(b *bytes.Buffer) error { return Encode(b, r) },
		"benchstat": func(b *bytes.Buffer) error { return Benchstat(b, r) },
		"junit":     func(b *bytes.Buffer) error { return JUnit(b, r) },
		"ktap":      func(b *bytes.Buffer) error { return KTAP(b, r) },
		"diagnose":  func(b *bytes.Buffer) error { _, err := b.WriteString(strings.Join(r.Diagnose(), "\n")); return err },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil || strings.Contains(b.String(), "Inf") || strings.Contains(b.String(), "NaN") {
			t.Errorf("%s (%v):\n%s", name, err, b.String())
		}
	}
}
