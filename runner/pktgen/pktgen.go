// Package pktgen drives the kernel's packet generator (net/core/pktgen.c) through
// /proc/net/pktgen, as the kernel's samples/pktgen scripts do with echo: which thread sends
// out of which device, the packets' size and destination, then start and stop. The commands
// and the reading of the device's results are pure (this package); writing them is package
// sender, which `nsperf pktgen` runs in the client's namespace.
package pktgen

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// Dir is pktgen's directory in each network namespace's proc: pgctrl, a kpktgend_N file per
// CPU's thread and a file per device added to a thread.
const Dir = "/proc/net/pktgen"

// Command is the subcommand of nsperf that runs the generator (`nsperf pktgen`).
const Command = "pktgen"

// Options are what one run of the generator needs: the flags of `nsperf pktgen`.
type Options struct {
	Device    string // the device the packets leave by
	Thread    int    // the CPU whose kpktgend thread sends
	Dst       string // the destination IPv4 address
	DstMAC    string // its MAC: resolved in the namespace when empty
	FrameSize int    // pkt_size
	Port      int    // the UDP destination port
	Mode      string // xmit_mode
	Seconds   int    // how long it runs
	// ResolveOnly: find the destination's MAC (which leaves it in the neighbour table), print
	// it and end, without sending.
	ResolveOnly bool
}

// FromSpec is the options of a workload's generator.
func FromSpec(w *scenarios.Pktgen) Options {
	return Options{Device: w.Device, Thread: w.Thread(), Dst: w.Server.Addr, FrameSize: w.FrameSize, Port: w.Port, Mode: w.Mode, Seconds: w.Duration.Seconds()}
}

// Args are the options as `nsperf pktgen`'s flags.
func (o Options) Args() []string {
	return []string{"--device", o.Device, "--thread", strconv.Itoa(o.Thread), "--dst", o.Dst, "--length", strconv.Itoa(o.FrameSize),
		"--port", strconv.Itoa(o.Port), "--mode", o.Mode, "--seconds", strconv.Itoa(o.Seconds)}
}

// Write is one command written to one of pktgen's files (`echo LINE > /proc/net/pktgen/FILE`).
type Write struct {
	File string
	Line string
}

// ThreadFile is the file of a CPU's pktgen thread.
func ThreadFile(cpu int) string { return "kpktgend_" + strconv.Itoa(cpu) }

// Setup is what configures the generator, in order, as pktgen_sample01_simple.sh does: the
// thread loses any device a previous run left and gains this one; the device sends until
// stopped (count 0), frames of the size, with no skb reused (clone_skb 0: veth and most
// virtual devices take each skb for their own, and refuse a shared one), one at a time
// (burst 1, which every mode takes), to the address and MAC on one UDP port.
func (o Options) Setup(dstMAC string) []Write {
	t, d := ThreadFile(o.Thread), o.Device
	out := []Write{
		{t, "rem_device_all"},
		{t, "add_device " + d},
		{d, "count 0"},
		{d, "clone_skb 0"},
		{d, "burst 1"},
		{d, "pkt_size " + strconv.Itoa(o.FrameSize)},
		{d, "dst " + o.Dst},
		{d, "dst_mac " + dstMAC},
		{d, "udp_dst_min " + strconv.Itoa(o.Port)},
		{d, "udp_dst_max " + strconv.Itoa(o.Port)},
	}
	if o.Mode != "" && o.Mode != scenarios.PktgenStartXmit {
		out = append(out, Write{d, "xmit_mode " + o.Mode})
	}
	return out
}

// Check says what is wrong with options given on a command line.
func (o Options) Check() error {
	switch {
	case o.Device == "":
		return fmt.Errorf("--device: missing: the device the packets leave by")
	case o.Thread < 0:
		return fmt.Errorf("--thread %d: want a CPU number", o.Thread)
	case net.ParseIP(o.Dst).To4() == nil:
		return fmt.Errorf("--dst %q: want an IPv4 address", o.Dst)
	case o.Seconds < 1:
		return fmt.Errorf("--seconds %d: want 1 or more", o.Seconds)
	}
	if o.DstMAC != "" {
		if _, err := net.ParseMAC(o.DstMAC); err != nil {
			return fmt.Errorf("--dst-mac %q: %w", o.DstMAC, err)
		}
	}
	return nil
}

