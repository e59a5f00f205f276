// Package kernels measures a scenario on kernels under test, each in a QEMU guest booted on
// it over the host's root (package vm) running the same nsperf: one kernel is a run like any
// other, measured in the guest; two are an A/B run whose rounds alternate between the kernels,
// its result made by compare.Kernels. The result is written on the host, with the console
// logs of guests that failed next to it.
package kernels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/vm"
)

// ErrDeadline: the guests did not finish measuring within their wall-time deadline.
var ErrDeadline = errors.New("the guests did not finish in time")

// Deadline is how long kernels guests measuring s may take in wall time before they are
// stopped: the schedule's measuring time (in the guest's seconds) times what a guest second
// may cost here, plus five minutes for the topology, counters and teardown. A virtual second
// of measuring took 1.6 wall seconds on an idle 2-CPU host and 4.5 with both CPUs busy
// (docs/kernels-and-patches.md, Virtual time); 20 leaves room for a slower or busier host. A wall-clock guest second is a
// second, with TCG's setup around it: 4.
func Deadline(s *scenarios.Scenario, kernels int, clock string) time.Duration {
	per := 4
	if clock == vm.ClockVirtual {
		per = 20
	}
	return time.Duration(max(kernels, 1)*per)*(s.EstimatedDuration()+countPassLength(s)) + 5*time.Minute
}

// ExitError is a guest's nsperf exit status, which the host's nsperf passes on as its own.
type ExitError struct {
	Code int
	Err  error
}

func (e ExitError) Error() string { return e.Err.Error() }
func (e ExitError) Unwrap() error { return e.Err }

// runGuests measures the plan's scenario in a guest on each kernel of p.VM.Kernels (one or
// two, prepared) and returns the result, stored at runner.OutPath unless p.Run.Out is "-";
// builds are how nsperf built each kernel (nil for kernels given as they are).
func (p Plan) runGuests(ctx context.Context, builds []*results.KernelBuild) (*results.Result, error) {
	start := time.Now()
	s, opt := p.Scenario, p.Run
	if opt.Machine == nil {
		return nil, errors.New("kernels: no machine to measure on (runner.Options.Machine)")
	}
	progress := progressOf(opt)
	// Console logs and journals of failed guests are named after the run's start.
	failed := runner.OutPath(opt, s, "vm-"+start.Format("20060102-150405"))
	o := p.guestOptions()
	release, busy, err := lockMeasuring(ctx, s, opt, o)
	if err != nil {
		return nil, err
	}
	defer release()
	session, err := vm.Boot(ctx, o)
	var bootErr *vm.BootError
	if errors.As(err, &bootErr) {
		for name, console := range bootErr.Consoles {
			keepConsole(progress, failed, name, console)
		}
	}
	if err != nil {
		return nil, err
	}
	defer session.Close()
	booted := time.Since(start)
	sayTurns(progress, session, o)
	journals := keepJournals(session, len(o.Kernels), failed)
	stored := false
	defer func() { journals.finish(stored, progress) }()
	turns, outcomes, err := p.measureGuests(ctx, session, failed)
	if err != nil {
		return nil, err
	}
	// A failed guest's console log is named after this run, as its journals are: a result
	// the guest may have left is not stored (the A/B failed), and its run id is the guest's.
	rs, code, err := guestResults(outcomes, p.ScenarioArg, scenarios.TextSHA256(s.Text), booted, func(guest int, console []byte) {
		keepConsole(progress, failed, string(rune('A'+guest)), console)
	})
	if err != nil {
		return nil, err
	}
	for i, b := range builds {
		if i < len(rs) && rs[i] != nil {
			rs[i].Build = b // how nsperf built the kernel, where it did
		}
	}
	r, err := store(s, opt, rs, turns, busy, code)
	if r != nil && !errors.Is(err, runner.ErrNotStored) {
		p.keepAA(r, progress)
	}
	stored = r != nil && !errors.Is(err, runner.ErrNotStored) && opt.Out != "-"
	return r, err
}

// lockMeasuring takes the machine's measuring lock for guests on the wall clock: one
// measuring run at a time on this machine, guests included, since a guest's vCPUs share the
// host's CPUs with whatever else measures. Guests in virtual time do not wait: host load
// cannot move their figures, and their own load on the host is other work to a wall-clock run
// beside them, which its idle gate and noise lines see.
func lockMeasuring(ctx context.Context, s *scenarios.Scenario, opt runner.Options, o vm.Options) (release func(), busy string, err error) {
	if vm.PlannedClock(o) == vm.ClockVirtual {
		return func() {}, "", nil
	}
	return opt.Machine.LockMeasuring(ctx, s.Name, opt.Concurrent, progressOf(opt))
}

