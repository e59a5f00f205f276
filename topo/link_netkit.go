package topo

import (
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	// `ip -n A link add NAME [mtu M] type netkit mode MODE peer name PEER netns B [mtu M]`
	linkMakers["netkit"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		n := spec.(*scenarios.Netkit)
		a, b := l.spaces[n.A.NS], l.spaces[n.B.NS]
		mode := netlink.NETKIT_MODE_L3
		if n.Mode == "l2" {
			mode = netlink.NETKIT_MODE_L2
		}
		nk := &netlink.Netkit{LinkAttrs: netlink.LinkAttrs{Name: n.A.Name, MTU: n.MTU}, Mode: mode,
			Policy: netlink.NETKIT_POLICY_FORWARD, PeerPolicy: netlink.NETKIT_POLICY_FORWARD}
		nk.SetPeerAttrs(&netlink.LinkAttrs{Name: n.B.Name, MTU: n.MTU, Namespace: netlink.NsFd(b.fd)})
		if err := a.nl.LinkAdd(nk); err != nil {
			return err
		}
		l.pushUndo(undo)
		for _, end := range []scenarios.Endpoint{n.A, n.B} {
			if err := l.withLink(end.NS, end.Name, func(h *netlink.Handle, link netlink.Link) error {
				return h.LinkSetAlias(link, l.ID.Alias())
			}); err != nil {
				return err
			}
		}
		return nil
	}
}
