package runner

import (
	"slices"
	"strings"
	"testing"

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
			if p.Name == "" || p.Binary == "" || p.Package == "" {
				t.Errorf("%s: program %+v lacks a name, binary or package", name, p)
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
