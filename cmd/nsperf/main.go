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

	"github.com/nsperf/nsperf/internal/exitcode"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/machine/host"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
)

// Exit codes (package exitcode).
const (
	exitOK          = exitcode.OK
	exitExpectation = exitcode.Expectation
	exitUsage       = exitcode.Usage
	exitInfra       = exitcode.Infra
	exitSkipped     = exitcode.Skipped
	exitUndecided   = exitcode.Undecided
	exitInterrupted = exitcode.Interrupted
)

// expectationError carries why a result fails CI (exit 1).
type expectationError struct{ failures []string }

func (e expectationError) Error() string {
	return "the result fails:\n  " + strings.Join(e.failures, "\n  ")
}

// codeError is an error with its own exit status.
type codeError struct {
	code int
	err  error
}

func (e codeError) Error() string { return e.err.Error() }
func (e codeError) Unwrap() error { return e.err }

// usageError marks errors in how nsperf was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	// Everything nsperf prints may carry a stranger's text (a mail's file names, a tool's
	// errors): control characters leave escaped, whatever the code path that printed them.
	stdout, stderr = results.PrintableWriter(stdout), results.PrintableWriter(stderr)
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
	var usage usageError
	var expectation expectationError
	var inputErr *results.InputError
	var incomparable *compare.IncomparableError
	var nothing *compare.NothingComparedError
	var guest kernels.ExitError
	var kernelInput inputerr.Error
	var coded codeError
	var bisect bisectExit
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &bisect):
		return bisect.code // a step of git bisect run: its code is git's
	case errors.As(err, &coded):
		return coded.code
	case errors.As(err, &guest):
		return guest.Code // a guest's nsperf decided: its exit status is ours
	case errors.As(err, &expectation):
		return exitExpectation
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &problems), errors.As(err, &usage), errors.As(err, &inputErr), errors.As(err, &kernelInput), errors.As(err, &incomparable), errors.As(err, &nothing), errors.Is(err, history.ErrBadDSN):
		return exitUsage
	case errors.Is(err, capability.ErrMissing):
		return exitSkipped
	case errors.Is(err, runner.ErrRunsFailed):
		return exitInfra
	}
	return exitInfra
}

// requireRoot refuses to build anything without root and the capabilities namespaces take
// (host.CheckPrivileges, exit 4).
func requireRoot() error { return host.CheckPrivileges() }

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
	root.AddCommand(coverageCmd(), listCmd(), validateCmd(), planCmd(), runCmd(), upCmd(), downCmd(), cleanupCmd(), probeCmd(), checkCmd(), kconfigCmd(), reportCmd(), compareCmd(), historyCmd(), guestCmd(), buildCmd(), claimsCmd(), reproduceCmd(), docsCmd(), pktgenCmd())
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
