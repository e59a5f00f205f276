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
		parent, err := l.lowerIndex(m.NS, m.Lower)
		if err != nil {
			return err
		}
		mv := &netlink.Macvlan{LinkAttrs: netlink.LinkAttrs{Name: m.Name, MTU: m.MTU, ParentIndex: parent}, Mode: macvlanModes[m.Mode]}
		return l.addDevice(m.NS, mv, undo)
	}
}

// lowerIndex is the index of the lower device a stacked device (macvlan, ipvlan) is created
// on, in its namespace.
func (l *Live) lowerIndex(ns, lower string) (int, error) {
	link, err := l.spaces[ns].nl.LinkByName(lower)
	if err != nil {
		return 0, fmt.Errorf("lower device %s/%s: %w", ns, lower, err)
	}
	return link.Attrs().Index, nil
}
