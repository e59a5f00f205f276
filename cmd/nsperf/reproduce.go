package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// reproduceFlags are reproduce's flags.
type reproduceFlags struct {
	scenario, runs, out, source string
	writeScenario, format       string
	duration, omit              time.Duration
	fuzz                        int
	here                        bool
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
	fs.StringVar(&f.scenario, "scenario", "", "the scenario to measure with (default: the shipped scenario that matches the patch's files, the claim's tool and its subject)")
	fs.StringVar(&f.runs, "runs", "5", "runs per state (as run's --runs)")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "measured time of each run: short, as a patch's A/B runs in virtual time")
	fs.DurationVar(&f.omit, "omit", 0, "time at the start of each run left out")
	fs.StringVar(&f.out, "out", "", "result file (default: nsperf-results/SCENARIO-reproduce-TIME.json)")
	fs.StringVar(&f.source, "source", kbuild.DebianSource, "the base kernel a patch is built on (as build's --source)")
	fs.IntVar(&f.fuzz, "fuzz", 0, "accept hunks whose context misses up to N lines at each end (as build's --fuzz)")
	fs.StringVar(&f.writeScenario, "write-scenario", "", "write a scenario drafted from the claims to this file (their tool and options, 2 s runs for virtual time, the toggles as states before and after) for you to edit, and stop; then: nsperf reproduce FILE --scenario OUT")
	fs.BoolVar(&f.here, "here", false, "a message without a diff: measure its states on this machine even where its wall clock is not stable (default there: a guest on Debian's 6.12 kernel in virtual time)")
	formatFlag(fs, &f.format, render.Names(render.Reproduction)...)
	return c
}

// ownRunFlags are run's flags that reproduce sets itself: given after --, they are refused.
var ownRunFlags = []string{"out", "patch", "source", "fuzz", "runs", "duration", "omit", "bisect", "baseline"}

// reproduce measures the claims of file, read once; runArgs are run's own flags (--db,
// --junit, --vm-accel ...), parsed by run's parser.
func (f *reproduceFlags) reproduce(c *cobra.Command, file string, runArgs []string) error {
	data, err := readBounded(file)
	if err != nil {
		return err
	}
	rep, series, err := readClaims(c, file, data)
	if err != nil {
		return err
	}
	if f.writeScenario != "" {
		return writeDraft(c, rep, file, f.writeScenario)
	}
	rf, runFlagSet, err := f.runFlags(runArgs)
	if err != nil {
		return err
	}
	name, why := f.scenario, "--scenario"
	touched := patches.Touched(series)
	out := f.out
	if name == "" {
		shipped, err := scenarios.Shipped()
		if err != nil {
			return err
		}
		if why = reproduce.DraftFor(rep, shipped); why != "" && len(touched) == 0 {
			// The drafted scenario is kept beside the result, which names it.
			if out == "" {
				out = filepath.Join("nsperf-results", "drafted-reproduce-"+time.Now().Format("20060102-150405")+".json")
			}
			if name, err = saveDraft(rep, file, strings.TrimSuffix(out, ".json")+".yaml"); err != nil {
				return err
			}
		} else if name, why, err = reproduce.Choose(rep, series, shipped); errors.Is(err, reproduce.ErrCodeNotRun) {
			return capability.Missing(fmt.Sprintf("%s cannot be reproduced with a shipped scenario: %v", file, err))
		} else if err != nil {
			return usageError{err}
		}
	}
	fmt.Fprintf(c.ErrOrStderr(), "reproduce: %d claim(s); scenario %s (%s)\n", len(rep.Claims), name, why)
	if out == "" {
		out = filepath.Join("nsperf-results", name+"-reproduce-"+time.Now().Format("20060102-150405")+".json")
	}
	set := map[string]string{"runs": f.runs, "duration": f.duration.String(), "omit": f.omit.String(), "out": out}
	if len(touched) > 0 {
		set["patch"], set["source"], set["fuzz"] = file, f.source, fmt.Sprint(f.fuzz)
	}
	for flag, value := range set {
		if err := runFlagSet.Set(flag, value); err != nil {
			return usageError{fmt.Errorf("--%s %s: %w", flag, value, err)}
		}
	}
	if len(touched) == 0 {
		if err := f.whereToMeasure(c, runFlagSet); err != nil {
			return err
		}
	}
	p, err := rf.plan(runFlagSet, c.ErrOrStderr(), name)
	if err != nil {
		return err
	}
	if p.Patch != nil {
		p.Patch.Inputs = map[string][]byte{file: data} // the message is read once
	}
	p.Run.Annotate = func(r *results.Result) { reproduce.Attach(r, rep, file, data, p.Scenario, why) }
	// The run's table is progress here: the claims' table is the output.
	r, runErr := rf.execute(c.ErrOrStderr(), c.ErrOrStderr(), p)
	var input inputerr.Error
	if errors.As(runErr, &input) && len(touched) > 0 {
		return capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %v\n%sthe shipped scenario %s models the claim's effect: nsperf run %s", file, input.Err, reproduce.BaseHint(series), name, name))
	}
	if r == nil || r.Reproduction == nil || errors.Is(runErr, context.Canceled) {
		return runErr
	}
	rr := reproduce.Report{Claims: rep, Result: r}
	if err := render.WriteReproduction(c.OutOrStdout(), rr, f.format); err != nil {
		return err
	}
	return reproductionExit(rr)
}

