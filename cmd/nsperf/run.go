package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// runFlags are the flags of nsperf run.
type runFlags struct {
	opt                runner.Options
	ov                 scenarios.Overrides
	format, junit, db  string
	noHistory, inGuest bool
	table              results.TableOptions // --side-metrics
	minChange          float64
	runs               string
	labels             []string
	vf                 vmFlags
	idleWait           time.Duration
	bisect             bool
	gateDir            string // in a guest of an A/B run: where it waits for its turn (GuestRequest)
	patch              patchFlags
	builds             []*results.KernelBuild // run --patch: how each kernel was built
}

func runCmd() *cobra.Command {
	rf := &runFlags{}
	c := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Build the topology, measure every state, tear down, and print the table",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if rf.bisect {
				return rf.runBisect(c, args[0])
			}
			if err := rf.usePatchBuild(c, args[0]); err != nil {
				return err
			}
			s, err := rf.scenario(c, args[0])
			if err != nil {
				return err
			}
			return rf.execute(c, args[0], s)
		},
	}
	rf.add(c.Flags())
	return c
}

// usePatchBuild builds the base and the patched kernel of --patch (or takes them from the
// cache) and makes the run their A/B, labelled base and patched. The scenario is checked
// first: a build may take minutes.
func (rf *runFlags) usePatchBuild(c *cobra.Command, arg string) error {
	flags := c.Flags()
	if len(rf.patch.patches) == 0 {
		if flags.Changed("source") || flags.Changed("fuzz") || flags.Changed("config") {
			return usageError{errors.New("--source, --config and --fuzz say how to build --patch: give --patch too")}
		}
		return nil
	}
	if len(rf.vf.kernels) > 0 || len(rf.vf.modules) > 0 {
		return usageError{errors.New("--patch builds the two kernels itself: give it without --kernel and --modules")}
	}
	if len(rf.labels) != 0 && len(rf.labels) != 2 {
		return usageError{errors.New("--label with --patch: give two, for the base and the patched kernel (default: base, patched)")}
	}
	s, err := loadGuestScenario(arg, rf.vf.cpus)
	if err != nil {
		return err
	}
	if err := requireRoot(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// A whole kernel built small needs only what this scenario needs.
	m, err := rf.patch.build(ctx, c.ErrOrStderr(), []*scenarios.Scenario{s})
	if err != nil {
		return err
	}
	for i, k := range m.Kernels {
		rf.vf.kernels = append(rf.vf.kernels, k.Image)
		rf.vf.modules = append(rf.vf.modules, k.Modules)
		rf.builds = append(rf.builds, m.Provenance(i))
	}
	if len(rf.labels) == 0 {
		rf.labels = []string{m.Kernels[0].Label, m.Kernels[1].Label}
	}
	return nil
}

// execute measures the loaded scenario, here or in guests, writes what the run produced and
// returns the error that decides the exit status: the run's, else a failed expectation.
func (rf *runFlags) execute(c *cobra.Command, arg string, s *scenarios.Scenario) error {
	if err := requireRoot(); err != nil {
		return err
	}
	if rf.opt.VirtualTime {
		defer waitlimit.OnVirtualClock()()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := rf.measure(ctx, c, arg, s)
	if r != nil {
		err = errors.Join(err, rf.emit(c, s, r, err))
	}
	if errors.Is(err, context.Canceled) && len(rf.vf.kernels) == 0 {
		return fmt.Errorf("interrupted; the topology is removed and the finished runs are kept: %w", err)
	}
	if r == nil {
		return err
	}
	for _, n := range r.Notes() {
		fmt.Fprintln(c.ErrOrStderr(), "note: "+n)
	}
	if failures := r.Failures(); err == nil && len(failures) > 0 {
		return expectationError{failures}
	}
	return err
}

func (rf *runFlags) add(f *pflag.FlagSet) {
	f.StringVar(&rf.runs, "runs", "", "runs per state and workload, or auto: rounds until every gated comparison is decided (default: the scenario's)")
	f.IntVar(&rf.ov.MaxRuns, "max-runs", 0, "with --runs auto: at most this many rounds (default: the scenario's max_runs, else 20)")
	f.StringVar(&rf.ov.OVSDB, "ovsdb", "", "use the existing OVS at unix:PATH instead of a private instance")
	f.DurationVar(&rf.ov.Duration, "duration", 0, "measured time of each run, e.g. 15s (default: the scenario's)")
	f.DurationVar(&rf.ov.Omit, "omit", 0, "time at the start of each run left out, e.g. 5s (default: the scenario's)")
	f.StringVar(&rf.opt.Out, "out", "", "result file (default: nsperf-results/SCENARIO-RUNID.json); - writes the result JSON to stdout and the table to stderr")
	f.BoolVar(&rf.opt.Concurrent, "concurrent", false, "measure even while another nsperf run measures on this machine (with a warning in the result) instead of waiting for it")
	f.StringArrayVar(&rf.labels, "label", nil, "label stored with the result, e.g. the kernel under test (with --kernel twice: once per kernel)")
	rf.vf.add(f, true)
	rf.patch.add(f, true)
	f.BoolVar(&rf.opt.Keep, "keep", false, "leave the topology up after the run (remove it with nsperf down RUNID)")
	formatFlag(f, &rf.format, render.Names(render.Result)...)
	sideMetricsFlag(f, &rf.table)
	f.StringVar(&rf.junit, "junit", "", "also write a JUnit XML report to FILE: one testcase per expectation and compared metric")
	f.Float64Var(&rf.opt.Policy.Alpha, "alpha", 0, "significance level of comparisons (default: the scenario's, else 0.05)")
	f.Float64Var(&rf.minChange, "min-change", 0, "smallest change that matters, as a fraction (default: the scenario's min_change, else 0.02): significant changes below it are negligible, a CI within it is equivalence")
	f.Float64Var(&rf.opt.Policy.CVLimit, "cv-limit", 0, "CV above which an insignificant comparison is too noisy, as a fraction (default: the scenario's, else 0.05)")
	f.BoolVar(&rf.noHistory, "no-history", false, "do not record the result in the history database")
	f.StringVar(&rf.db, "db", "", dbHelp)
	f.BoolVar(&rf.ov.AA, "aa", false, "A/A control: measure the baseline state against a copy of itself under the same schedule")
	f.StringVar(&rf.vf.baseline, "baseline", "", "with --bisect: the stored result of the known-good kernel to compare with")
	f.BoolVar(&rf.bisect, "bisect", false, "a step of `git bisect run`: measure --kernel, compare it with --baseline and exit 0 (good: no gated regression), 1 (bad), 125 (skip: no boot, a state unavailable, an infrastructure failure) or 128 (abort: usage, a baseline of another scenario)")
	f.DurationVar(&rf.idleWait, "idle-wait", runner.DefaultIdleLimit, "before each round, wait at most this long for the pinned CPUs to be idle (below 50% other work); 0: do not wait")
}

// scenario loads the scenario with the command line's changes, and checks every flag and
// output path before anything is built: a run of minutes must not end in a result it cannot
// write.
func (rf *runFlags) scenario(c *cobra.Command, arg string) (*scenarios.Scenario, error) {
	vf, flags := rf.vf, c.Flags()
	var s *scenarios.Scenario
	var err error
	if len(vf.kernels) > 0 {
		s, err = loadGuestScenario(arg, vf.cpus)
	} else {
		s, err = loadScenario(arg)
	}
	if err != nil {
		return nil, err
	}
	for _, l := range rf.labels {
		if p := results.Printable(l); p != l {
			return nil, usageError{fmt.Errorf("--label %q: control characters are not taken in a label", p)}
		}
	}
	switch {
	case rf.vf.baseline != "" && !rf.bisect:
		return nil, usageError{errors.New("--baseline is the known-good result of a --bisect step: give --bisect too (to compare stored results: nsperf compare)")}
	case len(vf.kernels) == 0 && len(rf.labels) > 1:
		return nil, usageError{errors.New("--label given more than once: only an A/B run (--kernel twice) takes one per kernel")}
	case len(vf.kernels) == 0 && (len(vf.modules) > 0 || flags.Changed("vm-cpus") || flags.Changed("vm-memory") || flags.Changed("vm-accel") || flags.Changed("vm-clock") || flags.Changed("vm-pin") || flags.Changed("vm-deadline")):
		return nil, usageError{errors.New("--modules and --vm-* need --kernel: they describe the guest")}
	case len(rf.labels) == 1 && len(vf.kernels) < 2:
		rf.opt.Label = rf.labels[0]
	}
	if err := vm.CheckClockFlags(vf.clock, vf.accel); err != nil {
		return nil, usageError{err}
	}
	if vf.deadline < 0 {
		return nil, usageError{fmt.Errorf("--vm-deadline %s: want a positive duration (0: from the schedule)", vf.deadline)}
	}
	switch n, perr := strconv.Atoi(rf.runs); {
	case rf.runs == "":
	case rf.runs == "auto":
		rf.ov.Auto = true
	case perr != nil:
		return nil, usageError{fmt.Errorf("--runs %q: want a number of runs or auto", rf.runs)}
	default:
		rf.ov.Runs = n
	}
	if !flags.Changed("omit") {
		rf.ov.Omit = -1 // the scenario's
	}
	if err := rf.ov.Apply(s); err != nil {
		return nil, usageError{err}
	}
	for _, out := range [][2]string{{"out", rf.opt.Out}, {"junit", rf.junit}} {
		if path := out[1]; path != "" && path != "-" {
			if err := safefile.CheckWritable(path); err != nil {
				return nil, usageError{fmt.Errorf("--%s: %w", out[0], err)}
			}
		}
	}
	switch {
	case rf.idleWait < 0:
		return nil, usageError{fmt.Errorf("--idle-wait %s: want a duration, or 0 for no wait", rf.idleWait)}
	case rf.idleWait == 0:
		rf.opt.Idle.Limit = -1
	default:
		rf.opt.Idle.Limit = rf.idleWait
	}
	if flags.Changed("min-change") {
		if rf.minChange < 0 || rf.minChange >= 1 {
			return nil, usageError{fmt.Errorf("--min-change %g: want a fraction from 0 to below 1, e.g. 0.02", rf.minChange)}
		}
		rf.opt.MinChange = &rf.minChange
	}
	return s, nil
}

// measure runs the scenario here, or in guests on the kernels under test.
func (rf *runFlags) measure(ctx context.Context, c *cobra.Command, arg string, s *scenarios.Scenario) (*results.Result, error) {
	rf.opt.Progress = c.ErrOrStderr()
	if !rf.inGuest {
		fmt.Fprintf(c.ErrOrStderr(), "%s: %d runs (%d per state and workload), about %s of measuring\n",
			s.Name, s.TotalRuns(), s.Runs, s.EstimatedDuration().Round(time.Second))
		if why := s.Undecidable(); why != "" {
			fmt.Fprintln(c.ErrOrStderr(), "warning: "+why)
		}
	}
	if rf.gateDir != "" {
		rf.opt.BeforeRound = vm.GuestGate(ctx, rf.gateDir)
	}
	rf.opt.Machine = host.Machine{}
	if len(rf.vf.kernels) > 0 {
		return runInVM(ctx, c, arg, s, rf)
	}
	return runner.Run(ctx, s, rf.opt)
}

// emit writes what a run produced: JUnit, the table (and with --out -, the result JSON on
// stdout), where the result is, and the history entry of a complete run. runErr is the run's
// own error, which decides what is said about the result file.
func (rf *runFlags) emit(c *cobra.Command, s *scenarios.Scenario, r *results.Result, runErr error) error {
	var errs []error
	if rf.junit != "" {
		errs = append(errs, writeJUnit(rf.junit, r))
	}
	table := c.OutOrStdout()
	if rf.opt.Out == "-" { // the result JSON goes to stdout, the table to stderr
		table = c.ErrOrStderr()
		errs = append(errs, results.Encode(c.OutOrStdout(), r))
	}
	errs = append(errs, render.WriteResult(table, r, rf.format, rf.table))
	stored := ""
	switch {
	case rf.inGuest: // the host says where it stores the result
	case rf.opt.Out == "-":
		fmt.Fprintf(c.ErrOrStderr(), "result: stdout (journal: %s)\n", runner.JournalPath(rf.opt, s, r.RunID))
	case errors.Is(runErr, runner.ErrNotStored):
	case len(rf.vf.kernels) > 0:
		stored = runner.OutPath(rf.opt, s, r.RunID)
		fmt.Fprintf(c.ErrOrStderr(), "result: %s\n", stored)
	default:
		stored = runner.OutPath(rf.opt, s, r.RunID)
		fmt.Fprintf(c.ErrOrStderr(), "result: %s (journal: %s)\n", stored, runner.JournalPath(rf.opt, s, r.RunID))
	}
	// Only complete runs join the history, after their file is written.
	if !rf.noHistory && r.Complete {
		recordRun(context.Background(), c, rf.db, r, stored)
	}
	return errors.Join(errs...)
}
