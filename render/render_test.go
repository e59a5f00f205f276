package render

import (
	"bytes"
	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/reproduce"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/fixture"
)

// pairResult is a run whose "on" has throughput on Gbit/s against "off"'s 10.
func pairResult(id string, on float64) *results.Result {
	f := []float64{1.01, 0.98, 1.03, 1.0, 0.99, 1.02}
	tput := map[string][]float64{}
	for _, x := range f {
		tput["off"] = append(tput["off"], 10*x)
		tput["on"] = append(tput["on"], on*x)
	}
	return fixture.PairResult(id, "", "6.12.117", fixture.PairScenario, tput)
}

// TestNames: each command's --format choices, from the one table.
func TestNames(t *testing.T) {
	for k, want := range map[Kind][]string{
		Result:     {"table", "netdev", "markdown", "csv", "json", "benchstat", "junit", "ktap", "html"},
		Comparison: {"table", "netdev", "markdown", "csv", "json", "benchstat", "junit", "ktap", "html"},
		Points:     {"table", "csv", "json", "html"},
		Findings:   {"table", "csv", "json", "html"},
		Machine:    {"table", "json"},
	} {
		if got := Names(k); !slices.Equal(got, want) {
			t.Errorf("Names(%d) = %v, want %v", k, got, want)
		}
	}
	if f, err := Lookup("", Points); err != nil || f.Name != "table" {
		t.Errorf("the default of history show: %v %v", f.Name, err)
	}
	for _, bad := range []struct {
		name string
		kind Kind
	}{{"pdf", Result}, {"netdev", Points}, {"html", Machine}, {"ktap", Findings}} {
		if _, err := Lookup(bad.name, bad.kind); err == nil || !strings.Contains(err.Error(), "want table") {
			t.Errorf("Lookup(%s, %d): %v", bad.name, bad.kind, err)
		}
	}
}

