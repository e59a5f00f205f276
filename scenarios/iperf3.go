package scenarios

import (
	"fmt"
	"regexp"
	"time"
)

// Iperf3 describes one iperf3 client/server pair. The address family follows Server.Addr.
type Iperf3 struct {
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"` // -t: measured time, after the omitted start
	Omit     Duration `yaml:"omit"`     // -O: seconds at the start left out of the result
	Port     int      `yaml:"port"`     // -p: server port
	CPort    int      `yaml:"cport"`    // --cport: fixed client port, 0 for an ephemeral one
	Streams  int      `yaml:"streams"`  // -P
	// Protocol is tcp (default) or udp (-u).
	Protocol string `yaml:"protocol"`
	// Bitrate is -b, bits/s with an optional K, M or G: UDP's target rate; "0" (UDP's
	// default here, not iperf3's 1M) sends as fast as the stack takes datagrams.
	Bitrate string `yaml:"bitrate"`
	// BlockSize is -l (YAML length): a UDP datagram's payload, or TCP's write size, in bytes; 0: iperf3's.
	BlockSize int `yaml:"length"`
}

// iperf3's protocols.
const (
	Iperf3TCP = "tcp"
	Iperf3UDP = "udp"
)

// UDP reports whether the workload sends UDP datagrams (-u).
func (w *Iperf3) UDP() bool { return w.Protocol == Iperf3UDP }

// iperf3 metrics of UDP tests besides throughput: datagrams received per second, the share
// lost, and the receiver's jitter (RFC 1889's, from the sender's timestamps).
const (
	MetricPacketRate = "packet_rate"
	MetricPacketLoss = "packet_loss"
	MetricJitter     = "jitter"
)

