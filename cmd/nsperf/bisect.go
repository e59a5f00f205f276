package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/internal/mwu"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
)

// The exit codes of `nsperf run --bisect`, as `git bisect run` reads them.
const (
	bisectGood  = 0
	bisectBad   = 1
	bisectSkip  = 125 // this commit cannot be tested: git bisect tries a neighbour
	bisectAbort = 128 // the bisection itself is wrong: git bisect stops
)

// bisectExit ends a bisection step with its code; the error says why.
type bisectExit struct {
	code int
	err  error
}

func (b bisectExit) Error() string {
	if b.err == nil {
		return fmt.Sprintf("bisect: exit %d", b.code)
	}
	return "bisect: " + b.err.Error()
}

func (b bisectExit) Unwrap() error { return b.err }

// bisectCode maps a run's error to a step's code: what is wrong with the command line or
// the baseline aborts, anything the commit may be to blame for or that a neighbour may not
// have (no boot, exit 4, failed runs) skips, an interrupt stops as interrupts do.
func bisectCode(err error) int {
	switch exitCode(err) {
	case exitOK:
		return bisectGood
	case exitUsage:
		return bisectAbort
	case exitInterrupted:
		return exitInterrupted
	}
	return bisectSkip
}

// runBisect is one step of `git bisect run`: it measures the kernel of --kernel, compares it
// with the known-good kernel's stored result with the usual statistics (each state of this
// run against the same state there), and exits good when no gated comparison regressed
// beyond the minimum change, bad when one did or an expectation failed.
func (rf *runFlags) runBisect(c *cobra.Command, arg string) error {
	code, err := rf.bisectStep(c, arg)
	if err == nil && code == bisectGood {
		return nil
	}
	return bisectExit{code: code, err: err}
}

