package main

import (
	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/render"
)

// claimsCmd lists the benchmark claims of a commit message or patch mail (package claims).
func claimsCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "claims FILE",
		Short: "List the benchmark claims of a commit message, a patch or an mbox: tool, metric, before and after, the change computed and stated, conditions, toggles, lines",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			data, err := readBounded(args[0])
			if err != nil {
				return err
			}
			r, err := claims.Read(args[0], data)
			if err != nil {
				return usageError{err}
			}
			return render.WriteMachine(c.OutOrStdout(), r, r.Text, format)
		},
	}
	formatFlag(c.Flags(), &format, render.Names(render.Machine)...)
	return c
}
