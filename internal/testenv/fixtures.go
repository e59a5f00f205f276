package testenv

import (
	"time"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// PairScenario is a two-state scenario over a veth pair, iperf3 over IPv4, six runs: what the
// tests of comparison, rendering and the command line make results of.
const PairScenario = `name: pair
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}
states:
  - name: "off"
  - name: "on"
    devices: {client/eth0: {gso_max_size: 185000}}
workloads:
  - name: tcp4
    iperf3: {client: {ns: client}, server: {ns: server, addr: 198.18.0.2}}
runs: 6
`

// PairResult is a stored result of scenario text (PairScenario, or a variant of it) with the
// throughputs of each state (Gbit/s, one per run), its statistics computed as a run's are.
func PairResult(id, label, kernel, text string, tput map[string][]float64) *results.Result {
	r := &results.Result{
		Schema: results.Schema, RunID: id, Label: label, Complete: true,
		Scenario:    results.ScenarioInfo{Name: "pair", File: "pair.yaml", SHA256: scenarios.TextSHA256([]byte(text)), Text: text},
		Start:       time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Settings:    results.Settings{Runs: 6, Order: "alternate", Policy: results.Policy{Alpha: 0.05, CVLimit: 0.05}, RunLength: map[string]string{"tcp4": "12s"}},
		Environment: results.Environment{KernelRelease: kernel, KernelVersion: "#1 SMP", CPUModel: "test CPU", CPUs: 2, Hostname: "box", Tools: map[string]string{"iperf3": "3.12"}},
	}
	c := results.Case{}
	for _, st := range []string{"off", "on"} {
		xs, ok := tput[st]
		if !ok {
			continue
		}
		rec := results.StateRecord{Name: st}
		if st == "on" {
			rec.CompareTo = "off"
		}
		c.States = append(c.States, rec)
		for i, x := range xs {
			c.Samples = append(c.Samples, results.Sample{Round: i + 1, State: st, Workload: "tcp4", Tool: "iperf3",
				Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: x * 1e9}}})
		}
	}
	r.Cases = []results.Case{c}
	r.Recompute()
	return r
}
