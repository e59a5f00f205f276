package results

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Coverage is how often the functions a patch changes were called in one kernel, in a
// counting pass of the scenario before its measured runs: every state applied and run once,
// briefly, with a kprobe on each function. The measured samples run without the probes.
type Coverage struct {
	// Method says how the calls were counted, e.g. "kprobe events (tracefs kprobe_profile) in
	// a pass of one 2s run per state and workload before the measured runs".
	Method    string          `json:"method"`
	Functions []FunctionCalls `json:"functions"`
	// Truncated: the patch changes more functions than were counted (patches.MaxFunctions).
	Truncated bool `json:"truncated,omitempty"`
	// Seconds is how long the counting pass took, by the kernel's clock (a guest's virtual
	// seconds in virtual time): what counting added to the run.
	Seconds float64 `json:"seconds"`
	// Error is why nothing could be counted in this kernel (no kprobe events), if so.
	Error string `json:"error,omitempty"`
}

// Phases of a counting pass besides the states: building the topology and removing it.
const (
	PhaseSetup    = "setup"
	PhaseTeardown = "teardown"
)

// FunctionCalls are one changed function's calls by phase of the counting pass.
type FunctionCalls struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Module   string `json:"module,omitempty"` // the module built from File; "" for the kernel image
	// Probes are the symbols counted (openvswitch:do_setup, tcp_foo.isra.0), their calls summed.
	Probes []string `json:"probes,omitempty"`
	// NotCounted says why there is no count (inlined, several functions of that name, a
	// probe the kernel refused); the calls are then unknown, not zero.
	NotCounted string `json:"not_counted,omitempty"`
	// Absent says why the function cannot have run (its module is not loaded): 0 calls.
	Absent string `json:"absent,omitempty"`
	// Calls are by phase: PhaseSetup, a state's name (applying it and its runs), PhaseTeardown.
	Calls map[string]uint64 `json:"calls,omitempty"`
}

// Total is the function's calls in every phase.
func (f FunctionCalls) Total() uint64 {
	var n uint64
	for _, c := range f.Calls {
		n += c
	}
	return n
}

// Counted reports whether any function was counted, and whether any counted one ran.
func (c *Coverage) Counted() (counted, ran bool) {
	if c == nil {
		return false, false
	}
	for _, f := range c.Functions {
		if f.NotCounted == "" {
			counted = true
			ran = ran || f.Total() > 0
		}
	}
	return counted, ran
}

// NotRun is the sentence a result says when no counted function of the patch ran in
// the scenario: what it measured is code the patch did not change.
const NotRun = "the patched code did not run in this scenario"

// CoverageWarning is the warning of an A/B result whose patched functions were counted in
// its kernels and called in none, or "".
func CoverageWarning(kernels []*Result) string {
	counted, ran := false, false
	var names []string
	for _, k := range kernels {
		c, r := k.Coverage.Counted()
		counted, ran = counted || c, ran || r
		if k.Coverage != nil {
			for _, f := range k.Coverage.Functions {
				if f.NotCounted == "" && !slices.Contains(names, f.Function) {
					names = append(names, f.Function)
				}
			}
		}
	}
	if !counted || ran {
		return ""
	}
	return fmt.Sprintf("%s: %s called 0 times in every kernel, so a change measured here is not the patch's", NotRun, strings.Join(names, ", "))
}

// Lines are the coverage as the table's lines: per function, its calls by phase, or why
// it was not counted.
func (c *Coverage) Lines() []string {
	if c == nil {
		return nil
	}
	if c.Error != "" {
		return []string{"calls not counted: " + c.Error}
	}
	var out []string
	for _, f := range c.Functions {
		where := f.File
		if f.Module != "" {
			where += ", " + f.Module + ".ko"
		}
		if f.NotCounted != "" {
			out = append(out, fmt.Sprintf("%s (%s): not counted: %s", f.Function, where, f.NotCounted))
			continue
		}
		if f.Absent != "" {
			out = append(out, fmt.Sprintf("%s (%s): 0 calls: %s", f.Function, where, f.Absent))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s): %d calls (%s)", f.Function, where, f.Total(), phases(f.Calls)))
	}
	if c.Truncated {
		out = append(out, "(the patch changes more functions; the first ones were counted)")
	}
	return out
}

// phases lists calls by phase: setup first, teardown last, the states between by name.
func phases(calls map[string]uint64) string {
	var names []string
	for n := range calls {
		if n != PhaseSetup && n != PhaseTeardown {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	names = append(append([]string{PhaseSetup}, names...), PhaseTeardown)
	var parts []string
	for _, n := range names {
		if c, ok := calls[n]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", n, c))
		}
	}
	return strings.Join(parts, ", ")
}

// Trace is which functions of the network stack ran while a scenario's states were run once
// (nsperf coverage): ftrace's function tracer on every function the kernel source defines
// under net/ and the virtual devices' drivers.
type Trace struct {
	Method    string   `json:"method"`
	Functions []string `json:"functions"`
	// LostEvents counts the times the trace buffer filled faster than it was read: a
	// function called only then is missing.
	LostEvents int    `json:"lost_events,omitempty"`
	Error      string `json:"error,omitempty"`
}
