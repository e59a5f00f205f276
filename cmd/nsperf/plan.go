package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/topo"
)

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
			fmt.Fprint(c.OutOrStdout(), runner.Script(s, id, topo.PlanFacts()))
			return nil
		},
	}
	c.Flags().StringVar(&runID, "run-id", "", "run id to name the namespaces with (default: a random one)")
	return c
}
