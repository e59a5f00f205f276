package pktgen

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

// TestSetup: the commands configure one device on the CPU's thread, as the kernel's samples
// do, in order: the thread cleared first, the device added before its settings, and the
// transmit mode written only when it is not pktgen's default.
func TestSetup(t *testing.T) {
	o := Options{Device: "eth0", Thread: 1, Dst: "198.18.0.2", FrameSize: 60, Port: 9, Mode: scenarios.PktgenStartXmit, Seconds: 2}
	want := []Write{
		{"kpktgend_1", "rem_device_all"}, {"kpktgend_1", "add_device eth0"},
		{"eth0", "count 0"}, {"eth0", "clone_skb 0"}, {"eth0", "burst 1"}, {"eth0", "pkt_size 60"},
		{"eth0", "dst 198.18.0.2"}, {"eth0", "dst_mac 02:00:00:00:00:02"},
		{"eth0", "udp_dst_min 9"}, {"eth0", "udp_dst_max 9"},
	}
	if got := o.Setup("02:00:00:00:00:02"); !slices.Equal(got, want) {
		t.Errorf("start_xmit:\n got %v\nwant %v", got, want)
	}
	o.Mode = scenarios.PktgenQueueXmit
	if got := o.Setup("02:00:00:00:00:02"); got[len(got)-1] != (Write{"eth0", "xmit_mode queue_xmit"}) {
		t.Errorf("queue_xmit: last command %v", got[len(got)-1])
	}
}

