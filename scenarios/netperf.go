package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Netperf describes one netperf test against a netserver in the server namespace
// (`netperf -H ADDR -t TEST -l SECS -T C,S -- -r REQ,RESP -O SELECTORS`). The address family
// follows Server.Addr.
type Netperf struct {
	Test     string   `yaml:"test"` // TCP_STREAM (default), TCP_RR, TCP_CRR, UDP_STREAM, UDP_RR
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"` // -l (default 10s); with bytes, the longest a transfer may take
	// Bytes is a transfer of a fixed size instead of a time (-l -BYTES, TCP_STREAM only): the
	// run measures how long it takes, until the receiver has read it all (netperf's elapsed
	// time ends at the receiver's close), as a download of a known size is timed.
	Bytes       Size `yaml:"bytes"`
	Port        int  `yaml:"port"`         // netserver's control port (-p, default 12865)
	Request     int  `yaml:"request"`      // -r REQ,RESP for request/response tests, TCP_CRR's too
	Response    int  `yaml:"response"`     //
	MessageSize int  `yaml:"message_size"` // -m, send size of stream tests
	SendBuffer  int  `yaml:"send_buffer"`  // -s, local socket buffer
	RecvBuffer  int  `yaml:"recv_buffer"`  // -S, remote socket buffer
	// Outputs are omni selectors (-O), e.g. [MIN_LATENCY, P90_LATENCY, P99_LATENCY,
	// THROUGHPUT]; default: those for request/response tests, the classic block for
	// TCP_STREAM.
	Outputs []string `yaml:"outputs"`
}

func init() { registerTool("netperf", func() ToolSpec { return new(Netperf) }) }

// The netperf tests nsperf drives.
const (
	NetperfTCPStream = "TCP_STREAM"
	NetperfTCPRR     = "TCP_RR"
	NetperfTCPCRR    = "TCP_CRR" // a connection per transaction
	NetperfUDPStream = "UDP_STREAM"
	NetperfUDPRR     = "UDP_RR"
)

// NetperfTests are the tests a netperf workload takes, the default first.
var NetperfTests = []string{NetperfTCPStream, NetperfTCPRR, NetperfTCPCRR, NetperfUDPStream, NetperfUDPRR}

// MetricTransferTime is how long a transfer of a fixed size took (netperf -l -BYTES), in
// seconds: the bytes sent over the throughput, which netperf prints with more digits than
// its elapsed time.
const MetricTransferTime = "transfer_time"

// DefaultTransferLimit is the longest a transfer of a fixed size may take where the scenario
// gives no duration: the sample fails after it.
const DefaultTransferLimit = 60 * time.Second

// MaxNetperfBytes is the largest transfer netperf takes: -l is a C int.
const MaxNetperfBytes = 1<<31 - 1

// netperfTransferOutputs are the selectors a transfer of a fixed size needs: the time is the
// bytes sent over the throughput in its units.
var netperfTransferOutputs = []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_BYTES_SENT", "ELAPSED_TIME"}

// DefaultNetperfPort is netserver's standard control port.
const DefaultNetperfPort = 12865

var netperfSelectorRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Gates implements ToolSpec: stream tests are for their throughput; request/response tests
// for their transaction rate (netperf's throughput) and their P99 latency, when measured.
func (w *Netperf) Gates() []string {
	if w.Bytes > 0 {
		return []string{MetricTransferTime}
	}
	if Transactional(w.Test) {
		return []string{MetricThroughput, MetricP99Latency}
	}
	return []string{MetricThroughput}
}

// Metrics implements ToolSpec: the omni selectors nsperf knows, lower-cased. A selector a
// scenario asks for that is not here is recorded without a direction.
func (w *Netperf) Metrics() []MetricSpec {
	out := []MetricSpec{
		{Name: MetricThroughput, Better: HigherIsBetter, Additive: true}, // bit/s for a stream, trans/s for request/response
		{Name: "transaction_rate", Unit: "trans/s", Better: HigherIsBetter, Additive: true},
		{Name: MetricTransferTime, Unit: "s", Better: LowerIsBetter},
		{Name: "local_cpu_util", Unit: "%", Better: NoDirection, CPU: true},
		{Name: "remote_cpu_util", Unit: "%", Better: NoDirection, CPU: true},
	}
	for _, l := range []string{"min", "max", "mean", "stddev", "p50", "p90", "p99", "rt"} {
		out = append(out, MetricSpec{Name: l + "_latency", Unit: "us", Better: LowerIsBetter})
	}
	return out
}

// MethodKeys implements ToolSpec.
func (w *Netperf) MethodKeys() []string { return []string{"duration"} }

// Processes implements ToolSpec: the client and its server.
func (w *Netperf) Processes() []string { return []string{"netperf", "netserver"} }

