package scenarios

import (
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

// pktgen's frame sizes: below an Ethernet, IPv4 and UDP header it raises the size silently
// (pktgen.c: 14 + 20 + 8); above 64 KiB no device takes the frame.
const (
	minPktgenFrameSize = 14 + 20 + 8
	maxPktgenFrameSize = 65535
)

// MetricXmitErrors is pktgen's errors per second: packets the device refused or dropped
// (NET_XMIT_DROP, a full queue), which pktgen counts apart from those sent.
const MetricXmitErrors = "xmit_errors"

// PktgenModule is the kernel module that has the generator.
var PktgenModule = KernelModule{"pktgen", []string{"NET_PKTGEN"}}

// Gates implements ToolSpec: the packets sent per second.
func (w *Pktgen) Gates() []string { return []string{MetricPacketRate} }

// Metrics implements ToolSpec: the packets the device accepted per second, and those it
// refused (no direction: fewer refused because fewer were offered is not better).
func (w *Pktgen) Metrics() []MetricSpec {
	return []MetricSpec{
		{Name: MetricPacketRate, Unit: "pps", Better: HigherIsBetter, Additive: true},
		{Name: MetricXmitErrors, Unit: "pps", Better: NoDirection, Additive: true},
	}
}

// MethodKeys implements ToolSpec.
func (w *Pktgen) MethodKeys() []string { return []string{"duration"} }

// Processes implements ToolSpec: the sender is a kernel thread (kpktgend_N) that lives as
// long as the module, driven by nsperf itself; no program of its own runs.
func (w *Pktgen) Processes() []string { return nil }

// TCP implements ToolSpec.
func (w *Pktgen) TCP() bool { return false }

// Ends implements ToolSpec.
func (w *Pktgen) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec.
func (w *Pktgen) Length() time.Duration { return w.Duration.Std() }

// Modules are what the tool needs of the kernel: a guest loads them.
func (w *Pktgen) Modules() []KernelModule { return []KernelModule{PktgenModule} }

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
		return
	}
	var names []string
	for _, d := range v.s.Devices() {
		if d.NS == w.Client.NS {
			if d.Name == w.Device {
				return
			}
			names = append(names, d.Name)
		}
	}
	if len(names) > 0 {
		v.add(path+".device", "%q: namespace %s has no such device (it has %s)", w.Device, w.Client.NS, orList(names))
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
	if o.Duration != 0 {
		w.Duration = Duration(o.Duration)
	}
	return nil
}
