package results

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// benchstatResult has five alternating runs per state of four metrics: one clearly up, one
// clearly down, one overlapping, one with ties.
func benchstatResult() *Result {
	states := []StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}
	off := [][4]float64{{100, 50, 70, 9}, {101, 51, 69, 9}, {99, 49, 72, 10}, {102, 50, 71, 9}, {100.5, 52, 70.5, 10}}
	on := [][4]float64{{110, 60, 71, 9}, {111, 61, 70, 10}, {109, 62, 69.5, 9}, {112, 60.5, 72, 10}, {110.5, 61, 70.2, 9}}
	var samples []Sample
	for i := range off {
		for _, st := range []struct {
			name string
			v    [4]float64
		}{{"off", off[i]}, {"on", on[i]}} {
			samples = append(samples, Sample{Round: i + 1, State: st.name, Workload: "tcp4", Tool: "iperf3", Metrics: []Metric{
				{Name: Throughput, Unit: "bit/s", Value: st.v[0] * 1e8}, {Name: "min_latency", Unit: "us", Value: st.v[1]},
				{Name: "p90_latency", Unit: "us", Value: st.v[2]}, {Name: Retransmits, Unit: "count", Value: st.v[3]}}})
		}
	}
	return &Result{Schema: Schema, RunID: "nsp0000", Scenario: ScenarioInfo{Name: "agree"}, Settings: Settings{Runs: 5, Order: "alternate"},
		Cases: []Case{{States: states, Samples: samples, Summaries: Summarize(samples, states, []string{"tcp4"}, Policy{})}}}
}

// TestVerdictsAgreeWithBenchstat feeds --format benchstat output to the real benchstat
// (golang.org/x/perf/cmd/benchstat, a tool of this module) and checks that, for every metric,
// benchstat calls the difference significant exactly when nsperf does, in the same
// direction, with the same p-value.
func TestVerdictsAgreeWithBenchstat(t *testing.T) {
	testenv.RequireTool(t, "go")
	goBin, _ := exec.LookPath("go")
	r := benchstatResult()
	file := filepath.Join(t.TempDir(), "agree.bench")
	f, _ := os.Create(file)
	if err := Benchstat(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(goBin, "tool", "benchstat", "-format", "csv", "-col", "state", file).Output()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	// Sections of: a header with the units, then rows "name,off,CI,on,CI,delta,p".
	theirs := map[string][2]string{} // unit -> delta, p
	unit := ""
	reader := csv.NewReader(strings.NewReader(string(out)))
	reader.FieldsPerRecord = -1
	rows, err := reader.ReadAll()
	if err != nil {
		t.Fatalf("benchstat csv: %v\n%s", err, out)
	}
	for _, row := range rows {
		if len(row) >= 7 && row[0] == "" && row[5] == "vs base" {
			unit = row[1]
		}
		if len(row) >= 7 && strings.HasPrefix(row[0], "Nsperf/") {
			theirs[unit] = [2]string{row[5], row[6]}
		}
	}
	ours := 0
	for _, s := range r.Cases[0].Summaries {
		c := s.Comparison
		if c == nil {
			continue
		}
		ours++
		b, ok := theirs[s.Metric+"-"+s.Unit]
		if !ok {
			t.Errorf("%s: not in benchstat's output:\n%s", s.Metric, out)
			continue
		}
		significant := c.Verdict == Improved || c.Verdict == Regressed
		if (b[0] == "~") == significant {
			t.Errorf("%s: benchstat says %q, nsperf %q (p %v)", s.Metric, b[0], c.Verdict, c.P)
		}
		if significant && strings.HasPrefix(b[0], "+") != (c.Change > 0) {
			t.Errorf("%s: benchstat delta %s, nsperf change %+.2f%%", s.Metric, b[0], 100*c.Change)
		}
		p, err := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(b[1], "p="))[0], 64)
		if err != nil || p-c.P > 0.0005 || c.P-p > 0.0005 {
			t.Errorf("%s: benchstat %s, nsperf p=%.3f", s.Metric, b[1], c.P)
		}
	}
	if ours != 4 {
		t.Fatalf("%d comparisons, want 4", ours)
	}
	verdicts := map[string]string{}
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil {
			verdicts[s.Metric] = s.Comparison.Verdict
		}
	}
	// The constructed data cover both verdicts and both directions.
	if verdicts[Throughput] != Improved || verdicts["min_latency"] != Regressed || verdicts["p90_latency"] == Improved || verdicts["p90_latency"] == Regressed {
		t.Errorf("verdicts %v", verdicts)
	}
}
