package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/runstate"
)

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
