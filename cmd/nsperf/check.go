package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/render"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/internal/syscheck"
	"github.com/nsperf/nsperf/vm"
)

// checkCmd is nsperf check, as pyperf's `system show`: how this machine is tuned for
// measuring, item by item, OK or what to change. It changes nothing; every result records
// the same items (environment.system), and compare lists those that differ.
func checkCmd() *cobra.Command {
	var format, cpus string
	c := &cobra.Command{
		Use:   "check",
		Short: "Show how this machine is tuned for measuring (governor, turbo, SMT, IRQs, isolation, THP, steal, KVM): OK or what to change",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var pinned []int
			online := syscheck.Online("/")
			for _, f := range strings.FieldsFunc(cpus, func(r rune) bool { return r == ',' }) {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 0 {
					return usageError{fmt.Errorf("--cpus %q: want CPU numbers, e.g. 0,1", cpus)}
				}
				if len(online) > 0 && !slices.Contains(online, n) {
					return usageError{fmt.Errorf("--cpus %q: CPU %d is not online (online: %s)", cpus, n, procstat.FormatCPUList(online))}
				}
				pinned = append(pinned, n)
			}
			items := syscheck.Check("/", pinned, vm.KVMHangMarker())
			return render.WriteMachine(c.OutOrStdout(), items, func(w io.Writer) error { return syscheck.Write(w, items) }, format)
		},
	}
	c.Flags().StringVar(&cpus, "cpus", "", "the CPUs the tools are pinned to, e.g. 0,1 (default: every online CPU)")
	formatFlag(c.Flags(), &format, render.Names(render.Machine)...)
	return c
}