// readClaims reads a message's claims and its series, and says when nothing of it can be
// measured here: a diff that cannot be read, a series of hardware drivers only, no claim.
func readClaims(c *cobra.Command, file string, data []byte) (*claims.Report, []patches.Patch, error) {
	rep, err := claims.Read(file, data)
	if err != nil {
		return nil, nil, usageError{err}
	}
	// A message without a diff is a series of mails without one, not an error; a diff that
	// cannot be read does not hide the claims, but nothing of it can be built.
	series, err := patches.ReadMessages(file, data)
	if err != nil {
		return nil, nil, usageError{err}
	}
	for _, p := range series {
		if p.DiffError != "" {
			rep.Text(c.ErrOrStderr())
			return nil, nil, capability.Missing(fmt.Sprintf("%s cannot be reproduced here: its diff cannot be read: %s", file, p.DiffError))
		}
	}
	if drivers, all := reproduce.HardwareDrivers(patches.Touched(series)); all {
		rep.Text(c.ErrOrStderr())
		return nil, nil, capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %s", file, reproduce.HardwareReason(drivers)))
	}
	if len(rep.Claims) == 0 {
		rep.Text(c.ErrOrStderr())
		return nil, nil, capability.Missing(file + ": nothing in it can be reproduced here: it makes no claim with numbers")
	}
	var quantities []string
	for _, cl := range rep.Claims {
		if claims.Measurable(cl) {
			quantities = nil
			break
		}
		quantities = append(quantities, cl.Quantity)
	}
	if len(quantities) > 0 {
		rep.Text(c.ErrOrStderr())
		why := fmt.Sprintf("nsperf measures none of what it claims (%s)", strings.Join(slices.Compact(quantities), ", "))
		if lacks := reproduce.Lacks(rep); lacks != "" {
			why += "; " + lacks
		}
		return nil, nil, capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %s", file, why))
	}
	if len(patches.Touched(series)) == 0 && len(rep.Toggles) == 0 {
		// Without a diff, only the settings a message shows are a change nsperf can make:
		// measuring a scenario's own states would set its claims beside something else.
		rep.Text(c.ErrOrStderr())
		why := "it carries no diff and shows no setting it changes (ip link set, ethtool -K)"
		if reproduce.HasDiffstat(series) {
			why = "it lists changed files (a diffstat) but carries no diff: give the patches themselves (b4 am, or the series' mbox)"
		}
		if lacks := reproduce.Lacks(rep); lacks != "" {
			why += "; " + lacks
		}
		return nil, nil, capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %s", file, why))
	}
	return rep, series, nil
}

