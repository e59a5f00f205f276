// Package iperf3 builds iperf3 command lines and parses its JSON (-J) output; both are pure.
package iperf3

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// Binary is the program run, as found on PATH.
const Binary = "iperf3"

// ServerArgs is a one-off server (-1) bound to the workload's address, pinned to its CPU.
func ServerArgs(w *scenarios.Iperf3) []string {
	args := []string{Binary, "-s", "-1", "-B", w.Server.Addr, "-p", strconv.Itoa(w.Port)}
	if w.Server.CPU != nil {
		args = append(args, "-A", strconv.Itoa(*w.Server.CPU))
	}
	return args
}

// ClientArgs is the measuring client: JSON output, the family of the server address, omit,
// duration, pinned CPU and fixed client port when the workload says so.
func ClientArgs(w *scenarios.Iperf3) []string {
	args := []string{Binary, "-c", w.Server.Addr, "-p", strconv.Itoa(w.Port), w.Server.Family(), "-J",
		"-t", strconv.Itoa(w.Duration.Seconds()), "-O", strconv.Itoa(w.Omit.Seconds())}
	if w.Streams > 1 {
		args = append(args, "-P", strconv.Itoa(w.Streams))
	}
	if w.UDP() {
		args = append(args, "-u")
	}
	if w.Bitrate != "" {
		args = append(args, "-b", w.Bitrate)
	}
	if w.BlockSize > 0 {
		args = append(args, "-l", strconv.Itoa(w.BlockSize))
	}
	if w.Client.CPU != nil {
		args = append(args, "-A", strconv.Itoa(*w.Client.CPU))
	}
	if w.Client.Addr != "" {
		args = append(args, "-B", w.Client.Addr)
	}
	if w.CPort != 0 {
		args = append(args, "--cport", strconv.Itoa(w.CPort))
	}
	return args
}

// Driver drives iperf3: a one-off server per run, the client with JSON output.
type Driver struct{}

// Programs implements tool.Driver.
func (Driver) Programs() []tool.Program {
	return []tool.Program{{Name: "iperf3", Binary: Binary, Package: "iperf3", Version: []string{Binary, "--version"}, ParseVersion: Version}}
}

// Server implements tool.Driver: `iperf3 -s -1`, started before each run.
func (Driver) Server(spec scenarios.ToolSpec) tool.Server {
	w := spec.(*scenarios.Iperf3)
	return tool.Server{NS: w.Server.NS, Argv: ServerArgs(w), Port: w.Port, PerRun: true}
}

// Client implements tool.Driver.
func (Driver) Client(spec scenarios.ToolSpec) []string { return ClientArgs(spec.(*scenarios.Iperf3)) }

// FixedPorts implements tool.Driver: with --cport, the client ports of every stream and the
// server port, whose connections of the previous run may still be in TIME_WAIT on either side.
func (Driver) FixedPorts(spec scenarios.ToolSpec) []tool.Port {
	w := spec.(*scenarios.Iperf3)
	if w.CPort == 0 {
		return nil
	}
	var ports []tool.Port
	for p := w.CPort; p < w.CPort+max(w.Streams, 1); p++ {
		ports = append(ports, tool.Port{NS: w.Client.NS, Port: p})
	}
	return append(ports, tool.Port{NS: w.Server.NS, Port: w.Port})
}

// Parse implements tool.Driver: the client's -J output; iperf3 prints no row.
func (Driver) Parse(_ scenarios.ToolSpec, stdout, _ []byte) ([]results.Metric, string, error) {
	m, err := Parse(stdout)
	return m, "", err
}