// Driver drives pktgen: nsperf itself as the client, which configures the generator in the
// client's namespace and prints the device's file after the run; no server, or xdp-bench on
// the server's device when the workload asks for it.
type Driver struct{}

// xdpBench is the program of a workload's receiver (Debian's xdp-tools).
var xdpBench = tool.Program{Name: "xdp-bench", Binary: "xdp-bench", Package: "xdp-tools",
	Version: []string{"xdp-bench", "drop", "--version"}, ParseVersion: parseXDPBenchVersion}

// parseXDPBenchVersion reads "xdp-bench version 1.3.1 using libbpf version 1.1.2".
func parseXDPBenchVersion(out string) string {
	if m := regexp.MustCompile(`xdp-bench version (\S+)`).FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// Programs implements tool.Driver: pktgen is the kernel's, which nsperf drives; a receiver is
// xdp-bench.
func (Driver) Programs() []tool.Program { return []tool.Program{xdpBench} }

// ProgramsOf implements tool.SpecPrograms: xdp-bench only for a workload that runs it.
func (Driver) ProgramsOf(spec scenarios.ToolSpec) []tool.Program {
	if spec.(*scenarios.Pktgen).XDPBench != "" {
		return []tool.Program{xdpBench}
	}
	return nil
}

// xdpBenchReady is what xdp-bench prints on stderr once its program is attached ("Dropping
// packets on eth0 (ifindex 2; driver veth)"; xdp-bench/xdp_basic.c); an ERE for the exported
// script's grep too.
var xdpBenchReady = regexp.MustCompile(`packets on [^ ]+ \(ifindex [0-9]+`)

// Server implements tool.Driver: none (the packets go to the server's address; nothing
// there answers them), or xdp-bench on the server's device (`xdp-bench drop eth0 -i 1`:
// native mode, a line a second), stopped with SIGINT so that it detaches its program.
func (Driver) Server(spec scenarios.ToolSpec) tool.Server {
	w := spec.(*scenarios.Pktgen)
	if w.XDPBench == "" {
		return tool.Server{}
	}
	argv := tool.Taskset(w.Server.CPU, []string{xdpBench.Binary, w.XDPBench, w.ServerDevice, "-i", "1"})
	return tool.Server{NS: w.Server.NS, Argv: argv, PerRun: true, Ready: xdpBenchReady, Interrupt: true}
}

// Client implements tool.Driver: this nsperf binary's pktgen subcommand.
func (Driver) Client(spec scenarios.ToolSpec) []string {
	return append([]string{self(), Command}, FromSpec(spec.(*scenarios.Pktgen)).Args()...)
}

// self is this binary, which the client's namespace runs again.
func self() string {
	exe, err := os.Executable()
	if err != nil {
		return "nsperf"
	}
	return exe
}

// Prepare implements tool.Preparer: with xdp-bench on the server's device, the destination's
// MAC is resolved before its program is attached, as that program drops or reflects ARP too;
// the neighbour table keeps the entry for the run (it is not used again, so it stays).
func (Driver) Prepare(spec scenarios.ToolSpec) []string {
	w := spec.(*scenarios.Pktgen)
	if w.XDPBench == "" {
		return nil
	}
	return append([]string{self(), Command, "--resolve-only"}, FromSpec(w).Args()...)
}

// FixedPorts implements tool.Driver: it binds none.
func (Driver) FixedPorts(scenarios.ToolSpec) []tool.Port { return nil }

// Parse implements tool.Driver.
func (Driver) Parse(_ scenarios.ToolSpec, stdout, stderr []byte) ([]results.Metric, string, error) {
	return Parse(string(stdout))
}

// The device file's result after a run (pktgen.c, show_results):
//
//	Result: OK: 10000085(c9998512+d1573) usec, 8432117 (60byte,0frags)
//	  843204pps 404Mb/sec (404737920bps) errors: 0
var (
	resultRE = regexp.MustCompile(`Result: OK: ([0-9]+)\(c[0-9]+\+d[0-9]+\) usec, ([0-9]+) \(([0-9]+)byte,-?[0-9]+frags\)`)
	rateRE   = regexp.MustCompile(`^\s*([0-9]+)pps ([0-9]+)Mb/sec \(([0-9]+)bps\) errors: ([0-9]+)\s*$`)
	failedRE = regexp.MustCompile(`Result: (.*)`)
)

// Parse reads the device's file as `nsperf pktgen` prints it after a run: the packets sent
// per second, and the errors per second over the run's time. The row is the rate line.
func Parse(out string) ([]results.Metric, string, error) {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		m := resultRE.FindStringSubmatch(line)
		if m == nil || i+1 >= len(lines) {
			continue
		}
		r := rateRE.FindStringSubmatch(lines[i+1])
		if r == nil {
			return nil, "", fmt.Errorf("pktgen's result has no rate line after %q: %q", strings.TrimSpace(line), lines[i+1])
		}
		usec, err1 := strconv.ParseUint(m[1], 10, 64)
		pps, err2 := strconv.ParseUint(r[1], 10, 64)
		errs, err3 := strconv.ParseUint(r[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || usec == 0 {
			return nil, "", fmt.Errorf("pktgen's result %q: numbers out of range", strings.TrimSpace(line))
		}
		return []results.Metric{
			{Name: scenarios.MetricPacketRate, Unit: "pps", Value: float64(pps)},
			{Name: scenarios.MetricXmitErrors, Unit: "pps", Value: float64(errs) / (float64(usec) / 1e6)},
		}, strings.TrimSpace(lines[i+1]), nil
	}
	if m := failedRE.FindStringSubmatch(out); m != nil {
		return nil, "", fmt.Errorf("pktgen's result: %s", strings.TrimSpace(m[1]))
	}
	return nil, "", fmt.Errorf("pktgen printed no result (Result: OK: ...)")
}

// ErrNoPktgen is a kernel without the generator: no /proc/net/pktgen.
var ErrNoPktgen = errors.New("this kernel has no pktgen (" + Dir + " is absent: CONFIG_NET_PKTGEN, module pktgen); run with --kernel, whose guest loads it")

// ResultLine is the Result line of one of pktgen's files, "" when it has none: what it says
// of its last command or run.
func ResultLine(text string) string { return failedRE.FindString(text) }

// Available implements tool.InKernel: the generator's directory in this namespace's proc,
// which the module makes in every namespace.
func (Driver) Available() error {
	if _, err := os.Stat(Dir); err != nil {
		return ErrNoPktgen
	}
	return nil
}

// xdpBenchRateRE is xdp-bench's line of each interval (lib/util/xdp_sample.c, stats_print: a
// prefix, then columns "%'10llu rx/s" and "... err/s" or "err,drop/s"), its numbers with the
// locale's thousands separators or none.
var xdpBenchRateRE = regexp.MustCompile(`^\S+\s+([0-9][0-9,]*) rx/s\s+([0-9][0-9,]*) err(?:,drop)?/s`)

// ParseServer implements tool.ServerParser: xdp-bench's receive rate, the median of its
// seconds while the frames came, the first and the last second with frames left out (each
// only partly within the generator's run).
func (Driver) ParseServer(_ scenarios.ToolSpec, _ []results.Metric, stdout []byte, _ string) ([]results.Metric, error) {
	rate, err := ParseXDPBench(string(stdout))
	if err != nil {
		return nil, err
	}
	return []results.Metric{{Name: scenarios.MetricXDPRxRate, Unit: "pps", Value: rate}}, nil
}

// ParseXDPBench is the median of xdp-bench's per-second receive rates over the seconds with
// frames, less the first and the last.
func ParseXDPBench(out string) (float64, error) {
	var first, rates []float64
	seen := 0
	for _, line := range strings.Split(out, "\n") {
		m := xdpBenchRateRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		seen++
		v, err := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("xdp-bench's rate %q: %w", m[1], err)
		}
		if v > 0 {
			first = append(first, float64(v))
		}
	}
	if len(first) < 3 {
		return 0, fmt.Errorf("xdp-bench printed %d second(s) with frames (of %d lines of rates), want 3 or more: the first and last are partial", len(first), seen)
	}
	rates = slices.Clone(first[1 : len(first)-1])
	slices.Sort(rates)
	n := len(rates)
	if n%2 == 1 {
		return rates[n/2], nil
	}
	return (rates[n/2-1] + rates[n/2]) / 2, nil
}
