package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/reproduce/measuring"
	"github.com/nsperf/nsperf/runner/kernels"
)

// reproduceFlags are reproduce's flags: how to measure (set), or the draft to write.
type reproduceFlags struct {
	set                   measuring.Settings
	writeScenario, format string
}

// reproduceCmd reads a message's claims, measures them (the patch's A/B in guests, or the
// toggle's states here) and sets each claim beside its measurement.
func reproduceCmd() *cobra.Command {
	var f reproduceFlags
	c := &cobra.Command{
		Use:   "reproduce FILE [-- RUN-FLAGS...]",
		Short: "Reproduce the benchmark claims of a commit message or patch: measure them (a patch's base against patched in QEMU, or a toggle's states) and set each claim beside its measurement",
		Args: func(c *cobra.Command, args []string) error {
			if dash := c.ArgsLenAtDash(); dash > 1 || (dash < 0 && len(args) != 1) || len(args) == 0 {
				return usageError{errors.New("give one FILE, and run's own flags after --")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return f.reproduce(c, args[0], args[1:])
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.set.Scenario, "scenario", "", "the scenario to measure with (default: the shipped scenario that matches the patch's files, the claim's tool and its subject)")
	fs.StringVar(&f.set.Runs, "runs", "5", "runs per state (as run's --runs)")
	fs.DurationVar(&f.set.Duration, "duration", 2*time.Second, "measured time of each run: short, as a patch's A/B runs in virtual time")
	fs.DurationVar(&f.set.Omit, "omit", 0, "time at the start of each run left out")
	fs.StringVar(&f.set.Out, "out", "", "result file (default: nsperf-results/SCENARIO-reproduce-TIME.json)")
	fs.StringVar(&f.set.Source, "source", kbuild.DebianSource, "the base kernel a patch is built on (as build's --source)")
	fs.IntVar(&f.set.Fuzz, "fuzz", 0, "accept hunks whose context misses up to N lines at each end (as build's --fuzz)")
	fs.StringVar(&f.writeScenario, "write-scenario", "", "write a scenario drafted from the claims to this file (their tool and options, 2 s runs for virtual time, the toggles as states before and after) for you to edit, and stop; then: nsperf reproduce FILE --scenario OUT")
	fs.BoolVar(&f.set.Here, "here", false, "a message without a diff: measure its states on this machine even where its wall clock is not stable (default there: a guest on Debian's 6.12 kernel in virtual time)")
	formatFlag(fs, &f.format, render.Names(render.Reproduction)...)
	return c
}

// ownRunFlags are run's flags that reproduce sets itself: given after --, they are refused.
var ownRunFlags = []string{"out", "patch", "source", "fuzz", "runs", "duration", "omit", "bisect", "baseline"}

// reproduce measures the claims of file, read once; runArgs are run's own flags (--db,
// --junit, --vm-accel ...), parsed by run's parser into run's plan, which reproduce completes
// (measuring.Plan).
func (f *reproduceFlags) reproduce(c *cobra.Command, file string, runArgs []string) error {
	data, err := readBounded(file)
	if err != nil {
		return err
	}
	msg, err := reproduce.Read(file, data, c.ErrOrStderr())
	if err != nil {
		return err
	}
	if f.writeScenario != "" {
		return msg.WriteDraft(f.writeScenario, c.ErrOrStderr())
	}
	rf, fs, err := parseRunArgs("reproduce", runArgs, ownRunFlags)
	if err != nil {
		return err
	}
	base, err := rf.request(fs, c.ErrOrStderr(), "")
	if err != nil {
		return err
	}
	set := f.set
	set.Progress = c.ErrOrStderr()
	set.DurationGiven = c.Flags().Changed("duration")
	p, err := measuring.Plan(c.Context(), msg, base, set, func(p kernels.Plan) (kernels.Plan, error) { return rf.load(fs, c.ErrOrStderr(), p) })
	if err != nil {
		return err
	}
	// The run's table is progress here: the claims' table is the output.
	r, runErr := rf.execute(c.ErrOrStderr(), c.ErrOrStderr(), p)
	if r == nil || r.Reproduction == nil || errors.Is(runErr, context.Canceled) {
		return msg.Explain(runErr, p.ScenarioArg)
	}
	rr := reproduce.Report{Claims: msg.Claims, Result: r}
	if err := render.WriteReproduction(c.OutOrStdout(), rr, f.format); err != nil {
		return err
	}
	return reproductionExit(rr)
}

// reproductionExit: 0 every claim reproduced; 1 one contradicted; 5 one undecided; 4 none
// measured.
func reproductionExit(rr reproduce.Report) error {
	switch verdict, why := rr.Verdict(); verdict {
	case reproduce.NotMeasured:
		return capability.Missing(why)
	case reproduce.Contradicted:
		return expectationError{[]string{why}}
	case reproduce.Undecided:
		return codeError{exitUndecided, errors.New(why)}
	}
	return nil
}

// readBounded reads an input file (a message, a patch, a mail): regular and at most
// patches.MaxInputSize bytes, so that /dev/zero, a FIFO or a 10 GB file is refused at once.
func readBounded(file string) ([]byte, error) {
	data, err := safefile.ReadRegular(file, patches.MaxInputSize)
	if err != nil {
		return nil, usageError{fmt.Errorf("%w (give a regular file of at most %s)", err, safefile.Size(patches.MaxInputSize))}
	}
	return data, nil
}