// TCP implements ToolSpec: the TCP tests' data connection (the control connection moves
// little).
func (w *Netperf) TCP() bool { return strings.HasPrefix(w.Test, "TCP_") }

// Ends implements ToolSpec.
func (w *Netperf) Ends() (client, server Side) { return w.Client, w.Server }

// Length implements ToolSpec: netperf has no warm-up of its own. A transfer's is its limit.
func (w *Netperf) Length() time.Duration { return w.Duration.Std() }

// LengthIsLimit reports that a transfer of a fixed size ends when it is done, within Length.
func (w *Netperf) LengthIsLimit() bool { return w.Bytes > 0 }

// PersistentRR reports whether the test is request/response over one connection (TCP_RR,
// UDP_RR): it takes -r REQ,RESP and reports latencies by default. TCP_CRR, a connection per
// transaction, is not.
func (w *Netperf) PersistentRR() bool { return w.Test == NetperfTCPRR || w.Test == NetperfUDPRR }

// Transactional reports whether a netperf test's throughput is a transaction rate: the
// request/response tests, TCP_CRR included.
func Transactional(test string) bool {
	return test == NetperfTCPRR || test == NetperfUDPRR || test == NetperfTCPCRR
}

func (w *Netperf) setDefaults(written func(string) bool) {
	if !written("test") {
		w.Test = NetperfTests[0]
	}
	if !written("duration") {
		w.Duration = Duration(DefaultDuration)
		if w.Bytes > 0 {
			w.Duration = Duration(DefaultTransferLimit)
		}
	}
	if !written("port") {
		w.Port = DefaultNetperfPort
	}
	// A request/response test, TCP_CRR included, reports its transactions and latencies
	// through -O: its classic output is a layout of its own, which the parser does not read.
	if !written("outputs") && Transactional(w.Test) {
		w.Outputs = []string{"MIN_LATENCY", "P90_LATENCY", "P99_LATENCY", "THROUGHPUT"}
	} else if !written("outputs") && w.Test == NetperfUDPStream {
		w.Outputs = []string{"THROUGHPUT", "THROUGHPUT_UNITS"}
	} else if !written("outputs") && w.Bytes > 0 {
		w.Outputs = slices.Clone(netperfTransferOutputs)
	}
}

func (w *Netperf) check(v *validator, path string) {
	if !slices.Contains(NetperfTests, w.Test) {
		v.add(path+".test", "%q: want %s", w.Test, orList(NetperfTests))
	}
	v.wholeSeconds(path+".duration", w.Duration, time.Second)
	v.port(path+".port", w.Port)
	if w.Bytes > 0 && w.Test != NetperfTCPStream {
		v.add(path+".bytes", "a transfer of a fixed size is a TCP_STREAM's, not %s: leave bytes out, or make the test TCP_STREAM", w.Test)
	}
	if w.Bytes > MaxNetperfBytes {
		v.add(path+".bytes", "%s: netperf transfers at most %d bytes (-l is an int)", w.Bytes, MaxNetperfBytes)
	}
	if w.Bytes > 0 && w.Test == NetperfTCPStream && len(w.Outputs) > 0 {
		for _, need := range netperfTransferOutputs[:3] {
			if !slices.Contains(w.Outputs, need) {
				v.add(path+".outputs", "a transfer's time is its bytes over its throughput: the outputs need %s (or leave outputs out)", strings.Join(netperfTransferOutputs[:3], ", "))
				break
			}
		}
	}
	if !Transactional(w.Test) && (w.Request != 0 || w.Response != 0) {
		v.add(path+".request", "request and response sizes belong to request/response tests (TCP_RR, TCP_CRR, UDP_RR), not %s", w.Test)
	}
	for key, n := range map[string]int{"request": w.Request, "response": w.Response, "message_size": w.MessageSize, "send_buffer": w.SendBuffer, "recv_buffer": w.RecvBuffer} {
		if n < 0 {
			v.add(path+"."+key, "%d: want a positive size in bytes", n)
		}
	}
	for i, sel := range w.Outputs {
		if !netperfSelectorRE.MatchString(sel) {
			v.add(fmt.Sprintf("%s.outputs[%d]", path, i), "%q is not a netperf output selector (e.g. THROUGHPUT, MIN_LATENCY, P99_LATENCY)", sel)
		}
	}
}

// instance implements ToolSpec: every client talks to the one netserver of the control port
// (it forks a process per test), each bound to its CPUs with -T.
func (w *Netperf) instance(_ int, p Placement) (ToolSpec, string) {
	c := *w
	c.Client, c.Server = placed(w.Client, p.CPU), placed(w.Server, p.ServerCPU)
	return &c, ""
}

func (w *Netperf) override(o Overrides) error {
	if o.Duration != 0 && w.Bytes == 0 { // a transfer's length is its bytes; its duration a limit
		w.Duration = Duration(o.Duration)
	}
	return nil
}
