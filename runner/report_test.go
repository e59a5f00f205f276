package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/results"
)

// TestReportFigure: a progress line shows the workload's gate (a UDP flow's packets, a
// ping-pong's latency), else its throughput; FAILED only for a sample that failed.
func TestReportFigure(t *testing.T) {
	for _, c := range []struct {
		sample results.Sample
		gates  []string
		want   string
	}{
		{results.Sample{State: "on", Workload: "pp4", Metrics: []results.Metric{{Name: "mean_latency", Unit: "us", Value: 50}, {Name: "p99_latency", Unit: "us", Value: 99}}},
			[]string{"p99_latency"}, "p99_latency 99.0 us"},
		{results.Sample{State: "on", Workload: "udp4", Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: 5e9}, {Name: "packet_rate", Unit: "pps", Value: 4.5e5}}},
			[]string{"packet_rate"}, "packet_rate 450.000 kpps"},
		{results.Sample{State: "on", Workload: "tcp4", Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: 5e9}}}, nil, "5.000 Gbps"},
		{results.Sample{State: "on", Workload: "tcp4", Error: "iperf3 exited 1"}, nil, "FAILED: iperf3 exited 1"},
	} {
		var b strings.Builder
		m := &measurement{progress: &b, total: 2, done: 1, started: time.Now()}
		m.report("", 1, 1, c.sample, c.gates)
		if !strings.Contains(b.String(), c.want) || (c.sample.Error == "" && strings.Contains(b.String(), "FAILED")) {
			t.Errorf("%q, want %q", b.String(), c.want)
		}
	}
}

// TestReportTimeLeftInVirtualTime: in virtual time the time left counts the samples' own
// seconds, not the guest's clock since the start, which runs through its idle waits (a guest
// that waited 10 minutes of virtual time at the gate still has 3 samples of 2 s left).
func TestReportTimeLeftInVirtualTime(t *testing.T) {
	var b strings.Builder
	m := &measurement{progress: &b, total: 4, done: 1, started: time.Now().Add(-10 * time.Minute)}
	m.opt.VirtualTime = true
	m.report("A", 1, 4, results.Sample{State: "off", Workload: "tcp4", Seconds: 2, Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: 2.6e9}}}, nil)
	if !strings.Contains(b.String(), "(6s of virtual time left)") {
		t.Errorf("%q, want 6s of virtual time left", b.String())
	}
}
