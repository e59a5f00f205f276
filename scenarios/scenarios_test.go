package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/golden"
)

func TestInvalidScenariosGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(f, data, Options{CPUs: 2})
			if err == nil {
				t.Fatalf("Parse accepted an invalid scenario: %+v", s)
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error is %T, want Problems: %v", err, err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", err.Error()+"\n")
		})
	}
}

// TestEveryProblemClass names each class of problem the issue lists, so that a golden file
// rewritten by mistake cannot silently drop one.
func TestEveryProblemClass(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid/many.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse("many.yaml", data, Options{CPUs: 2})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`many.yaml:4:32: topology.namespaces[2]: duplicate namespace "client"`,
		`many.yaml:8:13: topology.links[0].veth.b.ns: namespace "sever" is not in topology.namespaces (have: client, server)`,
		`topology.links[0].veth.b.name: "a-very-long-interface-name" is 26 bytes; interface names have at most 15`,
		`topology.links[0].veth.b.addrs[0]: "198.18.0.2/33" is not an address`,
		`topology.links[0].veth.mtu: 70 is below 1280, the IPv6 minimum`,
		`topology.links[1].veth.a.name: device client/eth0 is defined twice`,
		`topology.links[1].veth.colour: unknown key`,
		`many.yaml:17:21: states[0].devices.client/eth0.gso_max_size: 100 is outside 193..524280`,
		`states[0].devices.server/eth9: no device server/eth9 in the topology`,
		`states[1].name: duplicate state "off"`,
		`states[1].devices.client/eth0.gso_max_size: 600000 is outside 193..524280`,
		`states[1].devices.client/eth0.gro_max_size: 600000 exceeds 524280`,
		`states[1].devices.client/eth0.gso_ipv4_max_size: 192 is outside 193..524280`,
		`states[1].devices.client/eth0.gro_ipv4_max_size: 524281 exceeds 524280`,
		`states[1].devices.client/eth0.gso_max_segs: 0 is outside 1..65535`,
		`states[1].devices.client/eth0.mtu: 1000 is below 1280`,
		`workloads[0].iperf3.client.cpu: CPU 7 does not exist: this machine has CPUs 0-1`,
		`workloads[0].iperf3.server.cpu: CPU -1 does not exist`,
		`workloads[0].iperf3.server.addr: no device in namespace server carries 198.18.0.9`,
		`workloads[0].iperf3.duration: 1.5s: want whole seconds`,
		`workloads[0].iperf3.omit: "lots" is not a duration`,
		`workloads[0].iperf3.cport: 70000: want 1 to 65535`,
		`workloads[1].name: duplicate workload "tcp4"`,
		`workloads[1].iperf3.client.ns: namespace "nowhere" is not in topology.namespaces`,
		`workloads[1].iperf3.server.addr: missing`,
		`workloads[1].iperf3.streams: 0: want 1 to 128`,
		`workloads[2]: a workload needs one tool: iperf3`,
		`runs: 0: want 1 to 1000`,
		`order: "sideways": want alternate, abba or random`,
		`seed: a seed is used only with order: random`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q in\n%s", want, msg)
		}
	}
}

func TestShippedScenariosValid(t *testing.T) {
	shipped, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range shipped {
		names[s.Name] = true
		if s.File != s.Name+".yaml" {
			t.Errorf("shipped scenario %s lives in %s; name the file after the scenario", s.Name, s.File)
		}
	}
	if !names[DefaultScenario] {
		t.Fatalf("default scenario %s is not shipped (have %v)", DefaultScenario, names)
	}
}

func TestLoadByNameAndDefaults(t *testing.T) {
	s, err := Load("veth-bigtcp", Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.States) != 2 || s.States[0].Name != "off" || s.States[1].Name != "on" {
		t.Fatalf("states = %v", s.StateNames())
	}
	on := s.States[1].Settings["devices"].(DeviceKnobs)["server/eth0"] // set through a YAML alias
	if v, set := on["gso_ipv4_max_size"]; !set || v != 185000 || on["mtu"] != 0 {
		t.Fatalf("server/eth0 in on = %+v", on)
	}
	w := s.Workloads[1].Spec().(*Iperf3)
	if w.Port != DefaultIperf3Port || w.Streams != 1 || w.Duration.Std() != 10*time.Second || w.Omit.Std() != 3*time.Second {
		t.Fatalf("workload defaults: %+v", w)
	}
	if _, err := Load("no-such-scenario", Options{}); err == nil || !strings.Contains(err.Error(), "nsperf list") {
		t.Fatalf("unknown name: %v", err)
	}
}

