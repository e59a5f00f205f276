// Command nsperf measures network performance in Linux network namespaces: it turns a YAML
// scenario into a topology, measures it in two or more states with alternating runs, and
// reports before/after statistics.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
)

// Exit codes (shared/design.md).
const (
	exitOK          = 0
	exitExpectation = 1 // an expectation failed or a significant regression (later issues)
	exitUsage       = 2 // usage or invalid scenario
	exitInfra       = 3 // a tool failed, the kernel refused
	exitSkipped     = 4 // a capability the scenario needs is missing
	exitInterrupted = 130
)

// expectationError carries why a result fails CI (exit 1).
type expectationError struct{ failures []string }

func (e expectationError) Error() string {
	return "the result fails:\n  " + strings.Join(e.failures, "\n  ")
}

// usageError marks errors in how nsperf was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	var err error
	if _, _, ferr := root.Find(args); ferr != nil {
		err = usageError{fmt.Errorf("%w (see `nsperf --help`)", ferr)}
	} else {
		err = root.Execute()
	}
	if err == nil {
		return exitOK
	}
	var problems scenarios.Problems
	if errors.As(err, &problems) {
		fmt.Fprintln(stderr, problems.Error())
	} else {
		fmt.Fprintln(stderr, "nsperf:", err)
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var problems scenarios.Problems
	var capErr *topo.CapabilityError
	var usage usageError
	var expectation expectationError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &expectation):
		return exitExpectation
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &problems), errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &capErr), errors.Is(err, errNotRoot):
		return exitSkipped
	case errors.Is(err, runner.ErrRunsFailed):
		return exitInfra
	}
	return exitInfra
}

var errNotRoot = errors.New("needs root: network namespaces and devices can only be created by root (try sudo)")

func requireRoot() error {
	if os.Geteuid() != 0 {
		return errNotRoot
	}
	return nil
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "nsperf",
		Short:         "Network performance experiments in Linux network namespaces",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	root.AddCommand(listCmd(), validateCmd(), planCmd(), runCmd(), upCmd(), downCmd(), cleanupCmd(), probeCmd(), reportCmd())
	for _, c := range root.Commands() {
		if c.Args == nil {
			continue
		}
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
			}
			return nil
		}
	}
	return root
}
