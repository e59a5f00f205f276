package compare

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nsperf/nsperf/internal/mwu"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// The verdicts of a bisection step: good and bad judge the commit, skip says it cannot be
// judged (a neighbour may), abort that the bisection itself is wrong.
const (
	StepGood  = "good"
	StepBad   = "bad"
	StepSkip  = "skip"
	StepAbort = "abort"
)

// Step is a bisection step judged: this kernel's run (B) against the known-good kernel's (A).
type Step struct {
	Verdict string
	// Reason is why: the first failure of a bad step, the undecided comparison of a skipped
	// one; Reasons are all of a bad step's.
	Reason  string
	Reasons []string
	// Report is the comparison of the two runs, when they could be compared.
	Report *Report
}

// JudgeStep judges a bisection step: bad when this kernel (r) lost a state the good one
// (base) applied, failed an expectation, or regressed a gated metric against it; skip when
// a gated comparison is undecided or nothing compares; good otherwise. The run's own
// comparisons (a state against another within this kernel) do not judge the commit.
func JudgeStep(base, r *results.Result, baselinePath string) (Step, error) {
	rep, err := New([]Side{{Source: baselinePath, Result: base}, {Source: "this kernel", Result: r}}, Options{})
	var incomparable *IncomparableError
	var nothing *NothingComparedError
	switch {
	case errors.As(err, &incomparable):
		return Step{Verdict: StepAbort}, err
	case errors.As(err, &nothing) && rep != nil && rep.Result != nil:
		// Nothing to compare may be what the commit did: it lost a state the good kernel
		// applied.
		if lost := LostCapabilities(rep.Result); len(lost) > 0 {
			return Step{Verdict: StepBad, Reason: lost[0], Reasons: lost}, nil
		}
		return Step{Verdict: StepSkip}, err
	case err != nil:
		return Step{Verdict: StepSkip}, err
	}
	failures := append(r.ExpectationFailures(), LostCapabilities(rep.Result)...)
	failures = append(failures, rep.Result.Failures()...)
	if len(failures) > 0 {
		return Step{Verdict: StepBad, Reason: failures[0], Reasons: failures, Report: rep}, nil
	}
	for _, cs := range rep.Result.Cases {
		for _, sm := range cs.Summaries {
			if cmp := sm.Comparison; cmp != nil && cmp.Gated && (cmp.Verdict == results.Undecided || cmp.Verdict == results.TooFewRuns) {
				return Step{Verdict: StepSkip, Reason: fmt.Sprintf("%s %s %s vs %s undecided: %s", sm.Workload, sm.Metric, sm.State, cmp.Baseline, cmp.Note), Report: rep}, nil
			}
		}
	}
	return Step{Verdict: StepGood, Report: rep}, nil
}

// LostCapabilities are the states the good kernel (A) applied and this one (B) cannot: a
// regression of what the kernel can do.
func LostCapabilities(r *results.Result) []string {
	var out []string
	for _, cp := range r.Capabilities {
		if why, lost := cp.Unavailable["B"]; lost && slices.Contains(cp.Applies, "A") {
			out = append(out, fmt.Sprintf("lost capability: state %s applied on the good kernel, not on this one: %s", cp.State, why))
		}
	}
	return out
}

// BaselineCanDecide refuses a known-good result that no step could be decided against: of
// another scenario text, without a successful sample, or with too few runs for the step's
// comparisons (each state against the baseline's, of every gated metric, adjusted together)
// to reach alpha whatever they measure.
func BaselineCanDecide(base *results.Result, s *scenarios.Scenario, alpha float64) error {
	if base.Scenario.Text != string(s.Text) {
		return fmt.Errorf("measured another text of scenario %s: measure the good kernel with this one", s.Name)
	}
	nBase := -1
	for _, c := range base.Cases {
		valid := map[[2]string]int{}
		for _, sm := range c.Samples {
			if sm.Error == "" && sm.Invalid == "" {
				valid[[2]string{sm.State, sm.Workload}]++
			}
		}
		for _, n := range valid {
			if nBase < 0 || n < nBase {
				nBase = n
			}
		}
	}
	if nBase <= 0 {
		return errors.New("has no successful sample to compare with")
	}
	family, nStep := 0, s.Runs
	if s.Adaptive {
		nStep = s.MaxRuns
	}
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			family += len(c.Scenario.States) * len(w.Gates())
		}
	}
	if p := mwu.MinP(nBase, nStep); family > 0 && p*float64(family) > alpha {
		return fmt.Errorf("%d runs per state against a step's %d give p >= %.3f, above alpha %g / %d gated comparisons: no step could be decided; measure the good kernel with at least %d runs",
			nBase, nStep, p, alpha, family, mwu.RunsToDecide(alpha, family))
	}
	return nil
}