// output is the part of iperf3's -J output nsperf reads.
type output struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol   string  `json:"protocol"`
			NumStreams int     `json:"num_streams"`
			Duration   float64 `json:"duration"`
			Omit       float64 `json:"omit"`
			Reverse    int     `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		SumReceived *struct {
			BitsPerSecond float64 `json:"bits_per_second"`
			Seconds       float64 `json:"seconds"`
			// UDP's: the datagrams sent (as the receiver counts them, lost included), those
			// lost, their share, and the receiver's jitter.
			Packets     *float64 `json:"packets"`
			LostPackets *float64 `json:"lost_packets"`
			LostPercent *float64 `json:"lost_percent"`
			JitterMs    *float64 `json:"jitter_ms"`
		} `json:"sum_received"`
		SumSent *struct {
			Retransmits *float64 `json:"retransmits"`
		} `json:"sum_sent"`
		CPU *struct {
			HostTotal   float64 `json:"host_total"`
			RemoteTotal float64 `json:"remote_total"`
		} `json:"cpu_utilization_percent"`
		Streams []struct {
			Sender struct {
				MinRTT  *float64 `json:"min_rtt"`
				MeanRTT *float64 `json:"mean_rtt"`
				MaxRTT  *float64 `json:"max_rtt"`
			} `json:"sender"`
		} `json:"streams"`
	} `json:"end"`
	Error string `json:"error"`
}

// ErrTool is wrapped by errors that iperf3 itself reported.
var ErrTool = errors.New("iperf3 reported an error")

// Run is what one iperf3 -J output says: its metrics and the test it ran.
type Run struct {
	Metrics  []results.Metric
	Protocol string
	Streams  int
	Duration float64 // seconds
	Omit     float64 // seconds
	Reverse  bool
}

// ParseRun reads iperf3 -J output (a run nsperf made, or one a commit message shows) into
// its metrics and the test's options.
func ParseRun(data []byte) (Run, error) {
	var o output
	if err := json.Unmarshal(data, &o); err != nil {
		return Run{}, fmt.Errorf("iperf3 -J output: %w", err)
	}
	m, err := o.metrics()
	if err != nil {
		return Run{}, err
	}
	ts := o.Start.TestStart
	return Run{Metrics: m, Protocol: ts.Protocol, Streams: ts.NumStreams, Duration: ts.Duration, Omit: ts.Omit, Reverse: ts.Reverse != 0}, nil
}

// Parse reads the client's -J output into metrics: received throughput (bits/s), sender
// retransmits, CPU utilisation of both hosts (%), and the senders' RTT (µs).
func Parse(data []byte) ([]results.Metric, error) {
	r, err := ParseRun(data)
	return r.Metrics, err
}

func (o output) metrics() ([]results.Metric, error) {
	if o.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrTool, o.Error)
	}
	if o.End.SumReceived == nil || o.End.SumReceived.Seconds <= 0 {
		return nil, errors.New("iperf3 -J output: no end.sum_received: the test did not finish")
	}
	recv := o.End.SumReceived
	m := []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: recv.BitsPerSecond}}
	if recv.Packets != nil && recv.LostPackets != nil {
		// UDP: the datagrams that arrived, per second of the receiver's measuring.
		m = append(m, results.Metric{Name: scenarios.MetricPacketRate, Unit: "pps", Value: max(*recv.Packets-*recv.LostPackets, 0) / recv.Seconds})
		if recv.LostPercent != nil {
			m = append(m, results.Metric{Name: scenarios.MetricPacketLoss, Unit: "%", Value: *recv.LostPercent})
		}
		if recv.JitterMs != nil {
			m = append(m, results.Metric{Name: scenarios.MetricJitter, Unit: "us", Value: *recv.JitterMs * 1000})
		}
	}
	if s := o.End.SumSent; s != nil && s.Retransmits != nil {
		m = append(m, results.Metric{Name: results.Retransmits, Unit: "count", Value: *s.Retransmits})
	}
	if c := o.End.CPU; c != nil {
		m = append(m,
			results.Metric{Name: results.CPUSender, Unit: "%", Value: c.HostTotal},
			results.Metric{Name: results.CPUReceiver, Unit: "%", Value: c.RemoteTotal})
	}
	var sum, lo, hi float64
	n := 0
	for _, st := range o.End.Streams {
		s := st.Sender
		if s.MeanRTT == nil || s.MinRTT == nil || s.MaxRTT == nil {
			continue
		}
		sum += *s.MeanRTT
		if n == 0 || *s.MinRTT < lo {
			lo = *s.MinRTT
		}
		if *s.MaxRTT > hi {
			hi = *s.MaxRTT
		}
		n++
	}
	if n > 0 {
		m = append(m,
			results.Metric{Name: results.RTTMean, Unit: "us", Value: sum / float64(n)},
			results.Metric{Name: results.RTTMin, Unit: "us", Value: lo},
			results.Metric{Name: results.RTTMax, Unit: "us", Value: hi})
	}
	return m, nil
}

// Version extracts the version from `iperf3 --version` output ("iperf 3.12 (cJSON 1.7.15)").
func Version(out string) string {
	f := strings.Fields(out)
	if len(f) >= 2 && f[0] == "iperf" {
		return f[1]
	}
	return strings.TrimSpace(out)
}
