package topo

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	// Per end: `d=$(grep -lx MAC /sys/class/net/*/address | cut -d/ -f5) && ip link set dev
	// "$d" netns NS && ip -n NS link set dev "$d" name NAME && ip -n NS link set NAME alias A`.
	// Its undo moves it back (deleting the namespace would too, but only once the kernel's
	// netns cleanup runs, a moment later: a next case would not find it).
	linkMakers["nic"] = func(l *Live, spec scenarios.LinkSpec, _ *plan.Step) error {
		n := spec.(*scenarios.NICPair)
		for i, end := range n.Devices() {
			if err := l.takeNIC(end, n.EmulatedNICs()[i], n.MTU); err != nil {
				return err
			}
		}
		return nil
	}
}

// takeNIC moves the emulated NIC nic into end's namespace under end's name.
func (l *Live) takeNIC(end scenarios.Endpoint, nic scenarios.EmulatedNIC, mtu int) error {
	rootNS, err := netns.Get() // nsperf's own namespace: the one the guest's NICs are in
	if err != nil {
		return err
	}
	root, err := netlink.NewHandleAt(rootNS, unix.NETLINK_ROUTE)
	if err != nil {
		rootNS.Close()
		return err
	}
	defer root.Close()
	link, err := findByMAC(root, nic.MAC)
	if err != nil {
		rootNS.Close()
		return err
	}
	if link == nil {
		rootNS.Close()
		sc := l.Plan.Scenario
		return capability.Missing(fmt.Sprintf("scenario %s: link %s/%s: this machine has no emulated %s NIC with MAC %s: a NIC pair is QEMU's, in a guest nsperf boots with it: run with --kernel (e.g. --kernel 6.12)",
			sc.Name, end.NS, end.Name, nic.Device, nic.MAC))
	}
	if err := root.LinkSetDown(link); err != nil {
		return fmt.Errorf("%s (%s): down: %w", link.Attrs().Name, nic.MAC, err)
	}
	sp := l.spaces[end.NS]
	if err := root.LinkSetNsFd(link, int(sp.fd)); err != nil {
		rootNS.Close()
		return fmt.Errorf("%s (%s): into namespace %s: %w", link.Attrs().Name, nic.MAC, end.NS, err)
	}
	// Back under a name of its MAC's: the ends of two pairs may share a name (eth0 in each
	// namespace), which the root namespace holds once.
	home := "nic" + strings.ReplaceAll(nic.MAC[9:], ":", "")
	l.push(fmt.Sprintf("ip -n %s link set %s name %s netns 1", sp.name, end.Name, home), func() error {
		defer rootNS.Close()
		back, err := findByMAC(sp.nl, nic.MAC)
		if err != nil || back == nil {
			return err // gone with its namespace already
		}
		l.forget(end.NS, end.Name)
		if err := sp.nl.LinkSetDown(back); err != nil {
			return err
		}
		if err := sp.nl.LinkSetName(back, home); err != nil {
			return err
		}
		return sp.nl.LinkSetNsFd(back, int(rootNS))
	})
	moved, err := findByMAC(sp.nl, nic.MAC)
	if err != nil || moved == nil {
		return fmt.Errorf("%s (%s): not in namespace %s after the move: %v", link.Attrs().Name, nic.MAC, end.NS, err)
	}
	if err := sp.nl.LinkSetName(moved, end.Name); err != nil {
		return fmt.Errorf("%s/%s (%s): rename from %s: %w", end.NS, end.Name, nic.MAC, moved.Attrs().Name, err)
	}
	return l.withLink(end.NS, end.Name, func(h *netlink.Handle, dev netlink.Link) error {
		if mtu != 0 {
			if err := h.LinkSetMTU(dev, mtu); err != nil {
				return fmt.Errorf("%s/%s: mtu %d: %w", end.NS, end.Name, mtu, err)
			}
		}
		return h.LinkSetAlias(dev, l.ID.Alias())
	})
}

// findByMAC is the device of h's namespace with the MAC address mac, nil if none has it.
func findByMAC(h *netlink.Handle, mac string) (netlink.Link, error) {
	want, err := net.ParseMAC(mac)
	if err != nil {
		return nil, err
	}
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	for _, link := range links {
		if bytes.Equal(link.Attrs().HardwareAddr, want) {
			return link, nil
		}
	}
	return nil, nil
}

// carrierWait bounds the wait for an emulated NIC's link: an e1000e's comes up a moment after
// the reset an MTU change or up makes (QEMU emulates the autonegotiation).
const carrierWait = 10 * time.Second

// awaitCarrier waits until every device of an emulated NIC pair has its link up (`ip link
// show DEV` says LOWER_UP): until then the kernel routes nothing through it ("No route to
// host").
func (l *Live) awaitCarrier() error {
	var ends []scenarios.Endpoint
	for _, link := range l.Plan.Scenario.Topology.Links {
		if _, ok := link.Spec().(scenarios.Emulated); ok {
			ends = append(ends, link.Spec().Devices()...)
		}
	}
	if len(ends) == 0 {
		return nil
	}
	ctx, cancel := waitlimit.Context(context.Background(), carrierWait)
	defer cancel()
	for _, end := range ends {
		for {
			dev, err := l.lookup(end.NS, end.Name)
			if err != nil {
				return err
			}
			if dev.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s/%s: no carrier after %s: the emulated NIC's link did not come up", end.NS, end.Name, carrierWait)
			case <-time.After(waitlimit.Poll):
			}
		}
	}
	return nil
}
