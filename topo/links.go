package topo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// linkMakers create a link of each kind through netlink, by the kind's YAML key; each kind's
// file (link_veth.go, link_vxlan.go, link_macvlan.go) registers its own. A maker creates the
// link's devices with the run's alias and pushes undo on the stack as soon as a device exists;
// addresses and up are the plan's next steps.
var linkMakers = map[string]func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error{}

// addLink carries out an AddLink step with its kind's maker. A kernel without the kind is a
// capability the scenario needs, named by the options the kind declares (Modules).
func (l *Live) addLink(s plan.Step) error {
	maker, ok := linkMakers[s.LinkKind]
	if !ok {
		return fmt.Errorf("link %s/%s: no maker for link kind %q in package topo", s.NS, s.Dev, s.LinkKind)
	}
	err := maker(l, s.Link, s.Undo)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return missingLinkKind(l.Plan.Scenario, s, err)
	}
	return err
}

// missingLinkKind says that the kernel lacks a link kind: rtnl_newlink answers a kind it has no
// rtnl_link_ops for ("Unknown device type", after trying to load the module rtnl-link-KIND on a
// kernel with modules) with EOPNOTSUPP, as `ip link add ... type KIND` prints "Error: Unknown
// device type."; the options are what the kind declares of itself, its module's first.
func missingLinkKind(sc *scenarios.Scenario, s plan.Step, err error) error {
	kind := s.LinkKind
	if t, ok := s.Link.(*scenarios.IPTunnel); ok {
		kind = t.Mode + " tunnel"
	}
	file := sc.File
	if file == "" {
		file = sc.Name
	}
	return capability.Missing(fmt.Sprintf("scenario %s: link %s/%s: this kernel has no %s devices (%v): it needs %s (`nsperf kconfig %s` prints every option the scenario needs)",
		sc.Name, s.NS, s.Dev, kind, err, strings.Join(configOptions(s.Link.Modules()), " and "), shellq.Word(file)))
}

// configOptions are the config options that build modules, CONFIG_ prefixed, in order.
func configOptions(modules []scenarios.KernelModule) []string {
	var out []string
	for _, m := range modules {
		for _, o := range m.Options {
			out = append(out, "CONFIG_"+o)
		}
	}
	return out
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
