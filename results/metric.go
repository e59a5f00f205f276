package results

import "strings"

// Metric is one figure a tool run produced.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Direction says which way a metric gets better.
type Direction int

// Directions.
const (
	HigherIsBetter Direction = 1
	LowerIsBetter  Direction = -1
)

// Metric names produced by the tool drivers, with their units and directions.
const (
	Throughput  = "throughput"   // bits/s, received
	Retransmits = "retransmits"  // count, sender
	CPUSender   = "cpu_sender"   // percent of one CPU... as iperf3 reports host_total
	CPUReceiver = "cpu_receiver" // percent, iperf3 remote_total
	RTTMean     = "rtt_mean"     // microseconds, mean over streams of the sender's smoothed RTT
	RTTMin      = "rtt_min"      // microseconds
	RTTMax      = "rtt_max"      // microseconds
)

var directions = map[string]Direction{
	Throughput:  HigherIsBetter,
	Retransmits: LowerIsBetter,
	CPUSender:   LowerIsBetter,
	CPUReceiver: LowerIsBetter,
	RTTMean:     LowerIsBetter,
	RTTMin:      LowerIsBetter,
	RTTMax:      LowerIsBetter,
}

// DirectionOf returns the direction of a metric: latencies (netperf's *_latency), CPU
// utilisation and retransmits are better lower; throughput and transaction rates higher, as
// are metrics nsperf does not know.
func DirectionOf(name string) Direction {
	if d, ok := directions[name]; ok {
		return d
	}
	if strings.HasSuffix(name, "_latency") || strings.HasSuffix(name, "_cpu_util") {
		return LowerIsBetter
	}
	return HigherIsBetter
}
