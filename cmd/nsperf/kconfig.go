package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// kconfigCmd prints the kernel config fragment the scenarios need, for merge_config.sh or
// `vng -f`: from the tables that decide which modules a guest loads (vm.Fragment).
func kconfigCmd() *cobra.Command {
	host := false
	c := &cobra.Command{
		Use:   "kconfig FILE|NAME...",
		Short: "Print the kernel config fragment the scenarios need (kselftest config syntax, for merge_config.sh or vng -f)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var ss []*scenarios.Scenario
			for _, a := range args {
				// Pinned CPUs are the guest's to provide: any count validates here.
				s, err := kernels.LoadScenario(a, 0)
				if err != nil {
					return err
				}
				ss = append(ss, s)
			}
			var b bytes.Buffer
			// The names as one comment line: a newline in a file name must not add a line
			// that merge_config.sh would read as an option.
			names := make([]string, len(args))
			for i, a := range args {
				names[i] = results.Printable(a)
			}
			fmt.Fprintf(&b, "# nsperf kconfig %s\n", strings.Join(names, " "))
			vm.WriteFragment(&b, vm.Fragment(ss, !host))
			_, err := c.OutOrStdout().Write(b.Bytes())
			return err
		},
	}
	c.Flags().BoolVar(&host, "host", false, "only what the scenarios need, not what booting the kernel as a guest (--kernel) needs")
	return c
}
