package claims

import (
	"slices"
	"testing"
)

// TestLatencyStats: a latency written with its statistic is that statistic's metric, however
// the author puts it; two statistics, or another claim's figures on the line, leave it a
// latency.
func TestLatencyStats(t *testing.T) {
	for _, c := range []struct{ name, body, metric string }{
		{"a sentence", "p99 latency went from 48us to 31us.\n", "p99_latency"},
		{"a heading", "99th percentile:\n  before: 48 us\n  after:  31 us\n", "p99_latency"},
		{"three nines", "P99.9 RTT: 210 us -> 160 us\n", "p999_latency"},
		{"three nines run together", "p999 RTT: 210 us -> 160 us\n", "p999_latency"},
		{"five nines", "99.999th percentile:\n  before: 480 us\n  after:  310 us\n", "p99999_latency"},
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

// TestLatencyStatsOfTableCells: a table's column or row that names one statistic of a latency
// ("P99", "50th", "median") makes the claims under it that statistic's metric, though the
// line carries other claims' figures too; a column of another condition does not.
func TestLatencyStatsOfTableCells(t *testing.T) {
	for _, c := range []struct {
		name, body string
		metrics    []string
	}{
		{"columns", "RR latency, usec:\n\n           P50    P99    P99.9\n  without  12.1   30.5   77.0\n  with     11.8   26.0   61.3\n",
			[]string{"p50_latency", "p99_latency", "p999_latency"}},
		{"ordinal columns", "Latency (us)   50th   90th\nold kernel      140    310\nnew kernel      133    290\n",
			[]string{"p50_latency", "p90_latency"}},
		{"rows", "Round trips in usec:\n\n          unpatched   patched\n  median      38.2      35.0\n  max        412.0     380.5\n",
			[]string{"p50_latency", "max_latency"}},
		{"another condition", "Latency in usec:\n\n          1 flow   8 flows\n  before  20.4     95.2\n  after   19.9     80.1\n",
			[]string{"", ""}},
	} {
		r, err := Read(c.name, []byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cl := range r.Claims {
			got = append(got, cl.Metric)
		}
		if !slices.Equal(got, c.metrics) {
			t.Errorf("%s: metrics %q, want %q", c.name, got, c.metrics)
		}
	}
}

// TestLatencyStatsBeforeEachFigure: a line of two statistics, each named right before its
// figure ("avg 182.3 us, p99 301 us") or before the word of a latency there ("p99 latency 410
// usec"), gives each claim its own.
func TestLatencyStatsBeforeEachFigure(t *testing.T) {
	r, err := Read("x", []byte("Subject: x\n\nupstream:         avg 182.3 us, p99 301 us\nupstream+patch:   avg 166.0 us, p99 240 us\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Claims {
		got = append(got, c.Metric)
	}
	if !slices.Equal(got, []string{"mean_latency", "p99_latency"}) {
		t.Errorf("metrics %q:\n%s", got, claimsText(r))
	}
	// The word of a latency between the statistic and the figure, on lines with another
	// claim's figures: "p99 latency 410 usec", "avg RTT 61.2 us".
	for body, want := range map[string][]string{
		"Before the patch: 1.52M trans/s, p99 latency 410 usec\nAfter the patch:  1.61M trans/s, p99 latency 388 usec\n": {"transaction_rate", "p99_latency"},
		"Baseline: 233k req/s, avg RTT 61.2 us\nPatched:  241k req/s, avg RTT 58.9 us\n":                                 {"transaction_rate", "mean_latency"},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, c := range r.Claims {
			got = append(got, c.Metric)
		}
		if !slices.Equal(got, want) {
			t.Errorf("metrics %q, want %q:\n%s", got, want, claimsText(r))
		}
	}
	// A function's average time, computed on an assignment's line, is no request's latency.
	r, err = Read("x", []byte("Subject: x\n\nold: napi_poll = 9120.5 us / 211 calls = avg 43.2 us\nnew: napi_poll = 8010.0 us / 230 calls = avg 34.8 us\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Claims {
		if c.Metric == "mean_latency" {
			t.Errorf("an assignment's average as a latency:\n%s", claimsText(r))
		}
	}
}

// TestLatencyStatInItsClause: on a line with another claim, the statistic named in the clause
// that holds a latency's figures is its metric ("... and cuts p99 latency (from 52 us to 46
// us)"); a clause that names none, or two, leaves it a latency.
func TestLatencyStatInItsClause(t *testing.T) {
	for _, c := range []struct{ name, body, metric string }{
		{"p99 in its clause", "TCP_RR goes from 41.2k to 44.0k transactions per second and p99 latency drops (from 52 us to 46 us).\n", "p99_latency"},
		{"the median after a comma", "Throughput rises from 9.1 to 9.8 Gbit/s, the median RTT from 61 us to 55 us.\n", "p50_latency"},
		{"none in its clause", "The p99 of TCP_RR goes from 41.2k to 44.0k transactions per second and latency from 52 us to 46 us.\n", ""},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+c.body))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cl := range r.Claims {
			if cl.Unit != "us" {
				continue
			}
			found = true
			if cl.Metric != c.metric && !(c.metric == "" && cl.Quantity == "latency") {
				t.Errorf("%s: metric %q (quantity %q), want %q", c.name, cl.Metric, cl.Quantity, c.metric)
			}
		}
		if !found {
			t.Errorf("%s: no latency claim:\n%s", c.name, claimsText(r))
		}
	}
}
