package iperf3

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The fixtures are real iperf3 3.12 -J output captured between two namespaces on this
// machine; the expected values were read from them independently (python3 json).
func TestParseRealOutput(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[string]float64
	}{
		{"iperf3-tcp4.json", map[string]float64{
			results.Throughput: 13670742218.713486, results.Retransmits: 9816,
			results.CPUSender: 96.84675202168006, results.CPUReceiver: 43.72903682119965,
			results.RTTMean: 58, results.RTTMin: 42, results.RTTMax: 68}},
		{"iperf3-tcp6-p2.json", map[string]float64{ // two streams: RTT mean of means, min of mins, max of maxes
			results.Throughput: 13935587424.853455, results.Retransmits: 11862,
			results.CPUSender: 97.7568884512627, results.CPUReceiver: 50.629385867730846,
			results.RTTMean: 42.5, results.RTTMin: 40, results.RTTMax: 49}},
		// UDP, -b 0 -l 1400, 2 s: (1059301 - 70621) datagrams arrived in 2.000195 s.
		{"udp-3.12.json", map[string]float64{
			results.Throughput: 5536068233.347248, results.CPUSender: -1, results.CPUReceiver: -1,
			scenarios.MetricPacketRate: (1059301 - 70621) / 2.000195, scenarios.MetricPacketLoss: 6.66657226737655,
			scenarios.MetricJitter: 0.0006543852927060266 * 1000}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ms, err := Parse(fixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, m := range ms {
				got[m.Name] = m.Value
			}
			for name, want := range tc.want {
				if want == -1 { // present, any value
					if _, ok := got[name]; !ok {
						t.Errorf("%s missing", name)
					}
					continue
				}
				if math.Abs(got[name]-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s = %v, want %v", name, got[name], want)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("metrics %v, want exactly %v", got, tc.want)
			}
		})
	}
}

func TestParseBadOutput(t *testing.T) {
	full := fixture(t, "iperf3-tcp4.json")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"tool error", fixture(t, "iperf3-refused.json"), "unable to connect to server: Connection refused"},
		{"truncated", full[:len(full)/2], "iperf3 -J output"},
		{"empty", nil, "iperf3 -J output"},
		{"not json", []byte("iperf3: error - unable to connect"), "iperf3 -J output"},
		{"unfinished", []byte(`{"start":{},"intervals":[],"end":{}}`), "did not finish"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Parse(fixture(t, "iperf3-refused.json")); !errors.Is(err, ErrTool) {
		t.Errorf("tool error does not wrap ErrTool: %v", err)
	}
}

func TestArgs(t *testing.T) {
	c0, c1 := 0, 1
	w := &scenarios.Iperf3{
		Client: scenarios.Side{NS: "client", CPU: &c0}, Server: scenarios.Side{NS: "server", Addr: "2001:2::2", CPU: &c1},
		Duration: scenarios.Duration(15 * time.Second), Omit: scenarios.Duration(5 * time.Second), Port: 5201, CPort: 40000, Streams: 1,
	}
	if got, want := strings.Join(ServerArgs(w), " "), "iperf3 -s -1 -B 2001:2::2 -p 5201 -A 1"; got != want {
		t.Errorf("server: %s\nwant    %s", got, want)
	}
	if got, want := strings.Join(ClientArgs(w), " "), "iperf3 -c 2001:2::2 -p 5201 -6 -J -t 15 -O 5 -A 0 --cport 40000"; got != want {
		t.Errorf("client: %s\nwant    %s", got, want)
	}
	w.Server.Addr, w.Streams, w.CPort, w.Client.CPU = "198.18.0.2", 4, 0, nil
	if got, want := strings.Join(ClientArgs(w), " "), "iperf3 -c 198.18.0.2 -p 5201 -4 -J -t 15 -O 5 -P 4"; got != want {
		t.Errorf("client: %s\nwant    %s", got, want)
	}
	w.Streams, w.Protocol, w.Bitrate, w.BlockSize = 1, scenarios.Iperf3UDP, "0", 1400
	if got, want := strings.Join(ClientArgs(w), " "), "iperf3 -c 198.18.0.2 -p 5201 -4 -J -t 15 -O 5 -u -b 0 -l 1400"; got != want {
		t.Errorf("udp client: %s\nwant    %s", got, want)
	}
}

func TestVersion(t *testing.T) {
	if v := Version("iperf 3.12 (cJSON 1.7.15)\nLinux vm ..."); v != "3.12" {
		t.Fatal(v)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"iperf3-tcp4.json", "iperf3-tcp6-p2.json", "iperf3-refused.json"} {
		f.Add(fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := Parse(data)
		if err == nil && len(ms) == 0 {
			t.Fatal("no metrics and no error")
		}
	})
}
