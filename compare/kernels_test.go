package compare

import (
	"bytes"
	"io"
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
		verdicts := throughputVerdicts(r)
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
	back := storedAndRead(t, ab)
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

// TestKernelsCapability: the A/B of a patch that raises a device's limit. "on" is refused by
// kernel A (recorded unavailable, with the reason) and applies on B: the result says so first,
// as a capability line, compares on@B with off@A (what the patch makes possible) next to
// off@B with off@A (what it changes by default), in every format and after storing; a state
// that one kernel lacks fails nothing.
func TestKernelsCapability(t *testing.T) {
	const why = "gso_max_size 524280 > tso_max_size 65536 of ovs/int0"
	a := result("nsp000a", "stock", "6.12.117", scenarioText, map[string][]float64{"off": baseOff})
	a.Cases[0].States = append(a.Cases[0].States, results.StateRecord{Name: "on", CompareTo: "off", Unavailable: why})
	a.Recompute()
	b := result("nsp000b", "patched", "6.12.117", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	ab, err := Kernels(a, b, "nsp00ab", nil)
	if err != nil {
		t.Fatal(err)
	}
	back := storedAndRead(t, ab)
	line := "on: unavailable on A (" + why + "), applies on B; on@B compared with off@A"
	if len(back.Capabilities) != 1 || back.Capabilities[0].Line() != line {
		t.Fatalf("capabilities %+v, want %q", back.Capabilities, line)
	}
	verdicts := throughputVerdicts(back)
	if verdicts["on@B vs off@A"] != results.Improved || verdicts["off@B vs off@A"] == results.Regressed || len(verdicts) != 2 {
		t.Errorf("B against A: %v", verdicts)
	}
	if f := back.Failures(); len(f) != 0 {
		t.Errorf("a state kernel A lacks fails the run: %v", f)
	}
	for format, write := range map[string]func(io.Writer, *results.Result) error{"table": results.Table, "netdev": results.Netdev, "markdown": results.Markdown, "junit": results.JUnit, "json": results.Encode} {
		var b bytes.Buffer
		if err := write(&b, back); err != nil {
			t.Fatal(err)
		}
		want := line
		switch format {
		case "json":
			want = `"unavailable": {`
		case "junit": // XML escapes the ">"
			want = `<testcase name="capability on" classname="nsperf.pair">`
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s lacks the capability:\n%s", format, b.String())
		}
	}
	var table bytes.Buffer
	results.Table(&table, back)
	if i, j := strings.Index(table.String(), "kernel B against kernel A"), strings.Index(table.String(), "capability: on"); i < 0 || j < i || strings.Count(table.String()[i:j], "\n") != 1 {
		t.Errorf("the capability is not the first line of the B-against-A section:\n%s", table.String())
	}

	// compare AB.json takes part as its two kernels, and says the same.
	sides := []Side{{Source: "A", Result: back.Kernels[0]}, {Source: "B", Result: back.Kernels[1]}}
	rep, err := New(sides, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Result.Capabilities) != 1 || rep.Result.Capabilities[0].Line() != line {
		t.Errorf("compare: capabilities %+v", rep.Result.Capabilities)
	}
}

// throughputVerdicts are the verdicts of a result's throughput comparisons, by "STATE vs BASE".
func throughputVerdicts(r *results.Result) map[string]string {
	verdicts := map[string]string{}
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Metric == results.Throughput {
			verdicts[s.State+" vs "+s.Comparison.Baseline] = s.Comparison.Verdict
		}
	}
	return verdicts
}

// storedAndRead writes a result to a file and reads it back, as report and compare read it.
func storedAndRead(t *testing.T, r *results.Result) *results.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ab.json")
	if err := results.WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	back, _, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
