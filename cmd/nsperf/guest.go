package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/vm"
)

// guestCmd is the run (or probe) in a guest that `run --kernel` booted: everything it is asked is in
// its request file (kernels.GuestRequest), which the host wrote into the guest's exchange
// directory; the host reads the result it writes there.
func guestCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "guest REQUEST",
		Short:  "Measure or probe in a guest what the host's run or probe --kernel asks in REQUEST (request.json)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			req, err := kernels.ReadRequest(args[0])
			if err != nil {
				return usageError{err}
			}
			if req.Command == kernels.CommandProbe {
				if err := requireRoot(); err != nil {
					return err
				}
				return probeHere(c, req.Format, req.VirtualTime)
			}
			s, err := loadScenario(req.Scenario)
			if err != nil {
				return err
			}
			p, err := req.Plan(s, host.Machine{})
			if err != nil {
				return err
			}
			rf := &runFlags{inGuest: true, noHistory: true, gateDir: req.GateDir, format: render.Names(render.Result)[0], table: results.DefaultTableOptions}
			if _, err = rf.execute(c.OutOrStdout(), c.ErrOrStderr(), p); err != nil {
				// The host names it: the guest runs in its exchange directory.
				os.WriteFile(vm.GuestErrorFile, []byte(err.Error()), 0o644)
			}
			return err
		},
	}
}