func TestDefaultsWhenSilent(t *testing.T) {
	src := `name: minimal
topology:
  namespaces: [a, b]
  links:
    - veth:
        a: {ns: a, name: e0, addrs: [198.18.0.1/24]}
        b: {ns: b, name: e0, addrs: [198.18.0.2/24]}
states: [{name: base}]
workloads:
  - name: w
    iperf3: {client: {ns: a}, server: {ns: b, addr: 198.18.0.2}, omit: 0s}
`
	s, err := Parse("minimal.yaml", []byte(src), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workloads[0].Spec().(*Iperf3)
	if s.Runs != DefaultRuns || s.Order != OrderAlternate || w.Omit != 0 || w.Duration.Std() != DefaultDuration {
		t.Fatalf("defaults: runs %d order %s omit %s duration %s", s.Runs, s.Order, w.Omit, w.Duration)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	files = append(files, "library/veth-bigtcp.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, Options{CPUs: 2})
		if err == nil && s == nil {
			t.Fatal("nil scenario without error")
		}
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not a non-empty Problems: %T %v", err, err)
			}
		}
	})
}

func TestMatrixExpansionGolden(t *testing.T) {
	src := `name: matrix
topology:
  namespaces: [a, b]
  links:
    - veth:
        a: {ns: a, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: b, name: eth0, addrs: [198.18.0.2/24]}
        mtu: ${mtu}
states:
  - name: base
    devices:
      a/eth0: &lim {gso_max_size: "${gso}"} # quoted: braces are flow syntax
      b/eth0: *lim
workloads:
  - name: w-${mtu}
    iperf3: {client: {ns: a}, server: {ns: b, addr: 198.18.0.2}}
matrix:
  mtu: [1500, 8000]
  gso: [65536, 185000]
`
	s, err := Parse("matrix.yaml", []byte(src), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range s.Expand() {
		cs := c.Scenario
		fmt.Fprintf(&b, "%s: veth mtu %d, gso a %d b %d, workload %s\n", c.Label(), cs.Topology.Links[0].Veth.MTU,
			cs.States[0].Settings["devices"].(DeviceKnobs)["a/eth0"]["gso_max_size"], cs.States[0].Settings["devices"].(DeviceKnobs)["b/eth0"]["gso_max_size"], cs.Workloads[0].Name)
	}
	golden.Check(t, "testdata/matrix.golden", b.String())
	first := s.Expand()[0]
	if first.Map()["gso"] != "65536" || s.States[0].Settings["devices"].(DeviceKnobs)["a/eth0"]["gso_max_size"] != first.Scenario.States[0].Settings["devices"].(DeviceKnobs)["a/eth0"]["gso_max_size"] {
		t.Errorf("the scenario does not describe its first case: %+v", first)
	}
	// No case refers back to the cases: each is a concrete scenario of its own.
	for _, c := range s.Expand() {
		if c.Scenario == s || len(c.Scenario.Expand()) != 1 || c.Scenario.Expand()[0].Scenario != c.Scenario {
			t.Errorf("case %s is not a scenario of its own", c.Label())
		}
	}
	// An override reaches every case and the scenario itself.
	if err := (Overrides{Runs: 2, Omit: -1}).Apply(s); err != nil {
		t.Fatal(err)
	}
	if s.Runs != 2 || s.TotalRuns() != 2*len(s.States)*len(s.Workloads)*len(s.Expand()) {
		t.Errorf("runs %d, total %d after --runs 2", s.Runs, s.TotalRuns())
	}
}

func TestNoMatrixIsOneCase(t *testing.T) {
	s, err := Load("veth-bigtcp", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cases := s.Expand(); len(cases) != 1 || cases[0].Scenario != s || cases[0].Label() != "" {
		t.Fatalf("cases: %+v", cases)
	}
}

// TestLoadExpectations: a file of expectations for `nsperf compare --expect`, with defaults
// and positioned problems.
func TestLoadExpectations(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("- {workload: tcp4, state: \"on\", change: \">= +5%\", significant: true}\n- {workload: tcp4, cv: \"<= 10%\"}\n"), 0o644)
	exps, err := LoadExpectations(good)
	if err != nil || len(exps) != 2 || exps[0].Metric != "throughput" || exps[0].Change.Value != 0.05 || exps[1].CV == nil {
		t.Fatalf("%+v %v", exps, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("- {workload: tcp4, cv: \"<= 10%\", change: \">= 1%\"}\n- {workload: tcp4, colour: red, cv: \"<= 1%\"}\n"), 0o644)
	_, err = LoadExpectations(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:1:3: expect[0]: an expectation checks one thing") || !strings.Contains(err.Error(), "expect[1].colour: unknown key") {
		t.Errorf("err = %v", err)
	}
}

// TestUndecidable: runs per state that cannot decide any gated comparison at the scenario's
// alpha, over its family of gated comparisons, are said before anything runs.
func TestUndecidable(t *testing.T) {
	text := `name: u
topology:
  namespaces: [a, b]
  links:
    - veth: {a: {ns: a, name: eth0, addrs: [198.18.0.1/24]}, b: {ns: b, name: eth0, addrs: [198.18.0.2/24]}}
states:
  - name: "off"
  - name: "on"
workloads:
  - {name: t4, iperf3: {client: {ns: a}, server: {ns: b, addr: 198.18.0.2}}}
  - {name: t5, iperf3: {client: {ns: a}, server: {ns: b, addr: 198.18.0.2}, port: 5202}}
runs: RUNS
`
	for runs, want := range map[string]string{
		"3": "3 runs per state cannot decide any gated comparison: they give p >= 0.100, above alpha 0.05 / 2 gated comparisons; use at least 5",
		"4": "4 runs per state cannot decide any gated comparison: they give p >= 0.029, above alpha 0.05 / 2 gated comparisons; use at least 5",
		"5": "",
	} {
		s, err := Parse("u.yaml", []byte(strings.Replace(text, "RUNS", runs, 1)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Undecidable(); got != want {
			t.Errorf("runs %s: %q, want %q", runs, got, want)
		}
	}
}

// TestToolsDeclare: every tool declares its metrics (each with a direction where its tool
// gates on it), its method keys (keys of its YAML mapping) and its processes; two tools that
// report a metric of one name declare it alike.
func TestToolsDeclare(t *testing.T) {
	seen := map[string]MetricSpec{}
	for _, name := range ToolNames() {
		spec := ToolKindSpecs()[name]
		if spec == nil || len(spec.Metrics()) == 0 || len(spec.Processes()) == 0 || len(spec.MethodKeys()) == 0 {
			t.Fatalf("tool %s declares too little: %v", name, spec)
		}
		for _, m := range spec.Metrics() {
			if prev, ok := seen[m.Name]; ok && prev.Better != m.Better {
				t.Errorf("metric %s: %s declares direction %d, another tool %d", m.Name, name, m.Better, prev.Better)
			}
			seen[m.Name] = m
		}
		for _, g := range spec.Gates() {
			if m, ok := seen[g]; !ok || m.Better == NoDirection {
				t.Errorf("tool %s gates on %s, which it does not declare with a direction", name, g)
			}
		}
		yamlKeys := map[string]bool{}
		typ := reflect.TypeOf(spec).Elem()
		for i := 0; i < typ.NumField(); i++ {
			yamlKeys[strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]] = true
		}
		for _, k := range spec.MethodKeys() {
			if !yamlKeys[k] {
				t.Errorf("tool %s: method key %s is not a key of its mapping", name, k)
			}
		}
	}
	if got := DeclaredMetrics()[MetricP99Latency]; got.Better != LowerIsBetter || got.Unit != "us" {
		t.Errorf("p99_latency declared as %+v", got)
	}
}

// echoTool is a tool that exists only in this test: a type and a registration, nothing else.
type echoTool struct {
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"`
}

func (e *echoTool) Ends() (client, server Side) { return e.Client, e.Server }
func (e *echoTool) Length() time.Duration       { return e.Duration.Std() }
func (e *echoTool) setDefaults(written func(string) bool) {
	if !written("duration") {
		e.Duration = Duration(DefaultDuration)
	}
}
func (e *echoTool) check(v *validator, path string) {
	v.wholeSeconds(path+".duration", e.Duration, time.Second)
}
func (e *echoTool) override(o Overrides) error { return nil }
func (e *echoTool) Gates() []string            { return []string{MetricThroughput} }
func (e *echoTool) Metrics() []MetricSpec {
	return []MetricSpec{{Name: MetricThroughput, Unit: "bit/s", Better: HigherIsBetter, Additive: true}}
}
func (e *echoTool) MethodKeys() []string                       { return []string{"duration"} }
func (e *echoTool) Processes() []string                        { return []string{"echo"} }
func (e *echoTool) TCP() bool                                  { return false }
func (e *echoTool) instance(int, Placement) (ToolSpec, string) { c := *e; return &c, "" }

// TestToolIsOneRegistration: a tool that only registers itself is a workload key, with its
// defaults, its checks and its positions, and is listed among the tools; no Workload field,
// switch or list names it.
func TestToolIsOneRegistration(t *testing.T) {
	registerTool("echo", func() ToolSpec { return new(echoTool) })
	defer delete(toolMakers, "echo")
	yamlText := `name: x
topology:
  namespaces: [c, s]
  links:
    - veth: {a: {ns: c, name: e0, addrs: ["10.9.0.1/24"]}, b: {ns: s, name: e0, addrs: ["10.9.0.2/24"]}}
states: [{name: a}]
workloads:
  - {name: w, echo: {client: {ns: c}, server: {ns: s, addr: 10.9.0.2}}}
`
	s, err := Parse("echo.yaml", []byte(yamlText), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workloads[0]
	if e, ok := w.Spec().(*echoTool); w.Tool() != "echo" || !ok || e.Duration.Std() != DefaultDuration {
		t.Fatalf("workload tool %q, spec %#v", w.Tool(), w.Spec())
	}
	if !slices.Contains(ToolNames(), "echo") || DeclaredMetrics()[MetricThroughput].Better != HigherIsBetter {
		t.Errorf("tools %v do not list echo", ToolNames())
	}
	bad := strings.Replace(yamlText, "server: {ns: s", "duration: 1500ms, server: {ns: s", 1)
	_, err = Parse("echo.yaml", []byte(bad), Options{})
	if err == nil || !strings.Contains(err.Error(), "echo.yaml:8:") || !strings.Contains(err.Error(), "workloads[0].echo.duration") {
		t.Errorf("a bad echo duration: %v", err)
	}
	unknown := strings.Replace(yamlText, "echo:", "ekko:", 1)
	_, err = Parse("echo.yaml", []byte(unknown), Options{})
	if err == nil || !strings.Contains(err.Error(), "known: name, echo, iperf3, netperf, pktgen, sockperf, udpgso, clients, gate") {
		t.Errorf("an unknown tool: %v", err)
	}
}

// TestKernelSourcesHint: the shipped scenarios that a patch's files would exercise come from
// what the link kinds (and OVS) declare: net/openvswitch to ovs-internal-tso, the vxlan
// driver to the vxlan scenarios, veth.c and net/core to the veth ones; every kind declares
// some.
func TestKernelSourcesHint(t *testing.T) {
	for kind, spec := range LinkKindSpecs() {
		if len(spec.KernelSources()) == 0 {
			t.Errorf("link kind %s declares no kernel sources", kind)
		}
	}
	shipped, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Scenario{}
	for _, s := range shipped {
		byName[s.Name] = s
	}
	for _, tc := range []struct {
		scenario, file string
		want           bool
	}{
		{"ovs-internal-tso", "net/openvswitch/vport-internal_dev.c", true},
		{"veth-bigtcp", "net/openvswitch/vport-internal_dev.c", false},
		{"vxlan-bigtcp", "drivers/net/vxlan/vxlan_core.c", true},
		{"vxlan-lowerdev", "drivers/net/vxlan/vxlan_core.c", true},
		{"veth-bigtcp", "drivers/net/vxlan/vxlan_core.c", false},
		{"veth-bigtcp", "drivers/net/veth.c", true},
		{"veth-bigtcp", "net/core/dev.c", true},
		{"veth-bigtcp", "drivers/net/veth.h", false},
	} {
		s := byName[tc.scenario]
		if s == nil {
			t.Fatalf("no shipped scenario %s", tc.scenario)
		}
		if got := len(Exercises(s, []string{tc.file})) > 0; got != tc.want {
			t.Errorf("%s exercises %s: %v, want %v (sources %v)", tc.scenario, tc.file, got, tc.want, KernelSources(s))
		}
	}
}

// FuzzParseQdisc: a qdisc drafted from a message's tc line never panics, and one it accepts
// has exactly one kind and a tc text with no NaN, infinity or negative value in it (topo's
// FuzzQdiscReadBack checks that what it accepts reads back as asked).
func FuzzParseQdisc(f *testing.F) {
	for _, s := range []string{"{fq: {}}", `{fq: {maxrate: "1gbit", flow_limit: 100}}`, `{netem: {delay: "10ms", jitter: "1ms", loss: "1%"}}`,
		`{fq_codel: {target: "2ms", noecn: true}}`, "{tbf: {rate: 1gbit, burst: 1mb}}", "{noqueue: {}}", "none", "{cake: {}}", "[1, 2]",
		"{tbf: {rate: inf, burst: 1mb}}", "{tbf: {rate: 1gbit, burst: 1mb, latency: -1s}}", "{netem: {delay: 4294.97s, jitter: -5ms}}",
		"{netem: {loss: nan}}", "{fq: {maxrate: 1e30}}", "{fq_codel: {target: -1ms, limit: 4294967296}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q, err := ParseQdisc(text)
		if err != nil {
			return
		}
		if tc := q.String(); len(q.Kinds()) != 1 || tc == "" || strings.Contains(tc, "NaN") || strings.Contains(tc, "Inf") || strings.Contains(tc, " -") {
			t.Fatalf("%q accepted as %q", text, tc)
		}
	})
}

// TestNetperfDefaultOutputs: every request/response test, TCP_CRR included, reports through
// -O selectors by default (TCP_CRR's classic output has a layout no parser reads: every
// TCP_CRR run failed before); UDP_STREAM its throughput and units; TCP_STREAM the classic
// block.
func TestNetperfDefaultOutputs(t *testing.T) {
	for test, want := range map[string]string{
		"TCP_RR": "MIN_LATENCY P90_LATENCY P99_LATENCY THROUGHPUT", "UDP_RR": "MIN_LATENCY P90_LATENCY P99_LATENCY THROUGHPUT",
		"TCP_CRR": "MIN_LATENCY P90_LATENCY P99_LATENCY THROUGHPUT", "UDP_STREAM": "THROUGHPUT THROUGHPUT_UNITS", "TCP_STREAM": "",
		// A transfer of a fixed size: what its time is computed from, and netperf's own.
		"TCP_STREAM, bytes: 10mb": "THROUGHPUT THROUGHPUT_UNITS LOCAL_BYTES_SENT ELAPSED_TIME",
	} {
		text := strings.ReplaceAll(`name: n
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}
states:
  - name: base
workloads:
  - name: w
    netperf: {test: TEST, client: {ns: client}, server: {ns: server, addr: 198.18.0.2}}
`, "TEST", test)
		s, err := Parse("n.yaml", []byte(text), Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := s.Workloads[0].Spec().(*Netperf)
		if got := strings.Join(w.Outputs, " "); got != want {
			t.Errorf("%s: outputs %q, want %q", test, got, want)
		}
		if gates := strings.Join(w.Gates(), " "); (w.Bytes > 0) != (gates == MetricTransferTime) {
			t.Errorf("%s: gates %q", test, gates)
		}
	}
}
