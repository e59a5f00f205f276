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
	"github.com/nsperf/nsperf/runner/kernels"
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
	p, err := rf.plan(c.Flags(), c.ErrOrStderr(), arg)
	if err != nil {
		return bisectAbort, err
	}
	s := p.Scenario
	if base.Scenario.Name != s.Name {
		return bisectAbort, fmt.Errorf("--baseline %s is a result of scenario %s, not %s", rf.vf.baseline, base.Scenario.Name, s.Name)
	}
	if err := compare.BaselineCanDecide(base, s, runner.ResolvePolicy(s, p.Run).Effective().Alpha); err != nil {
		return bisectAbort, fmt.Errorf("--baseline %s: %w", rf.vf.baseline, err)
	}
	if err := requireRoot(); err != nil {
		return bisectAbort, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := rf.measure(ctx, c.ErrOrStderr(), p)
	if r != nil {
		err = errors.Join(err, rf.emit(c.OutOrStdout(), c.ErrOrStderr(), p, r, err))
	}
	if r == nil || ctx.Err() != nil {
		var guest kernels.ExitError
		if r == nil && ctx.Err() == nil && errors.As(err, &guest) && guest.Code == exitSkipped {
			// The kernel under test cannot run what the good kernel ran (its nsperf exited 4:
			// a state, a device, a module it lacks): what the kernel can do regressed.
			fmt.Fprintf(c.OutOrStdout(), "bisect: bad: lost capability: %v\n", guest.Err)
			return bisectBad, fmt.Errorf("bad: lost capability: the good kernel ran %s, this one cannot: %w", s.Name, err)
		}
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

// bisectVerdict judges the step against the baseline (compare.JudgeStep) and prints the
// comparison and the verdict.
func bisectVerdict(c *cobra.Command, base, r *results.Result, baselinePath string) (int, error) {
	step, err := compare.JudgeStep(base, r, baselinePath)
	out := c.OutOrStdout()
	if rep := step.Report; rep != nil {
		fmt.Fprintf(out, "\nbisect: this kernel (B) against the known-good %s (A):\n", baselinePath)
		for _, line := range rep.Environment {
			fmt.Fprintln(out, "  "+line)
		}
		if terr := results.Table(out, rep.Result); terr != nil {
			return bisectSkip, terr
		}
	}
	switch step.Verdict {
	case compare.StepAbort:
		return bisectAbort, err
	case compare.StepBad:
		fmt.Fprintf(out, "bisect: bad: %s\n", step.Reason)
		return bisectBad, fmt.Errorf("bad: %s", strings.Join(step.Reasons, "; "))
	case compare.StepSkip:
		if err != nil {
			return bisectSkip, err
		}
		fmt.Fprintf(out, "bisect: skip: %s\n", step.Reason)
		return bisectSkip, fmt.Errorf("undecidable: %s", step.Reason)
	}
	fmt.Fprintln(out, "bisect: good: no gated regression against the baseline")
	return bisectGood, nil
}
