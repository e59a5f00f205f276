package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/compare"
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
	if err := requireRoot(); err != nil {
		return bisectAbort, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := rf.measure(ctx, c, arg, s)
	if r != nil {
		err = errors.Join(err, rf.emit(c, s, r, err))
	}
	if err != nil {
		return bisectCode(err), err
	}
	return bisectVerdict(c, base, r, rf.vf.baseline)
}

// bisectVerdict compares the run with the baseline and prints the comparison.
func bisectVerdict(c *cobra.Command, base, r *results.Result, baselinePath string) (int, error) {
	rep, err := compare.New([]compare.Side{{Source: baselinePath, Result: base}, {Source: "this kernel", Result: r}}, compare.Options{})
	var incomparable *compare.IncomparableError
	switch {
	case errors.As(err, &incomparable):
		return bisectAbort, err
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
	if len(rep.Result.Capabilities) > 0 {
		return bisectSkip, fmt.Errorf("a state is unavailable on one side: %s", rep.Result.Capabilities[0].Line())
	}
	// The run's own comparisons (state against state within this kernel) do not judge the
	// commit: only its expectations, and this kernel against the good one.
	failures := append(r.ExpectationFailures(), rep.Result.Failures()...)
	if len(failures) > 0 {
		fmt.Fprintf(out, "bisect: bad: %s\n", failures[0])
		return bisectBad, fmt.Errorf("bad: %s", strings.Join(failures, "; "))
	}
	fmt.Fprintln(out, "bisect: good: no gated regression against the baseline")
	return bisectGood, nil
}

// lookAgainstBaseline makes an adaptive run in the guest of a bisection step decide its looks
// against the baseline: it stops as soon as this kernel is decided against the good one.
func (rf *runFlags) lookAgainstBaseline(s *scenarios.Scenario) error {
	base, _, err := results.ReadFile(rf.lookAgainst)
	if err != nil {
		return fmt.Errorf("--look-against: %w", err)
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
