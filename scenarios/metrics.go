package scenarios

// The metric names a scenario gates and expects on by default; the tool drivers produce them
// (results names every metric, from these).
const (
	MetricThroughput = "throughput"  // a stream's bits/s, a request/response test's transactions/s
	MetricP99Latency = "p99_latency" // microseconds, netperf's P99_LATENCY
)
