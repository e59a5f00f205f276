package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// TestEveryToolHasADriver: each tool a workload can name has a driver, and each driver
// names its programs with the package that installs them.
func TestEveryToolHasADriver(t *testing.T) {
	if len(scenarios.ToolNames()) != len(drivers) {
		t.Errorf("tools %v, drivers for %d", scenarios.ToolNames(), len(drivers))
	}
	for _, name := range scenarios.ToolNames() {
		d, ok := drivers[name]
		if !ok {
			t.Errorf("no driver for tool %s", name)
			continue
		}
		for _, p := range d.Programs() {
			if p.Name == "" || p.Binary == "" || (p.Package == "") == (p.Source == "") {
				t.Errorf("%s: program %+v lacks a name or binary, or has not one of a package and a kernel tree's source", name, p)
			}
		}
	}
}

// TestDriversRunWhatTheirToolsDeclare: the programs a driver runs are the processes its tool
// declares (what the tests check is not left behind), and the install hint of a missing
// program is its own: only netperf's names Debian's non-free component.
func TestDriversRunWhatTheirToolsDeclare(t *testing.T) {
	for _, name := range scenarios.ToolNames() {
		var binaries []string
		for _, p := range drivers[name].Programs() {
			binaries = append(binaries, p.Binary)
			if p.Source != "" {
				continue // built, never installed: said by requireTools
			}
			msg := missingProgram(p)
			if !strings.Contains(msg, "apt-get install "+p.Package) || strings.Contains(msg, "non-free") != (name == "netperf") {
				t.Errorf("tool %s, program %s: %q", name, p.Binary, msg)
			}
		}
		if want := scenarios.ToolKindSpecs()[name].Processes(); !slices.Equal(binaries, want) {
			t.Errorf("tool %s: the driver runs %v, the tool declares %v", name, binaries, want)
		}
	}
}

// TestBuiltPrograms: a program built from a kernel tree is required in Options.Built, not on
// PATH; with it, its build runs in its place, wherever in argv (taskset -c N PROGRAM).
func TestBuiltPrograms(t *testing.T) {
	s, err := scenarios.Load("veth-udpgso", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{}
	if _, err := requireTools(m, s, nil); err == nil || !strings.Contains(err.Error(), "udpgso_bench_tx is built from a kernel source tree's tools/testing/selftests/net/udpgso_bench_tx.c") {
		t.Errorf("without builds: %v", err)
	}
	built := map[string]tool.Built{"udpgso_bench_tx": {Path: "/cache/tx"}, "udpgso_bench_rx": {Path: "/cache/rx"}}
	if _, err := requireTools(m, s, built); err != nil {
		t.Errorf("with builds: %v", err)
	}
	argv := []string{"taskset", "-c", "0", "udpgso_bench_tx", "-4"}
	if got := withBuilt(argv, built); strings.Join(got, " ") != "taskset -c 0 /cache/tx -4" || argv[3] != "udpgso_bench_tx" {
		t.Errorf("%v (argv %v)", got, argv)
	}
	if names := SelftestPrograms(s); len(names) != 2 || names[0].Name != "udpgso_bench_tx" {
		t.Errorf("programs %v", names)
	}
}
