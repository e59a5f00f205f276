package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/runner/kernels"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// runFlags are the flags of nsperf run.
type runFlags struct {
	opt               runner.Options
	ov                scenarios.Overrides
	format, junit, db string
	noHistory         bool
	noCount           bool                 // --no-count: no counting pass of the patch's functions
	table             results.TableOptions // --side-metrics
	minChange         float64
	runs              string
	labels            []string
	vf                vmFlags
	idleWait          time.Duration
	bisect            bool
	patch             patchFlags
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
			p, err := rf.plan(c.Flags(), c.ErrOrStderr(), args[0])
			if err != nil {
				return err
			}
			_, err = rf.execute(c.OutOrStdout(), c.ErrOrStderr(), p)
			return err
		},
	}
	rf.add(c.Flags())
	return c
}

// execute carries the plan out, writes what the run produced (the table on stdout) and
// returns the result and the error that decides the exit status (conclude).
func (rf *runFlags) execute(stdout, stderr io.Writer, p kernels.Plan) (*results.Result, error) {
	if err := requireRoot(); err != nil {
		return nil, err
	}
	ctx, stop := signalled()
	defer stop()
	r, err := rf.measure(ctx, stderr, p)
	return conclude(stderr, p, r, err, func(r *results.Result, err error) error { return rf.emit(stdout, stderr, p, r, err) })
}

// signalled is a context that SIGINT and SIGTERM end: the run stops and removes what it built.
func signalled() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

// conclude is what follows a plan carried out (run's or a guest's): the result emitted, the
// notes said, and the error that decides the exit status: the run's, else a failed
// expectation.
func conclude(stderr io.Writer, p kernels.Plan, r *results.Result, err error, emit func(*results.Result, error) error) (*results.Result, error) {
	if r != nil {
		err = errors.Join(err, emit(r, err))
	}
	if errors.Is(err, context.Canceled) && !p.InGuests() {
		return r, fmt.Errorf("interrupted; the topology is removed and the finished runs are kept: %w", err)
	}
	if r == nil {
		return nil, err
	}
	for _, n := range r.Notes() {
		fmt.Fprintln(stderr, "note: "+n)
	}
	if failures := r.Failures(); err == nil && len(failures) > 0 {
		return r, expectationError{failures}
	}
	return r, err
}

func (rf *runFlags) add(f *pflag.FlagSet) {
	f.StringVar(&rf.runs, "runs", "", "runs per state and workload, or auto: rounds until every gated comparison is decided (default: the scenario's)")
	f.IntVar(&rf.ov.MaxRuns, "max-runs", 0, "with --runs auto: at most this many rounds (default: the scenario's max_runs, else 20)")
	f.StringVar(&rf.ov.OVSDB, "ovsdb", "", "use the existing OVS at unix:PATH instead of a private instance")
	f.DurationVar(&rf.ov.Duration, "duration", 0, "measured time of each run, e.g. 15s (default: the scenario's)")
	f.StringSliceVar(&rf.ov.Record, "record", nil, "also record side metrics of each TCP workload's connection from a capture of its packets: "+strings.Join(scenarios.SideRecords(), ", ")+" (a capture costs every packet of the client's namespace: off unless asked, or the scenario's record:)")
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
	f.BoolVar(&rf.noCount, "no-count", false, "with --patch: skip the short pass that counts, in each kernel before measuring, the calls of the functions the patch changes")
	f.StringVar(&rf.db, "db", "", dbHelp)
	f.BoolVar(&rf.ov.AA, "aa", false, "A/A control: measure the baseline state against a copy of itself under the same schedule")
	f.StringVar(&rf.vf.baseline, "baseline", "", "with --bisect: the stored result of the known-good kernel to compare with")
	f.BoolVar(&rf.bisect, "bisect", false, "a step of `git bisect run`: measure --kernel, compare it with --baseline and exit 0 (good: no gated regression), 1 (bad), 125 (skip: no boot, a state unavailable, an infrastructure failure) or 128 (abort: usage, a baseline of another scenario)")
	f.DurationVar(&rf.idleWait, "idle-wait", runner.DefaultIdleLimit, "before each round, wait at most this long for the pinned CPUs to be idle (below 50% other work); 0: do not wait; without the flag, $"+runner.IdleWaitEnv+" when set")
}