// bitrateRe is what iperf3's -b takes: a number with an optional K, M or G (or k, m, g).
var bitrateRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[KMGkmg]?$`)

// maxUDPPayload is the largest datagram payload IPv4 carries (65535 - 20 - 8).
const maxUDPPayload = 65507

func init() { registerTool("iperf3", func() ToolSpec { return new(Iperf3) }) }

// iperf3's defaults where a scenario is silent.
const (
	DefaultIperf3Omit    = 2 * time.Second
	DefaultIperf3Port    = 5201
	DefaultIperf3Streams = 1
)

// iperf3's MAX_TIME and MAX_OMIT_TIME (iperf_api.h): it refuses longer, with an error that
// would fail every run only after the topology is built.
const (
	MaxIperf3Duration = 86400 * time.Second
	MaxIperf3Omit     = 600 * time.Second
)

// Gates implements ToolSpec: a TCP stream test is for its throughput, a UDP one for the
// datagrams that arrive per second (its bits/s follow from them and the length).
func (w *Iperf3) Gates() []string {
	if w.UDP() {
		return []string{MetricPacketRate}
	}
	return []string{MetricThroughput}
}

// Metrics implements ToolSpec: the receiver's bits/s, the sender's retransmits, both ends'
// CPU (iperf3's host_total and remote_total) and the sender's smoothed RTT over the streams.
func (w *Iperf3) Metrics() []MetricSpec {
	return []MetricSpec{
		{Name: MetricThroughput, Unit: "bit/s", Better: HigherIsBetter, Additive: true},
		{Name: "retransmits", Unit: "count", Better: LowerIsBetter, Additive: true},
		{Name: "cpu_sender", Unit: "%", Better: NoDirection, CPU: true, Additive: true}, // each process its own
		{Name: "cpu_receiver", Unit: "%", Better: NoDirection, CPU: true, Additive: true},
		{Name: "rtt_mean", Unit: "us", Better: LowerIsBetter},
		{Name: "rtt_min", Unit: "us", Better: LowerIsBetter},
		{Name: "rtt_max", Unit: "us", Better: LowerIsBetter},
		{Name: MetricPacketRate, Unit: "pps", Better: HigherIsBetter, Additive: true},
		{Name: MetricPacketLoss, Unit: "%", Better: LowerIsBetter},
		{Name: MetricJitter, Unit: "us", Better: LowerIsBetter},
	}
}

// MethodKeys implements ToolSpec.
func (w *Iperf3) MethodKeys() []string { return []string{"duration", "omit"} }

// Processes implements ToolSpec: the client and the one-off server are both iperf3.
func (w *Iperf3) Processes() []string { return []string{"iperf3"} }

// TCP implements ToolSpec: a TCP test's streams (the control connection moves little).
func (w *Iperf3) TCP() bool { return !w.UDP() }

// Ends implements ToolSpec.
func (w *Iperf3) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec: the omitted start and the measured time.
func (w *Iperf3) Length() time.Duration { return w.Duration.Std() + w.Omit.Std() }

func (w *Iperf3) setDefaults(written func(string) bool) {
	if !written("duration") {
		w.Duration = Duration(DefaultDuration)
	}
	if !written("omit") {
		w.Omit = Duration(DefaultIperf3Omit)
	}
	if !written("port") {
		w.Port = DefaultIperf3Port
	}
	if !written("streams") {
		w.Streams = DefaultIperf3Streams
	}
	if !written("protocol") {
		w.Protocol = Iperf3TCP
	}
	if !written("bitrate") && w.UDP() {
		w.Bitrate = "0"
	}
}

func (w *Iperf3) check(v *validator, path string) {
	v.wholeSeconds(path+".duration", w.Duration, time.Second)
	v.wholeSeconds(path+".omit", w.Omit, 0)
	if w.Duration.Std() > MaxIperf3Duration {
		v.add(path+".duration", "%s: iperf3 measures at most %s (-t)", w.Duration, MaxIperf3Duration)
	}
	if w.Omit.Std() > MaxIperf3Omit {
		v.add(path+".omit", "%s: iperf3 omits at most %s (-O)", w.Omit, MaxIperf3Omit)
	}
	v.port(path+".port", w.Port)
	if w.CPort < 0 || w.CPort > 65535 {
		v.add(path+".cport", "%d: want 1 to 65535, or leave it out for an ephemeral port", w.CPort)
	}
	if w.Streams < 1 || w.Streams > 128 {
		v.add(path+".streams", "%d: want 1 to 128", w.Streams)
	}
	switch {
	case w.Protocol != Iperf3TCP && w.Protocol != Iperf3UDP:
		v.add(path+".protocol", "%q: want tcp or udp", w.Protocol)
	case w.UDP() && (w.BlockSize < 0 || w.BlockSize > maxUDPPayload):
		v.add(path+".length", "%d: a UDP datagram carries 1 to %d bytes", w.BlockSize, maxUDPPayload)
	case w.BlockSize < 0 || w.BlockSize > 1<<24:
		v.add(path+".length", "%d: want 1 to %d bytes, or leave it out for iperf3's", w.BlockSize, 1<<24)
	}
	if w.Bitrate != "" && !bitrateRe.MatchString(w.Bitrate) {
		v.add(path+".bitrate", "%q: want bits/s with an optional K, M or G (10G), or 0 for as fast as it goes", w.Bitrate)
	}
}

// instance implements ToolSpec: each client has its own one-off server, on the next port, and
// with a fixed client port, the next ports after the streams of the one before.
func (w *Iperf3) instance(i int, p Placement) (ToolSpec, string) {
	c := *w
	c.Client, c.Server = placed(w.Client, p.CPU), placed(w.Server, p.ServerCPU)
	c.Port = w.Port + i
	if w.CPort != 0 {
		c.CPort = w.CPort + i*max(w.Streams, 1)
	}
	if last := max(c.Port, c.CPort+max(c.Streams, 1)-1); last > 65535 {
		return &c, fmt.Sprintf("their iperf3 ports run up to %d: lower port (and cport)", last)
	}
	return &c, ""
}

func (w *Iperf3) override(o Overrides) error {
	if o.Duration > MaxIperf3Duration {
		return fmt.Errorf("--duration %s: iperf3 measures at most %s", o.Duration, MaxIperf3Duration)
	}
	if o.Omit > MaxIperf3Omit {
		return fmt.Errorf("--omit %s: iperf3 omits at most %s", o.Omit, MaxIperf3Omit)
	}
	if o.Duration != 0 {
		w.Duration = Duration(o.Duration)
	}
	if o.Omit >= 0 {
		w.Omit = Duration(o.Omit)
	}
	return nil
}
