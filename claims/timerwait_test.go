package claims

import (
	"testing"

	"github.com/nsperf/nsperf/results"
)

// TestTimerWaits: a time a retransmission's timer takes to fire is a retransmission's wait in
// µs, however the author writes it; a latency, and a timer that retransmits nothing, are not.
func TestTimerWaits(t *testing.T) {
	for _, c := range []struct {
		name, body    string
		before, after float64 // 0: not a retransmission's wait
	}{
		{"an arrow", "TLP timeout on a 20 ms path: 240 ms -> 42 ms\n", 240000, 42000},
		{"a sentence with its states", "The RTO fired after 1.2 s before the patch and after 300 ms with it.\n", 1200000, 300000},
		{"states on lines", "When the loss probe fires, after the last request left:\n\n  before: 241 ms\n  after:  44 ms\n", 241000, 44000},
		{"a delayed ACK explained above", "Room for a delayed ACK is no longer added to a lone packet's probe.\n\nTLP fires at: 240 ms -> 42 ms\n", 240000, 42000},
		{"a latency", "The p99 latency went from 260 ms to 62 ms because the probe fires earlier.\n", 0, 0},
		{"a delayed ACK", "The delayed ACK timer fires after 40 ms before the patch and after 4 ms with it.\n", 0, 0},
	} {
		waits, all := claimsOf(t, c.name, c.body, results.RetransmitWait)
		if c.before == 0 {
			if len(waits) > 0 {
				t.Errorf("%s: read as a retransmission's wait: %+v", c.name, waits)
			}
			continue
		}
		if len(waits) != 1 {
			t.Errorf("%s: %d retransmission waits, want 1: %+v", c.name, len(waits), all)
			continue
		}
		got := waits[0]
		if got.Unit != "us" || got.Metric != "" || got.Before.Median != c.before || got.After.Median != c.after || !Measurable(got) {
			t.Errorf("%s: %s %s %v -> %v, want us %v -> %v", c.name, got.Quantity, got.Unit, got.Before.Median, got.After.Median, c.before, c.after)
		}
	}
}