// plan turns the flags into the run's plan: what they ask (request), the scenario loaded for
// where it runs (load).
func (rf *runFlags) plan(flags *pflag.FlagSet, stderr io.Writer, arg string) (kernels.Plan, error) {
	p, err := rf.request(flags, stderr, arg)
	if err != nil {
		return kernels.Plan{}, err
	}
	return rf.load(flags, stderr, p)
}

// request is what the flags ask before the scenario is loaded: the run's options and changes
// to the scenario, the kernels under test, how to build a patch (with or without a series:
// another command's plan may bring it, load checks there is one). Each value is checked here.
func (rf *runFlags) request(flags *pflag.FlagSet, stderr io.Writer, arg string) (kernels.Plan, error) {
	vf := rf.vf
	for _, l := range rf.labels {
		if p := results.Printable(l); p != l {
			return kernels.Plan{}, usageError{fmt.Errorf("--label %q: control characters are not taken in a label", p)}
		}
	}
	if vf.baseline != "" && !rf.bisect {
		return kernels.Plan{}, usageError{errors.New("--baseline is the known-good result of a --bisect step: give --bisect too (to compare stored results: nsperf compare)")}
	}
	if err := rf.ov.SetRuns(rf.runs); err != nil {
		return kernels.Plan{}, usageError{err}
	}
	if !flags.Changed("omit") {
		rf.ov.Omit = -1 // the scenario's
	}
	switch {
	case rf.idleWait < 0:
		return kernels.Plan{}, usageError{fmt.Errorf("--idle-wait %s: want a duration, or 0 for no wait", rf.idleWait)}
	case !flags.Changed("idle-wait"):
		// The runner's default: $NSPERF_IDLE_WAIT, else DefaultIdleLimit.
	case rf.idleWait == 0:
		rf.opt.Idle.Limit = -1
	default:
		rf.opt.Idle.Limit = rf.idleWait
	}
	if flags.Changed("min-change") {
		if rf.minChange < 0 || rf.minChange >= 1 {
			return kernels.Plan{}, usageError{fmt.Errorf("--min-change %g: want a fraction from 0 to below 1, e.g. 0.02", rf.minChange)}
		}
		rf.opt.MinChange = &rf.minChange
	}
	rf.opt.Machine = host.Machine{}
	p := kernels.Plan{ScenarioArg: arg, Overrides: rf.ov, Run: rf.opt, Deadline: vf.deadline, Baseline: vf.baseline, NoCount: rf.noCount,
		Kernels: kernels.Request{Kernels: vf.kernels, Modules: vf.modules, Labels: rf.labels}}
	if len(rf.patch.patches) > 0 || flags.Changed("source") || flags.Changed("fuzz") || flags.Changed("config") || flags.Changed("no-count") {
		req := rf.patch.request(nil, stderr)
		p.Patch = &req
	}
	if flags.Changed("vm-accel") {
		p.VM.Accel = vf.accel // the guests' settings are made by load, where the plan has guests
	}
	return p, nil
}

// load completes a plan: the flags that describe a guest or a topology kept up checked
// against where it runs, the scenario loaded for there with the plan's changes
// (kernels.Plan.Load), every output path checked before anything is built, and the guests'
// settings.
func (rf *runFlags) load(flags *pflag.FlagSet, stderr io.Writer, p kernels.Plan) (kernels.Plan, error) {
	vf, guests := rf.vf, p.InGuests()
	for _, refused := range []string{"keep", "ovsdb"} {
		if guests && flags.Changed(refused) {
			return kernels.Plan{}, usageError{fmt.Errorf("--%s cannot be used with --kernel or --patch: the guest is private to the run", refused)}
		}
	}
	if !guests && (len(p.Kernels.Modules) > 0 || flags.Changed("vm-cpus") || flags.Changed("vm-memory") || flags.Changed("vm-accel") || flags.Changed("vm-clock") || flags.Changed("vm-pin") || flags.Changed("vm-deadline")) {
		return kernels.Plan{}, usageError{errors.New("--modules and --vm-* need --kernel: they describe the guest")}
	}
	if err := vm.CheckClockFlags(vf.clock, vf.accel); err != nil {
		return kernels.Plan{}, usageError{err}
	}
	if vf.deadline < 0 {
		return kernels.Plan{}, usageError{fmt.Errorf("--vm-deadline %s: want a positive duration (0: from the schedule)", vf.deadline)}
	}
	if err := p.Load(vf.cpus); err != nil {
		return kernels.Plan{}, err
	}
	if rf.junit != "" && rf.junit != "-" {
		if err := safefile.CheckWritable(rf.junit); err != nil {
			return kernels.Plan{}, usageError{fmt.Errorf("--junit: %w", err)}
		}
	}
	if guests {
		o, err := vf.options(stderr, nil, vf.cpus)
		if err != nil {
			return kernels.Plan{}, err
		}
		if p.VM.Accel != "" {
			o.Accel = p.VM.Accel
		}
		p.VM = o
	}
	return p, nil
}

