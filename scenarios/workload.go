package scenarios

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Workload is one measurement run in every state; exactly one tool is set. The tools are
// keys of the workload's mapping that a tool's file registers (RegisterTool in iperf3.go,
// netperf.go, sockperf.go): adding a tool is that file plus its driver in the runner, and
// nothing here.
type Workload struct {
	Name string `yaml:"name"`
	// Tools are the tools the workload sets, by YAML key: one when it is valid.
	Tools ToolSet `yaml:",plugins"`
	// Clients run several clients of the tool at once, one process per placement, each on
	// its CPUs (clients.go): the workload's figures are their total, each client's are
	// reported beside it. Without clients, the tool's settings are one client.
	Clients []Placement `yaml:"clients"`
	// Gate names the metrics that decide a run; default: the tool's primary ones (Gates).
	// The others are reported with their verdicts but never fail a run unless an
	// expectation names them.
	Gate []string `yaml:"gate"`
	// Record names side metrics of the workload's TCP connection that need a capture of its
	// packets (SideRecords): the handshake's window, the waits of retransmissions. Not
	// recorded unless asked: a capture costs every packet of the client's namespace.
	Record []string `yaml:"record"`
}

// ToolSpec is what every tool's settings provide, so that the loader, validation and the
// runner never ask which tool a workload uses.
type ToolSpec interface {
	// Ends returns where the client and the server run.
	Ends() (client, server Side)
	// Length is the time one run takes, any warm-up included.
	Length() time.Duration
	// setDefaults fills what the scenario leaves out; written says whether the file sets a
	// key of the tool's mapping.
	setDefaults(written func(key string) bool)
	// check validates the tool's own settings (the ends are checked for every tool alike).
	check(v *validator, path string)
	// override applies the command line's changes to the method.
	override(o Overrides) error
	// Gates are the tool's primary metrics: what a run of it is for.
	Gates() []string
	// Metrics are every metric the tool may report, with its unit and direction: results,
	// compare, the history and the reports take them from here, and a metric no tool
	// declares has no direction. Static: the same for a spec with nothing set.
	Metrics() []MetricSpec
	// MethodKeys are the keys of the tool's mapping that say how long and how much is
	// measured (duration, omit): results that differ only in them still compare.
	MethodKeys() []string
	// Processes are the names (comm) of the programs the tool runs, client and server.
	Processes() []string
	// TCP reports whether the tool measures over TCP connections from the client to the
	// server: then each sample keeps the state of the busiest one (results.Counters.TCP).
	TCP() bool
	// instance is the settings of the i-th of several clients run at once
	// (workloads[].clients): the placement's CPUs, and ports of its own where the tool binds
	// one per client; problem says why the tool cannot run that many ("" for none).
	instance(i int, p Placement) (spec ToolSpec, problem string)
}

// KernelTool is a tool that is part of the kernel, or whose programs need some of it
// (pktgen, and xdp-bench's BPF programs): its modules, which a guest loads, and the options a
// kernel under test needs besides.
type KernelTool interface {
	Kernel() KernelNeeds
}

// ProgramsRun is a tool whose workloads run programs of other names than the tool's, by
// their settings (pktgen's receiver, xdp-bench): what a message that names them was
// measured with.
type ProgramsRun interface {
	ProgramsRun() []string
}

// toolMakers make each tool's empty settings, by YAML key: the registry of tools.
var toolMakers = map[string]func() ToolSpec{}

// registerTool adds a tool, by the YAML key a workload names it with; each tool's file
// calls it from init.
func registerTool(key string, make func() ToolSpec) {
	if _, dup := toolMakers[key]; dup {
		panic("scenarios: tool " + key + " registered twice")
	}
	toolMakers[key] = make
}

// ToolNames are the YAML keys of the tools a workload can use, sorted.
func ToolNames() []string { return slices.Sorted(maps.Keys(toolMakers)) }

// ToolSet is a workload's tools by YAML key. The decoder reads its keys beside the
// workload's own (pluginSet).
type ToolSet map[string]ToolSpec

func (ToolSet) pluginKeys() []string { return ToolNames() }

func (ToolSet) newPlugin(key string) any { return toolMakers[key]() }

