package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/nsperf/nsperf/history/changepoint"
)

// BenchmarkShow10000: `history show` of one scenario over 10,000 stored runs (SQLite). The
// database is filled once per benchmark run; only the query and its rendering are timed.
func BenchmarkShow10000(b *testing.B) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	for i := 0; i < 10000; i++ {
		r := testResult(fmt.Sprintf("nsp%04x", i), "veth-bigtcp", "", "6.18.44", t0.Add(time.Duration(i)*time.Minute), 10, 12)
		if _, err := h.Import(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		points, err := h.Show(ctx, Query{Scenario: "veth-bigtcp", Workload: "tcp4", Metric: "throughput", State: "on"})
		if err != nil || len(points) != 10000 {
			b.Fatalf("%d points, %v", len(points), err)
		}
		if err := SeriesTable(discard{}, points); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImport: recording one result, as every `nsperf run` does at its end.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	i := 0
	for b.Loop() {
		r := testResult(fmt.Sprintf("nsp%04x", i), "veth-bigtcp", "", "6.18.44", t0.Add(time.Duration(i)*time.Minute), 10, 12)
		if _, err := h.Import(ctx, r); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkAnalyzeHistory: `history analyze` of a history of 500 runs with 1,000 series each
// (one workload, 500 metrics, 2 states; CV 5%, a 10% step in every tenth series at run 250):
// reading the series from SQLite and finding their change points. The rows are written
// directly, once; only the analysis is timed.
func BenchmarkAnalyzeHistory(b *testing.B) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	run, _ := tx.Prepare(`INSERT INTO runs (run_id, started, scenario, sha256, label, kernel, hostname, complete, result) VALUES (?, ?, 'big', '', '', 'k', 'h', 1, '{"settings":{}}')`)
	ser, _ := tx.Prepare(`INSERT INTO series (run_id, started, case_label, workload, metric, state, unit, n, median, cv) VALUES (?, ?, '', 'w', ?, ?, 'count', 6, ?, 0.05)`)
	rng := rand.New(rand.NewPCG(5, 5))
	for r := 0; r < 500; r++ {
		id, started := fmt.Sprintf("nsp%04d", r), formatTime(t0.Add(time.Duration(r)*time.Hour))
		if _, err := run.Exec(id, started); err != nil {
			b.Fatal(err)
		}
		for m := 0; m < 500; m++ {
			for _, st := range []string{"off", "on"} {
				v := 100 * (1 + 0.05*rng.NormFloat64())
				if m%10 == 0 && r >= 250 {
					v *= 0.9
				}
				if _, err := ser.Exec(id, started, fmt.Sprintf("m%03d", m), st, v); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		series, err := h.Analyze(ctx, nil, changepoint.Options{})
		if err != nil || len(series) != 1000 {
			b.Fatalf("%d series, %v", len(series), err)
		}
		found := 0
		for _, s := range series {
			found += len(s.Findings)
		}
		b.ReportMetric(float64(found), "changepoints")
	}
}
