package topo

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

var macvlanModes = map[string]netlink.MacvlanMode{
	"bridge": netlink.MACVLAN_MODE_BRIDGE, "private": netlink.MACVLAN_MODE_PRIVATE,
	"vepa": netlink.MACVLAN_MODE_VEPA, "passthru": netlink.MACVLAN_MODE_PASSTHRU,
}

func init() {
	// `ip -n NS link add NAME link LOWER [mtu M] type macvlan mode MODE`
	linkMakers["macvlan"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		m := spec.(*scenarios.Macvlan)
		lower, err := l.spaces[m.NS].nl.LinkByName(m.Lower)
		if err != nil {
			return fmt.Errorf("lower device %s/%s: %w", m.NS, m.Lower, err)
		}
		mv := &netlink.Macvlan{LinkAttrs: netlink.LinkAttrs{Name: m.Name, MTU: m.MTU, ParentIndex: lower.Attrs().Index}, Mode: macvlanModes[m.Mode]}
		return l.addDevice(m.NS, mv, undo)
	}
}
