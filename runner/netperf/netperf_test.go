package netperf

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func metricMap(ms []results.Metric) map[string]results.Metric {
	out := map[string]results.Metric{}
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

func mt(name, unit string, v float64) results.Metric {
	return results.Metric{Name: name, Unit: unit, Value: v}
}

var rrSelectors = []string{"MIN_LATENCY", "P90_LATENCY", "P99_LATENCY", "THROUGHPUT"}

// The netperf-*.txt fixtures are real netperf 2.7.0 output captured between two namespaces
// here; the seed-*.txt ones are the output printed in shared/seeds. Expected values are read
// off the files by eye.
func TestParseFixtures(t *testing.T) {
	for _, tc := range []struct {
		file, test string
		selectors  []string
		row        string
		want       map[string]results.Metric
	}{
		{"netperf-rr-O.txt", scenarios.NetperfTCPRR, rrSelectors, "43           51           104          19546.24",
			map[string]results.Metric{"min_latency": mt("min_latency", "us", 43), "p90_latency": mt("p90_latency", "us", 51),
				"p99_latency": mt("p99_latency", "us", 104), "throughput": mt("throughput", "trans/s", 19546.24)}},
		{"netperf-crr-O.txt", scenarios.NetperfTCPCRR, []string{"MIN_LATENCY", "MEAN_LATENCY", "P99_LATENCY", "THROUGHPUT", "THROUGHPUT_UNITS"}, "53           70.98        181          14071.38   Trans/s",
			map[string]results.Metric{"min_latency": mt("min_latency", "us", 53), "mean_latency": mt("mean_latency", "us", 70.98),
				"p99_latency": mt("p99_latency", "us", 181), "throughput": mt("throughput", "trans/s", 14071.38)}},
		{"netperf-udprr-O.txt", scenarios.NetperfUDPRR, []string{"MIN_LATENCY", "P50_LATENCY", "P99_LATENCY", "THROUGHPUT"}, "18           27           74           34144.35",
			map[string]results.Metric{"min_latency": mt("min_latency", "us", 18), "p50_latency": mt("p50_latency", "us", 27),
				"p99_latency": mt("p99_latency", "us", 74), "throughput": mt("throughput", "trans/s", 34144.35)}},
		{"netperf-udp-O.txt", scenarios.NetperfUDPStream, []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_SEND_SIZE"}, "1567.07    10^6bits/s  1400",
			map[string]results.Metric{"throughput": mt("throughput", "bit/s", 1567.07e6)}},
		{"netperf-stream-classic.txt", scenarios.NetperfTCPStream, nil, "131072  16384  16384    2.00     5161.47",
			map[string]results.Metric{"throughput": mt("throughput", "bit/s", 5161.47e6)}},
		{"netperf-stream-k.txt", scenarios.NetperfTCPStream, nil, "", // CPU utilisation -1: not measured, left out
			map[string]results.Metric{"throughput": mt("throughput", "bit/s", 4774.07e6), "mean_latency": mt("mean_latency", "us", 27.36)}},
		{"seed-vxlan-stream-0.txt", scenarios.NetperfTCPStream, nil, "131072  16384  16384    30.00    34440.00",
			map[string]results.Metric{"throughput": mt("throughput", "bit/s", 34440e6)}},
		{"seed-vxlan-stream-5.txt", scenarios.NetperfTCPStream, nil, "131072  16384  16384    60.00    29390.78",
			map[string]results.Metric{"throughput": mt("throughput", "bit/s", 29390.78e6)}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ms, row, err := Parse(fixture(t, tc.file), tc.test, tc.selectors)
			if err != nil {
				t.Fatal(err)
			}
			if row != tc.row {
				t.Errorf("row %q, want %q", row, tc.row)
			}
			got := metricMap(ms)
			for name, want := range tc.want {
				if g := got[name]; g.Unit != want.Unit || g.Value-want.Value > 1e-6 || want.Value-g.Value > 1e-6 {
					t.Errorf("%s = %+v, want %+v", name, g, want)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("metrics %v, want exactly %v", got, tc.want)
			}
		})
	}
}

// The seed's big-tcp rows are what `... -O MIN_LATENCY,P90_LATENCY,P99_LATENCY,THROUGHPUT |
// tail -1` printed; each parses as the last line of -O output.
func TestParseSeedRows(t *testing.T) {
	rows := strings.Split(strings.TrimSpace(fixture(t, "seed-big-tcp-rows.txt")), "\n")
	if len(rows) != 20 {
		t.Fatalf("%d rows, want the seed's 20", len(rows))
	}
	header := "MIGRATED TCP REQUEST/RESPONSE TEST from ::0 (::) port 0 AF_INET6 to iroa23 () port 0 AF_INET6 : demo\n"
	ms, row, err := Parse(header+rows[0]+"\n", scenarios.NetperfTCPRR, rrSelectors)
	if err != nil || row != rows[0] {
		t.Fatalf("%v %q", err, row)
	}
	if m := metricMap(ms); m["min_latency"].Value != 77 || m["throughput"].Value != 8542.19 || m["p99_latency"].Value != 183 {
		t.Errorf("first seed row: %v", m)
	}
}

func TestParseBadOutput(t *testing.T) {
	full := fixture(t, "netperf-rr-O.txt")
	classic := fixture(t, "netperf-stream-classic.txt")
	for _, tc := range []struct {
		name, out string
		selectors []string
		want      string
	}{
		{"refused", fixture(t, "netperf-refused.txt"), rrSelectors, "are you sure there is a netserver listening"},
		{"empty", "", rrSelectors, "no output"},
		{"truncated columns", full[:len(full)-12], rrSelectors, "values in the last line"},
		{"truncated classic", classic[:strings.Index(classic, "131072")], nil, "truncated?"},
		{"header only", strings.SplitN(classic, "\n", 2)[0] + "\n", nil, "truncated?"},
		{"not a number", strings.Replace(full, "19546.24", "lots", 1), rrSelectors, `"lots" is not a number`},
		{"unknown unit", strings.Replace(fixture(t, "netperf-udp-O.txt"), "10^6bits/s", "furlongs/s", 1), []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_SEND_SIZE"}, "unknown unit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			test := scenarios.NetperfTCPRR
			if tc.name == "unknown unit" {
				test = scenarios.NetperfUDPStream
			}
			_, _, err := Parse(tc.out, test, tc.selectors)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, _, err := Parse(fixture(t, "netperf-refused.txt"), scenarios.NetperfTCPRR, rrSelectors); !errors.Is(err, ErrTool) {
		t.Errorf("refused is not ErrTool: %v", err)
	}
}

// TestParseTransfer: a transfer of a fixed size (-l -BYTES) is measured by its time, the bytes
// sent over the throughput (4194304 * 8 / 202.82e6 s), ahead of the throughput; the bytes sent
// and netperf's two-decimal elapsed time are no metrics. Without what the time needs, the
// sample fails with why.
func TestParseTransfer(t *testing.T) {
	out := fixture(t, "netperf-transfer-O.txt") // 4 MiB through a 200mbit tbf
	w := &scenarios.Netperf{Test: scenarios.NetperfTCPStream, Bytes: 4 << 20, Outputs: []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_BYTES_SENT", "ELAPSED_TIME"}}
	ms, row, err := Driver{}.Parse(w, []byte(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	if row != "202.82     10^6bits/s  4194304  0.17" {
		t.Errorf("row %q", row)
	}
	want := 4194304 * 8 / 202.82e6
	if len(ms) != 2 || ms[0].Name != scenarios.MetricTransferTime || ms[0].Unit != "s" || ms[0].Value < want*(1-1e-9) || ms[0].Value > want*(1+1e-9) ||
		ms[1] != mt("throughput", "bit/s", 202.82e6) {
		t.Errorf("metrics %+v, want transfer_time %.6f s then throughput", ms, want)
	}
	// A time-based stream with the same selectors has no transfer time.
	w.Bytes = 0
	if ms, _, err := (Driver{}).Parse(w, []byte(out), nil); err != nil || len(ms) != 1 || ms[0].Name != "throughput" {
		t.Errorf("a stream of a time: %+v %v", ms, err)
	}
	w.Bytes = 4 << 20
	for name, bad := range map[string]string{
		"no bytes sent":  strings.Replace(out, "4194304", "0", 1),
		"a rate of none": strings.Replace(out, "202.82", "0.00", 1),
		"transactions/s": strings.Replace(out, "10^6bits/s", "Trans/s", 1),
		"unknown unit":   strings.Replace(out, "10^6bits/s", "furlongs/s", 1),
	} {
		if _, _, err := (Driver{}).Parse(w, []byte(bad), nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestArgs(t *testing.T) {
	c0, c1 := 0, 1
	w := &scenarios.Netperf{Test: scenarios.NetperfTCPRR, Client: scenarios.Side{NS: "client", CPU: &c0}, Server: scenarios.Side{NS: "server", Addr: "2001:2::2", CPU: &c1},
		Duration: scenarios.Duration(10 * time.Second), Port: 12865, Request: 80000, Response: 80000, Outputs: rrSelectors}
	if got, want := strings.Join(ClientArgs(w), " "), "netperf -H 2001:2::2 -p 12865 -6 -t TCP_RR -l 10 -T 0,1 -- -r 80000,80000 -O MIN_LATENCY,P90_LATENCY,P99_LATENCY,THROUGHPUT"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	// TCP_CRR takes the sizes too: a connection per transaction of 64 bytes out, 64 KiB back.
	w = &scenarios.Netperf{Test: scenarios.NetperfTCPCRR, Server: scenarios.Side{Addr: "198.18.0.2"}, Duration: scenarios.Duration(10 * time.Second), Port: 12865, Request: 64, Response: 65536}
	if got, want := strings.Join(ClientArgs(w), " "), "netperf -H 198.18.0.2 -p 12865 -4 -t TCP_CRR -l 10 -- -r 64,65536"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	w = &scenarios.Netperf{Test: scenarios.NetperfTCPStream, Server: scenarios.Side{Addr: "198.18.0.2"}, Duration: scenarios.Duration(60 * time.Second), Port: 12866, MessageSize: 16384, SendBuffer: 1 << 20}
	if got, want := strings.Join(ClientArgs(w), " "), "netperf -H 198.18.0.2 -p 12866 -4 -t TCP_STREAM -l 60 -- -m 16384 -s 1048576"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	// A transfer of 10 MiB: a negative length is bytes.
	tr := &scenarios.Netperf{Test: scenarios.NetperfTCPStream, Server: scenarios.Side{Addr: "198.18.0.2"}, Duration: scenarios.Duration(60 * time.Second), Port: 12865, Bytes: 10 << 20, Outputs: []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_BYTES_SENT"}}
	if got, want := strings.Join(ClientArgs(tr), " "), "netperf -H 198.18.0.2 -p 12865 -4 -t TCP_STREAM -l -10485760 -- -O THROUGHPUT,THROUGHPUT_UNITS,LOCAL_BYTES_SENT"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	if got := strings.Join(ServerArgs(w), " "); got != "netserver -D -p 12866" {
		t.Errorf("server %s", got)
	}
	if Version("Netperf version 2.7.0\n") != "2.7.0" {
		t.Error("version")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := os.ReadDir("testdata")
	for _, e := range files {
		data, err := os.ReadFile("testdata/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), strings.Contains(e.Name(), "-O") || strings.Contains(e.Name(), "rows"))
	}
	f.Fuzz(func(t *testing.T, out string, columns bool) {
		var sel []string
		if columns {
			sel = rrSelectors
		}
		ms, _, err := Parse(out, scenarios.NetperfTCPRR, sel)
		if err == nil && len(ms) == 0 {
			t.Fatal("no metrics and no error")
		}
	})
}
