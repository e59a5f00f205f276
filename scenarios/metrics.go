package scenarios

// The metric names a scenario gates and expects on by default; the tool drivers produce them
// (results names every metric, from these).
const (
	MetricThroughput = "throughput"  // a stream's bits/s, a request/response test's transactions/s
	MetricP99Latency = "p99_latency" // microseconds, netperf's P99_LATENCY
)

// Better says which way a metric gets better.
type Better int

// Directions.
const (
	HigherIsBetter Better = 1
	LowerIsBetter  Better = -1
	// NoDirection: neither way is better by itself, or nothing declares which. Raw CPU
	// utilisation is one: it falls when less work is done; CPU per unit of work judges.
	NoDirection Better = 0
)

// MetricSpec is a metric a tool declares it may report, as results store it.
type MetricSpec struct {
	Name string
	// Unit as stored; "" where the run decides it (netperf's throughput: bit/s for a
	// stream, trans/s for request/response).
	Unit   string
	Better Better
	// CPU marks a CPU utilisation: the CPU per unit of work is derived from it
	// (NAME_per_gbit, NAME_per_trans), which is lower-is-better.
	CPU bool
	// Additive: the figures of several clients at once add up to the workload's (a rate, a
	// count, a process's own CPU time); the others are the clients' mean (latencies, shares,
	// CPU utilisation of the whole machine).
	Additive bool
}

// ToolKindSpecs are a ToolSpec of each tool, by YAML key, with nothing set: what a tool
// declares about itself (Metrics, MethodKeys, Processes) without a scenario.
func ToolKindSpecs() map[string]ToolSpec {
	out := map[string]ToolSpec{}
	for key, make := range toolMakers {
		out[key] = make()
	}
	return out
}

// DeclaredMetrics are the metrics every tool declares, by name. Two tools that report a
// metric of one name declare it the same way (TestToolsDeclare).
func DeclaredMetrics() map[string]MetricSpec {
	out := map[string]MetricSpec{}
	for _, name := range ToolNames() {
		for _, m := range ToolKindSpecs()[name].Metrics() {
			out[m.Name] = m
		}
	}
	return out
}

// ToolProcesses are the names of the programs every tool runs, as /proc/PID/comm shows them.
func ToolProcesses() []string {
	var out []string
	for _, name := range ToolNames() {
		out = append(out, ToolKindSpecs()[name].Processes()...)
	}
	return out
}
