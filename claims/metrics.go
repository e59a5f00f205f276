package claims

import (
	"sort"
	"sync"

	"github.com/nsperf/nsperf/scenarios"
)

// declared are the metrics nsperf's tools declare (scenarios.DeclaredMetrics): the only
// names a claim's Metric takes, so that a claim can meet a measurement.
var declared = sync.OnceValue(scenarios.DeclaredMetrics)

// toolReadings are the metric names the tools' own readers give claims (netperf's blocks
// and selectors, iperf3's summaries, a bit/s or trans/s figure anywhere): each is a metric a
// tool declares (TestClaimMetricsDeclared).
func toolReadings() []string {
	out := []string{"throughput", "transaction_rate", "local_cpu_util", "remote_cpu_util"}
	for _, sel := range []string{"MIN_LATENCY", "MAX_LATENCY", "MEAN_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "STDDEV_LATENCY", "RT_LATENCY"} {
		if m, _, _, ok := selectorMetric(sel, "TCP_RR"); ok {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// declare keeps a claim's metric where a tool declares it, and otherwise says what the text
// measures as its Quantity (packet_rate, TcpInSegs, share): such a claim is read, and
// reported, but nsperf has no measurement to set beside it.
func declare(c Claim) Claim {
	if c.Metric == "" {
		return c
	}
	if spec, ok := declared()[c.Metric]; ok && c.Unit != "" && (spec.Unit == "" || spec.Unit == c.Unit) {
		return c
	}
	if c.Quantity == "" {
		c.Quantity = c.Metric
	}
	c.Metric = ""
	return c
}
