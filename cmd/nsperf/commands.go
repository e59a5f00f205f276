package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/htmlreport"
	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/version"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/vm"
)

// loadScenario loads a scenario file or shipped name, validated against this machine; a name
// that is neither is a usage error (exit 2), like an invalid scenario.
func loadScenario(arg string) (*scenarios.Scenario, error) {
	s, err := scenarios.Load(arg, scenarios.Options{CPUs: runtime.NumCPU()})
	var problems scenarios.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, usageError{err}
	}
	return s, err
}

// loadGuestScenario loads a scenario to run in a guest: its pinned CPUs are checked against
// the guest's vCPUs (--vm-cpus; by default the guest gets as many as the scenario pins).
func loadGuestScenario(arg string, vmCPUs int) (*scenarios.Scenario, error) {
	if vmCPUs < 0 {
		return nil, usageError{fmt.Errorf("--vm-cpus %d: want a positive number", vmCPUs)}
	}
	s, err := scenarios.Load(arg, scenarios.Options{CPUs: vmCPUs})
	var problems scenarios.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, usageError{err}
	}
	return s, err
}

func listCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the shipped scenarios",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			shipped, err := scenarios.Shipped()
			if err != nil {
				return err
			}
			for _, s := range shipped {
				cases := ""
				if n := len(s.Expand()); n > 1 {
					cases = fmt.Sprintf("%d cases x ", n)
				}
				fmt.Fprintf(c.OutOrStdout(), "%-16s %s (%s%d runs x %d states, about %s)\n", s.Name, s.Description, cases, s.Runs, len(s.States), s.EstimatedDuration().Round(time.Minute))
			}
			return nil
		},
	}
}

func validateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE|NAME...",
		Short: "Check scenarios and report every problem as file:line:col: path: message",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var all scenarios.Problems
			var other []error
			for _, a := range args {
				s, err := loadScenario(a)
				var ps scenarios.Problems
				switch {
				case errors.As(err, &ps):
					all = append(all, ps...)
				case err != nil:
					other = append(other, errors.Unwrap(err))
				default:
					fmt.Fprintf(c.OutOrStdout(), "%s: ok (%s)\n", s.File, s.Name)
				}
			}
			if len(other) > 0 {
				if len(all) > 0 {
					fmt.Fprintln(c.ErrOrStderr(), all.Error())
				}
				return usageError{errors.Join(other...)}
			}
			if len(all) > 0 {
				return all
			}
			return nil
		},
	}
}

func planCmd() *cobra.Command {
	var runID string
	c := &cobra.Command{
		Use:   "plan FILE|NAME",
		Short: "Print the run as a shell script of the equivalent ip, ovs-vsctl, ethtool, tc and tool commands",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			id := topo.NewRunID()
			if runID != "" {
				if id, err = topo.ParseRunID(runID); err != nil {
					return usageError{err}
				}
			}
			fmt.Fprint(c.OutOrStdout(), runner.Script(s, id))
			return nil
		},
	}
	c.Flags().StringVar(&runID, "run-id", "", "run id to name the namespaces with (default: a random one)")
	return c
}

