package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// BenchmarkFirstSample is the time from the start of a run (before the topology is built) to
// the start of its first measurement, as each result records it (first_sample_seconds): the
// default scenario, one run of 1 s per state. Reported by make bench, never asserted.
func BenchmarkFirstSample(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireTool(b, "iperf3")
	var first, apply time.Duration
	n := 0
	for b.Loop() {
		r, err := Run(context.Background(), short(b, 1, time.Second), Options{Machine: host.Machine{}, Out: filepath.Join(b.TempDir(), "r.json")})
		if err != nil {
			b.Fatal(err)
		}
		first += time.Duration(r.FirstSampleSeconds * float64(time.Second))
		for _, st := range r.Cases[0].States {
			for _, s := range st.ApplySeconds {
				apply += time.Duration(s * float64(time.Second))
				n++
			}
		}
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms-to-first-sample")
	if n > 0 {
		b.ReportMetric(float64(apply.Microseconds())/1000/float64(n), "ms-per-state-apply")
	}
}
