package topo

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// linkMakers create a link of each kind through netlink, by the kind's YAML key; each kind's
// file (link_veth.go, link_vxlan.go, link_macvlan.go) registers its own. A maker creates the
// link's devices with the run's alias and pushes undo on the stack as soon as a device exists;
// addresses and up are the plan's next steps.
var linkMakers = map[string]func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error{}

// addLink carries out an AddLink step with its kind's maker.
func (l *Live) addLink(s plan.Step) error {
	maker, ok := linkMakers[s.LinkKind]
	if !ok {
		return fmt.Errorf("link %s/%s: no maker for link kind %q in package topo", s.NS, s.Dev, s.LinkKind)
	}
	return maker(l, s.Link, s.Undo)
}

// addDevice creates a device in a scenario namespace (`ip -n NS link add ...`), then gives it
// the run's alias: the kernel takes none with RTM_NEWLINK for some kinds.
func (l *Live) addDevice(ns string, link netlink.Link, undo *plan.Step) error {
	if err := l.spaces[ns].nl.LinkAdd(link); err != nil {
		return err
	}
	l.pushUndo(undo)
	return l.withLink(ns, link.Attrs().Name, func(h *netlink.Handle, dev netlink.Link) error {
		return h.LinkSetAlias(dev, l.ID.Alias())
	})
}