func runCmd() *cobra.Command {
	var opt runner.Options
	var ov scenarios.Overrides
	var format, junit, db string
	var noHistory bool
	var minChange float64
	var runs string
	var labels []string
	var vf vmFlags
	var inGuest bool
	c := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Build the topology, measure every state, tear down, and print the table",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var s *scenarios.Scenario
			var err error
			if len(vf.kernels) > 0 {
				s, err = loadGuestScenario(args[0], vf.cpus)
			} else {
				s, err = loadScenario(args[0])
			}
			if err != nil {
				return err
			}
			switch {
			case len(vf.kernels) == 0 && len(labels) > 1:
				return usageError{errors.New("--label given more than once: only an A/B run (--kernel twice) takes one per kernel")}
			case len(vf.kernels) == 0 && (len(vf.modules) > 0 || c.Flags().Changed("vm-cpus") || c.Flags().Changed("vm-memory") || c.Flags().Changed("vm-accel")):
				return usageError{errors.New("--modules and --vm-* need --kernel: they describe the guest")}
			case len(labels) == 1 && len(vf.kernels) < 2:
				opt.Label = labels[0]
			}
			switch n, perr := strconv.Atoi(runs); {
			case runs == "":
			case runs == "auto":
				ov.Auto = true
			case perr != nil:
				return usageError{fmt.Errorf("--runs %q: want a number of runs or auto", runs)}
			default:
				ov.Runs = n
			}
			if err := ov.Apply(s); err != nil {
				return usageError{err}
			}
			if !slices.Contains(resultFormats, format) {
				return usageError{fmt.Errorf("--format %q: want one of %s", format, strings.Join(resultFormats, ", "))}
			}
			// Output paths are checked before anything is built: a run of minutes must not
			// end in a result it cannot write.
			if opt.Out != "" && opt.Out != "-" {
				if err := safefile.CheckWritable(opt.Out); err != nil {
					return usageError{fmt.Errorf("--out: %w", err)}
				}
			}
			if junit != "" {
				if err := safefile.CheckWritable(junit); err != nil {
					return usageError{fmt.Errorf("--junit: %w", err)}
				}
			}
			if minChange >= 1 {
				return usageError{fmt.Errorf("--min-change %g: want a fraction below 1, e.g. 0.02", minChange)}
			}
			if minChange >= 0 {
				opt.MinChange = &minChange
			}
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			opt.Progress = c.ErrOrStderr()
			if !inGuest {
				fmt.Fprintf(c.ErrOrStderr(), "%s: %d runs (%d per state and workload), about %s of measuring\n",
					s.Name, s.TotalRuns(), s.Runs, s.EstimatedDuration().Round(time.Second))
			}
			if vf.gate != "" {
				opt.BeforeRound = vm.GuestGate(ctx, vf.gate)
			}
			var r *results.Result
			if len(vf.kernels) > 0 {
				r, err = runInVM(ctx, c, args[0], s, vf, labels, opt)
			} else {
				r, err = runner.Run(ctx, s, opt)
			}
			if r != nil && junit != "" {
				if jerr := writeJUnit(junit, r); jerr != nil {
					err = errors.Join(err, jerr)
				}
			}
			if r != nil {
				table := c.OutOrStdout()
				if opt.Out == "-" { // the result JSON goes to stdout, the table to stderr
					table = c.ErrOrStderr()
					if eerr := results.Encode(c.OutOrStdout(), r); eerr != nil {
						err = errors.Join(err, eerr)
					}
				}
				if terr := renderResult(table, r, format); terr != nil {
					err = errors.Join(err, terr)
				}
				stored := ""
				switch {
				case inGuest: // the host says where it stores the result
				case opt.Out == "-":
					fmt.Fprintf(c.ErrOrStderr(), "result: stdout (journal: %s)\n", runner.JournalPath(opt, s, r.RunID))
				case len(vf.kernels) > 0 && !errors.Is(err, runner.ErrNotStored):
					stored = runner.OutPath(opt, s, r.RunID)
					fmt.Fprintf(c.ErrOrStderr(), "result: %s\n", stored)
				case !errors.Is(err, runner.ErrNotStored):
					stored = runner.OutPath(opt, s, r.RunID)
					fmt.Fprintf(c.ErrOrStderr(), "result: %s (journal: %s)\n", stored, runner.JournalPath(opt, s, r.RunID))
				}
				// Only complete runs join the history, after their file is written.
				if !noHistory && r.Complete {
					recordRun(context.Background(), c, db, r, stored)
				}
			}
			if errors.Is(err, context.Canceled) && len(vf.kernels) == 0 {
				return fmt.Errorf("interrupted; the topology is removed and the finished runs are kept: %w", err)
			}
			if r != nil {
				for _, n := range r.Notes() {
					fmt.Fprintln(c.ErrOrStderr(), "note: "+n)
				}
			}
			if err == nil && r != nil {
				if failures := r.Failures(); len(failures) > 0 {
					return expectationError{failures}
				}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&runs, "runs", "", "runs per state and workload, or auto: rounds until every gated comparison is decided (default: the scenario's)")
	f.IntVar(&ov.MaxRuns, "max-runs", 0, "with --runs auto: at most this many rounds (default: the scenario's max_runs, else 20)")
	f.StringVar(&ov.OVSDB, "ovsdb", "", "use the existing OVS at unix:PATH instead of a private instance")
	f.DurationVar(&ov.Duration, "duration", 0, "measured time of each run, e.g. 15s (default: the scenario's)")
	f.DurationVar(&ov.Omit, "omit", -1, "time at the start of each run left out, e.g. 5s (default: the scenario's)")
	f.StringVar(&opt.Out, "out", "", "result file (default: nsperf-results/SCENARIO-RUNID.json); - writes the result JSON to stdout and the table to stderr")
	f.BoolVar(&opt.Concurrent, "concurrent", false, "measure even while another nsperf run measures on this machine (with a warning in the result) instead of waiting for it")
	f.StringArrayVar(&labels, "label", nil, "label stored with the result, e.g. the kernel under test (with --kernel twice: once per kernel)")
	vf.add(f, true)
	f.BoolVar(&inGuest, "in-guest", false, "")
	_ = f.MarkHidden("in-guest")
	f.BoolVar(&opt.Keep, "keep", false, "leave the topology up after the run (remove it with nsperf down RUNID)")
	f.StringVar(&format, "format", "table", "output: "+strings.Join(resultFormats, ", "))
	f.StringVar(&junit, "junit", "", "also write a JUnit XML report to FILE: one testcase per expectation and compared metric")
	f.Float64Var(&opt.Policy.Alpha, "alpha", 0, "significance level of comparisons (default: the scenario's, else 0.05)")
	f.Float64Var(&minChange, "min-change", -1, "smallest change that matters, as a fraction (default: the scenario's min_change, else 0.02): significant changes below it are negligible, a CI within it is equivalence")
	f.Float64Var(&opt.Policy.CVLimit, "cv-limit", 0, "CV above which an insignificant comparison is too noisy, as a fraction (default: the scenario's, else 0.05)")
	f.BoolVar(&noHistory, "no-history", false, "do not record the result in the history database")
	f.StringVar(&db, "db", "", dbHelp)
	f.BoolVar(&ov.AA, "aa", false, "A/A control: measure the baseline state against a copy of itself under the same schedule")
	return c
}

