package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/scenarios"
)

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
