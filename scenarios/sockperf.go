package scenarios

import (
	"net/netip"
	"slices"
	"time"
)

// Sockperf describes one sockperf client against a sockperf server in the server namespace
// (`sockperf MODE -i ADDR -p PORT [--tcp] -t SECS -m SIZE [--mps N]`): the latency of
// messages as a ping-pong or under a fixed message rate, or one-way throughput, over IPv4. sockperf has no CPU affinity option: the runner starts it with
// taskset where a side names a CPU.
type Sockperf struct {
	Mode     string   `yaml:"mode"` // ping-pong (default), under-load, throughput
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"` // -t, whole seconds (default 10s); sockperf warms up 400 ms more
	Port     int      `yaml:"port"`     // -p (default 11111)
	Protocol string   `yaml:"protocol"` // tcp (default) or udp
	// MessageSize is -m, the payload of each message in bytes (default 64; sockperf's least
	// is 14, its largest 65000 over UDP).
	MessageSize int `yaml:"message_size"`
	// MPS is --mps, the messages per second the client sends: under-load's load (default
	// 10000); 0 for ping-pong and throughput is as many as it can.
	MPS int `yaml:"mps"`
}

func init() { registerTool("sockperf", func() ToolSpec { return new(Sockperf) }) }

// The sockperf modes nsperf drives.
const (
	SockperfPingPong   = "ping-pong"
	SockperfUnderLoad  = "under-load"
	SockperfThroughput = "throughput"
)

// SockperfModes are the modes a scenario can name.
var SockperfModes = []string{SockperfPingPong, SockperfUnderLoad, SockperfThroughput}

// sockperf's defaults and bounds where a scenario is silent.
const (
	DefaultSockperfPort         = 11111
	DefaultSockperfMessageSize  = 64
	DefaultSockperfUnderLoadMPS = 10000
	minSockperfMessage          = 14    // sockperf's header: it refuses smaller messages
	maxSockperfUDPMessage       = 65000 // sockperf's MAX_PAYLOAD_SIZE over UDP
)

// Latency reports whether the mode measures latency (its percentiles) rather than throughput.
func (w *Sockperf) Latency() bool { return w.Mode != SockperfThroughput }

// Gates implements ToolSpec: a latency test is for its P99, a throughput test for its bits/s.
func (w *Sockperf) Gates() []string {
	if w.Latency() {
		return []string{MetricP99Latency}
	}
	return []string{MetricThroughput}
}

// Metrics implements ToolSpec: one-way latency (half the round trip, as sockperf reports it)
// in µs, mean, spread and percentiles; throughput in bits/s and messages per second.
func (w *Sockperf) Metrics() []MetricSpec {
	out := []MetricSpec{
		{Name: MetricThroughput, Unit: "bit/s", Better: HigherIsBetter, Additive: true},
		{Name: "message_rate", Unit: "msg/s", Better: HigherIsBetter, Additive: true},
	}
	for _, l := range []string{"min", "max", "mean", "stddev", "p25", "p50", "p75", "p90", "p99", "p999", "p9999", "p99999"} {
		out = append(out, MetricSpec{Name: l + "_latency", Unit: "us", Better: LowerIsBetter})
	}
	return out
}

// MethodKeys implements ToolSpec.
func (w *Sockperf) MethodKeys() []string { return []string{"duration"} }

// Processes implements ToolSpec: the client and its server are both sockperf.
func (w *Sockperf) Processes() []string { return []string{"sockperf"} }

// TCP implements ToolSpec: sockperf --tcp.
func (w *Sockperf) TCP() bool { return w.Protocol == "tcp" }

// Ends implements ToolSpec.
func (w *Sockperf) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec: the measured time; sockperf's 400 ms warm-up is within the
// runner's slack.
func (w *Sockperf) Length() time.Duration { return w.Duration.Std() }

func (w *Sockperf) setDefaults(written func(string) bool) {
	if !written("mode") {
		w.Mode = SockperfPingPong
	}
	if !written("duration") {
		w.Duration = Duration(DefaultDuration)
	}
	if !written("port") {
		w.Port = DefaultSockperfPort
	}
	if !written("protocol") {
		w.Protocol = "tcp"
	}
	if !written("message_size") {
		w.MessageSize = DefaultSockperfMessageSize
	}
	if !written("mps") && w.Mode == SockperfUnderLoad {
		w.MPS = DefaultSockperfUnderLoadMPS
	}
}

func (w *Sockperf) check(v *validator, path string) {
	if !slices.Contains(SockperfModes, w.Mode) {
		v.add(path+".mode", "%q: want %s", w.Mode, orList(SockperfModes))
	}
	v.wholeSeconds(path+".duration", w.Duration, time.Second)
	v.port(path+".port", w.Port)
	if w.Protocol != "tcp" && w.Protocol != "udp" {
		v.add(path+".protocol", "%q: want tcp or udp", w.Protocol)
	}
	switch {
	case w.MessageSize < minSockperfMessage:
		v.add(path+".message_size", "%d: want at least %d bytes (sockperf's header)", w.MessageSize, minSockperfMessage)
	case w.Protocol == "udp" && w.MessageSize > maxSockperfUDPMessage:
		v.add(path+".message_size", "%d: want at most %d bytes over UDP", w.MessageSize, maxSockperfUDPMessage)
	}
	// sockperf 3.7 (Debian 12's) parses -i as IPv4 only: it prints "Invalid address" and
	// exits 0, so every run would fail with no figures.
	if a, err := netip.ParseAddr(w.Server.Addr); err == nil && a.Is6() {
		v.add(path+".server.addr", "%s: sockperf (3.7, Debian 12's) takes IPv4 addresses only", w.Server.Addr)
	}
	if w.MPS < 0 {
		v.add(path+".mps", "%d: want a positive message rate, or 0 for as many as sockperf can send", w.MPS)
	}
}

// instance implements ToolSpec: each client has a server of its own, on the next port (a
// sockperf server serves its clients from one thread).
func (w *Sockperf) instance(i int, p Placement) (ToolSpec, string) {
	c := *w
	c.Client, c.Server = placed(w.Client, p.CPU), placed(w.Server, p.ServerCPU)
	var problem string
	c.Port, problem = nextPort(w.Port, i, "sockperf servers")
	return &c, problem
}

func (w *Sockperf) override(o Overrides) error {
	if o.Duration != 0 {
		w.Duration = Duration(o.Duration)
	}
	return nil
}
