package topo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/plan"
)

// rootSpace makes the namespace nsperf runs in the "ovs" namespace, for an existing OVS. It is
// not nsperf's to delete.
func (l *Live) rootSpace() error {
	fd, err := netns.Get()
	if err != nil {
		return fmt.Errorf("current network namespace: %w", err)
	}
	nl, err := netlink.NewHandleAt(fd, unix.NETLINK_ROUTE)
	if err != nil {
		fd.Close()
		return err
	}
	sp := &space{root: true, name: "(root)", fd: fd, nl: nl}
	l.spaces[scenarios.OVSNamespace] = sp
	l.push("close root namespace handles", func() error {
		nl.Close()
		if sp.eth != nil {
			sp.eth.Close()
		}
		return fd.Close()
	})
	return nil
}

// startOVS starts the private instance in the ovs namespace, or connects to an existing OVS,
// and records what cleanup needs in the state file.
func (l *Live) startOVS(s plan.Step) error {
	ctx, cancel := waitlimit.Context(context.Background(), OVSTimeout)
	defer cancel()
	if s.Kind == plan.ConnectOVS {
		l.owner.OVSDB = s.DB
		if err := l.owner.Save(); err != nil {
			return err
		}
		c, err := ovs.Connect(ctx, s.DB)
		if err != nil {
			return err
		}
		l.ovsClient = c
		l.pushUndo(s.Undo)
		return nil
	}
	dir := s.Dir
	l.owner.Dirs = append(l.owner.Dirs, dir)
	if err := l.owner.Save(); err != nil {
		return err
	}
	in, err := ovs.Start(ctx, dir, func(start func() error) error { return l.Fork(s.NS, start) })
	if err != nil {
		return err
	}
	l.ovsInst, l.ovsClient = in, in.Client
	l.pushUndo(s.Undo)
	go func() {
		if err, ok := <-in.Died(); ok {
			l.failed <- err
		}
	}()
	return nil
}

// addBridge creates a bridge with its ports in one transaction, waits until ovs-vswitchd has
// carried it out, and until the internal ports exist as devices.
func (l *Live) addBridge(s plan.Step) error {
	ctx, cancel := waitlimit.Context(context.Background(), OVSTimeout)
	defer cancel()
	c := l.ovsClient
	b := ovs.BridgeSpec{Name: s.Bridge.Name, Datapath: s.Bridge.Datapath, RunID: s.Bridge.RunID}
	for _, p := range s.Bridge.Ports {
		b.Ports = append(b.Ports, ovs.PortSpec{Name: p.Name, Internal: p.Internal})
	}
	if err := c.AddBridge(ctx, b); err != nil {
		return err
	}
	if err := c.WaitApplied(ctx); err != nil {
		if errs, _ := c.InterfaceErrors(context.Background(), string(l.ID)); len(errs) > 0 {
			err = fmt.Errorf("%w; interface errors: %v", err, errs)
		}
		return err
	}
	sp := l.spaces[s.NS]
	for _, p := range s.Bridge.Ports {
		if !p.Internal {
			continue
		}
		deadline := time.Now().Add(waitlimit.Of(OVSTimeout))
		for {
			link, err := sp.nl.LinkByName(p.Name)
			if err == nil {
				if err := sp.nl.LinkSetAlias(link, l.ID.Alias()); err != nil {
					return err
				}
				break
			}
			if time.Now().After(deadline) {
				errs, _ := c.InterfaceErrors(context.Background(), string(l.ID))
				return fmt.Errorf("internal port %s did not appear in %s: %w (interface errors: %v)", p.Name, sp.name, err, errs)
			}
			time.Sleep(waitlimit.Poll)
		}
	}
	return nil
}

// txCsumOff turns tx checksum offload off on a device (`ethtool -K DEV tx off`): every
// tx-checksum-* feature that is on and can change. TSO depends on it and goes off too.
func (l *Live) txCsumOff(ref string) error {
	ns, dev := splitRef(ref)
	e, err := l.ethtoolIn(ns)
	if err != nil {
		return err
	}
	all, err := e.FeaturesWithState(dev)
	if err != nil {
		return fmt.Errorf("read features of %s: %w", ref, err)
	}
	want := map[string]bool{}
	for name, st := range all {
		if strings.HasPrefix(name, "tx-checksum-") && st.Active && st.Available {
			want[name] = false
		}
	}
	if len(want) > 0 {
		if _, err := l.applyFeatures(ref, want); err != nil {
			return err
		}
	}
	l.csumOffOn = append(l.csumOffOn, ref)
	return nil
}

// Warnings says what about the topology makes its figures unlike the kernel path it stands
// for.
func (l *Live) Warnings() []string {
	if len(l.csumOffOn) == 0 {
		return nil
	}
	devs := append([]string(nil), l.csumOffOn...)
	sort.Strings(devs)
	return []string{fmt.Sprintf("userspace datapath (netdev): tx checksum offload, and with it TSO, is off on %s, "+
		"as the userspace datapath needs it; these figures say nothing about BIG TCP or the kernel datapath", strings.Join(devs, ", "))}
}

// Failed delivers an error when a daemon the topology depends on (ovs-vswitchd,
// ovsdb-server) dies.
func (l *Live) Failed() <-chan error { return l.failed }

// OVS describes the Open vSwitch the topology uses: version, datapath, and private or existing.
func (l *Live) OVS() (version, datapath, mode string) {
	o := l.Plan.Scenario.Topology.OVS
	if o == nil {
		return "", "", ""
	}
	mode = "private"
	if o.DB != "" {
		mode = "existing " + o.DB
	}
	return ovs.Version(), l.Plan.Datapath(), mode
}
