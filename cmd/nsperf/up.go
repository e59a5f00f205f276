package main

import (
	"fmt"

	"github.com/nsperf/nsperf/machine/host"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/scenarios"
)

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
