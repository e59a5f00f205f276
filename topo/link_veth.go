package topo

import (
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	linkMakers["veth"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		v := spec.(*scenarios.Veth)
		return l.addVeth(v.A.NS, v.A.Name, v.B, v.MTU, undo)
	}
}

// addVeth: `ip -n A link add NAME [mtu M] type veth peer name PEER netns B [mtu M]`, then an
// alias on both ends naming the run. Links and the ports of OVS bridges are made so.
func (l *Live) addVeth(ns, name string, peer scenarios.Endpoint, mtu int, undo *plan.Step) error {
	a, b := l.spaces[ns], l.spaces[peer.NS]
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name, MTU: mtu},
		PeerName:      peer.Name,
		PeerNamespace: netlink.NsFd(b.fd),
		PeerMTU:       uint32(mtu),
	}
	if err := a.nl.LinkAdd(veth); err != nil {
		return err
	}
	l.pushUndo(undo)
	// The kernel takes no alias with RTM_NEWLINK for a veth: both ends get theirs now.
	for _, end := range []struct{ ns, dev string }{{ns, name}, {peer.NS, peer.Name}} {
		if err := l.withLink(end.ns, end.dev, func(h *netlink.Handle, link netlink.Link) error {
			return h.LinkSetAlias(link, l.ID.Alias())
		}); err != nil {
			return err
		}
	}
	return nil
}
