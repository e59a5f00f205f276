package topo

import (
	"net"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	// `ip -n NS link add NAME type geneve id VNI remote R dstport P`, or `... type geneve
	// external innerprotoinherit dstport P`
	linkMakers["geneve"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		g := spec.(*scenarios.Geneve)
		dev := &netlink.Geneve{LinkAttrs: netlink.LinkAttrs{Name: g.Name, MTU: g.MTU}, Dport: uint16(g.Port)}
		if g.External {
			dev.FlowBased, dev.InnerProtoInherit = true, true
		} else {
			dev.ID, dev.Remote = uint32(g.VNI), net.ParseIP(g.Remote)
		}
		return l.addDevice(g.NS, dev, undo)
	}
}
