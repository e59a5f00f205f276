package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// runScenario runs a scenario file with overrides and returns the result and its table.
func runScenario(t *testing.T, file string, o scenarios.Overrides) (*results.Result, string) {
	t.Helper()
	s, err := scenarios.Load(file, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: &progress})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	var table strings.Builder
	if err := results.Table(&table, r); err != nil {
		t.Fatal(err)
	}
	return r, table.String()
}

// TestEvidenceVethBigTCP: veth-bigtcp's "on" sends packets above 64 KiB through client/eth0,
// its "off" none, and the evidence lines say so. 64 KiB is a hard limit without BIG TCP: a
// single packet above it in "off" would be a bug, not noise.
func TestEvidenceVethBigTCP(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	r, table := runScenario(t, scenarios.DefaultScenario, scenarios.Overrides{Runs: 2, Duration: time.Second, Omit: 0})
	c := r.Cases[0]
	if !strings.Contains(c.BigPackets, "counted with nftables") {
		t.Fatalf("big packets: %q", c.BigPackets)
	}
	seen := map[string]uint64{}
	for _, e := range c.Evidence {
		if e.Warning {
			t.Errorf("warning: %s", e.Text)
		}
		if e.Device == "client/eth0" {
			if e.Big == nil || e.Direction != "tx" {
				t.Fatalf("%s: %+v", e.State, e)
			}
			seen[e.State] = *e.Big
		}
	}
	if seen["on"] == 0 || seen["off"] != 0 {
		t.Errorf("packets above 64 KiB on client/eth0: %v, want some in on and none in off", seen)
	}
	for _, s := range c.Samples {
		d := s.Counters.Devices["client/eth0"]
		if s.Counters == nil || d.TxPackets == 0 || d.BigTx == nil || len(s.Counters.Namespaces["client"]) == 0 || len(s.Counters.CPUs) != 2 {
			t.Fatalf("sample %s/%s: counters %+v", s.State, s.Workload, s.Counters)
		}
		// The pinned CPUs' own interrupts: their timers ticked while the tools kept them busy.
		var ticks uint64
		for _, cpu := range s.Counters.CPUs {
			ticks += cpu.LocalTimerIRQs
		}
		if ticks == 0 || s.Noise == nil || s.Noise.SelfCPUSeconds <= 0 {
			t.Errorf("sample %s/%s: no local timer interrupts on the pinned CPUs (%+v) or no CPU time of nsperf's own (%+v)", s.State, s.Workload, s.Counters.CPUs, s.Noise)
		}
	}
	for _, want := range []string{"evidence (device counters over the samples; big packets counted with nftables", "off: client/eth0 tx", "0% above 64 KiB", "on: server/eth0 rx"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, "on: client/eth0 tx") && (strings.HasPrefix(strings.TrimSpace(line), "off") || strings.Contains(line, " 0% above")) {
			t.Errorf("the on line says no big packets: %s", line)
		}
	}
}

// TestEvidenceShrink: "on" raises the vxlan's limits and one end of the underlay; the other
// end segments the vxlan's big packets in software, and the warning names it.
func TestEvidenceShrink(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	r, table := runScenario(t, "testdata/shrink.yaml", scenarios.Overrides{})
	var warnings []string
	for _, e := range r.Cases[0].Evidence {
		if e.Warning {
			warnings = append(warnings, e.Text)
		}
	}
	got := strings.Join(warnings, "\n")
	if !strings.Contains(got, "on: packets shrink along the path: client/vx0 tx") || !strings.Contains(got, "but client/eth0 tx") {
		t.Errorf("no shrink warning naming client/eth0:\n%s", table)
	}
	if strings.Contains(got, "off: packets shrink") {
		t.Errorf("off shrinks nowhere:\n%s", table)
	}
	if !strings.Contains(table, "WARNING on: packets shrink along the path") {
		t.Errorf("the table lacks the warning:\n%s", table)
	}
}

// TestSideMetricsVxlanCollapse: vxlan-lowerdev's small lower device makes every 64K packet
// of the vxlan be segmented in software; whatever counters move, the side-metric table lists
// them and names the state.
func TestSideMetricsVxlanCollapse(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	r, table := runScenario(t, "vxlan-lowerdev", scenarios.Overrides{Runs: 5, Duration: 2 * time.Second, Omit: 0})
	c := r.Cases[0]
	if len(c.SideMetrics) == 0 {
		t.Fatalf("no side metrics:\n%s", table)
	}
	for _, m := range c.SideMetrics {
		if m.State != "lower-small" || m.Baseline != "lower-64k" || m.Shown != len(c.SideMetrics) || m.Tested < m.Shown {
			t.Errorf("side metric %+v", m)
		}
	}
	if !strings.Contains(table, "side metrics tcp4 lower-small vs lower-64k (information, never gated;") {
		t.Errorf("table:\n%s", table)
	}
}