// TestEveryFormatWritesItsKinds: every format writes every kind of output it declares.
func TestEveryFormatWritesItsKinds(t *testing.T) {
	r := pairResult("nsp0001", 12)
	rep, err := compare.New([]compare.Side{{Source: "a.json", Result: pairResult("nsp0001", 12)}, {Source: "b.json", Result: pairResult("nsp0002", 13)}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 9.9e9, 10.1e9
	points := []history.Point{{Workload: "tcp4", Metric: "throughput", State: "on", Unit: "bit/s", RunID: "nsp0001", Kernel: "6.12", Clock: "wall", N: 6, Median: 10e9, Lo: &lo, Hi: &hi, CV: 0.01}}
	series := []history.Series{{Scenario: "pair", Workload: "tcp4", Metric: "throughput", State: "on", Unit: "bit/s", Clock: "wall", Points: points}}
	withClaims := pairResult("nsp0003", 13)
	withClaims.Reproduction = &results.Reproduction{Source: "msg.txt", Scenario: "pair", Claims: []results.ClaimCheck{{Claim: 1, Metric: "throughput", ClaimedChange: 0.1, Outcome: results.Undecided}}}
	reproduction := reproduce.Report{Claims: &claims.Report{}, Result: withClaims}
	for _, f := range Formats {
		write := map[Kind]func(w, diag io.Writer) error{
			Result:     func(w, _ io.Writer) error { return WriteResult(w, r, f.Name, results.DefaultTableOptions) },
			Comparison: func(w, d io.Writer) error { return WriteComparison(w, d, rep, f.Name, results.DefaultTableOptions) },
			Points: func(w, _ io.Writer) error {
				if Draws(f.Name) {
					return WriteHistory(w, "t", series, f.Name)
				}
				return WritePoints(w, points, f.Name)
			},
			Findings: func(w, _ io.Writer) error {
				if Draws(f.Name) {
					return WriteHistory(w, "t", series, f.Name)
				}
				return WriteFindings(w, series, f.Name)
			},
			Machine: func(w, _ io.Writer) error {
				return WriteMachine(w, map[string]int{"cpus": 2}, func(w io.Writer) error { _, err := io.WriteString(w, "2 CPUs\n"); return err }, f.Name)
			},
			Reproduction: func(w, _ io.Writer) error { return WriteReproduction(w, reproduction, f.Name) },
		}
		for k := Result; k <= Reproduction; k++ {
			var out, diag bytes.Buffer
			err := write[k](&out, &diag)
			if f.has(k) != (err == nil) || (err == nil && out.Len() == 0) {
				t.Errorf("format %s, kind %d: declared %v, wrote %d bytes, %v", f.Name, k, f.has(k), out.Len(), err)
			}
			// A comparison's header goes above the table for people, to diagnostics for programs.
			if k == Comparison && err == nil && f.Comparison == nil {
				if above := strings.Contains(out.String(), "a.json"); above != f.Readable || (!f.Readable && !strings.Contains(diag.String(), "a.json")) {
					t.Errorf("format %s: the comparison's header above the table %v, readable %v", f.Name, above, f.Readable)
				}
			}
		}
	}
}

// TestNoInfOrNaNInAnyFormat: numbers past float64's range from user input print no Inf or
// NaN in any format, and every JSON encodes: a message's stated changes of 400 digits and
// figures 1e-321 apart from 10 Gbit/s (claims), a stored result whose baseline runs are
// 1e-300 (report, compare, reproduce's measured change), and a history point whose median is
// 1e-300 (history show).
func TestNoInfOrNaNInAnyFormat(t *testing.T) {
	huge := "1" + strings.Repeat("0", 400)
	var outputs []struct {
		what string
		out  func(w, diag io.Writer) error
	}
	add := func(what string, out func(w, diag io.Writer) error) {
		outputs = append(outputs, struct {
			what string
			out  func(w, diag io.Writer) error
		}{what, out})
	}
	for _, msg := range []string{
		"Subject: x\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n\nThis improves throughput by " + huge + "%.\n",
		"Subject: x\n\nThis is " + huge + "x faster\n\nBefore: 1 Gbps\nAfter: 2 Gbps\n",
		"Subject: x\n\nThroughput goes from 0." + strings.Repeat("0", 320) + "1 Gbps to 10 Gbps.\n",
	} {
		r, err := claims.Read("msg.txt", []byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range Names(Machine) {
			add("claims "+name, func(w, _ io.Writer) error { return WriteMachine(w, r, r.Text, name) })
		}
	}
	tput := map[string][]float64{"off": {1e-309, 1e-309, 1e-309, 1e-309, 10, 10}, "on": {10, 10.1, 10.2, 9.9, 10, 10.1}}
	tiny := fixture.PairResult("nsp0001", "", "6.12.117", fixture.PairScenario, tput)
	big := pairResult("nsp0002", 12)
	rep, err := compare.New([]compare.Side{{Source: "a.json", Result: tiny}, {Source: "b.json", Result: big}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	measured := results.Compare([]float64{1e-300, 1e-300, 1e-300, 1e-300}, []float64{1e15, 1e15, 1e15, 2e14}, results.HigherIsBetter, 0, 0, 0)
	withClaims := pairResult("nsp0003", 13)
	withClaims.Reproduction = &results.Reproduction{Source: "msg.txt", Scenario: "pair", Claims: []results.ClaimCheck{{Claim: 1, Metric: "throughput", ClaimedChange: 0.1, Measured: &measured, Outcome: results.Reproduced}}}
	reproduction := reproduce.Report{Claims: &claims.Report{}, Result: withClaims}
	lo, hi := 0.0, 1e15
	points := []history.Point{{Workload: "tcp4", Metric: "throughput", State: "on", Unit: "bit/s", RunID: "nsp0001", Kernel: "6.12", Clock: "wall", N: 6, Median: 1e-300, Lo: &lo, Hi: &hi}}
	for _, f := range Formats {
		if f.has(Result) {
			add("report "+f.Name, func(w, _ io.Writer) error { return WriteResult(w, tiny, f.Name, results.DefaultTableOptions) })
		}
		if f.has(Comparison) {
			add("compare "+f.Name, func(w, d io.Writer) error { return WriteComparison(w, d, rep, f.Name, results.DefaultTableOptions) })
		}
		if f.has(Reproduction) {
			add("reproduce "+f.Name, func(w, _ io.Writer) error { return WriteReproduction(w, reproduction, f.Name) })
		}
		if f.Points != nil {
			add("history show "+f.Name, func(w, _ io.Writer) error { return WritePoints(w, points, f.Name) })
		}
	}
	for _, o := range outputs {
		var out, diag bytes.Buffer
		err := o.out(&out, &diag)
		text := out.String() + diag.String()
		if err != nil || strings.Contains(text, "Inf") || strings.Contains(text, "NaN") {
			t.Errorf("%s: %v\n%s", o.what, err, text)
		}
	}
}
