package compare

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/results"
)

// TestKernels: an A/B run's result compares each state of B with A's, keeps both kernels'
// own comparisons, fails on B's gated regression, and survives storing and recomputation.
func TestKernels(t *testing.T) {
	a := result("nsp000a", "base", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	b := result("nsp000b", "patched", "6.18.45", scenarioText, map[string][]float64{"off": newOff, "on": newOn})
	turns := []results.Turn{{Gate: 1, Kernel: "A", Seconds: 30}, {Gate: 1, Kernel: "B", Seconds: 30, PausedCPUSeconds: 0.01}}
	ab, err := Kernels(a, b, "nsp00ab", turns)
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, r *results.Result) {
		t.Helper()
		if len(r.Kernels) != 2 || r.Label != "base vs patched" || r.Environment.KernelRelease != "6.18.44 vs 6.18.45" {
			t.Fatalf("kernels %d, label %q, kernel %q", len(r.Kernels), r.Label, r.Environment.KernelRelease)
		}
		verdicts := map[string]string{}
		for _, s := range r.Cases[0].Summaries {
			if s.Comparison != nil && s.Metric == results.Throughput {
				verdicts[s.State+" vs "+s.Comparison.Baseline] = s.Comparison.Verdict
			}
		}
		if verdicts["off@B vs off@A"] != results.Regressed || verdicts["on@B vs on@A"] == results.Regressed || len(verdicts) != 2 {
			t.Errorf("B against A: %v", verdicts)
		}
		// The paired per-round ratios are kept: the rounds alternated between the kernels.
		for _, s := range r.Cases[0].Summaries {
			if s.Comparison != nil && s.Metric == results.Throughput && (s.Comparison.Paired == nil || s.Comparison.Paired.Rounds == 0) {
				t.Errorf("%s: no paired ratios", s.State)
			}
		}
		for i, k := range r.Kernels {
			if c := k.Cases[0].Summaries; len(c) == 0 {
				t.Errorf("kernel %d has no summaries", i)
			}
		}
		failures := strings.Join(r.Failures(), "\n")
		if !strings.Contains(failures, "tcp4 throughput regressed in off@B vs off@A") {
			t.Errorf("failures:\n%s", failures)
		}
	}
	check(t, ab)
	path := filepath.Join(t.TempDir(), "ab.json")
	if err := results.WriteFile(path, ab); err != nil {
		t.Fatal(err)
	}
	back, _, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back.Recompute()
	check(t, back)

	var table, junit bytes.Buffer
	if err := results.Table(&table, back); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kernel A: base", "kernel B: patched", "on vs off", "off@B vs off@A", "turns: 2 (1A 1B)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := results.JUnit(&junit, back); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="kernel A (base): pair"`, `name="kernel B (patched): pair"`, `tcp4 throughput off@B vs off@A`, `tcp4 throughput on vs off`} {
		if !strings.Contains(junit.String(), want) {
			t.Errorf("junit lacks %q:\n%s", want, junit.String())
		}
	}
}
