package results

import (
	"fmt"
	"slices"

	"github.com/nsperf/nsperf/scenarios"
)

// Recompute derives every summary and expectation from the samples, with the run's policy and
// the expectations of its scenario text. A text that no longer validates still gives its
// expect: list; one whose expect: cannot be read is an error, and the result's stored
// expectations are kept as they are.
func (r *Result) Recompute() error {
	exps, workloads, err := scenarios.StoredExpectations(r.Scenario.File, []byte(r.Scenario.Text))
	if err != nil {
		return fmt.Errorf("run %s: %w", r.RunID, err)
	}
	// An A/B run of two kernels: each kernel's result is a run of its own; the states of both
	// compared with each other carry no expectations (those are about the states of one run).
	for _, k := range r.Kernels {
		if err := k.Recompute(); err != nil {
			return err
		}
	}
	if len(r.Kernels) > 0 {
		exps = nil
	}
	// Gates come from the scenario, never from what the result says of itself: "gates: {}"
	// would gate nothing. A text that no longer validates keeps its stored gates, but none
	// is no gate: every metric then decides, as in results written before gates.
	if g := scenarios.StoredGates(r.Scenario.File, []byte(r.Scenario.Text)); g != nil {
		r.Settings.Gates = g
	} else if len(r.Settings.Gates) == 0 {
		r.Settings.Gates = nil
	}
	policy := r.Settings.Policy
	for i := range r.Cases {
		c := &r.Cases[i]
		names := slices.Clone(workloads)
		for _, s := range c.Samples { // workloads an --aa or edited text does not list
			if !slices.Contains(names, s.Workload) {
				names = append(names, s.Workload)
			}
		}
		if policy.Alpha == 0 { // results written before the policy was stored
			for _, s := range c.Summaries {
				// Only an alpha a run decides with: the summaries are stored text too.
				if s.Comparison != nil && (Policy{Alpha: s.Comparison.Alpha}).check() == nil {
					policy.Alpha = s.Comparison.Alpha
					break
				}
			}
		}
		c.Summaries = Summarize(c.Samples, c.States, names, policy)
		Explain(c, policy)
	}
	r.Settings.Policy.Alpha = policy.Alpha
	r.DecideFamily()
	for i := range r.Cases {
		r.Cases[i].Expectations = Evaluate(r.Cases[i], exps)
	}
	return nil
}
