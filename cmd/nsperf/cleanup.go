package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/cleanup"
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
				if err := cleanup.OVS(c.OutOrStdout(), ovsdb, dryRun); err != nil {
					errs = append(errs, err)
				}
			}
			errs = append(errs, cleanup.Runs(c.OutOrStdout(), c.ErrOrStderr(), left, dryRun), cleanup.Guests(c.OutOrStdout(), guests, dryRun))
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also remove topologies kept up on purpose (nsperf up, run --keep)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	c.Flags().StringVar(&ovsdb, "ovsdb", "", "also remove bridges of finished runs from the existing OVS at unix:PATH")
	return c
}
