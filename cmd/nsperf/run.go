package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
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
	if errors.Is(err, context.Canceled) && !inGuests(p) {
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

// inGuests reports whether the plan measures in guests (kernels under test, or a patch's).
func inGuests(p kernels.Plan) bool { return len(p.Kernels.Kernels) > 0 || p.Patch != nil }

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
	f.BoolVar(&rf.noCount, "no-count", false, "with --patch: skip the short pass that counts, in each kernel before measuring, the calls of the functions the patch changes")
	f.StringVar(&rf.db, "db", "", dbHelp)
	f.BoolVar(&rf.ov.AA, "aa", false, "A/A control: measure the baseline state against a copy of itself under the same schedule")
	f.StringVar(&rf.vf.baseline, "baseline", "", "with --bisect: the stored result of the known-good kernel to compare with")
	f.BoolVar(&rf.bisect, "bisect", false, "a step of `git bisect run`: measure --kernel, compare it with --baseline and exit 0 (good: no gated regression), 1 (bad), 125 (skip: no boot, a state unavailable, an infrastructure failure) or 128 (abort: usage, a baseline of another scenario)")
	f.DurationVar(&rf.idleWait, "idle-wait", runner.DefaultIdleLimit, "before each round, wait at most this long for the pinned CPUs to be idle (below 50% other work); 0: do not wait; without the flag, $"+runner.IdleWaitEnv+" when set")
}

// plan turns the flags into the run's plan: the scenario loaded once (for a guest when the
// run is on kernels under test or a patch's) with the command line's changes, every flag and
// output path checked before anything is built: a run of minutes must not end in a result it
// cannot write.
func (rf *runFlags) plan(flags *pflag.FlagSet, stderr io.Writer, arg string) (kernels.Plan, error) {
	vf := rf.vf
	guests := len(vf.kernels) > 0 || len(rf.patch.patches) > 0
	if len(rf.patch.patches) == 0 && (flags.Changed("source") || flags.Changed("fuzz") || flags.Changed("config") || flags.Changed("no-count")) {
		return kernels.Plan{}, usageError{errors.New("--source, --config, --fuzz and --no-count say how to build and run --patch: give --patch too")}
	}
	if len(vf.kernels) > 2 {
		return kernels.Plan{}, usageError{fmt.Errorf("--kernel given %d times: an A/B run compares two kernels", len(vf.kernels))}
	}
	for _, refused := range []string{"keep", "ovsdb"} {
		if guests && flags.Changed(refused) {
			return kernels.Plan{}, usageError{fmt.Errorf("--%s cannot be used with --kernel or --patch: the guest is private to the run", refused)}
		}
	}
	s, err := rf.scenario(flags, arg, guests)
	if err != nil {
		return kernels.Plan{}, err
	}
	rf.opt.Machine = host.Machine{}
	p := kernels.Plan{Scenario: s, ScenarioArg: arg, Overrides: rf.ov, Run: rf.opt, Deadline: vf.deadline, Baseline: vf.baseline, NoCount: rf.noCount,
		Kernels: kernels.Request{Kernels: vf.kernels, Modules: vf.modules, Labels: rf.labels}}
	if len(rf.patch.patches) > 0 {
		req := rf.patch.request(nil, stderr)
		p.Patch = &req
	}
	if guests {
		if p.VM, err = vf.options(stderr, nil, vf.cpus); err != nil {
			return kernels.Plan{}, err
		}
	}
	return p, nil
}

// scenario loads the scenario with the command line's changes (for a guest's vCPUs where
// guests), and checks the flags that change it.
func (rf *runFlags) scenario(flags *pflag.FlagSet, arg string, guests bool) (*scenarios.Scenario, error) {
	vf := rf.vf
	var s *scenarios.Scenario
	var err error
	if guests {
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
	case len(vf.kernels) == 0 && len(rf.patch.patches) == 0 && len(rf.labels) > 1:
		return nil, usageError{errors.New("--label given more than once: only an A/B run (--kernel twice) takes one per kernel")}
	case !guests && (len(vf.modules) > 0 || flags.Changed("vm-cpus") || flags.Changed("vm-memory") || flags.Changed("vm-accel") || flags.Changed("vm-clock") || flags.Changed("vm-pin") || flags.Changed("vm-deadline")):
		return nil, usageError{errors.New("--modules and --vm-* need --kernel: they describe the guest")}
	case len(rf.labels) == 1 && len(vf.kernels) < 2 && len(rf.patch.patches) == 0:
		rf.opt.Label = rf.labels[0]
	}
	if err := vm.CheckClockFlags(vf.clock, vf.accel); err != nil {
		return nil, usageError{err}
	}
	if vf.deadline < 0 {
		return nil, usageError{fmt.Errorf("--vm-deadline %s: want a positive duration (0: from the schedule)", vf.deadline)}
	}
	if err := rf.ov.SetRuns(rf.runs); err != nil {
		return nil, usageError{err}
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
	case !flags.Changed("idle-wait"):
		// The runner's default: $NSPERF_IDLE_WAIT, else DefaultIdleLimit.
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

// measure says what the run will do and carries the plan out.
func (rf *runFlags) measure(ctx context.Context, stderr io.Writer, p kernels.Plan) (*results.Result, error) {
	s := p.Scenario
	p.Run.Progress = stderr
	fmt.Fprintf(stderr, "%s: %d runs (%d per state and workload), about %s of measuring\n",
		s.Name, s.TotalRuns(), s.Runs, s.EstimatedDuration().Round(time.Second))
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
	if rf.opt.Out == "-" { // the result JSON goes to stdout, the table to stderr
		table = stderr
		errs = append(errs, results.Encode(stdout, r))
	}
	errs = append(errs, render.WriteResult(table, r, rf.format, rf.table))
	stored := ""
	switch {
	case rf.opt.Out == "-":
		fmt.Fprintf(stderr, "result: stdout (journal: %s)\n", runner.JournalPath(rf.opt, s, r.RunID))
	case errors.Is(runErr, runner.ErrNotStored):
	case inGuests(p):
		stored = runner.OutPath(rf.opt, s, r.RunID)
		fmt.Fprintf(stderr, "result: %s\n", stored)
	default:
		stored = runner.OutPath(rf.opt, s, r.RunID)
		fmt.Fprintf(stderr, "result: %s (journal: %s)\n", stored, runner.JournalPath(rf.opt, s, r.RunID))
	}
	// Only complete runs join the history, after their file is written.
	if !rf.noHistory && r.Complete {
		recordRun(context.Background(), stderr, rf.db, r, stored)
	}
	return errors.Join(errs...)
}
