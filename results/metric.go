package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/nsperf/nsperf/scenarios"
)

// Metric is one figure a tool run produced.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Direction says which way a metric gets better: as its tool declares it
// (scenarios.MetricSpec).
type Direction = scenarios.Better

// Directions.
const (
	HigherIsBetter = scenarios.HigherIsBetter
	LowerIsBetter  = scenarios.LowerIsBetter
	// NoDirection: neither way is better by itself (raw CPU utilisation: it falls when less
	// work is done; CPU per unit of work judges), or no tool declares the metric.
	NoDirection = scenarios.NoDirection
)

// Metric names produced by the tool drivers, with their units and directions.
const (
	Throughput  = scenarios.MetricThroughput // bits/s, received
	Retransmits = "retransmits"              // count, sender
	CPUSender   = "cpu_sender"               // percent of one CPU... as iperf3 reports host_total
	CPUReceiver = "cpu_receiver"             // percent, iperf3 remote_total
	RTTMean     = "rtt_mean"                 // microseconds, mean over streams of the sender's smoothed RTT
	RTTMin      = "rtt_min"                  // microseconds
	RTTMax      = "rtt_max"                  // microseconds
)

// declared are the metrics the tools declare, by name.
var declared = scenarios.DeclaredMetrics()

// directions are every declared metric's direction: the tools' (scenarios.DeclaredMetrics),
// and the CPU per unit of work derived from each CPU utilisation they declare.
var directions = func() map[string]Direction {
	out := map[string]Direction{}
	for name, m := range declared {
		out[name] = m.Better
		if m.CPU {
			out[name+perGbit], out[name+perTrans] = LowerIsBetter, LowerIsBetter
		}
	}
	return out
}()

// DirectionOf returns the direction of a metric as its tool declares it; a metric no tool
// declares has none (NoDirection: its changes are "changed", never improved or regressed).
// Nothing is guessed from a name.
// A client's figure of a workload with several clients (throughput_client2) has its metric's.
func DirectionOf(name string) Direction {
	if base, _, ok := scenarios.ClientMetricBase(name); ok {
		name = base
	}
	return directions[name]
}

// Suffixes of the CPU efficiency metrics.
const (
	perGbit  = "_per_gbit"  // CPU-seconds per Gbit moved: cpu% / 100 / Gbit/s
	perTrans = "_per_trans" // CPU-microseconds per transaction: cpu% / 100 * 1e6 / trans/s
)

// WithEfficiency adds, for each CPU utilisation a run reports, the CPU it spent per unit of
// work: per Gbit for stream tests, per transaction for request/response tests (netperf's
// service demand, from the same figures). A collapse of throughput then shows as more CPU
// per Gbit, not as "less CPU".
func WithEfficiency(ms []Metric) []Metric {
	var work *Metric
	for i := range ms {
		if ms[i].Name == Throughput && ms[i].Value > 0 {
			work = &ms[i]
		}
	}
	if work == nil {
		return ms
	}
	out := ms
	for _, m := range ms {
		if spec, ok := declared[m.Name]; !ok || !spec.CPU || m.Unit != "%" {
			continue
		}
		switch work.Unit {
		case "bit/s":
			out = append(out, Metric{Name: m.Name + perGbit, Unit: "CPU-s/Gbit", Value: m.Value / 100 / (work.Value / 1e9)})
		case "trans/s":
			out = append(out, Metric{Name: m.Name + perTrans, Unit: "CPU-us/trans", Value: m.Value / 100 * 1e6 / work.Value})
		}
	}
	return out
}

// WithClients combines the figures of several clients run at once into the workload's, and
// keeps each client's beside them (ClientMetric: throughput_client1, ...): a rate or a count
// adds up, anything else is the clients' mean (scenarios.Total). A metric some client did not
// report has no total. Each client's CPU per unit of work is its own.
func WithClients(clients [][]Metric) []Metric {
	if len(clients) == 1 {
		return WithEfficiency(clients[0])
	}
	var order []string
	values, units := map[string][]float64{}, map[string]string{}
	for _, ms := range clients {
		for _, m := range ms {
			if _, seen := values[m.Name]; !seen {
				order = append(order, m.Name)
			}
			values[m.Name], units[m.Name] = append(values[m.Name], m.Value), m.Unit
		}
	}
	var total []Metric
	for _, name := range order {
		if len(values[name]) == len(clients) {
			total = append(total, Metric{Name: name, Unit: units[name], Value: scenarios.Total(declared[name], values[name])})
		}
	}
	out := WithEfficiency(total)
	for i, ms := range clients {
		for _, m := range WithEfficiency(slices.Clone(ms)) {
			out = append(out, Metric{Name: scenarios.ClientMetric(m.Name, i), Unit: m.Unit, Value: m.Value})
		}
	}
	return out
}

// MaxMetricValue bounds a metric's magnitude: nothing nsperf measures comes near it (a petabit
// per second, thirty years in microseconds), and a value beyond it is a tool's or a file's
// error that would break the statistics and the plots.
const MaxMetricValue = 1e15

// CheckValue says what is wrong with a metric's value: not a number, infinite, or beyond
// MaxMetricValue; nil for a value the statistics can take.
func (m Metric) CheckValue() error {
	switch {
	case math.IsNaN(m.Value) || math.IsInf(m.Value, 0):
		return fmt.Errorf("metric %s is %v, not a number nsperf can compare", m.Name, m.Value)
	case math.Abs(m.Value) > MaxMetricValue:
		return fmt.Errorf("metric %s is %g %s, beyond any measurement (at most %g)", m.Name, m.Value, m.Unit, float64(MaxMetricValue))
	case m.Value < 0:
		return fmt.Errorf("metric %s is %g %s: no rate, count, time or share nsperf measures is negative", m.Name, m.Value, m.Unit)
	}
	return nil
}
