package topo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/plan"
)

// Live is a built topology: kernel handles per namespace and the undo stack that removes it.
type Live struct {
	ID       RunID
	Plan     *plan.Plan
	owner    *Owner
	spaces   map[string]*space // by scenario namespace name
	pristine map[string]Attrs  // device attributes right after the build, by "ns/dev"
	// pristineFeatures are the ethtool features any state names, as built, by "ns/dev".
	pristineFeatures map[string]map[string]bool
	undoable         map[string]bool // undo steps on the stack, by kind and object
	qdiscs           map[string]bool // devices with a root qdisc nsperf attached

	ovsClient *ovs.Client
	ovsInst   *ovs.Instance
	failed    chan error // a daemon the topology depends on died
	csumOffOn []string   // devices with tx checksum offload turned off for the userspace datapath

	mu   sync.Mutex
	undo []undoEntry
}

type space struct {
	name string // full name, e.g. nsp3f9a-client
	fd   netns.NsHandle
	nl   *netlink.Handle
	eth  *ethtool.Ethtool // opened in the namespace on first use
}

type undoEntry struct {
	what string
	fn   func() error
}

// BuildOptions tune Build.
type BuildOptions struct {
	Kept bool // the topology is meant to outlive the process (`nsperf up`)
}

// Build carries out a plan. On failure it removes what it had built and returns the error of
// the step that failed.
func Build(p *plan.Plan, opt BuildOptions) (*Live, error) {
	owner, err := claimOwner(p.RunID, p.Scenario.Name, opt.Kept)
	if err != nil {
		return nil, err
	}
	l := &Live{ID: p.RunID, Plan: p, owner: owner, spaces: map[string]*space{}, pristine: map[string]Attrs{},
		pristineFeatures: map[string]map[string]bool{}, undoable: map[string]bool{}, qdiscs: map[string]bool{}, failed: make(chan error, 2)}
	l.push("remove state file and lock", owner.release)
	if o := p.Scenario.Topology.OVS; o != nil && o.DB != "" {
		// An existing OVS runs in this (root) namespace: its bridges' ports are created here.
		if err := l.rootSpace(); err != nil {
			return nil, errors.Join(err, l.Teardown())
		}
	}
	for i, step := range p.Steps {
		if err := l.do(step); err != nil {
			err = fmt.Errorf("build step %d (%s): %w", i+1, step.Do, err)
			return nil, errors.Join(err, l.Teardown())
		}
	}
	for _, ep := range p.Scenario.Devices() {
		a, err := l.ReadAttrs(ep.Ref())
		if err != nil {
			return nil, errors.Join(err, l.Teardown())
		}
		l.pristine[ep.Ref()] = a
	}
	for ref, names := range featuresNamed(p.Scenario.States) {
		f, err := l.readFeatures(ref, names)
		if err != nil {
			return nil, errors.Join(err, l.Teardown())
		}
		l.pristineFeatures[ref] = f
	}
	return l, nil
}

// pushUndo puts a step's undo on the stack, once: a device created anew in each state keeps
// the one undo of its first creation.
func (l *Live) pushUndo(u *plan.Step) {
	if u == nil {
		return
	}
	key := fmt.Sprintf("%s %s/%s %s", u.Kind, u.NS, u.Dev, u.DB)
	if l.undoable[key] {
		return
	}
	l.undoable[key] = true
	l.push(u.Do, func() error { return l.undoStep(*u) })
}

// undoStep carries out an undo step; what is already gone counts as removed.
func (l *Live) undoStep(u plan.Step) error {
	switch u.Kind {
	case plan.DelNamespace:
		sp := l.spaces[u.NS]
		if sp.nl != nil {
			sp.nl.Close()
		}
		if sp.eth != nil {
			sp.eth.Close()
		}
		sp.fd.Close()
		return deleteNamespace(sp.name)
	case plan.DelLink:
		return l.deleteLink(u.NS, u.Dev)
	case plan.StopOVS:
		return l.ovsInst.Stop()
	case plan.DelBridges:
		defer l.ovsClient.Close()
		ctx, cancel := context.WithTimeout(context.Background(), ovsRemoveTimeout)
		defer cancel()
		return l.ovsClient.DeleteRun(ctx, string(l.ID))
	}
	return fmt.Errorf("unknown undo step %q", u.Kind)
}

func (l *Live) push(what string, fn func() error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.undo = append(l.undo, undoEntry{what, fn})
}

