package history

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/history/changepoint"
	"github.com/nsperf/nsperf/results"
)

// steppedHistory imports n runs of one scenario whose throughput drops by 20% and whose RTT
// drops by 30% from run at on (noise CV 2%, seeded).
func steppedHistory(t *testing.T, h *DB, n, at int, gates map[string][]string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < n; i++ {
		tput, rtt := 10e9, 100.0
		if i >= at {
			tput, rtt = 8e9, 70
		}
		start := t0.Add(time.Duration(i) * time.Hour)
		r := &results.Result{Schema: results.Schema, RunID: fmt.Sprintf("nsp%04d", i), Label: fmt.Sprintf("k%d", i), Complete: true, Start: start,
			Scenario: results.ScenarioInfo{Name: "stepped"}, Environment: results.Environment{KernelRelease: "6.18." + fmt.Sprint(i)}}
		c := results.Case{States: []results.StateRecord{{Name: "on"}}}
		for round := 1; round <= 3; round++ {
			noise := 1 + 0.02*rng.NormFloat64()
			c.Samples = append(c.Samples, results.Sample{Round: round, State: "on", Workload: "tcp4",
				Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: tput * noise}, {Name: results.RTTMean, Unit: "us", Value: rtt * noise}}})
		}
		r.Cases = []results.Case{c}
		r.Settings.Gates = gates
		r.Recompute()
		if _, err := h.Import(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnalyze: the change points of a history, with direction: a throughput drop is a
// regression, an RTT drop an improvement; --fail-on-new counts only recent regressions;
// an acknowledged one stays listed and stops failing.
func TestAnalyze(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	steppedHistory(t, h, 24, 18, nil)
	series, err := h.Analyze(ctx, nil, changepoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, s := range series {
		for _, f := range s.Findings {
			kinds[s.Metric] = fmt.Sprintf("%s %s->%s %d", f.Kind, f.Before.RunID, f.After.RunID, f.RunsAgo)
		}
	}
	if kinds[results.Throughput] != "regression nsp0017->nsp0018 6" || kinds[results.RTTMean] != "improvement nsp0017->nsp0018 6" {
		t.Errorf("findings %v", kinds)
	}
	if f := Failing(series, 5); len(f) != 0 {
		t.Errorf("a change 6 runs ago fails --fail-on-new 5: %v", f)
	}
	if f := Failing(series, 6); len(f) != 1 || !strings.Contains(f[0], "tcp4 throughput on: -20") {
		t.Errorf("--fail-on-new 6: %v", f)
	}
	if err := h.Acknowledge(ctx, Ack{RunID: "nsp0018", Metric: results.Throughput, Reason: "known: new default qdisc"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Acknowledge(ctx, Ack{RunID: "nsp9999", Metric: results.Throughput, Reason: "x"}); err == nil {
		t.Errorf("acknowledged a run that is not there")
	}
	series, _ = h.Analyze(ctx, []string{"stepped"}, changepoint.Options{})
	if f := Failing(series, 10); len(f) != 0 {
		t.Errorf("acknowledged, still failing: %v", f)
	}
	var b bytes.Buffer
	FindingsTable(&b, series)
	if !strings.Contains(b.String(), "regression (acknowledged: known: new default qdisc)") || !strings.Contains(b.String(), "2 change points in 2 series") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	Export(&b, series)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 25 || lines[0] != "time,run_id,label,kernel,tcp4.rtt_mean.on,tcp4.throughput.on" || !strings.HasPrefix(lines[1], "2026-11-01T08:00:00Z,nsp0000,k0,6.18.0,") {
		t.Errorf("export:\n%s", b.String())
	}
}

// TestAnalyzeFailsOnGatesOnly: with rtt_mean the recorded gate, the throughput drop of the
// test history is listed as a regression but does not fail --fail-on-new (with every metric
// gated it does: TestAnalyze).
func TestAnalyzeFailsOnGatesOnly(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	steppedHistory(t, h, 24, 18, map[string][]string{"tcp4": {results.RTTMean}})
	series, err := h.Analyze(ctx, nil, changepoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gated := map[string]bool{}
	for _, s := range series {
		gated[s.Metric] = s.Gated
	}
	if !gated[results.RTTMean] || gated[results.Throughput] {
		t.Errorf("gated %v, want only rtt_mean", gated)
	}
	// The throughput drop is a regression but not gated: nothing fails; RTT fell (an
	// improvement): nothing fails either.
	if f := Failing(series, 10); len(f) != 0 {
		t.Errorf("failing %v", f)
	}
}

// TestAnalyzeFromZero: a level of 0 (no retransmits) or one so near it that the ratio is past
// float64's range (a stored throughput of 1e-300), then a level above it, is a change point
// "from 0" in every form the findings take: never +Inf%, NaN or +0.0%, and the JSON encodes.
func TestAnalyzeFromZero(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i := range 20 {
		tput, retransmits := 1e-300, 0.0
		if i >= 10 {
			tput, retransmits = 1e15, 50+float64(i%3)
		}
		r := &results.Result{Schema: results.Schema, RunID: fmt.Sprintf("nsp%04d", i), Complete: true, Start: t0.Add(time.Duration(i) * time.Hour),
			Scenario: results.ScenarioInfo{Name: "fromzero"}, Environment: results.Environment{KernelRelease: "6.18." + fmt.Sprint(i)}}
		c := results.Case{States: []results.StateRecord{{Name: "on"}}}
		for round := 1; round <= 3; round++ {
			c.Samples = append(c.Samples, results.Sample{Round: round, State: "on", Workload: "tcp4",
				Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: tput}, {Name: results.Retransmits, Unit: "count", Value: retransmits}}})
		}
		r.Cases = []results.Case{c}
		r.Recompute()
		if _, err := h.Import(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	series, err := h.Analyze(ctx, nil, changepoint.Options{Magnitude: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, s := range series {
		for _, f := range s.Findings {
			kinds[s.Metric] = fmt.Sprintf("%s %s %v", f.Kind, f.After.RunID, f.FromZero)
		}
	}
	if kinds[results.Throughput] != "improvement nsp0010 true" || kinds[results.Retransmits] != "regression nsp0010 true" {
		t.Errorf("findings %v", kinds)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"table": func(b *bytes.Buffer) error { return FindingsTable(b, series) },
		"csv":   func(b *bytes.Buffer) error { return FindingsCSV(b, series) },
		"json":  func(b *bytes.Buffer) error { return FindingsJSON(b, series) },
		"failing": func(b *bytes.Buffer) error {
			_, err := b.WriteString(strings.Join(Failing(series, 20), "\n"))
			return err
		},
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil || strings.Contains(b.String(), "Inf") || strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "+0.0%") {
			t.Errorf("%s (%v):\n%s", name, err, b.String())
		}
		if (name == "table" || name == "failing") && !strings.Contains(b.String(), "from 0") {
			t.Errorf("%s says no change from 0:\n%s", name, b.String())
		}
	}
}
