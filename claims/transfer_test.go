package claims

import (
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

// TestTransferTimes: a time the text gives for moving a named amount of data is a transfer's
// time in seconds, however the author writes it; a time beside a rate, or a latency, is not.
func TestTransferTimes(t *testing.T) {
	for _, c := range []struct {
		name, body    string
		metric        string
		before, after float64
	}{
		{"states on lines", "Downloading a 10 MB file from a server 20 ms away:\n\n  before: 3.81 s\n  after:  2.95 s\n", scenarios.MetricTransferTime, 3.81, 2.95},
		{"a sentence", "A 1 GiB upload took 12.4 seconds before the patch and 10.2 seconds after it.\n", scenarios.MetricTransferTime, 12.4, 10.2},
		{"an arrow", "transferring 300MB over the lossy link: 2.6s -> 2.1s\n", scenarios.MetricTransferTime, 2.6, 2.1},
		{"milliseconds", "Fetching a 4 MiB object from the cache host:\n\n  without the fix: 840 ms\n  with the fix:    610 ms\n", scenarios.MetricTransferTime, 0.84, 0.61},
		{"a latency of transfers", "With 64 KB transfers, the p99 latency went from 2.1 ms to 1.7 ms.\n", "", 0, 0},
		{"a rate, not a size", "Copying at 900 MB/s in the background, the build took 41 s before and 35 s after.\n", "", 0, 0},
		{"microseconds", "Each 4 KB copy took 12 us before and 9 us after.\n", "", 0, 0},
	} {
		got, ok := oneClaim(t, c.name, c.body)
		if !ok {
			continue
		}
		if c.metric == "" {
			if got.Metric == scenarios.MetricTransferTime || got.Unit == "s" {
				t.Errorf("%s: read as a transfer's time: %+v", c.name, got)
			}
			continue
		}
		if got.Metric != c.metric || got.Unit != "s" || got.Before.Median != c.before || got.After.Median != c.after {
			t.Errorf("%s: %s %s %v -> %v, want %s s %v -> %v", c.name, got.Metric, got.Unit, got.Before.Median, got.After.Median, c.metric, c.before, c.after)
		}
	}
}

// oneClaim reads a message of body under a Subject of its own and returns its one claim;
// false (the test failed) where it has another number of them.
func oneClaim(t *testing.T, name, body string) (Claim, bool) {
	t.Helper()
	r, err := Read(name, []byte("Subject: [PATCH net] tcp: a fix\n\n"+body+"\nSigned-off-by: A <a@example.org>\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 {
		t.Errorf("%s: %d claims, want 1: %+v", name, len(r.Claims), r.Claims)
		return Claim{}, false
	}
	return r.Claims[0], true
}
