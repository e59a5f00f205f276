package topo

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

var ipvlanModes = map[string]netlink.IPVlanMode{"l2": netlink.IPVLAN_MODE_L2, "l3": netlink.IPVLAN_MODE_L3, "l3s": netlink.IPVLAN_MODE_L3S}

func init() {
	// `ip -n NS link add NAME link LOWER [mtu M] type ipvlan mode MODE`
	linkMakers["ipvlan"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		m := spec.(*scenarios.Ipvlan)
		lower, err := l.spaces[m.NS].nl.LinkByName(m.Lower)
		if err != nil {
			return fmt.Errorf("lower device %s/%s: %w", m.NS, m.Lower, err)
		}
		iv := &netlink.IPVlan{LinkAttrs: netlink.LinkAttrs{Name: m.Name, MTU: m.MTU, ParentIndex: lower.Attrs().Index}, Mode: ipvlanModes[m.Mode]}
		return l.addDevice(m.NS, iv, undo)
	}
}