// TestTransferTime: a transfer of a fixed size is measured by how long it takes. Through a
// token bucket, each sample's time is at least what the rate allows (a busy machine only
// slows it), a quarter of the rate takes far longer, and the table compares the times with
// lower as better. Each sample keeps the TCP connection's state (tcp_info).
func TestTransferTime(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "netperf")
	r, table := runScenario(t, "testdata/transfer.yaml", scenarios.Overrides{Omit: -1})
	times := map[string][]float64{}
	for _, s := range r.Cases[0].Samples {
		if s.Error != "" || len(s.Metrics) == 0 || s.Metrics[0].Name != scenarios.MetricTransferTime || s.Metrics[0].Unit != "s" {
			t.Fatalf("%s: %+v %s", s.State, s.Metrics, s.Error)
		}
		times[s.State] = append(times[s.State], s.Metrics[0].Value)
		// The connection's own state, seen while it was open: a round trip, a window, bytes
		// delivered to the peer.
		if tcp := s.Counters.TCP; tcp["rtt_us"] <= 0 || tcp["snd_cwnd"] <= 0 || tcp["bytes_acked"] <= 0 || tcp["snd_wnd"] <= 0 {
			t.Errorf("%s: tcp_info %v", s.State, tcp)
		}
	}
	// At least the bytes beyond the bucket's burst at the rate, less 10% for the bucket's
	// rounding: 4 MiB - 64 KiB at 64 Mbit/s is 0.516 s, at 256 Mbit/s 0.129 s.
	floor := map[string]float64{"slow": (4<<20 - 64<<10) * 8 / 64e6 * 0.9, "fast": (4<<20 - 64<<10) * 8 / 256e6 * 0.9}
	for state, ts := range times {
		if len(ts) != 2 {
			t.Errorf("%s: %d samples, want 2", state, len(ts))
		}
		for _, v := range ts {
			if v < floor[state] {
				t.Errorf("%s: a transfer took %.3f s, faster than its rate allows (%.3f s)", state, v, floor[state])
			}
		}
	}
	if !strings.Contains(table, "transfer_time") {
		t.Errorf("the table lacks the transfer time:\n%s", table)
	}
}

// TestHandshakeWindow: every TCP sample of a workload that asks (record:) records the window
// its client announced at the end of its handshake, and one that does not ask captures
// nothing (no window): the kernel's initial window (tens of KiB) as built, a few segments with the
// client's route at initrwnd 4 (the kernel rounds that to its window scale and the MSS it
// counts, 6144 bytes on 6.18; at most 8 segments is asserted), for a bulk upload (whose control connection, to the same
// port, is not the one kept), a request/response test and a connection per transaction.
func TestHandshakeWindow(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3", "netperf")
	r, table := runScenario(t, "testdata/handshake.yaml", scenarios.Overrides{Omit: -1})
	const segment = 1500 // at most, at the veth's MTU
	seen := 0
	for _, c := range r.Cases {
		for _, s := range c.Samples {
			if s.Error != "" || s.Counters == nil {
				t.Fatalf("%s %s: %s %+v", s.Workload, s.State, s.Error, s.Counters)
			}
			w, ok := s.Counters.TCP[results.HandshakeWindow]
			switch {
			case s.Workload == "unrecorded":
				if ok || len(s.Counters.TCP) == 0 {
					t.Errorf("unrecorded %s: tcp %v, want tcp_info's fields without a handshake window", s.State, s.Counters.TCP)
				}
				continue
			case !ok:
				t.Errorf("%s %s: no handshake window in %v (errors %v)", s.Workload, s.State, s.Counters.TCP, s.Counters.Errors)
			case s.State == "built" && w < 16*segment:
				t.Errorf("%s built: a handshake window of %v bytes, want the kernel's initial window", s.Workload, w)
			case s.State == "initrwnd-4" && (w <= 0 || w > 8*segment):
				t.Errorf("%s initrwnd-4: a handshake window of %v bytes, want a few segments", s.Workload, w)
			}
			seen++
		}
	}
	if seen != 6 {
		t.Errorf("%d samples, want 6:\n%s", seen, table)
	}
}
