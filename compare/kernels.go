package compare

import (
	"errors"
	"fmt"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// Kernels makes the result of an A/B run of two kernels (nsperf run --kernel A --kernel B):
// the states of both side by side, each state of B compared with the same state of A, and
// both kernels' own results (their states compared with each other, as in any run) in
// Kernels. Its rounds alternated between the kernels, so unlike a comparison of stored runs
// the rounds are paired. The kernels' expectations stay with their own results: they are
// about the states of one run, not about B against A.
func Kernels(a, b *results.Result, runID string, turns []results.Turn) (*results.Result, error) {
	sides := []Side{{Name: "A", Source: "kernel " + a.Label, Result: a}, {Name: "B", Source: "kernel " + b.Label, Result: b}}
	rep, err := New(sides, Options{Policy: a.Settings.Policy, Expect: []scenarios.Expectation{}})
	var nothing *NothingComparedError
	switch {
	case errors.As(err, &nothing):
		// The kernels' own results are worth keeping (their failed samples say why).
		rep.Warnings = append(rep.Warnings, "kernel B against kernel A: "+err.Error())
	case err != nil:
		return nil, fmt.Errorf("comparing the two kernels: %w", err)
	}
	m := rep.Result
	m.Schema, m.RunID = results.Schema, runID
	m.Label = a.Label + " vs " + b.Label
	m.Start, m.End = a.Start, a.End
	if b.End.After(m.End) {
		m.End = b.End
	}
	m.Complete = a.Complete && b.Complete
	m.Scenario, m.Settings, m.Environment = a.Scenario, a.Settings, a.Environment
	m.Environment.KernelRelease = a.Environment.KernelRelease + " vs " + b.Environment.KernelRelease
	m.Environment.VM = nil // each kernel's result names its guest
	m.Warnings = append(append([]string{}, a.Warnings...), rep.Warnings...)
	m.Kernels, m.Turns = []*results.Result{a, b}, turns
	if err := m.Recompute(); err != nil {
		return nil, err
	}
	return m, nil
}
