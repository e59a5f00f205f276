package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/internal/waitlimit"
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
			if err := requireRoot(); err != nil {
				return err
			}
			if req.Command == kernels.CommandProbe {
				return probeHere(c, req.Format, req.VirtualTime)
			}
			return measureInGuest(c, req)
		},
	}
}

// measureInGuest carries out the plan of the guest's request (GuestRequest.Plan) and writes
// its table; the result is where the request says, for the host to read.
func measureInGuest(c *cobra.Command, req kernels.GuestRequest) error {
	s, err := loadScenario(req.Scenario)
	if err != nil {
		return err
	}
	ctx, stop := signalled()
	defer stop()
	p, err := req.Plan(ctx, s, host.Machine{})
	if err != nil {
		return err
	}
	if p.Run.VirtualTime {
		defer waitlimit.OnVirtualClock()()
	}
	p.Run.Progress = c.ErrOrStderr()
	// Every page of nsperf's binary in guest memory before the first sample, so that no
	// sample waits for the host to read one (a sample's noise.self_major_faults).
	if kb, err := vm.LockOwnPages(); err != nil {
		fmt.Fprintf(p.Run.Progress, "guest: %v; nsperf's code may be read from the host inside a sample (self_major_faults)\n", err)
	} else {
		fmt.Fprintf(p.Run.Progress, "guest: nsperf's pages locked in guest memory (%d MiB), none read from the host while measuring\n", kb>>10)
	}
	r, err := kernels.Execute(ctx, p)
	_, err = conclude(c.ErrOrStderr(), p, r, err, func(r *results.Result, _ error) error {
		return render.WriteResult(c.OutOrStdout(), r, render.Names(render.Result)[0], results.DefaultTableOptions)
	})
	if err != nil {
		// The host names it: the guest runs in its exchange directory.
		os.WriteFile(vm.GuestErrorFile, []byte(err.Error()), 0o644)
	}
	return err
}
