package claims

import (
	"os"
	"testing"
)

// TestAssignmentsUnitOnceAtEnd: a state's statistics as name=value with the unit written
// once at the end of the line, in parentheses or bare, give the first statistic in that unit
// (assignments-unit-once-at-end.txt; its family's scorer compares the figures only); a unit
// after a figure of its own stays that figure's.
func TestAssignmentsUnitOnceAtEnd(t *testing.T) {
	data, err := os.ReadFile("testdata/families/assignments-unit-once-at-end.txt")
	if err != nil {
		t.Fatal(err)
	}
	bare := []byte("Subject: x\n\nbase:    avg=21.4 min=20.9 max=21.8 Gbit/s\npatched: avg=23.9 min=23.1 max=24.4 Gbit/s\n")
	brackets := []byte("Subject: x\n\nbase:    avg=412 p99=955 [us]\npatched: avg=371 p99=801 [us]\n")
	for _, c := range []struct {
		name         string
		data         []byte
		metric, unit string
	}{{"parentheses", data, "throughput", "bit/s"}, {"bare", bare, "throughput", "bit/s"}, {"brackets", brackets, "mean_latency", "us"}} {
		r, err := Read("x", c.data)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Unit != c.unit || r.Claims[0].Metric != c.metric {
			t.Errorf("%s:\n%s", c.name, claimsText(r))
		}
	}
}
