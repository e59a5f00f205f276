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
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/machine/host"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/htmlreport"
	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/version"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/runstate"
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
					if why := s.Undecidable(); why != "" {
						fmt.Fprintf(c.ErrOrStderr(), "warning: %s: %s\n", s.File, why)
					}
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
			fmt.Fprint(c.OutOrStdout(), runner.Script(s, id, topo.Host()))
			return nil
		},
	}
	c.Flags().StringVar(&runID, "run-id", "", "run id to name the namespaces with (default: a random one)")
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
			live, err := host.Up(s, c.ErrOrStderr())
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
			o, err := runstate.Read(id)
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
			if len(left) == 0 && len(guests) == 0 && ovsdb == "" {
				fmt.Fprintln(c.OutOrStdout(), "nothing to clean up")
			}
			var errs []error
			if ovsdb != "" {
				if err := cleanOVS(c, ovsdb, dryRun); err != nil {
					errs = append(errs, err)
				}
			}
			errs = append(errs, cleanRuns(c, left, dryRun), cleanGuests(c, guests, dryRun))
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also remove topologies kept up on purpose (nsperf up, run --keep)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	c.Flags().StringVar(&ovsdb, "ovsdb", "", "also remove bridges of finished runs from the existing OVS at unix:PATH")
	return c
}

// cleanOVS removes the bridges of finished runs from an existing OVS.
func cleanOVS(c *cobra.Command, ovsdb string, dryRun bool) error {
	ctx, cancel := waitlimit.Context(context.Background(), topo.OVSTimeout)
	defer cancel()
	bridges, err := topo.OVSLeftovers(ctx, ovsdb)
	if err != nil {
		return err
	}
	var errs []error
	for id, names := range bridges {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else if err := topo.RemoveOVSRun(ctx, ovsdb, id); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(c.OutOrStdout(), "%s run %s: bridges %s in %s\n", verb, id, strings.Join(names, ", "), ovsdb)
	}
	return errors.Join(errs...)
}

// cleanRuns removes what killed runs left, except what a state file it cannot trust names.
func cleanRuns(c *cobra.Command, left []topo.Leftover, dryRun bool) error {
	out := c.OutOrStdout()
	var errs []error
	untrusted := 0
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
	if untrusted > 0 {
		errs = append(errs, fmt.Errorf("%d state files not trusted, listed above: nothing they name was touched", untrusted))
	}
	return errors.Join(errs...)
}

// cleanGuests removes the guests of killed --kernel runs.
func cleanGuests(c *cobra.Command, guests []vm.Leftover, dryRun bool) error {
	var errs []error
	for _, g := range guests {
		if dryRun {
			fmt.Fprintf(c.OutOrStdout(), "would remove guest %s\n", g)
			continue
		}
		if err := g.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(c.OutOrStdout(), "removed guest %s\n", g)
	}
	return errors.Join(errs...)
}

func probeCmd() *cobra.Command {
	var format string
	var vf vmFlags
	var virtualTime bool
	c := &cobra.Command{
		Use:   "probe",
		Short: "Tell what this kernel (or the kernel image of --kernel, in a guest) can do: device defaults, accepted knobs, known kernel changes",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireRoot(); err != nil {
				return err
			}
			if len(vf.kernels) > 0 {
				ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				return probeInVM(ctx, c, vf, format)
			}
			if virtualTime {
				defer waitlimit.OnVirtualClock()()
			}
			env := host.Collect(append(runner.Programs(),
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
	formatFlag(c.Flags(), &format, "table", "json")
	vf.add(c.Flags(), false)
	c.Flags().BoolVar(&virtualTime, "virtual-time", false, "") // the guest's clock is QEMU's icount
	_ = c.Flags().MarkHidden("virtual-time")
	return c
}

func reportCmd() *cobra.Command {
	var format string
	var table results.TableOptions
	c := &cobra.Command{
		Use:   "report RESULT",
		Short: "Render a stored result or the journal of a killed run, with statistics recomputed from its samples",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
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
				err = renderResult(c.OutOrStdout(), r, format, table)
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
	formatFlag(c.Flags(), &format, resultFormats...)
	sideMetricsFlag(c.Flags(), &table)
	return c
}

// resultFormats are what run and report print: the text formats, and html.
var resultFormats = append(slices.Clone(results.Formats), "html")

// renderResult prints a result in a format of resultFormats.
func renderResult(w io.Writer, r *results.Result, format string, opt results.TableOptions) error {
	if format == "html" {
		return htmlreport.Result(w, r)
	}
	return results.RenderWith(w, r, format, opt)
}
