package scenarios

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"
)

// Pktgen drives the kernel's own packet generator (net/core/pktgen.c) the way its samples do
// (samples/pktgen/pktgen_sample01_simple.sh): a kernel thread of the client's CPU
// (kpktgend_N) sends UDP packets of one size out of one of the client's devices, as fast as
// the device takes them, to the server's address and MAC. Its figure is the packets the
// device accepted per second, the figure of most XDP, veth, GRO and qdisc messages ("Mpps").
// The generator is configured through /proc/net/pktgen of the client's namespace; nsperf
// writes it itself (`nsperf pktgen`, runner/pktgen). There is no server program: the
// server's address and device are where the packets go.
type Pktgen struct {
	// Client is the namespace that sends; its CPU is the pktgen thread's (default 0).
	Client Side `yaml:"client"`
	// Server is the namespace and address the packets go to; its CPU is not used.
	Server Side `yaml:"server"`
	// Device is the client's device the packets leave by (pktgen's add_device).
	Device   string   `yaml:"device"`
	Duration Duration `yaml:"duration"` // whole seconds the generator runs (count 0, then stop)
	// FrameSize is pkt_size (YAML length): each frame's bytes without its CRC (default 60,
	// a 64-byte frame on the wire, as the samples send).
	FrameSize int `yaml:"length"`
	// Mode is pktgen's xmit_mode: start_xmit (default: the driver's ndo_start_xmit, no qdisc)
	// or queue_xmit (dev_queue_xmit: through the device's qdisc).
	Mode string `yaml:"mode"`
	// Port is the UDP destination port (udp_dst_min and _max; default 9, discard).
	Port int `yaml:"port"`
	// XDPBench is xdp-bench's command (drop, pass or tx) run on ServerDevice while the
	// generator sends: its XDP program, attached in native mode, counts what arrives
	// (xdp_rx_rate); "" for none.
	XDPBench string `yaml:"xdp_bench"`
	// ServerDevice is the server's device the frames arrive on, where xdp-bench attaches.
	ServerDevice string `yaml:"server_device"`
}

func init() { registerTool("pktgen", func() ToolSpec { return new(Pktgen) }) }

// pktgen's defaults where a scenario is silent, and its transmit modes.
const (
	DefaultPktgenFrameSize = 60
	DefaultPktgenPort      = 9
	PktgenStartXmit        = "start_xmit"
	PktgenQueueXmit        = "queue_xmit"
)

// PktgenModes are the xmit_mode values nsperf drives, the default first.
var PktgenModes = []string{PktgenStartXmit, PktgenQueueXmit}

// XDPBenchCommands are the xdp-bench commands a pktgen workload's receiver may run: its
// program drops every frame, passes it to the stack, or sends it back out (XDP_TX).
var XDPBenchCommands = []string{"drop", "pass", "tx"}

// MinXDPBenchDuration is the shortest run with xdp-bench: its rate is the median of the
// seconds the generator ran through, the first and the last (partial) left out.
const MinXDPBenchDuration = 3 * time.Second

// pktgen's frame sizes: below an Ethernet, IPv4 and UDP header it raises the size silently
// (pktgen.c: 14 + 20 + 8); above 64 KiB no device takes the frame.
const (
	minPktgenFrameSize = 14 + 20 + 8
	maxPktgenFrameSize = 65535
)

// MetricXmitErrors is pktgen's errors per second: packets the device refused or dropped
// (NET_XMIT_DROP, a full queue), which pktgen counts apart from those sent.
const MetricXmitErrors = "xmit_errors"

// MetricXDPRxRate is xdp-bench's rate: the frames its XDP program received per second.
const MetricXDPRxRate = "xdp_rx_rate"

// PktgenModule is the kernel module that has the generator.
var PktgenModule = KernelModule{"pktgen", []string{"NET_PKTGEN"}}

// Gates implements ToolSpec: the packets sent per second, and with xdp-bench the packets its
// program received.
func (w *Pktgen) Gates() []string {
	if w.XDPBench != "" {
		return []string{MetricPacketRate, MetricXDPRxRate}
	}
	return []string{MetricPacketRate}
}

// Metrics implements ToolSpec: the packets the device accepted per second, and those it
// refused (no direction: fewer refused because fewer were offered is not better).
func (w *Pktgen) Metrics() []MetricSpec {
	return []MetricSpec{
		{Name: MetricPacketRate, Unit: "pps", Better: HigherIsBetter, Additive: true},
		{Name: MetricXmitErrors, Unit: "pps", Better: NoDirection, Additive: true},
		{Name: MetricXDPRxRate, Unit: "pps", Better: HigherIsBetter, Additive: true},
	}
}

// MethodKeys implements ToolSpec.
func (w *Pktgen) MethodKeys() []string { return []string{"duration"} }

// Processes implements ToolSpec: the receiver, xdp-bench. The sender is a kernel thread
// (kpktgend_N) that lives as long as the module, driven by nsperf itself.
func (w *Pktgen) Processes() []string { return []string{"xdp-bench"} }

// ProgramsRun implements ProgramsRun: xdp-bench when it receives.
func (w *Pktgen) ProgramsRun() []string {
	if w.XDPBench != "" {
		return []string{"xdp-bench"}
	}
	return nil
}

// TCP implements ToolSpec.
func (w *Pktgen) TCP() bool { return false }