// Teardown undoes the build, last step first. Objects already gone count as removed; it runs
// every undo even after a failure, and a second call does nothing.
func (l *Live) Teardown() error {
	var errs []error
	for {
		l.mu.Lock()
		if len(l.undo) == 0 {
			l.mu.Unlock()
			break
		}
		u := l.undo[len(l.undo)-1]
		l.undo = l.undo[:len(l.undo)-1]
		l.mu.Unlock()
		if err := u.fn(); err != nil {
			errs = append(errs, fmt.Errorf("teardown: %s: %w", u.what, err))
		}
	}
	return errors.Join(errs...)
}

// Keep leaves the topology up beyond this process (`nsperf up`, `run --keep`): the run's lock
// is released, so that `nsperf down` and `cleanup --all` may remove it; its state file stays.
func (l *Live) Keep() {
	if l.owner.lock != nil {
		l.owner.lock.Close()
		l.owner.lock = nil
	}
}

// Namespace returns the full name of a scenario namespace (for `ip netns exec`).
func (l *Live) Namespace(ns string) string { return l.ID.Namespace(ns) }

// Do runs fn with the calling thread in a scenario namespace; processes fn starts live there.
func (l *Live) Do(ns string, fn func() error) error {
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	return netnsx.Do(sp.fd, fn)
}

func (l *Live) do(s plan.Step) error {
	switch s.Kind {
	case plan.AddNamespace:
		return l.addNamespace(s)
	case plan.SetUp:
		return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error { return h.LinkSetUp(link) })
	case plan.AddVeth:
		return l.addVeth(s)
	case plan.AddVxlan:
		return l.addVxlan(s)
	case plan.StartOVS, plan.ConnectOVS:
		return l.startOVS(s)
	case plan.AddBridge:
		return l.addBridge(s)
	case plan.MoveLink:
		return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error {
			return h.LinkSetNsFd(link, int(l.spaces[s.Peer.NS].fd))
		})
	case plan.SetMTU:
		return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error { return h.LinkSetMTU(link, s.MTU) })
	case plan.TxCsumOff:
		return l.txCsumOff(s.NS + "/" + s.Dev)
	case plan.AddAddress:
		return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error {
			addr := &netlink.Addr{IPNet: &net.IPNet{IP: s.Addr.Addr().AsSlice(), Mask: net.CIDRMask(s.Addr.Bits(), s.Addr.Addr().BitLen())}}
			if s.Addr.Addr().Is6() {
				addr.Flags = unix.IFA_F_NODAD // usable at once, not tentative for a second or two
			}
			return h.AddrAdd(link, addr)
		})
	}
	return fmt.Errorf("unknown step kind %q", s.Kind)
}

// addNamespace: `ip netns add NAME; ip -n NAME link set lo alias nsperf:RUNID`. The name is
// recorded in the state file first, so that a crash right after creating it still leaves a
// trace for `nsperf cleanup`; the alias is the marker without which cleanup leaves it alone.
func (l *Live) addNamespace(s plan.Step) error {
	ns := s.NS
	full := l.ID.Namespace(ns)
	l.owner.Namespaces = append(l.owner.Namespaces, full)
	if err := l.owner.save(); err != nil {
		return err
	}
	fd, err := netnsx.NewNamed(full)
	if err != nil {
		return err
	}
	l.spaces[ns] = &space{name: full, fd: fd}
	l.pushUndo(s.Undo)
	sp := l.spaces[ns]
	sp.nl, err = netlink.NewHandleAt(fd)
	if err != nil {
		return fmt.Errorf("netlink handle in %s: %w", full, err)
	}
	return markNamespace(sp.nl, l.ID)
}

// addVeth: `ip -n A link add NAME type veth peer name PEER netns B`, then an alias on both
// ends naming the run.
func (l *Live) addVeth(s plan.Step) error {
	a, b := l.spaces[s.NS], l.spaces[s.Peer.NS]
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: s.Dev, MTU: s.MTU},
		PeerName:      s.Peer.Name,
		PeerNamespace: netlink.NsFd(b.fd),
		PeerMTU:       uint32(s.MTU),
	}
	if err := a.nl.LinkAdd(veth); err != nil {
		return err
	}
	l.pushUndo(s.Undo)
	for _, end := range []struct{ ns, dev string }{{s.NS, s.Dev}, {s.Peer.NS, s.Peer.Name}} {
		if err := l.withLink(end.ns, end.dev, func(h *netlink.Handle, link netlink.Link) error {
			return h.LinkSetAlias(link, l.ID.Alias())
		}); err != nil {
			return err
		}
	}
	return nil
}