// writeJUnit writes the JUnit report of a result to path (a new file renamed over path: a
// symlink there is replaced, not followed).
func writeJUnit(path string, r *results.Result) error {
	var b bytes.Buffer
	if err := results.JUnit(&b, r); err != nil {
		return fmt.Errorf("junit %s: %w", path, err)
	}
	if err := safefile.Write(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("junit %s: %w", path, err)
	}
	return nil
}

func upCmd() *cobra.Command {
	var ovsdb string
	c := &cobra.Command{
		Use:   "up FILE|NAME",
		Short: "Build the topology, apply the baseline state, and leave it up",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			if err := (scenarios.Overrides{OVSDB: ovsdb, Omit: -1}).Apply(s); err != nil {
				return usageError{err}
			}
			if err := requireRoot(); err != nil {
				return err
			}
			live, err := runner.Up(s, c.ErrOrStderr())
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "run %s is up in state %s. Enter a namespace with:\n", live.ID, s.States[0].Name)
			for _, ns := range s.Topology.Namespaces {
				fmt.Fprintf(out, "  ip netns exec %s bash\n", live.Namespace(ns))
			}
			fmt.Fprintf(out, "Remove it with:\n  nsperf down %s\n", live.ID)
			return nil
		},
	}
	c.Flags().StringVar(&ovsdb, "ovsdb", "", "use the existing OVS at unix:PATH instead of a private instance")
	return c
}

func downCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "down RUNID",
		Short: "Remove a topology left up by nsperf up or run --keep",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := topo.ParseRunID(args[0])
			if err != nil {
				return usageError{err}
			}
			if err := requireRoot(); err != nil {
				return err
			}
			o, err := topo.ReadOwner(id)
			if err != nil {
				return err
			}
			rm, err := topo.Down(o)
			for _, l := range rm.LeftAlone {
				fmt.Fprintf(c.ErrOrStderr(), "left alone: %s\n", l)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "removed run %s (%s)\n", id, strings.Join(rm.Removed, ", "))
			return nil
		},
	}
}