// whereToMeasure chooses where a message without a diff is measured, and says so: on this
// machine with --here, or where its wall clock is stable (a usable KVM and a quiet host);
// else in a guest on the default kernel in virtual time, where host load cannot move a
// figure. A --kernel given after -- decides itself.
func (f *reproduceFlags) whereToMeasure(c *cobra.Command, fs *pflag.FlagSet) error {
	if fs.Changed("kernel") {
		return nil
	}
	if f.here {
		fmt.Fprintln(c.ErrOrStderr(), "reproduce: measuring on this machine (--here)")
		return nil
	}
	stable, why := vm.StableWallClock()
	if stable {
		fmt.Fprintln(c.ErrOrStderr(), "reproduce: measuring on this machine: KVM works and the host is quiet")
		return nil
	}
	image, modules, release, err := kbuild.DefaultKernel(c.Context(), c.ErrOrStderr())
	if err != nil {
		return err
	}
	set := map[string]string{"kernel": image, "modules": modules}
	if !fs.Changed("vm-accel") {
		set["vm-accel"] = vm.AccelTCG // virtual time is TCG's
	}
	for flag, value := range set {
		if err := fs.Set(flag, value); err != nil {
			return usageError{fmt.Errorf("--%s %s: %w", flag, value, err)}
		}
	}
	fmt.Fprintf(c.ErrOrStderr(), "reproduce: measuring in a guest on Debian's kernel %s, in virtual time: %s (--here measures on this machine)\n", release, why)
	return nil
}

// runFlags parses run's flags given after -- with run's own parser; those reproduce sets
// itself are refused, and so is anything that is not a flag.
func (f *reproduceFlags) runFlags(args []string) (*runFlags, *pflag.FlagSet, error) {
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
	for _, own := range ownRunFlags {
		if fs.Changed(own) {
			return nil, nil, usageError{fmt.Errorf("--%s after --: reproduce sets it itself; give reproduce's own --%s before --", own, own)}
		}
	}
	return rf, fs, nil
}

// reproductionExit: 0 every claim reproduced; 1 one contradicted; 5 one undecided.
func reproductionExit(rr reproduce.Report) error {
	contradicted, undecided := rr.Outcomes()
	measured, notExercised := 0, ""
	for _, ch := range rr.Result.Reproduction.Claims {
		switch ch.Outcome {
		case results.NotExercised:
			notExercised = ch.Reason
		case results.NotReproducible:
		default:
			measured++
		}
	}
	switch {
	case measured == 0 && notExercised != "":
		return capability.Missing(notExercised)
	case measured == 0:
		return capability.Missing("none of the claims can be set beside a measurement here (see each claim's reason)")
	case len(contradicted) > 0:
		return expectationError{[]string{"claim(s) " + strings.Join(contradicted, ", ") + " contradicted"}}
	case len(undecided) > 0:
		return codeError{exitUndecided, fmt.Errorf("claim(s) %s undecided", strings.Join(undecided, ", "))}
	}
	return nil
}

// saveDraft writes the scenario drafted from rep's claims to path (a new file, its
// directory made) for the run to measure, and returns path.
func saveDraft(rep *claims.Report, file, path string) (string, error) {
	draft, err := reproduce.Draft(rep, file, path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("the drafted scenario: %w (nsperf does not overwrite a file)", err)
	}
	_, err = f.Write(draft)
	return path, errors.Join(err, f.Close())
}

// writeDraft writes the scenario drafted from rep's claims to out, named after out's file,
// and checks it loads; an existing file is not overwritten.
func writeDraft(c *cobra.Command, rep *claims.Report, file, out string) error {
	draft, err := reproduce.Draft(rep, file, out)
	if err != nil {
		return err
	}
	// O_EXCL: nsperf never overwrites a file (as `set -o noclobber`).
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return usageError{fmt.Errorf("--write-scenario: %w (nsperf does not overwrite a file)", err)}
	}
	_, err = f.Write(draft)
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "reproduce: wrote %s, a scenario drafted from %d claim(s) of %s; edit it, then: nsperf reproduce %s --scenario %s\n", out, len(rep.Claims), file, file, out)
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
