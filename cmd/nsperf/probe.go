package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/render"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/version"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/topo"
)

func probeCmd() *cobra.Command {
	var format string
	var vf vmFlags
	c := &cobra.Command{
		Use:   "probe",
		Short: "Tell what this kernel (or the kernel image of --kernel, in a guest) can do: device defaults, accepted knobs, known kernel changes",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireRoot(); err != nil {
				return err
			}
			if len(vf.kernels) > 0 {
				ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				return probeInVM(ctx, c, vf, format)
			}
			return probeHere(c, format, false)
		},
	}
	formatFlag(c.Flags(), &format, render.Names(render.Machine)...)
	vf.add(c.Flags(), false)
	return c
}

// probeHere probes this machine's kernel; on a virtual clock (a guest under icount) its waits
// for OVS and the servers are unbounded (internal/waitlimit), as the host's deadline bounds
// the guest.
func probeHere(c *cobra.Command, format string, virtualTime bool) error {
	if virtualTime {
		defer waitlimit.OnVirtualClock()()
	}
	env := host.Collect(append(runner.Programs(),
		envinfo.Tool{Name: "ovs-vswitchd", Argv: []string{"ovs-vswitchd", "--version"}, Parse: version.LastField}))
	report, err := topo.Probe(env.Tools)
	if err != nil {
		return err
	}
	report.KernelRelease, report.KernelVersion = env.KernelRelease, env.KernelVersion
	return render.WriteMachine(c.OutOrStdout(), report, report.Text, format)
}
