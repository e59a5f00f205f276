package topo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/nsperf/nsperf/internal/spawn"
	"github.com/nsperf/nsperf/internal/waitlimit"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// Live is a built topology: kernel handles per namespace and the undo stack that removes it.
type Live struct {
	ID       RunID
	Plan     *plan.Plan
	owner    *runstate.StateFile
	spaces   map[string]*space // by scenario namespace name
	pristine map[string]Attrs  // device attributes right after the build, by "ns/dev"
	undoable map[string]bool   // undo steps on the stack, by kind and object
	index    map[string]int    // device indexes by "ns/dev", see withLink
	// appliers carry out each setting kind's steps, by the kind's key; applied are their
	// records of the state applied last, by kind and target (Apply, Drift).
	appliers map[string]SettingApplier
	applied  map[string]map[string]any
	kept     bool // the topology outlives the process: its XDP links are pinned
	// sysfsDevices are the devices some state sets a sysfs knob of (threaded, ...): their
	// read-back includes those knobs, which cost a mount of the namespace's sysfs.
	sysfsDevices map[string]bool
	big          *bigCounting // CountBigPackets

	ovsClient *ovs.Client
	ovsInst   *ovs.Instance
	failed    chan error // a daemon the topology depends on died
	csumOffOn []string   // devices with tx checksum offload turned off for the userspace datapath

	mu   sync.Mutex
	undo []undoEntry
	// sweep reports when the processes in the run's namespaces are gone: the teardown kills
	// them while it unmounts the namespaces, and waits for it before it removes the state file.
	sweep chan error
}

// waitSweep waits for the teardown's killing of the processes in the run's namespaces.
func (l *Live) waitSweep() error {
	if l.sweep == nil {
		return nil
	}
	err := <-l.sweep
	l.sweep <- err // a later call gets the same answer
	return err
}

// namespacePaths are the mounts of the run's own namespaces.
func (l *Live) namespacePaths() []string {
	var out []string
	for _, sp := range l.spaces {
		if !sp.root {
			out = append(out, filepath.Join(runstate.NetnsDir, sp.name))
		}
	}
	return out
}

