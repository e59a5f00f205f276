package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// TestAANegligibleCPU: an A/A result (fixture samples) in which cpu_sender differs by 1.4%
// with p < alpha: below the minimum change, and not a gated metric, it does not fail; the
// report says why.
func TestAANegligibleCPU(t *testing.T) {
	r := &results.Result{Schema: results.Schema, RunID: "nsp0aa0", Complete: true, Start: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Scenario: results.ScenarioInfo{Name: "veth-bigtcp"},
		Settings: results.Settings{Runs: 6, Order: "alternate", Policy: results.Policy{Alpha: 0.05, CVLimit: 0.05, MinChange: 0.02},
			Gates: map[string][]string{"tcp4": {results.Throughput}}}}
	c := results.Case{States: []results.StateRecord{{Name: "off"}, {Name: "off-again", CompareTo: "off"}}}
	tput := map[string][]float64{"off": {13.1, 12.8, 13.3, 12.9, 13.0, 13.2}, "off-again": {13.0, 13.2, 12.9, 13.1, 12.8, 13.3}}
	cpu := map[string][]float64{"off": {40.0, 40.2, 39.9, 40.1, 39.8, 40.05}, "off-again": {40.56, 40.64, 40.52, 40.6, 40.48, 40.58}}
	for round := 0; round < 6; round++ {
		for _, st := range []string{"off", "off-again"} {
			c.Samples = append(c.Samples, results.Sample{Round: round + 1, State: st, Workload: "tcp4", Tool: "iperf3",
				Metrics: results.WithEfficiency([]results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: tput[st][round] * 1e9}, {Name: results.CPUSender, Unit: "%", Value: cpu[st][round]}})})
		}
	}
	r.Cases = []results.Case{c}
	path := filepath.Join(t.TempDir(), "aa.json")
	if err := results.WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := nsperf("report", path)
	if code != exitOK {
		t.Errorf("A/A with a 1.4%% CPU difference: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "~ below 2% (+1.4%") {
		t.Errorf("the CPU row does not say the change is below 2%%:\n%s", stdout)
	}
	// "below 2%" means significant: without a minimum change the row says so ("changed":
	// raw CPU has no better direction), and still does not fail the run.
	r.Settings.Policy.MinChange = 0
	if err := results.WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	if stdout, _, code = nsperf("report", path); code != exitOK || !strings.Contains(stdout, "changed") {
		t.Errorf("without a minimum change: exit %d\n%s", code, stdout)
	}
}

// TestAdaptiveTBF: with runs: auto, a token bucket far below what the link does unshaped
// (200 Mbit/s against about 900 on this machine with both CPUs busy, several Gbit/s when
// quiet) is decided "regressed" before the last look: the schedule stops once every gated
// comparison is decided. How many looks that takes follows the machine's noise, which the
// test does not assert.
func TestAdaptiveTBF(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	dir := t.TempDir()
	text := strings.Replace(cappedScenario("200mbit", ""), "states:\n  - name: base\n", "states:\n  - name: free\n  - name: base\n    compare_to: free\n", 1)
	text = strings.Replace(text, "runs: 5\n", "runs: auto\n", 1)
	out := measure(t, dir, "adaptive", text, "--no-history")
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	cmp := comparisonOf(t, r, "base")
	if cmp.Verdict != results.Regressed || !strings.Contains(c.Adaptive, "every gated comparison decided") || r.Settings.Adaptive == nil {
		t.Errorf("adaptive tbf: %s after %d rounds (%s)", cmp.Verdict, len(c.Schedule), c.Adaptive)
	}
}
