package scenarios

import (
	"net/netip"
	"time"
)

// UDPGSO drives the kernel's own UDP segmentation offload benchmark: udpgso_bench_tx sending
// to udpgso_bench_rx, both built from the base's source tree
// (tools/testing/selftests/net/udpgso_bench_{tx,rx}.c), which no packaged tool has a path
// for: one sendmsg of a 64 KB buffer that the stack (UDP_SEGMENT) or the device splits into
// datagrams of gso_size (`udpgso_bench_tx -4 -D ADDR -p PORT -l SECS -s LEN -S GSO -a`).
// Its figures are the sender's: the payload sent per second and the send calls that took.
type UDPGSO struct {
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"` // -l, whole seconds (default 10s)
	Port     int      `yaml:"port"`     // -p (default 8000)
	// SendSize is -s (YAML length), the payload of each send call in bytes (default 61824, the program's own:
	// 42 datagrams of 1472 bytes).
	SendSize int `yaml:"length"`
	// GSO sends each buffer as one call with UDP_SEGMENT (-S); without it the program sends
	// one datagram per call, the baseline of UDP GSO.
	GSO bool `yaml:"gso"`
	// GSOSize is -S, the datagram payload the buffer is cut into; 0: the MSS of a 1500-byte
	// MTU (1472 over IPv4, 1452 over IPv6), the program's default.
	GSOSize int `yaml:"gso_size"`
	// Zerocopy is -z: MSG_ZEROCOPY sends, completions counted.
	Zerocopy bool `yaml:"zerocopy"`
	// ReceiverGRO is the receiver's -G: UDP_GRO on its socket (GRO'd datagrams delivered as
	// one).
	ReceiverGRO bool `yaml:"receiver_gro"`
}

func init() { registerTool("udpgso", func() ToolSpec { return new(UDPGSO) }) }

// udpgso's defaults where a scenario is silent: udpgso_bench.sh's port, the program's length.
const (
	DefaultUDPGSOPort   = 8000
	DefaultUDPGSOLength = 1472 * 42
)

// UDPGSO's metrics besides throughput: send calls and datagram buffers per second.
const MetricSendCalls = "send_calls"

// maxUDPGSOLength is the program's limit: ETH_MAX_MTU less the IPv4 and UDP headers.
const maxUDPGSOLength = 65535 - 20 - 8

// Gates implements ToolSpec: the payload sent per second.
func (w *UDPGSO) Gates() []string { return []string{MetricThroughput} }

// Metrics implements ToolSpec: the sender's payload in bits/s, and the send calls per second
// it took (no direction: fewer calls for the same bytes is what GSO is for, but fewer calls
// for fewer bytes is not better).
func (w *UDPGSO) Metrics() []MetricSpec {
	return []MetricSpec{
		{Name: MetricThroughput, Unit: "bit/s", Better: HigherIsBetter, Additive: true},
		{Name: MetricSendCalls, Unit: "calls/s", Better: NoDirection, Additive: true},
	}
}

// MethodKeys implements ToolSpec.
func (w *UDPGSO) MethodKeys() []string { return []string{"duration"} }

// Processes implements ToolSpec: the two programs (comm is at most 15 characters: these are).
func (w *UDPGSO) Processes() []string { return []string{"udpgso_bench_tx", "udpgso_bench_rx"} }

// TCP implements ToolSpec: UDP datagrams (the benchmark's TCP mode is not driven).
func (w *UDPGSO) TCP() bool { return false }

// Ends implements ToolSpec.
func (w *UDPGSO) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec.
func (w *UDPGSO) Length() time.Duration { return w.Duration.Std() }

// IPv6 reports whether the datagrams go to an IPv6 address.
func (w *UDPGSO) IPv6() bool {
	a, err := netip.ParseAddr(w.Server.Addr)
	return err == nil && a.Is6()
}

func (w *UDPGSO) setDefaults(written func(string) bool) {
	if !written("duration") {
		w.Duration = Duration(DefaultDuration)
	}
	if !written("port") {
		w.Port = DefaultUDPGSOPort
	}
	if !written("length") {
		w.SendSize = DefaultUDPGSOLength
	}
}

func (w *UDPGSO) check(v *validator, path string) {
	v.wholeSeconds(path+".duration", w.Duration, time.Second)
	v.port(path+".port", w.Port)
	max := maxUDPGSOLength
	if w.IPv6() {
		max -= 20 // the IPv6 header is 20 bytes longer
	}
	if w.SendSize < 1 || w.SendSize > max {
		v.add(path+".length", "%d: want 1 to %d bytes per send call", w.SendSize, max)
	}
	switch {
	case !w.GSO && w.GSOSize != 0:
		v.add(path+".gso_size", "%d: a segment size needs gso: true", w.GSOSize)
	case w.GSOSize < 0 || w.GSOSize > w.SendSize:
		v.add(path+".gso_size", "%d: want 1 to length (%d), or 0 for the MSS of a 1500-byte MTU", w.GSOSize, w.SendSize)
	}
}

// instance implements ToolSpec: each client has its own receiver, on the next port.
func (w *UDPGSO) instance(i int, p Placement) (ToolSpec, string) {
	c := *w
	c.Client, c.Server = placed(w.Client, p.CPU), placed(w.Server, p.ServerCPU)
	var problem string
	c.Port, problem = nextPort(w.Port, i, "receivers")
	return &c, problem
}

func (w *UDPGSO) override(o Overrides) error {
	if o.Duration != 0 {
		w.Duration = Duration(o.Duration)
	}
	return nil
}
