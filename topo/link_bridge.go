package topo

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	// `ip -n NS link add NAME type bridge stp_state 0 && ip -n NS link set PORT master NAME`
	linkMakers["bridge"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		b := spec.(*scenarios.LinuxBridge)
		if err := l.addDevice(b.NS, &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: b.Name, MTU: b.MTU}}, undo); err != nil {
			return err
		}
		return l.withLink(b.NS, b.Name, func(h *netlink.Handle, br netlink.Link) error {
			for _, p := range b.Ports {
				port, err := l.lookup(b.NS, p)
				if err != nil {
					return err
				}
				if err := h.LinkSetMasterByIndex(port, br.Attrs().Index); err != nil {
					return fmt.Errorf("ip link set %s/%s master %s: %w", b.NS, p, b.Name, err)
				}
			}
			return nil
		})
	}
}
