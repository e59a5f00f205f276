package claims

import "testing"

// TestLatencyStats: a latency written with its statistic is that statistic's metric, however
// the author puts it; two statistics, or another claim's figures on the line, leave it a
// latency.
func TestLatencyStats(t *testing.T) {
	for _, c := range []struct{ name, body, metric string }{
		{"a sentence", "p99 latency went from 48us to 31us.\n", "p99_latency"},
		{"a heading", "99th percentile:\n  before: 48 us\n  after:  31 us\n", "p99_latency"},
		{"three nines", "P99.9 RTT: 210 us -> 160 us\n", "p999_latency"},
		{"the median", "Median RTT: 61.2us (vanilla), 55.8us (patched)\n", "p50_latency"},
		{"the mean", "average latency 18.4 usec before, 17.1 usec after\n", "mean_latency"},
		{"none said", "Latency: 48 us before, 31 us after.\n", ""},
		{"another clause", "Latency is 48 us before and 31 us after; the 99th is unchanged.\n", ""},
		{"two statistics", "min/p99 latency: 48 us -> 31 us\n", ""},
	} {
		got, ok := oneClaim(t, c.name, c.body)
		if !ok {
			continue
		}
		if want := c.metric; got.Metric != want && !(want == "" && got.Quantity == "latency") {
			t.Errorf("%s: metric %q (quantity %q), want %q", c.name, got.Metric, got.Quantity, want)
		}
	}
}
