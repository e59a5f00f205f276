package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
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
		if err := WriteSeries(discard{}, points, "text"); err != nil {
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