// Ends implements ToolSpec.
func (w *Pktgen) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec.
func (w *Pktgen) Length() time.Duration { return w.Duration.Std() }

// Kernel implements KernelTool: the generator's module, and for xdp-bench the bpf() system
// call, the JIT and BPF programs on tracepoints (its counters of errors and redirects).
func (w *Pktgen) Kernel() KernelNeeds {
	needs := KernelNeeds{Modules: []KernelModule{PktgenModule}}
	if w.XDPBench != "" {
		needs.Options, needs.Why = []string{"BPF_SYSCALL", "BPF_JIT", "BPF_EVENTS"}, "a workload runs xdp-bench (XDP programs, and BPF programs on XDP's tracepoints)"
	}
	return needs
}

// Thread is the CPU whose pktgen thread sends.
func (w *Pktgen) Thread() int {
	if w.Client.CPU == nil {
		return 0
	}
	return *w.Client.CPU
}

func (w *Pktgen) setDefaults(written func(string) bool) {
	if !written("duration") {
		w.Duration = Duration(DefaultDuration)
	}
	if !written("length") {
		w.FrameSize = DefaultPktgenFrameSize
	}
	if !written("mode") {
		w.Mode = PktgenStartXmit
	}
	if !written("port") {
		w.Port = DefaultPktgenPort
	}
}

func (w *Pktgen) check(v *validator, path string) {
	v.wholeSeconds(path+".duration", w.Duration, time.Second)
	v.port(path+".port", w.Port)
	if w.FrameSize < minPktgenFrameSize || w.FrameSize > maxPktgenFrameSize {
		v.add(path+".length", "%d: want %d to %d bytes per frame (without its CRC; 60 is a 64-byte frame)", w.FrameSize, minPktgenFrameSize, maxPktgenFrameSize)
	}
	if !slices.Contains(PktgenModes, w.Mode) {
		v.add(path+".mode", "%q: want %s", w.Mode, orList(PktgenModes))
	}
	if a, err := netip.ParseAddr(w.Server.Addr); err == nil && !a.Is4() {
		v.add(path+".server.addr", "%s: nsperf drives pktgen over IPv4 only (its dst); give the server's IPv4 address", w.Server.Addr)
	}
	if w.Device == "" {
		v.add(path+".device", "missing: name the client's device the packets leave by (e.g. eth0)")
	} else {
		deviceIn(v, path+".device", w.Client.NS, w.Device)
	}
	if w.XDPBench == "" {
		if w.ServerDevice != "" {
			v.add(path+".server_device", "%q: a server's device is where xdp-bench attaches: set xdp_bench too (%s)", w.ServerDevice, orList(XDPBenchCommands))
		}
		return
	}
	if !slices.Contains(XDPBenchCommands, w.XDPBench) {
		v.add(path+".xdp_bench", "%q: want %s", w.XDPBench, orList(XDPBenchCommands))
	}
	if w.Duration.Std() < MinXDPBenchDuration {
		v.add(path+".duration", "%s: with xdp_bench, want at least %s (its rate is the median of the seconds the generator ran through, the first and last left out)", w.Duration, MinXDPBenchDuration)
	}
	if w.ServerDevice == "" {
		v.add(path+".server_device", "missing: name the server's device the frames arrive on, where xdp-bench attaches (e.g. eth0)")
		return
	}
	deviceIn(v, path+".server_device", w.Server.NS, w.ServerDevice)
	// A device has one XDP program: xdp-bench's cannot attach where a state's setting of
	// the XDP phase attaches one.
	ref := w.Server.NS + "/" + w.ServerDevice
	for _, st := range v.s.States {
		for _, key := range slices.Sorted(maps.Keys(st.Settings)) {
			if set := st.Settings[key]; set != nil && slices.Contains(set.Phases(), PhaseXDP) && slices.Contains(set.Targets(), ref) {
				v.add(path+".server_device", "%s: state %s attaches an XDP program there (%s), and a device has one: xdp-bench's cannot attach beside it (measure xdp-bench in a scenario of its own)", ref, st.Name, key)
			}
		}
	}
}

// deviceIn checks that namespace ns has the device.
func deviceIn(v *validator, path, ns, dev string) {
	var names []string
	for _, d := range v.s.Devices() {
		if d.NS == ns {
			if d.Name == dev {
				return
			}
			names = append(names, d.Name)
		}
	}
	if len(names) > 0 {
		v.add(path, "%q: namespace %s has no such device (it has %s)", dev, ns, orList(names))
	}
}

// instance implements ToolSpec: pgctrl starts every thread of a namespace at once, so one
// generator runs per workload.
func (w *Pktgen) instance(i int, p Placement) (ToolSpec, string) {
	c := *w
	c.Client = placed(w.Client, p.CPU)
	if i > 0 {
		return &c, "pktgen runs one generator per workload (its start starts every thread of the namespace): use one client, or a workload each"
	}
	return &c, ""
}

func (w *Pktgen) override(o Overrides) error {
	if o.Duration == 0 {
		return nil
	}
	d := o.Duration
	if w.XDPBench != "" && d < MinXDPBenchDuration {
		if !o.ToolMinimum {
			return fmt.Errorf("--duration %s: a pktgen workload with xdp_bench runs at least %s (its rate is the median of the seconds the generator ran through, the first and last left out)", d, MinXDPBenchDuration)
		}
		d = MinXDPBenchDuration
	}
	w.Duration = Duration(d)
	return nil
}