// TestParse: the device's file after a run stopped by pgctrl (its format is pktgen.c's
// pktgen_if_show and show_results): the rate pktgen computed, and its errors over the run's
// microseconds; a failed result says why, and a file without a result is an error.
func TestParse(t *testing.T) {
	text, err := os.ReadFile("testdata/eth0-after-stop.txt")
	if err != nil {
		t.Fatal(err)
	}
	ms, row, err := Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if row != "30349pps 14Mb/sec (14567520bps) errors: 3" {
		t.Errorf("row %q", row)
	}
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	if got[scenarios.MetricPacketRate] != 30349 || math.Abs(got[scenarios.MetricXmitErrors]-3/2.000098) > 1e-9 {
		t.Errorf("metrics %v", ms)
	}
	for _, tc := range []struct{ text, want string }{
		{"Params: count 0\nResult: ERROR: could not add device eth9: no such device\n", "ERROR: could not add device eth9"},
		{"Params: count 0\nResult: Idle\n", "Idle"},
		{"", "printed no result"},
		{"Result: OK: 2000098(c1999686+d412) usec, 60702 (60byte,0frags)\n", "no rate line"},
	} {
		if _, _, err := Parse(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestFromSpec: a workload's settings become the subcommand's flags, and the flags the same
// options again (Check accepts them).
func TestFromSpec(t *testing.T) {
	cpu := 1
	w := &scenarios.Pktgen{Client: scenarios.Side{NS: "client", CPU: &cpu}, Server: scenarios.Side{NS: "server", Addr: "198.18.0.2"},
		Device: "eth0", Duration: scenarios.Duration(3e9), FrameSize: 1514, Mode: scenarios.PktgenQueueXmit, Port: 7}
	o := FromSpec(w)
	if o != (Options{Device: "eth0", Thread: 1, Dst: "198.18.0.2", FrameSize: 1514, Port: 7, Mode: "queue_xmit", Seconds: 3}) {
		t.Errorf("options %+v", o)
	}
	if err := o.Check(); err != nil {
		t.Error(err)
	}
	args := strings.Join(o.Args(), " ")
	if args != "--device eth0 --thread 1 --dst 198.18.0.2 --length 1514 --port 7 --mode queue_xmit --seconds 3" {
		t.Errorf("args %q", args)
	}
	argv := Driver{}.Client(w)
	if argv[1] != Command || strings.Join(argv[2:], " ") != args {
		t.Errorf("client argv %q", argv)
	}
	if !(Driver{}).Server(w).None() {
		t.Error("pktgen has a server")
	}
	for _, bad := range []Options{{Thread: 0, Dst: "198.18.0.2", Seconds: 1}, {Device: "eth0", Dst: "2001:db8::2", Seconds: 1},
		{Device: "eth0", Dst: "198.18.0.2"}, {Device: "eth0", Dst: "198.18.0.2", Seconds: 1, DstMAC: "zz"}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// FuzzParse: no output of a device's file panics the reader, and a reading it accepts has a
// rate and an error rate that are numbers.
func FuzzParse(f *testing.F) {
	if text, err := os.ReadFile("testdata/eth0-after-stop.txt"); err == nil {
		f.Add(string(text))
	}
	f.Add("Result: OK: 0(c0+d0) usec, 0 (60byte,0frags)\n  0pps 0Mb/sec (0bps) errors: 0\n")
	f.Add("Result: ERROR: x\n")
	f.Fuzz(func(t *testing.T, text string) {
		ms, _, err := Parse(text)
		if err != nil {
			return
		}
		for _, m := range ms {
			if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) || m.Value < 0 {
				t.Fatalf("%q: %v", text, ms)
			}
		}
	})
}

// TestParseXDPBench: xdp-bench's lines of each second, as it printed them in a guest on
// Debian's 6.12 (xdp-tools 1.3.1, drop and tx): the median of the seconds with frames, the
// first (partial: the generator started within it) and the last left out; thousands
// separators (its locale's) are read; too few seconds are an error that says why.
func TestParseXDPBench(t *testing.T) {
	for file, want := range map[string]float64{"testdata/xdp-bench-drop.txt": (66463 + 66480) / 2.0, "testdata/xdp-bench-tx.txt": 61507.5} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseXDPBench(string(text))
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", file, got, err, want)
		}
	}
	separated := "Summary    1,204,311 rx/s    0 err/s\nSummary    3,512,090 rx/s    0 err/s\nSummary    3,498,877 rx/s    0 err/s\nSummary    3,501,002 rx/s    0 err/s\nSummary      402,113 rx/s    0 err/s\n"
	if got, err := ParseXDPBench(separated); err != nil || got != 3501002 {
		t.Errorf("separators: %v %v", got, err)
	}
	if _, err := ParseXDPBench("Summary 0 rx/s 0 err/s\nSummary 12 rx/s 0 err/s\nSummary 13 rx/s 0 err/s\n"); err == nil || !strings.Contains(err.Error(), "2 second(s) with frames (of 3 lines") {
		t.Errorf("two seconds: %v", err)
	}
}

// TestReceiver: with xdp_bench, the workload's server is xdp-bench on the server's device
// (ready when it says its program is attached, stopped with SIGINT so that it detaches it),
// the destination's MAC is resolved before it starts, and only then is xdp-bench a program
// the workload needs; without, there is no server and nothing to prepare.
func TestReceiver(t *testing.T) {
	w := &scenarios.Pktgen{Client: scenarios.Side{NS: "client"}, Server: scenarios.Side{NS: "server", Addr: "198.18.0.2"},
		Device: "eth0", Duration: scenarios.Duration(4e9), FrameSize: 60, Mode: scenarios.PktgenStartXmit, Port: 9}
	d := Driver{}
	if !d.Server(w).None() || d.Prepare(w) != nil || len(d.ProgramsOf(w)) != 0 {
		t.Errorf("without xdp_bench: server %+v, prepare %q, programs %v", d.Server(w), d.Prepare(w), d.ProgramsOf(w))
	}
	w.XDPBench, w.ServerDevice = "drop", "veth1"
	srv := d.Server(w)
	if strings.Join(srv.Argv, " ") != "xdp-bench drop veth1 -i 1" || srv.NS != "server" || !srv.PerRun || !srv.Interrupt ||
		!srv.Ready.MatchString("Dropping packets on veth1 (ifindex 2; driver veth)") {
		t.Errorf("server %+v", srv)
	}
	if prep := d.Prepare(w); len(prep) < 3 || prep[1] != Command || prep[2] != "--resolve-only" {
		t.Errorf("prepare %q", prep)
	}
	if ps := d.ProgramsOf(w); len(ps) != 1 || ps[0].Package != "xdp-tools" || ps[0].ParseVersion("xdp-bench version 1.3.1 using libbpf version 1.1.2") != "1.3.1" {
		t.Errorf("programs %+v", ps)
	}
	ms, err := d.ParseServer(w, nil, []byte("Summary 10 rx/s 0 err/s\nSummary 20 rx/s 0 err/s\nSummary 30 rx/s 0 err/s\n"), "")
	if err != nil || len(ms) != 1 || ms[0].Name != scenarios.MetricXDPRxRate || ms[0].Value != 20 {
		t.Errorf("server's metrics %v %v", ms, err)
	}
}

// FuzzParseXDPBench: no output of xdp-bench panics the reader, and a rate it reads is a
// number.
func FuzzParseXDPBench(f *testing.F) {
	for _, file := range []string{"testdata/xdp-bench-drop.txt", "testdata/xdp-bench-tx.txt"} {
		if text, err := os.ReadFile(file); err == nil {
			f.Add(string(text))
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		if v, err := ParseXDPBench(text); err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v <= 0) {
			t.Fatalf("%q: %v", text, v)
		}
	})
}