func (rf *runFlags) bisectStep(c *cobra.Command, arg string) (int, error) {
	switch {
	case rf.vf.baseline == "":
		return bisectAbort, errors.New("--bisect needs --baseline GOOD.json: the stored result of the known-good kernel")
	case len(rf.vf.kernels) != 1:
		return bisectAbort, fmt.Errorf("--bisect measures one --kernel (the tree under test), not %d", len(rf.vf.kernels))
	}
	base, _, err := results.ReadFile(rf.vf.baseline)
	if err != nil {
		return bisectAbort, fmt.Errorf("--baseline: %w", err)
	}
	if len(base.Kernels) > 0 {
		return bisectAbort, fmt.Errorf("--baseline %s is an A/B run of two kernels: give the result of one kernel", rf.vf.baseline)
	}
	s, err := rf.scenario(c, arg)
	if err != nil {
		return bisectAbort, err
	}
	if base.Scenario.Name != s.Name {
		return bisectAbort, fmt.Errorf("--baseline %s is a result of scenario %s, not %s", rf.vf.baseline, base.Scenario.Name, s.Name)
	}
	if err := baselineCanDecide(base, s, runner.ResolvePolicy(s, rf.opt).Effective().Alpha); err != nil {
		return bisectAbort, fmt.Errorf("--baseline %s: %w", rf.vf.baseline, err)
	}
	if err := requireRoot(); err != nil {
		return bisectAbort, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := rf.measure(ctx, c, arg, s)
	if r != nil {
		err = errors.Join(err, rf.emit(c, s, r, err))
	}
	if r == nil || ctx.Err() != nil {
		if err != nil {
			return bisectCode(err), err
		}
	} else if err != nil {
		// A guest that measured and exited 1 (a failed expectation, its own states
		// differing) or 4 (a state this kernel cannot apply): its result judges the step.
		fmt.Fprintf(c.ErrOrStderr(), "bisect: %v; the step is judged by its result against the baseline\n", err)
	}
	return bisectVerdict(c, base, r, rf.vf.baseline)
}

// baselineCanDecide refuses a known-good result that no step could be decided against: of
// another scenario text, without a successful sample, or with too few runs for the step's
// comparisons (each state against the baseline's, of every gated metric, adjusted together)
// to reach alpha whatever they measure.
func baselineCanDecide(base *results.Result, s *scenarios.Scenario, alpha float64) error {
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

// bisectVerdict compares the run with the baseline and prints the comparison.
func bisectVerdict(c *cobra.Command, base, r *results.Result, baselinePath string) (int, error) {
	rep, err := compare.New([]compare.Side{{Source: baselinePath, Result: base}, {Source: "this kernel", Result: r}}, compare.Options{})
	var incomparable *compare.IncomparableError
	var nothing *compare.NothingComparedError
	switch {
	case errors.As(err, &incomparable):
		return bisectAbort, err
	case errors.As(err, &nothing) && rep != nil && rep.Result != nil:
		// Nothing to compare may be what the commit did: it lost a state the good kernel
		// applied.
		if lost := lostCapabilities(rep.Result); len(lost) > 0 {
			fmt.Fprintf(c.OutOrStdout(), "bisect: bad: %s\n", lost[0])
			return bisectBad, fmt.Errorf("bad: %s", strings.Join(lost, "; "))
		}
		return bisectSkip, err
	case err != nil:
		return bisectSkip, err
	}
	out := c.OutOrStdout()
	fmt.Fprintf(out, "\nbisect: this kernel (B) against the known-good %s (A):\n", baselinePath)
	for _, line := range rep.Environment {
		fmt.Fprintln(out, "  "+line)
	}
	if err := results.Table(out, rep.Result); err != nil {
		return bisectSkip, err
	}
	// The run's own comparisons (state against state within this kernel) do not judge the
	// commit: only its expectations, what it can no longer do, and this kernel against the
	// good one.
	failures := append(r.ExpectationFailures(), lostCapabilities(rep.Result)...)
	failures = append(failures, rep.Result.Failures()...)
	if len(failures) > 0 {
		fmt.Fprintf(out, "bisect: bad: %s\n", failures[0])
		return bisectBad, fmt.Errorf("bad: %s", strings.Join(failures, "; "))
	}
	for _, cs := range rep.Result.Cases {
		for _, sm := range cs.Summaries {
			if cmp := sm.Comparison; cmp != nil && cmp.Gated && (cmp.Verdict == results.Undecided || cmp.Verdict == results.TooFewRuns) {
				fmt.Fprintf(out, "bisect: skip: %s %s %s vs %s undecided: %s\n", sm.Workload, sm.Metric, sm.State, cmp.Baseline, cmp.Note)
				return bisectSkip, fmt.Errorf("undecidable: %s %s %s vs %s: %s", sm.Workload, sm.Metric, sm.State, cmp.Baseline, cmp.Note)
			}
		}
	}
	fmt.Fprintln(out, "bisect: good: no gated regression against the baseline")
	return bisectGood, nil
}

// lostCapabilities are the states the good kernel (A) applied and this one (B) cannot: a
// regression of what the kernel can do.
func lostCapabilities(r *results.Result) []string {
	var out []string
	for _, cp := range r.Capabilities {
		if why, lost := cp.Unavailable["B"]; lost && slices.Contains(cp.Applies, "A") {
			out = append(out, fmt.Sprintf("lost capability: state %s applied on the good kernel, not on this one: %s", cp.State, why))
		}
	}
	return out
}

// lookAgainstBaseline makes an adaptive run in the guest of a bisection step decide its looks
// against the baseline: it stops as soon as this kernel is decided against the good one.
func (rf *runFlags) lookAgainstBaseline(s *scenarios.Scenario, baseline string) error {
	base, _, err := results.ReadFile(baseline)
	if err != nil {
		return fmt.Errorf("the bisection's baseline: %w", err)
	}
	pol := runner.ResolvePolicy(s, rf.opt).Effective()
	workloads := make([]string, len(s.Workloads))
	for i, w := range s.Workloads {
		workloads[i] = w.Name
	}
	rf.opt.Look = func(cs results.Case, gates map[string][]string, alpha float64) []string {
		return compare.Look(base, cs, workloads, gates, alpha, pol.CVLimit, pol.MinChange)
	}
	return nil
}
