package claims

import (
	"sync"

	"github.com/nsperf/nsperf/scenarios"
)

// declared are the metrics nsperf's tools declare (scenarios.DeclaredMetrics): the only
// names a claim's Metric takes, so that a claim can meet a measurement.
var declared = sync.OnceValue(scenarios.DeclaredMetrics)

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
