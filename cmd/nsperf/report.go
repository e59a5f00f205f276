package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
)

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
			if err := render.WriteResult(c.OutOrStdout(), r, format, table); err != nil {
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
	formatFlag(c.Flags(), &format, render.Names(render.Result)...)
	sideMetricsFlag(c.Flags(), &table)
	return c
}
