// Package pktgen drives the kernel's packet generator (net/core/pktgen.c) through
// /proc/net/pktgen, as the kernel's samples/pktgen scripts do with echo: which thread sends
// out of which device, the packets' size and destination, then start and stop. The commands
// and the reading of the device's results are pure (this file); writing them is send.go,
// which `nsperf pktgen` runs in the client's namespace.
package pktgen

import (
	"fmt"
	"net"
	"os"
	"regexp"
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

// Driver drives pktgen: no server, and nsperf itself as the client, which configures the
// generator in the client's namespace and prints the device's file after the run.
type Driver struct{}

// Programs implements tool.Driver: pktgen is the kernel's; nsperf drives it.
func (Driver) Programs() []tool.Program { return nil }

// Server implements tool.Driver: none (the packets go to the server's address; nothing
// there answers them).
func (Driver) Server(scenarios.ToolSpec) tool.Server { return tool.Server{} }

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

// Available implements tool.InKernel: the generator's directory in this namespace's proc,
// which the module makes in every namespace.
func (Driver) Available() error {
	if _, err := os.Stat(Dir); err != nil {
		return ErrNoPktgen
	}
	return nil
}
