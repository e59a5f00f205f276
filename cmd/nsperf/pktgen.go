package main

import (
	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/runner/pktgen"
	"github.com/nsperf/nsperf/runner/pktgen/sender"
)

// pktgenCmd is a pktgen workload's client: the runner starts it in the client's namespace,
// where it configures the kernel's generator through /proc/net/pktgen, runs it for the
// workload's time and prints the device's result (runner/pktgen). It is hidden: scenarios
// name pktgen as a workload's tool.
func pktgenCmd() *cobra.Command {
	var o pktgen.Options
	c := &cobra.Command{
		Use:    pktgen.Command,
		Short:  "Run the kernel's packet generator in this namespace and print its result (a pktgen workload's client)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return usageError{err}
			}
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signalled()
			defer stop()
			return sender.Send(ctx, o, c.OutOrStdout())
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Device, "device", "", "the device the packets leave by")
	fs.IntVar(&o.Thread, "thread", 0, "the CPU whose pktgen thread (kpktgend_N) sends")
	fs.StringVar(&o.Dst, "dst", "", "the destination IPv4 address")
	fs.StringVar(&o.DstMAC, "dst-mac", "", "its MAC (default: resolved through the neighbour table)")
	fs.IntVar(&o.FrameSize, "length", 60, "pkt_size: each frame's bytes without its CRC")
	fs.IntVar(&o.Port, "port", 9, "the UDP destination port")
	fs.StringVar(&o.Mode, "mode", "start_xmit", "xmit_mode: start_xmit or queue_xmit")
	fs.IntVar(&o.Seconds, "seconds", 10, "how long it sends")
	fs.BoolVar(&o.ResolveOnly, "resolve-only", false, "only find the destination's MAC (leaving it in the neighbour table), print it and end")
	return c
}
