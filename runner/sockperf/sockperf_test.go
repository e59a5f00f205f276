package sockperf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

func value(ms []results.Metric, name string) (float64, string) {
	for _, m := range ms {
		if m.Name == name {
			return m.Value, m.Unit
		}
	}
	return -1, ""
}

// TestParse reads sockperf 3.7's output as it printed it here (testdata, colour codes and
// all): the figures are those of the files.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		file    string
		latency bool
		want    map[string]float64
		row     string
	}{
		{"ping-pong-tcp.txt", true, map[string]float64{"mean_latency": 7.795, "stddev_latency": 16.970, "p50_latency": 6.980, "p99_latency": 21.782,
			"p999_latency": 49.899, "p9999_latency": 653.746, "p99999_latency": 2036.659, "min_latency": 6.619, "max_latency": 2046.004, "p25_latency": 6.714, "p75_latency": 7.771, "p90_latency": 8.587}, "Latency is 7.795 usec"},
		// An older release's (written from its format strings: "avg-lat=%7.3lf", percentiles
		// "%6.2lf"), figures of our own.
		{"ping-pong-older.txt", true, map[string]float64{"mean_latency": 12.247, "stddev_latency": 1.903, "p50_latency": 12.051, "p99_latency": 16.840,
			"p999_latency": 27.318, "p9999_latency": 61.004, "min_latency": 10.902, "max_latency": 187.552}, "Latency is 12.247 usec"},
		{"under-load-tcp.txt", true, map[string]float64{"mean_latency": 69.352, "p99_latency": 1333.647, "min_latency": 8.978}, "Latency is 69.352 usec"},
		{"throughput-tcp.txt", false, map[string]float64{"throughput": 6809.056e6, "message_rate": 606302}, "Message Rate is 606302 [msg/sec]; BandWidth is 851.132 MBps (6809.056 Mbps)"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		ms, row, err := Parse(tc.latency, data)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		for name, want := range tc.want {
			if got, unit := value(ms, name); got != want || unit == "" {
				t.Errorf("%s: %s = %v %s, want %v", tc.file, name, got, unit, want)
			}
		}
		if row != tc.row {
			t.Errorf("%s: row %q, want %q", tc.file, row, tc.row)
		}
		// Every metric is one sockperf declares, with the unit it declares.
		declared := map[string]string{}
		for _, m := range (&scenarios.Sockperf{}).Metrics() {
			declared[m.Name] = m.Unit
		}
		for _, m := range ms {
			if unit, ok := declared[m.Name]; !ok || unit != m.Unit {
				t.Errorf("%s: %s in %s is not declared so (%q)", tc.file, m.Name, m.Unit, unit)
			}
		}
	}
}

// TestParseRefusesWhatIsNotAResult: output cut short, a latency run read as throughput, a
// server that was not there.
func TestParseRefusesWhatIsNotAResult(t *testing.T) {
	pp, _ := os.ReadFile(filepath.Join("testdata", "ping-pong-tcp.txt"))
	for name, tc := range map[string]struct {
		latency bool
		out     string
	}{
		"cut short":      {true, string(pp[:len(pp)/2])},
		"wrong mode":     {false, string(pp)},
		"no server":      {true, "sockperf: ERROR: Failed to connect to 198.18.0.2:11111 (errno=111 Connection refused)\n"},
		"empty":          {true, ""},
		"bad number":     {true, "sockperf: ====> avg-latency=7.7.9 (std-dev=1.0)\n"},
		"overlong lines": {true, strings.Repeat("x", 2<<20)},
	} {
		if ms, _, err := Parse(tc.latency, []byte(tc.out)); err == nil {
			t.Errorf("%s: parsed %v", name, ms)
		}
	}
}

func TestArgs(t *testing.T) {
	cpu := 1
	w := &scenarios.Sockperf{Mode: "under-load", Client: scenarios.Side{NS: "client", CPU: &cpu}, Server: scenarios.Side{NS: "server", Addr: "198.18.0.2"},
		Duration: scenarios.Duration(5e9), Port: 11111, Protocol: "tcp", MessageSize: 64, MPS: 10000}
	if got, want := ClientArgs(w), []string{"taskset", "-c", "1", "sockperf", "under-load", "-i", "198.18.0.2", "-p", "11111", "--tcp", "-t", "5", "-m", "64", "--mps", "10000"}; !slices.Equal(got, want) {
		t.Errorf("client %v", got)
	}
	w.Protocol = "udp"
	if got, want := ServerArgs(w), []string{"sockperf", "server", "-i", "198.18.0.2", "-p", "11111"}; !slices.Equal(got, want) {
		t.Errorf("server %v", got)
	}
	if Version("sockperf, version 3.7-no.git\n   compiled 2021-08-23\n") != "3.7" {
		t.Error("version")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"ping-pong-tcp.txt", "under-load-tcp.txt", "throughput-tcp.txt"} {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(data, name != "throughput-tcp.txt")
	}
	f.Fuzz(func(t *testing.T, out []byte, latency bool) {
		ms, _, err := Parse(latency, out)
		if err == nil && len(ms) == 0 {
			t.Error("no error and no metrics")
		}
	})
}

// TestParseExcerptOfPercentiles: a message may show only the percentiles' and extremes' lines
// of a ping-pong report; they are latencies in usec as sockperf prints them, without the mean.
func TestParseExcerptOfPercentiles(t *testing.T) {
	ms, err := ParseExcerpt(true, []byte("sockperf: ---> <MAX> observation =  120.501\nsockperf: ---> percentile 99.000 =   22.310\nsockperf: ---> percentile 50.000 =   10.020\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range ms {
		if m.Unit != "us" {
			t.Errorf("%s in %q", m.Name, m.Unit)
		}
		got[m.Name] = m.Value
	}
	if got["max_latency"] != 120.501 || got["p99_latency"] != 22.31 || got["p50_latency"] != 10.02 || len(got) != 3 {
		t.Errorf("metrics %v", got)
	}
	if _, err := ParseExcerpt(true, []byte("sockperf: Summary: Round trip is ok\n")); err == nil {
		t.Error("an excerpt without a figure parsed")
	}
}

// TestParseMeanWithMoreStatistics: later sockperf versions print more statistics after the
// standard deviation in the mean's parentheses; the mean is read either way.
func TestParseMeanWithMoreStatistics(t *testing.T) {
	ms, err := ParseExcerpt(true, []byte("sockperf: ====> avg-latency=6.120 (std-dev=1.020, mean-ad=0.700, median-ad=0.810, siqr=0.600, cv=0.167, std-error=0.002, 99.0% ci=[6.115, 6.125])\n"))
	if err != nil || !hasMetric(ms, "mean_latency") || ms[0].Value != 6.12 {
		t.Errorf("%v %v", ms, err)
	}
}
