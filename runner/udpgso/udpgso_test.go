package udpgso

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/scenarios"
)

// TestParse reads udpgso_bench_tx's summary (6.12's program, run here over a veth pair):
// the payload's bits per second from the buffers sent and their size, the calls per second.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		file     string
		sendSize int
		bits     float64
		calls    float64
	}{
		{"tx-gso.out", 61824, 92790 * 61824 * 8 / 2.0, 46395},
		{"tx-nogso.out", 61824, 0, 0}, // filled below from the file's own figures
	} {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		ms, row, err := Parse(tc.sendSize, data)
		if err != nil || len(ms) != 2 || !strings.HasPrefix(row, "sum udp tx:") {
			t.Fatalf("%s: %v %q %v", tc.file, ms, row, err)
		}
		if tc.bits != 0 && (math.Abs(ms[0].Value-tc.bits) > 1 || ms[0].Unit != "bit/s" || math.Abs(ms[1].Value-tc.calls) > 1e-6) {
			t.Errorf("%s: %v, want %v bit/s and %v calls/s", tc.file, ms, tc.bits, tc.calls)
		}
		// The program's own MB/s (KiB per ms) agrees with the bits to its rounding.
		var mbs float64
		for _, f := range strings.Fields(row) {
			if mbs == 0 {
				if v, err := parseFloat(f); err == nil {
					mbs = v
				}
			}
		}
		if got := ms[0].Value / 8 / 1024 / 1000; math.Abs(got-mbs) > 1 {
			t.Errorf("%s: %v MB/s from the counts, the program says %v", tc.file, got, mbs)
		}
	}
}

func parseFloat(s string) (float64, error) {
	var v float64
	_, err := fmt.Sscan(s, &v)
	return v, err
}

// TestParseErrors: a sender that failed (the receiver's port closed) or printed no summary is
// an error that quotes what it printed.
func TestParseErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/tx-refused.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{string(data), "", "Summary over 0.000 seconds...\nsum udp tx: 1 MB/s 1 calls (1/s) 1 msgs (1/s)\n",
		"sum udp tx: 1 MB/s 1 calls (1/s) 1 msgs (1/s)\n", "Summary over 1.000 seconds...\nsum udp tx: 1 MB/s 99999999999999999999999 calls (1/s) 1 msgs (1/s)\n"} {
		if ms, _, err := Parse(1000, []byte(out)); err == nil {
			t.Errorf("%q: %v, want an error", out, ms)
		}
	}
	if _, _, err := Parse(1000, data); !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("the error does not quote the program: %v", err)
	}
}

// TestArgs: the receiver bound to the server's address (IPv4 asked for: its default is IPv6),
// the sender with the run's time, size and GSO; both pinned with taskset (the sender's -C
// ignores CPU 0).
func TestArgs(t *testing.T) {
	c0, c1 := 0, 1
	w := &scenarios.UDPGSO{Client: scenarios.Side{NS: "client", CPU: &c0}, Server: scenarios.Side{NS: "server", Addr: "198.18.0.2", CPU: &c1},
		Duration: scenarios.Duration(10 * time.Second), Port: 8000, SendSize: 61824, GSO: true, ReceiverGRO: true}
	if got, want := strings.Join(ClientArgs(w), " "), "taskset -c 0 udpgso_bench_tx -4 -D 198.18.0.2 -p 8000 -l 10 -s 61824 -S 0 -a"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	if got, want := strings.Join(ServerArgs(w), " "), "taskset -c 1 udpgso_bench_rx -4 -b 198.18.0.2 -p 8000 -G"; got != want {
		t.Errorf("server %s\nwant   %s", got, want)
	}
	w6 := &scenarios.UDPGSO{Server: scenarios.Side{Addr: "2001:2::2"}, Duration: scenarios.Duration(time.Second), Port: 8001, SendSize: 1000, Zerocopy: true}
	if got, want := strings.Join(ClientArgs(w6), " "), "udpgso_bench_tx -6 -D 2001:2::2 -p 8001 -l 1 -s 1000 -z -a"; got != want {
		t.Errorf("client %s\nwant   %s", got, want)
	}
	if got, want := strings.Join(ServerArgs(w6), " "), "udpgso_bench_rx -b 2001:2::2 -p 8001"; got != want {
		t.Errorf("server %s\nwant   %s", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"tx-gso.out", "tx-nogso.out", "tx-refused.out"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), 61824)
	}
	f.Fuzz(func(t *testing.T, out string, size int) {
		ms, _, err := Parse(size, []byte(out))
		if err == nil && (len(ms) != 2 || math.IsNaN(ms[0].Value) || math.IsInf(ms[0].Value, 0)) {
			t.Fatalf("%q: %v", out, ms)
		}
	})
}
