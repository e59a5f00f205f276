package runner

import (
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
