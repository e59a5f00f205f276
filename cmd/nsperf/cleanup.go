package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/vm"
)

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
			fmt.Fprintf(c.OutOrStdout(), "would remove %s %s\n", g.Kind(), g)
			continue
		}
		if err := g.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(c.OutOrStdout(), "removed %s %s\n", g.Kind(), g)
	}
	return errors.Join(errs...)
}
