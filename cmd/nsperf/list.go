package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/scenarios"
)

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
				fmt.Fprintf(c.OutOrStdout(), "%-16s %s (%s%d runs x %d states, %s)\n", s.Name, s.Description, cases, s.Runs, len(s.States), estimate(s, time.Minute))
			}
			return nil
		},
	}
}
