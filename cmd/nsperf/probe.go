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
	var virtualTime bool
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
		},
	}
	formatFlag(c.Flags(), &format, render.Names(render.Machine)...)
	vf.add(c.Flags(), false)
	c.Flags().BoolVar(&virtualTime, "virtual-time", false, "") // the guest's clock is QEMU's icount
	_ = c.Flags().MarkHidden("virtual-time")
	return c
}