func cleanupCmd() *cobra.Command {
	var all, dryRun bool
	var ovsdb string
	c := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what killed runs left behind (namespaces, their devices and processes, private OVS instances, bridges, guests of --kernel runs)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireRoot(); err != nil {
				return err
			}
			left, err := topo.FindLeftovers(all)
			if err != nil {
				return err
			}
			guests, err := vm.Leftovers()
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if len(left) == 0 && len(guests) == 0 && ovsdb == "" {
				fmt.Fprintln(out, "nothing to clean up")
			}
			var errs []error
			untrusted := 0
			if ovsdb != "" {
				ctx, cancel := context.WithTimeout(context.Background(), topo.OVSTimeout)
				defer cancel()
				bridges, err := topo.OVSLeftovers(ctx, ovsdb)
				if err != nil {
					return err
				}
				for id, names := range bridges {
					verb := "removed"
					if dryRun {
						verb = "would remove"
					} else if err := topo.RemoveOVSRun(ctx, ovsdb, id); err != nil {
						errs = append(errs, err)
						continue
					}
					fmt.Fprintf(out, "%s run %s: bridges %s in %s\n", verb, id, strings.Join(names, ", "), ovsdb)
				}
			}
			for _, l := range left {
				if l.Problem != nil {
					fmt.Fprintf(c.ErrOrStderr(), "left alone: run %s: %v\n", l.RunID, l.Problem)
					untrusted++
					continue
				}
				if dryRun {
					fmt.Fprintf(out, "would remove run %s: %s (%s)\n", l.RunID, strings.Join(l.Namespaces, ", "), l.Reason)
					continue
				}
				rm, err := l.Remove()
				for _, a := range rm.LeftAlone {
					fmt.Fprintf(c.ErrOrStderr(), "left alone: %s\n", a)
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if len(rm.Removed) > 0 || len(rm.LeftAlone) == 0 {
					fmt.Fprintf(out, "removed run %s: %s (%s)\n", l.RunID, strings.Join(rm.Removed, ", "), l.Reason)
				}
			}
			for _, g := range guests {
				if dryRun {
					fmt.Fprintf(out, "would remove guest %s\n", g)
					continue
				}
				if err := g.Remove(); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(out, "removed guest %s\n", g)
			}
			if untrusted > 0 {
				errs = append(errs, fmt.Errorf("%d state files not trusted, listed above: nothing they name was touched", untrusted))
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also remove topologies kept up on purpose (nsperf up, run --keep)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	c.Flags().StringVar(&ovsdb, "ovsdb", "", "also remove bridges of finished runs from the existing OVS at unix:PATH")
	return c
}

func probeCmd() *cobra.Command {
	var format string
	var vf vmFlags
	c := &cobra.Command{
		Use:   "probe",
		Short: "Tell what this kernel (or the kernel image of --kernel, in a guest) can do: device defaults, accepted knobs, known kernel changes",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want text or json", format)}
			}
			if err := requireRoot(); err != nil {
				return err
			}
			if len(vf.kernels) > 0 {
				ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				return probeInVM(ctx, c, vf, format)
			}
			env := envinfo.Collect(append(runner.Programs(),
				envinfo.Tool{Name: "ovs-vswitchd", Argv: []string{"ovs-vswitchd", "--version"}, Parse: version.LastField}))
			report, err := topo.Probe(env.Tools)
			if err != nil {
				return err
			}
			report.KernelRelease, report.KernelVersion = env.KernelRelease, env.KernelVersion
			if format == "json" {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			return report.Text(c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	vf.add(c.Flags(), false)
	return c
}

func reportCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "report RESULT",
		Short: "Render a stored result or the journal of a killed run, with statistics recomputed from its samples",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !slices.Contains(resultFormats, format) {
				return usageError{fmt.Errorf("--format %q: want one of %s", format, strings.Join(resultFormats, ", "))}
			}
			r, warnings, err := results.ReadFile(args[0])
			for _, w := range warnings {
				fmt.Fprintln(c.ErrOrStderr(), "warning:", w)
			}
			if err != nil {
				return err
			}
			if format == "json" {
				err = results.Encode(c.OutOrStdout(), r)
			} else {
				err = renderResult(c.OutOrStdout(), r, format)
			}
			if err != nil {
				return err
			}
			for _, n := range r.Notes() {
				fmt.Fprintln(c.ErrOrStderr(), "note: "+n)
			}
			if failures := r.Failures(); len(failures) > 0 {
				return expectationError{failures}
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "table", "output: "+strings.Join(resultFormats, ", "))
	return c
}

// resultFormats are what run and report print: the text formats, and html.
var resultFormats = append(slices.Clone(results.Formats), "html")

// renderResult prints a result in a format of resultFormats.
func renderResult(w io.Writer, r *results.Result, format string) error {
	if format == "html" {
		return htmlreport.Result(w, r)
	}
	return results.Render(w, r, format)
}
