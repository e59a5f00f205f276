package results

import (
	"slices"
	"strings"
	"testing"
)

// TestCoverage: calls by phase in the table's lines, the warning only when every counted
// function ran in no kernel, and functions not counted never taken for zero calls.
func TestCoverage(t *testing.T) {
	ran := &Coverage{Functions: []FunctionCalls{{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c", Module: "openvswitch",
		Probes: []string{"openvswitch:do_setup"}, Calls: map[string]uint64{PhaseSetup: 3, "on": 0, "off": 1, PhaseTeardown: 0}}}}
	absent := &Coverage{Functions: []FunctionCalls{{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c", Module: "openvswitch",
		Absent: "openvswitch.ko is not loaded", Calls: map[string]uint64{}}}}
	inlined := &Coverage{Functions: []FunctionCalls{{Function: "tcp_small", File: "net/ipv4/tcp_output.c", NotCounted: "no symbol tcp_small in the kernel or its modules: inlined into its callers, or not built"}}}
	zero := &Coverage{Functions: []FunctionCalls{{Function: "tcp_x", File: "net/ipv4/tcp_output.c", Probes: []string{"tcp_x"}, Calls: map[string]uint64{PhaseSetup: 0, "on": 0}}}}

	if got := ran.Lines(); !slices.Equal(got, []string{"do_setup (net/openvswitch/vport-internal_dev.c, openvswitch.ko): 4 calls (setup 3, off 1, on 0, teardown 0)"}) {
		t.Errorf("lines: %q", got)
	}
	if got := absent.Lines(); len(got) != 1 || !strings.Contains(got[0], "0 calls: openvswitch.ko is not loaded") {
		t.Errorf("absent: %q", got)
	}
	if got := inlined.Lines(); len(got) != 1 || !strings.Contains(got[0], "not counted: no symbol tcp_small") {
		t.Errorf("inlined: %q", got)
	}
	for _, c := range []struct {
		name    string
		kernels []*Coverage
		warns   bool
	}{
		{"ran in one kernel", []*Coverage{absent, ran}, false},
		{"module loaded in neither", []*Coverage{absent, absent}, true},
		{"probed, never called", []*Coverage{zero, zero}, true},
		{"not counted: nothing known", []*Coverage{inlined, inlined}, false},
		{"no counting pass", []*Coverage{nil, nil}, false},
		{"one kernel could not count", []*Coverage{{Error: "no kprobe events"}, zero}, true},
	} {
		var ks []*Result
		for _, cov := range c.kernels {
			ks = append(ks, &Result{Coverage: cov})
		}
		w := CoverageWarning(ks)
		if (w != "") != c.warns || (w != "" && !strings.HasPrefix(w, NotRun)) {
			t.Errorf("%s: warning %q", c.name, w)
		}
	}
}