// sayTurns says how the two guests of an A/B take their rounds where it is not what was asked
// or not obvious.
func sayTurns(progress io.Writer, session *vm.Session, o vm.Options) {
	switch {
	case len(o.Kernels) < 2:
	case session.Together():
		fmt.Fprintf(progress, "vm: A and B run each round at once, each on a host CPU of its own (virtual time: neither counts the other's load; --vm-turns alternate pauses one while the other runs)\n")
	case o.Turns == vm.TurnsTogether:
		fmt.Fprintf(progress, "vm: --vm-turns together: not here (%s clock, or fewer host CPUs than guests): A and B take turns, the other paused\n", session.Clock())
	}
}

// measureGuests lets the booted guests measure within their wall-time deadline, the two of an
// A/B taking their turns, and returns the turns and each guest's outcome; failed is the
// result path the console logs of guests stopped at the deadline are kept beside.
func (p Plan) measureGuests(ctx context.Context, session *vm.Session, failed string) ([]results.Turn, []vm.Outcome, error) {
	s, progress, guests := p.Scenario, progressOf(p.Run), len(p.VM.Kernels)
	deadline := p.Deadline
	if deadline == 0 {
		deadline = Deadline(s, guests, session.Clock())
	}
	measuring, stop := context.WithTimeoutCause(ctx, deadline, ErrDeadline)
	defer stop()
	var turns []results.Turn
	var err error
	measureStart := time.Now()
	if guests > 1 {
		if turns, err = session.Alternate(measuring); err != nil && ctx.Err() == nil && context.Cause(measuring) != ErrDeadline {
			return nil, nil, err
		}
	}
	outcomes := session.Wait(measuring)
	if session.Clock() == vm.ClockVirtual && ctx.Err() == nil {
		fmt.Fprintf(progress, "vm: the schedule's %s of measuring in virtual time took %s of wall time after the boot\n",
			(time.Duration(guests) * s.EstimatedDuration()).Round(time.Second), time.Since(measureStart).Round(time.Second))
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("interrupted; the guests were stopped and their finished runs kept: %w", ctx.Err())
	}
	if context.Cause(measuring) == ErrDeadline {
		session.Close() // stopped before the console logs are read for keeping
		for i, out := range outcomes {
			keepConsole(progress, failed, string(rune('A'+i)), out.Console)
		}
		return nil, nil, fmt.Errorf("%w: still measuring %s after the end of boot (%s of the schedule's measuring in %s); the guests were stopped and their finished runs kept (--vm-deadline sets the bound)",
			ErrDeadline, deadline.Round(time.Second), s.EstimatedDuration().Round(time.Second), session.Clock())
	}
	return turns, outcomes, nil
}

// guestOptions are the guests' settings with the command each runs: `nsperf guest` on its
// request (guestRequest), which is written into its exchange directory, with the files it
// reads there: the scenario's file, a bisection's baseline, the programs built for its tools.
func (p Plan) guestOptions() vm.Options {
	o := p.VM
	o.Files = maps.Clone(p.VM.Files)
	if o.Files == nil {
		o.Files = map[string]string{}
	}
	if scenarioIsFile(p.ScenarioArg) {
		o.Files["scenario.yaml"] = p.ScenarioArg
	}
	if p.Baseline != "" {
		o.Files["baseline.json"] = p.Baseline
	}
	o.Programs = map[string]string{}
	for name, b := range p.Run.Built {
		o.Programs[builtName(name)] = b.Path
	}
	o.Generated = func(i int, clock string) (map[string][]byte, error) {
		data, err := json.MarshalIndent(p.guestRequest(i, clock), "", "  ")
		return map[string][]byte{RequestFile: data}, err
	}
	o.Args = guestArgs
	return o
}

// scenarioIsFile reports whether the scenario as the user named it is a file (copied into
// the guest), not a shipped name.
func scenarioIsFile(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && st.Mode().IsRegular()
}

// guestResults reads each guest's result; keep is called with the console log of each guest
// that failed. code is the first non-zero exit status of a guest's nsperf.
func guestResults(outcomes []vm.Outcome, scenarioArg, scenarioSHA string, booted time.Duration, keep func(guest int, console []byte)) (rs []*results.Result, code int, err error) {
	var errs []error
	for i, out := range outcomes {
		r, err := guestResult(out, scenarioArg, scenarioSHA, booted)
		if out.ExitCode != 0 && code == 0 {
			code = out.ExitCode
		}
		if failed := out.Err != nil || out.ExitCode != 0 || r == nil; failed && len(out.Console) > 0 {
			keep(i, out.Console)
		}
		switch {
		case out.Err != nil:
			errs = append(errs, out.Err)
		case r == nil && out.Error != "":
			errs = append(errs, fmt.Errorf("vm %c: nsperf in the guest exited %d without a result: %s", 'A'+i, out.ExitCode, out.Error))
		case r == nil && err != nil:
			errs = append(errs, fmt.Errorf("vm %c: nsperf in the guest exited %d without a result: %w", 'A'+i, out.ExitCode, err))
		}
		rs = append(rs, r)
	}
	if len(errs) == 0 && !slices.Contains(rs, nil) {
		return rs, code, nil
	}
	err = errors.Join(errs...)
	if err == nil {
		err = errors.New("a guest left no result")
	}
	if code != 0 {
		return nil, code, ExitError{code, err}
	}
	return nil, code, err
}