// addVxlan: `ip -n NS link add NAME type vxlan id VNI local L remote R dstport P [dev U]`,
// created in its own namespace (which holds its underlay), with the run's alias.
func (l *Live) addVxlan(s plan.Step) error {
	x := s.Vxlan
	local, remote := net.ParseIP(x.Local), net.ParseIP(x.Remote)
	vx := &netlink.Vxlan{
		LinkAttrs: netlink.LinkAttrs{Name: x.Name, MTU: x.MTU},
		VxlanId:   x.VNI,
		SrcAddr:   local,
		Group:     remote, // netlink's Group carries a unicast remote too
		Port:      x.Port,
		Learning:  x.Learning != nil && *x.Learning,
	}
	if x.UDPCsum != nil {
		if local.To4() != nil {
			vx.UDPCSum = *x.UDPCsum
		} else {
			vx.UDP6ZeroCSumTx, vx.UDP6ZeroCSumRx = !*x.UDPCsum, !*x.UDPCsum
		}
	}
	sp := l.spaces[s.NS]
	if x.Underlay != "" {
		lower, err := sp.nl.LinkByName(x.Underlay)
		if err != nil {
			return fmt.Errorf("underlay %s/%s: %w", s.NS, x.Underlay, err)
		}
		vx.VtepDevIndex = lower.Attrs().Index
	}
	if err := sp.nl.LinkAdd(vx); err != nil {
		return err
	}
	l.pushUndo(s.Undo)
	return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error {
		return h.LinkSetAlias(link, l.ID.Alias())
	})
}

// deleteLink: `ip -n NS link del DEV`; a device already gone is success.
func (l *Live) deleteLink(ns, dev string) error {
	sp, ok := l.spaces[ns]
	if !ok {
		return nil
	}
	link, err := sp.nl.LinkByName(dev)
	if err != nil {
		return ignoreGone(err)
	}
	return ignoreGone(sp.nl.LinkDel(link))
}

// recreate deletes a device and creates it again with its addresses, as the plan does. What
// it has now, fresh, is what it inherited in this state: its built values become these, so
// that the state's own settings apply on top of them and what the state leaves out stays so.
func (l *Live) recreate(ref string) error {
	ns, dev := splitRef(ref)
	if err := l.deleteLink(ns, dev); err != nil {
		return fmt.Errorf("recreate %s: %w", ref, err)
	}
	for _, step := range l.Plan.DeviceSteps(ns, dev) {
		if err := l.do(step); err != nil {
			return fmt.Errorf("recreate %s: %s: %w", ref, step.Do, err)
		}
	}
	l.qdiscs[ref] = false // a new device has none
	a, err := l.ReadAttrs(ref)
	if err != nil {
		return err
	}
	l.pristine[ref] = a
	if names := slices.Collect(maps.Keys(l.pristineFeatures[ref])); len(names) > 0 {
		if l.pristineFeatures[ref], err = l.readFeatures(ref, names); err != nil {
			return err
		}
	}
	return nil
}

func (l *Live) withLink(ns, dev string, fn func(*netlink.Handle, netlink.Link) error) error {
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	link, err := sp.nl.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", ns, dev, err)
	}
	return fn(sp.nl, link)
}

// ReadAttrs reads the effective attributes of a device ("ns/dev").
func (l *Live) ReadAttrs(ref string) (Attrs, error) {
	ns, dev := splitRef(ref)
	var a Attrs
	err := l.withLink(ns, dev, func(_ *netlink.Handle, link netlink.Link) error {
		a = attrsOf(link)
		return nil
	})
	return a, err
}

// Pristine returns each device's attributes as built, by "ns/dev".
func (l *Live) Pristine() map[string]Attrs { return l.pristine }

// Devices returns the refs of the topology's devices, sorted.
func (l *Live) Devices() []string {
	return slices.Sorted(maps.Keys(l.pristine))
}

func splitRef(ref string) (ns, dev string) {
	ns, dev, _ = strings.Cut(ref, "/")
	return ns, dev
}

func ignoreGone(err error) error {
	var notFound netlink.LinkNotFoundError
	if err == nil || errors.As(err, &notFound) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}