type space struct {
	root bool   // the namespace nsperf runs in (an existing OVS's): never deleted
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
	// The namespaces are recorded with the claim, before any exists: one write of the state
	// file instead of two.
	var names []string
	for _, s := range p.Steps {
		if s.Kind == plan.AddNamespace {
			names = append(names, p.RunID.Namespace(s.NS))
		}
	}
	owner, err := runstate.Claim(p.RunID, p.Scenario.Name, opt.Kept, names...)
	if err != nil {
		return nil, err
	}
	l := &Live{ID: p.RunID, Plan: p, owner: owner, spaces: map[string]*space{}, pristine: map[string]Attrs{},
		undoable: map[string]bool{}, index: map[string]int{}, appliers: newAppliers(), kept: opt.Kept,
		sysfsDevices: scenarios.SysfsDevices(p.Scenario), failed: make(chan error, 2)}
	l.push("remove state file and lock", func() error {
		// While processes of the run may live on, the state file stays for nsperf cleanup.
		if err := l.waitSweep(); err != nil {
			return err
		}
		return owner.Release()
	})
	if o := p.Scenario.Topology.OVS; o != nil && o.DB != "" {
		// An existing OVS runs in this (root) namespace: its bridges' ports are created here.
		if err := l.rootSpace(); err != nil {
			return nil, errors.Join(err, l.Teardown())
		}
	}
	if err := l.addNamespaces(p.Steps); err != nil {
		return nil, errors.Join(err, l.Teardown())
	}
	var steps []plan.Step
	for _, step := range p.Steps {
		if step.Kind != plan.AddNamespace && !(step.Kind == plan.SetUp && step.Dev == "lo") {
			steps = append(steps, step) // the others were made above, all at once, with lo up
		}
	}
	if err := l.buildSteps(steps); err != nil {
		return nil, errors.Join(err, l.Teardown())
	}
	for _, ep := range p.Scenario.Devices() {
		a, err := l.ReadAttrs(ep.Ref())
		if err != nil {
			return nil, errors.Join(err, l.Teardown())
		}
		l.pristine[ep.Ref()] = a
	}
	err = settingHooks(l, func(a SettingApplier) error {
		if b, ok := a.(settingBuilt); ok {
			return b.Built(l) // what the kind needs of the topology as built
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, l.Teardown())
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
	// Deleting the namespace removes its devices; deleting one on its own costs an RCU grace
	// period (15-30 ms). Only a device in the root namespace (an existing OVS's) outlives it.
	if sp := l.spaces[u.NS]; u.WithNamespace && sp != nil && !sp.root {
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
		if l.sweep == nil {
			// One pass over /proc for every namespace of the run, not one per namespace, and
			// on another thread while the namespaces are unmounted: their identities are
			// taken now, while they are mounted.
			paths := l.namespacePaths()
			targets := runstate.NamespaceTargets(paths)
			l.sweep = make(chan error, 1)
			go func() { l.sweep <- runstate.KillTargets(targets, paths) }()
		}
		return removeNamespaceMount(sp.name)
	case plan.DelLink:
		return l.deleteLink(u.NS, u.Dev)
	case plan.StopOVS:
		return l.ovsInst.Stop()
	case plan.DelBridges:
		defer l.ovsClient.Close()
		ctx, cancel := waitlimit.Context(context.Background(), ovsRemoveTimeout)
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
	// The kinds' first (XDP programs: their links hold the devices, and nothing else would
	// close them).
	errs := []error{settingHooks(l, func(a SettingApplier) error {
		if t, ok := a.(settingTeardown); ok {
			return t.Teardown(l)
		}
		return nil
	})}
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

// Keep leaves the topology up beyond this process (`nsperf up`, `run --keep`): nsperf lets go
// of its handles on the XDP programs it attached, which their pins in bpffs hold from now on,
// and reads each device back; then the run's lock is released, so that `nsperf down` and
// `cleanup --all` may remove it; its state file stays. An XDP program that went with the
// handles is an error, the lock still held: the caller tears the topology down.
func (l *Live) Keep() error {
	err := settingHooks(l, func(a SettingApplier) error {
		if k, ok := a.(settingKeep); ok {
			return k.Keep(l)
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.owner.Unlock()
	return nil
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

// Fork runs start, which starts a child process, inside a scenario namespace on nsperf's
// forking thread (netnsx.Fork: a child's Pdeathsig follows the thread that forked it).
func (l *Live) Fork(ns string, start func() error) error {
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	return netnsx.Fork(sp.fd, start)
}

// Start runs argv in a scenario namespace (`ip netns exec NS argv...`).
func (l *Live) Start(ctx context.Context, ns string, argv []string) (proc.Process, error) {
	p, err := spawn.Start(ctx, argv, func(start func() error) error { return l.Fork(ns, start) })
	if errors.Is(err, exec.ErrNotFound) {
		return nil, err // says what to install
	}
	if err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", argv[0], ns, err)
	}
	return p, nil
}

// RunID is the run id the topology was built under.
func (l *Live) RunID() RunID { return l.ID }

// StateCommands are the commands that put the devices into a state, as `nsperf plan` prints
// them.
func (l *Live) StateCommands(st scenarios.State) []string {
	return plan.StateShell(l.Plan.StateSteps(st))
}

func (l *Live) do(s plan.Step) error {
	switch s.Kind {
	case plan.AddNamespace:
		return l.addNamespace(s)
	case plan.SetUp:
		return l.withLink(s.NS, s.Dev, func(h *netlink.Handle, link netlink.Link) error { return h.LinkSetUp(link) })
	case plan.AddVeth:
		return l.addVeth(s.NS, s.Dev, s.Peer, 0, s.Undo)
	case plan.AddLink:
		return l.addLink(s)
	case plan.StartOVS, plan.ConnectOVS:
		return l.startOVS(s)
	case plan.AddBridge:
		return l.addBridge(s)
	case plan.MoveLink:
		defer l.forget(s.NS, s.Dev)
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
	case plan.SetSysctls:
		return l.Do(s.NS, func() error {
			for _, name := range slices.Sorted(maps.Keys(s.Sysctls)) {
				if err := writeSysctl(s.NS, name, s.Sysctls[name]); err != nil {
					return err
				}
			}
			return nil
		})
	case plan.AddRoute:
		return l.addRoute(s.Route)
	}
	return fmt.Errorf("unknown step kind %q", s.Kind)
}

// buildSteps carries out the steps after the namespaces, in order. (Running the veth pairs in
// parallel was measured and gained nothing: the kernel serialises link changes under the
// RTNL lock.)
func (l *Live) buildSteps(steps []plan.Step) error {
	for _, step := range steps {
		if err := l.do(step); err != nil {
			return fmt.Errorf("build step (%s): %w", step.Do, err)
		}
	}
	return nil
}

// addNamespaces makes every namespace of the plan at once: `ip netns add NAME; ip -n NAME
// link set lo alias nsperf:RUNID` each. The names are recorded in the state file first (one
// write), so that a crash right after creating them still leaves a trace for `nsperf
// cleanup`; the alias is the marker without which cleanup leaves a namespace alone. They are
// created in parallel, one thread each; each one made is registered, with its undo, even when
// another fails.
func (l *Live) addNamespaces(steps []plan.Step) error {
	var todo []plan.Step
	recorded := true
	for _, s := range steps {
		if s.Kind == plan.AddNamespace {
			todo = append(todo, s)
			if full := l.ID.Namespace(s.NS); !slices.Contains(l.owner.Namespaces, full) {
				l.owner.Namespaces = append(l.owner.Namespaces, full)
				recorded = false
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if !recorded { // each namespace is in the state file before it exists
		if err := l.owner.Save(); err != nil {
			return err
		}
	}
	made := make([]*space, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, s := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			made[i], errs[i] = newSpace(l.ID, s.NS)
		}()
	}
	wg.Wait()
	for i, s := range todo {
		if made[i] != nil {
			l.spaces[s.NS] = made[i]
			l.index[s.NS+"/lo"] = runstate.Loopback.Index
			l.pushUndo(s.Undo)
		}
	}
	return errors.Join(errs...)
}

// newSpace creates one namespace with its netlink handle and the run's marker. A namespace
// that exists is returned with the error of the step that failed after it.
func newSpace(id RunID, ns string) (*space, error) {
	full := id.Namespace(ns)
	fd, err := netnsx.NewNamed(full)
	if err != nil {
		return nil, err
	}
	sp := &space{name: full, fd: fd}
	if sp.nl, err = netlink.NewHandleAt(fd, unix.NETLINK_ROUTE); err != nil {
		return sp, fmt.Errorf("netlink handle in %s: %w", full, err)
	}
	if err := runstate.Mark(sp.nl, id); err != nil {
		return sp, err
	}
	// The plan's next step, `ip -n NAME link set lo up`, done here, in parallel too.
	if err := sp.nl.LinkSetUp(runstate.Loopback); err != nil {
		return sp, fmt.Errorf("%s: lo up: %w", full, err)
	}
	return sp, nil
}

// addNamespace makes one namespace (a plan step carried out on its own).
func (l *Live) addNamespace(s plan.Step) error { return l.addNamespaces([]plan.Step{s}) }

// deleteLink: `ip -n NS link del DEV`; a device already gone is success.
func (l *Live) deleteLink(ns, dev string) error {
	l.forget(ns, dev)
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
	a, err := l.ReadAttrs(ref)
	if err != nil {
		return err
	}
	l.pristine[ref] = a
	return settingHooks(l, func(a SettingApplier) error {
		if r, ok := a.(settingRecreated); ok {
			return r.Recreated(l, ref) // a device created anew is as built anew
		}
		return nil
	})
}

// withLink runs fn with a device to change: what the changes need of it is its index, which
// is looked up once (`ip link show DEV`) and kept until nsperf deletes or moves the device.
func (l *Live) withLink(ns, dev string, fn func(*netlink.Handle, netlink.Link) error) error {
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	ref := ns + "/" + dev
	if idx, ok := l.index[ref]; ok {
		return fn(sp.nl, &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: idx, Name: dev}})
	}
	link, err := l.lookup(ns, dev)
	if err != nil {
		return err
	}
	return fn(sp.nl, link)
}

// lookup reads a device afresh (`ip -d link show DEV`) and remembers its index.
func (l *Live) lookup(ns, dev string) (netlink.Link, error) {
	sp, ok := l.spaces[ns]
	if !ok {
		return nil, fmt.Errorf("no namespace %s in this topology", ns)
	}
	link, err := sp.nl.LinkByName(dev)
	if err != nil {
		delete(l.index, ns+"/"+dev)
		return nil, fmt.Errorf("%s/%s: %w", ns, dev, err)
	}
	l.index[ns+"/"+dev] = link.Attrs().Index
	return link, nil
}

// forget drops what is known of a device nsperf deletes or moves.
func (l *Live) forget(ns, dev string) { delete(l.index, ns+"/"+dev) }

// ReadAttrs reads the effective attributes of a device ("ns/dev"), always from the kernel.
func (l *Live) ReadAttrs(ref string) (Attrs, error) {
	ns, dev := splitRef(ref)
	link, err := l.lookup(ns, dev)
	if err != nil {
		return nil, err
	}
	a := attrsOf(link)
	if l.sysfsDevices[ref] {
		if err := l.readSysfsKnobs(ref, a); err != nil {
			return nil, err
		}
	}
	return a, nil
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