// store makes the run's result of the guests' (an A/B result of two), writes it, and passes
// a guest's non-zero exit status on.
func store(s *scenarios.Scenario, opt runner.Options, rs []*results.Result, turns []results.Turn, busy string, code int) (*results.Result, error) {
	if busy != "" {
		for _, r := range rs {
			r.Settings.Concurrent = busy
			r.Warnings = append(r.Warnings, runner.ConcurrentWarning(busy, "host"))
		}
	}
	// The host names the result, never the guest: a run id of its own that no file at the
	// default path has (a bisect's baseline may be there).
	id := freshRunID(s)
	r := rs[0]
	if len(rs) == 2 {
		var err error
		if r, err = compare.Kernels(rs[0], rs[1], id, turns); err != nil {
			return nil, err
		}
	} else {
		r.RunID = id
	}
	if w := results.CoverageWarning(rs); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if opt.Annotate != nil {
		opt.Annotate(r)
	}
	if opt.Out != "-" {
		if err := results.WriteFile(runner.OutPath(opt, s, r.RunID), r); err != nil {
			return r, errors.Join(runner.ErrNotStored, err)
		}
	}
	if code != 0 {
		return r, ExitError{code, fmt.Errorf("nsperf in the guest exited %d", code)}
	}
	return r, nil
}

// freshRunID is a new run id whose default result path names no file yet.
func freshRunID(s *scenarios.Scenario) string {
	id := string(topo.NewRunID())
	for range 100 {
		if _, err := os.Lstat(runner.OutPath(runner.Options{}, s, id)); errors.Is(err, os.ErrNotExist) {
			break
		}
		id = string(topo.NewRunID())
	}
	return id
}

// guestResult reads a guest's result, checks that it is of this run (the scenario text the
// host loaded, the kernel it booted: the kernel under test is the code not trusted yet), and
// records where it was measured.
func guestResult(out vm.Outcome, scenarioArg, scenarioSHA string, booted time.Duration) (*results.Result, error) {
	if len(out.Result) == 0 {
		return nil, errors.New("the guest wrote no result.json")
	}
	r, _, err := results.Parse("the guest's result.json", out.Result)
	if err != nil {
		return nil, err
	}
	if r.Scenario.SHA256 != scenarioSHA {
		return nil, fmt.Errorf("the guest's result.json is not of this run: its scenario has sha256 %.12s, the run's %.12s", r.Scenario.SHA256, scenarioSHA)
	}
	if release := out.Kernel.Image.Release; r.Environment.KernelRelease != release {
		return nil, fmt.Errorf("the guest's result.json was not measured on the kernel booted: kernel %q, booted %q", r.Environment.KernelRelease, release)
	}
	// The run id names files on the host: a guest's must be a run id and nothing more.
	if _, err := plan.ParseRunID(r.RunID); err != nil {
		return nil, fmt.Errorf("the guest's result.json has run id %q, which is not a run id (nsp and four hex digits): refused", results.Printable(r.RunID))
	}
	r.Scenario.File = scenarioArg
	info := out.Info
	if r.FirstSampleSeconds > 0 {
		info.FirstSampleSeconds = booted.Seconds() + r.FirstSampleSeconds
	}
	r.Environment.VM = &info
	switch {
	case info.Clock == vm.ClockVirtual:
		r.Warnings = append(r.Warnings, results.VirtualTimeNote+"; compare only with runs of the same QEMU, icount options and guest CPU")
	case info.Accel == vm.AccelTCG:
		r.Warnings = append(r.Warnings, "measured in a QEMU guest with TCG on the wall clock, an emulated CPU shared with the host's load: compare these figures only with runs under the same emulation (kernel A against kernel B), never with real hardware")
	}
	if info.Clock == vm.ClockVirtual && len(info.NICs) > 0 {
		r.Warnings = append(r.Warnings, results.EmulatedNICNote)
	}
	if info.Warning != "" {
		r.Warnings = append(r.Warnings, "vm: "+info.Warning)
	}
	return r, nil
}

// keepConsole writes a failed guest's console log next to its result (RESULT.A.console.log;
// with --out -, next to the default result path), never through a symlink, and says where.
func keepConsole(progress io.Writer, result, guest string, console []byte) {
	if result == "-" || result == "" {
		return
	}
	path := result + "." + guest + ".console.log"
	if err := safefile.Write(path, console, 0o644); err != nil {
		fmt.Fprintf(progress, "vm %s: the console log could not be kept: %v\n", guest, err)
		return
	}
	fmt.Fprintf(progress, "vm %s: console log: %s\n", guest, path)
}

// progressOf is where a run's progress lines go: opt.Progress, or nowhere.
func progressOf(opt runner.Options) io.Writer {
	if opt.Progress == nil {
		return io.Discard
	}
	return opt.Progress
}
