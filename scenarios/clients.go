package scenarios

import (
	"fmt"
	"math"
	"strings"
)

// Placement is where one of several clients of a workload runs (workloads[].clients): its
// CPU and its server's. A workload with clients runs one client process per placement at
// once, each with a server of its own where the tool has one per run (iperf3) or per port
// (sockperf), and reports their total and each client's figures.
type Placement struct {
	CPU       *int `yaml:"cpu"`        // the client's (-A, -T, taskset); nil: not pinned
	ServerCPU *int `yaml:"server_cpu"` // its server's
}

// MaxClients bounds workloads[].clients: more processes than any machine here has CPUs for.
const MaxClients = 64

// Instances are the tool settings of each client process a run of the workload starts at
// once: the workload's own, or one per placement of clients, each on its CPUs and ports
// (ToolSpec.instance).
func (w Workload) Instances() []ToolSpec {
	spec := w.Spec()
	if spec == nil {
		return nil
	}
	if len(w.Clients) == 0 {
		return []ToolSpec{spec}
	}
	out := make([]ToolSpec, len(w.Clients))
	for i, p := range w.Clients {
		out[i], _ = spec.instance(i, p) // validated: no problem
	}
	return out
}

// ClientMetric is the name of one client's figure of a metric, beside the workload's total:
// throughput_client2 is the second client's throughput.
func ClientMetric(name string, client int) string {
	return fmt.Sprintf("%s%s%d", name, clientSuffix, client+1)
}

const clientSuffix = "_client"

// ClientMetricBase returns the metric a client's figure is of, and the client's index (from
// 0); ok is false for a metric that is no client's.
func ClientMetricBase(name string) (base string, client int, ok bool) {
	i := strings.LastIndex(name, clientSuffix)
	if i <= 0 {
		return "", 0, false
	}
	digits := name[i+len(clientSuffix):]
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' || n > MaxClients {
			return "", 0, false
		}
		n = n*10 + int(c-'0')
	}
	if digits == "" || n < 1 || n > MaxClients || digits[0] == '0' {
		return "", 0, false
	}
	return name[:i], n - 1, true
}

// Total combines the clients' figures of one metric into the workload's: a rate or a count
// (MetricSpec.Additive) adds up, anything else (latencies, shares, CPU of the whole machine)
// is the clients' mean.
func Total(spec MetricSpec, values []float64) float64 {
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	if spec.Additive || len(values) == 0 {
		return sum
	}
	return sum / float64(len(values))
}

// clients checks a workload's clients: 2 to MaxClients of them, CPUs that exist, and the
// tool's own client and server without a CPU (each client has its own).
func (v *validator) clients(path string, w Workload, opt Options) {
	if w.Clients == nil {
		return
	}
	if n := len(w.Clients); n < 2 || n > MaxClients {
		v.add(path+".clients", "%s: want 2 to %d (one client is the tool's own settings: leave clients out)", map[bool]string{true: "one client", false: fmt.Sprintf("%d clients", n)}[n == 1], MaxClients)
	}
	if spec := w.Spec(); spec != nil {
		client, server := spec.Ends()
		tool := w.Tool()
		if client.CPU != nil {
			v.add(path+"."+tool+".client.cpu", "a workload with clients pins each client by its clients[].cpu: leave this out")
		}
		if server.CPU != nil {
			v.add(path+"."+tool+".server.cpu", "a workload with clients pins each client's server by its clients[].server_cpu: leave this out")
		}
	}
	for i, p := range w.Clients {
		for key, cpu := range map[string]*int{"cpu": p.CPU, "server_cpu": p.ServerCPU} {
			if cpu != nil && (*cpu < 0 || (opt.CPUs > 0 && *cpu >= opt.CPUs) || *cpu > math.MaxInt16) {
				v.add(fmt.Sprintf("%s.clients[%d].%s", path, i, key), "CPU %d does not exist: this machine has CPUs 0-%d", *cpu, max(opt.CPUs, 1)-1)
			}
		}
	}
	if spec := w.Spec(); spec != nil && len(w.Clients) > 1 {
		if _, problem := spec.instance(len(w.Clients)-1, Placement{}); problem != "" {
			v.add(path+".clients", "%d clients: %s", len(w.Clients), problem)
		}
	}
}

// nextPort is the port of the i-th client of a tool that gives each client a server of its
// own on the ports after the first; problem names what (servers) when it runs past 65535.
func nextPort(port, i int, what string) (int, string) {
	p := port + i
	if p > 65535 {
		return p, fmt.Sprintf("their %s' ports run up to %d: lower port", what, p)
	}
	return p, ""
}

// placed returns side with the placement's CPU.
func placed(side Side, cpu *int) Side {
	side.CPU = cpu
	return side
}