// tools returns the tools a workload sets, by YAML key, sorted: one when it is valid.
func (w Workload) tools() (names []string, specs []ToolSpec) {
	for _, name := range slices.Sorted(maps.Keys(w.Tools)) {
		names, specs = append(names, name), append(specs, w.Tools[name])
	}
	return names, specs
}

// Tool returns the name of the workload's tool (its YAML key), "" if none is set.
func (w Workload) Tool() string { names, _ := w.tools(); return first(names) }

// Spec returns the workload's tool settings, nil if none is set.
func (w Workload) Spec() ToolSpec { _, specs := w.tools(); return first(specs) }

// Sides returns the workload's client and server, whatever its tool.
func (w Workload) Sides() (client, server Side) {
	if spec := w.Spec(); spec != nil {
		return spec.Ends()
	}
	return Side{}, Side{}
}

// Gates returns the metrics that decide a run of the workload: its gate: list, else its
// tool's primary metrics.
func (w Workload) Gates() []string {
	if len(w.Gate) > 0 {
		return w.Gate
	}
	if spec := w.Spec(); spec != nil {
		return spec.Gates()
	}
	return nil
}

// Length is the time one run of the workload takes.
func (w Workload) Length() time.Duration {
	if spec := w.Spec(); spec != nil {
		return spec.Length()
	}
	return 0
}

// LengthIsLimit reports whether the workload's Length is the longest a run may take rather
// than the time it takes: a transfer of a fixed size ends when it is done.
func (w Workload) LengthIsLimit() bool {
	l, ok := w.Spec().(interface{ LengthIsLimit() bool })
	return ok && l.LengthIsLimit()
}

// Side is where one end of a workload runs.
type Side struct {
	NS   string `yaml:"ns"`
	CPU  *int   `yaml:"cpu"`  // pinned CPU (-A); nil: not pinned
	Addr string `yaml:"addr"` // server only: the address the client connects to
}

// Family returns the address family flag of the server address: "-4" or "-6".
func (s Side) Family() string {
	if a, err := netip.ParseAddr(s.Addr); err == nil && a.Is6() {
		return "-6"
	}
	return "-4"
}

func (v *validator) workloads(namespaces map[string]bool, devices map[string]*device, opt Options) {
	if len(v.s.Workloads) == 0 {
		v.add("workloads", "missing: list at least one workload, e.g. an iperf3 client and server")
	}
	seen := map[string]bool{}
	for i, w := range v.s.Workloads {
		path := fmt.Sprintf("workloads[%d]", i)
		v.name(path+".name", w.Name, "workload", "tcp4", seen)
		names, specs := w.tools()
		switch len(specs) {
		case 0:
			v.add(path, "a workload needs one tool: %s", orList(ToolNames()))
		case 1:
			tpath := path + "." + names[0]
			client, server := specs[0].Ends()
			srv := v.side(tpath+".server", server, namespaces, devices, opt, true)
			cli := v.side(tpath+".client", client, namespaces, devices, opt, false)
			if srv.IsValid() && cli.IsValid() && srv.Is4() != cli.Is4() {
				v.add(tpath+".client.addr", "%s and the server address %s are of different families", cli, srv)
			}
			specs[0].check(v, tpath)
			v.clients(path, w, opt)
			v.record(path, w)
			for j, g := range w.Gate {
				if !metricNameRE.MatchString(g) {
					v.add(fmt.Sprintf("%s.gate[%d]", path, j), "%q is not a metric name (e.g. throughput, p99_latency)", g)
				}
			}
		default:
			v.add(path, "a workload has one tool: split %s into two workloads", strings.Join(names, " and "))
		}
	}
}

var metricNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// wholeSeconds checks a duration that a tool takes in whole seconds.
func (v *validator) wholeSeconds(path string, d Duration, min time.Duration) {
	if d.Std() < min || d.Std()%time.Second != 0 {
		v.add(path, "%s: want whole seconds, at least %s", d, min)
	}
}

// port checks a TCP or UDP port.
func (v *validator) port(path string, port int) {
	if port < 1 || port > 65535 {
		v.add(path, "%d: want 1 to 65535", port)
	}
}