// estimate is the measuring time of a scenario's run, rounded: "about 4m0s", or "at most
// 23m0s" where transfers of a fixed size end when done, within their limits.
func estimate(s *scenarios.Scenario, round time.Duration) string {
	if s.EstimateIsLimit() {
		return "at most " + s.EstimatedDuration().Round(round).String()
	}
	return "about " + s.EstimatedDuration().Round(round).String()
}

// measure says what the run will do and carries the plan out.
func (rf *runFlags) measure(ctx context.Context, stderr io.Writer, p kernels.Plan) (*results.Result, error) {
	s := p.Scenario
	p.Run.Progress = stderr
	fmt.Fprintf(stderr, "%s: %d runs (%d per state and workload), %s of measuring\n",
		s.Name, s.TotalRuns(), s.Runs, estimate(s, time.Second))
	if why := s.Undecidable(); why != "" {
		fmt.Fprintln(stderr, "warning: "+why)
	}
	return kernels.Execute(ctx, p)
}

// emit writes what a run produced: JUnit, the table (and with --out -, the result JSON on
// stdout), where the result is, and the history entry of a complete run. runErr is the run's
// own error, which decides what is said about the result file.
func (rf *runFlags) emit(stdout, stderr io.Writer, p kernels.Plan, r *results.Result, runErr error) error {
	s := p.Scenario
	var errs []error
	if rf.junit != "" {
		errs = append(errs, writeJUnit(rf.junit, r))
	}
	table := stdout
	if p.Run.Out == "-" { // the result JSON goes to stdout, the table to stderr
		table = stderr
		errs = append(errs, results.Encode(stdout, r))
	}
	errs = append(errs, render.WriteResult(table, r, rf.format, rf.table))
	stored := ""
	switch {
	case p.Run.Out == "-":
		fmt.Fprintf(stderr, "result: stdout (journal: %s)\n", runner.JournalPath(p.Run, s, r.RunID))
	case errors.Is(runErr, runner.ErrNotStored):
	case p.InGuests():
		stored = runner.OutPath(p.Run, s, r.RunID)
		fmt.Fprintf(stderr, "result: %s\n", stored)
	default:
		stored = runner.OutPath(p.Run, s, r.RunID)
		fmt.Fprintf(stderr, "result: %s (journal: %s)\n", stored, runner.JournalPath(p.Run, s, r.RunID))
	}
	// Only complete runs join the history, after their file is written.
	if !rf.noHistory && r.Complete {
		recordRun(context.Background(), stderr, rf.db, r, stored)
	}
	return errors.Join(errs...)
}

// parseRunArgs parses run's flags as another command passes them on after -- (reproduce's), with
// run's own parser: those that command sets itself (own) are refused, and so is anything
// that is not a flag.
func parseRunArgs(command string, args, own []string) (*runFlags, *pflag.FlagSet, error) {
	rf := &runFlags{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rf.add(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, usageError{fmt.Errorf("run's flags after --: %w", err)}
	}
	if fs.NArg() > 0 {
		return nil, nil, usageError{fmt.Errorf("after -- come run's flags only, not %q", fs.Args())}
	}
	for _, name := range own {
		if fs.Changed(name) {
			return nil, nil, usageError{fmt.Errorf("--%s after --: %s sets it itself; give %s's own --%s before --", name, command, command, name)}
		}
	}
	return rf, fs, nil
}
