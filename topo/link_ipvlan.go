package topo

import (
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

var ipvlanModes = map[string]netlink.IPVlanMode{"l2": netlink.IPVLAN_MODE_L2, "l3": netlink.IPVLAN_MODE_L3, "l3s": netlink.IPVLAN_MODE_L3S}

func init() {
	// `ip -n NS link add NAME link LOWER [mtu M] type ipvlan mode MODE`
	linkMakers["ipvlan"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		m := spec.(*scenarios.Ipvlan)
		parent, err := l.lowerIndex(m.LowerNS, m.Lower)
		if err != nil {
			return err
		}
		iv := &netlink.IPVlan{LinkAttrs: netlink.LinkAttrs{Name: m.Name, MTU: m.MTU, ParentIndex: parent}, Mode: ipvlanModes[m.Mode]}
		if m.LowerNS == m.NS {
			return l.addDevice(m.NS, iv, undo)
		}
		// `ip -n LOWERNS link add NAME link LOWER netns NS type ipvlan`: made beside its lower
		// device, born in its own namespace (IFLA_NET_NS_FD).
		iv.Namespace = netlink.NsFd(int(l.spaces[m.NS].fd))
		if err := l.spaces[m.LowerNS].nl.LinkAdd(iv); err != nil {
			return err
		}
		l.pushUndo(undo)
		return l.withLink(m.NS, m.Name, func(h *netlink.Handle, link netlink.Link) error {
			return h.LinkSetAlias(link, l.ID.Alias())
		})
	}
}
