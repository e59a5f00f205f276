package topo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
)

// addRoute adds a route of the topology in its namespace: `ip -n NS route add TO via VIA [dev
// DEV] [initcwnd N] [initrwnd N] [quickack 1] [congctl NAME]`. It goes with the namespace.
func (l *Live) addRoute(r *scenarios.Route) error {
	sp, ok := l.spaces[r.NS]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", r.NS)
	}
	to := r.Prefix()
	route := &netlink.Route{Dst: &net.IPNet{IP: to.Addr().AsSlice(), Mask: net.CIDRMask(to.Bits(), to.Addr().BitLen())},
		InitCwnd: r.InitCwnd, InitRwnd: r.InitRwnd, Congctl: r.Congctl}
	if r.QuickACK {
		route.QuickACK = 1
	}
	if gw := r.Gateway(); gw.IsValid() {
		route.Gw = gw.AsSlice()
	}
	if e := r.Encap; e != nil {
		route.Encap = &ipEncap{id: uint64(e.ID), dst: netip.MustParseAddr(e.Dst)} // validated by the loader
	}
	if r.Dev != "" {
		link, err := l.lookup(r.NS, r.Dev)
		if err != nil {
			return err
		}
		route.LinkIndex = link.Attrs().Index
	}
	err := sp.nl.RouteAdd(route)
	// ip_metrics_convert answers an unknown congestion control (after trying to load its
	// module) with EINVAL, "Unknown tcp congestion algorithm".
	if r.Congctl != "" && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT)) {
		return &capability.Error{Reasons: []string{fmt.Sprintf("route %s in %s: congctl %s: %s", to, r.NS, r.Congctl, routeCongestionControl(r.Congctl))}}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.Command(l.ID.Namespace), err)
	}
	return nil
}

// The lightweight tunnel attributes of include/uapi/linux/lwtunnel.h that the netlink library
// lacks (it has IPv6's only as IP6tnlEncap, whose ID it writes little-endian).
const (
	lwtunnelEncapIP  = 2
	lwtunnelEncapIP6 = 4
	lwtunnelIPID     = 1 // __be64, both families
	lwtunnelIPDst    = 2
)

// ipEncap is a route's `encap ip id ID dst DST` (or ip6): the tunnel keys an external tunnel
// device sends the route's packets with.
type ipEncap struct {
	id  uint64
	dst netip.Addr
}

func (e *ipEncap) Type() int {
	if e.dst.Is6() {
		return lwtunnelEncapIP6
	}
	return lwtunnelEncapIP
}

func (e *ipEncap) Encode() ([]byte, error) {
	id := make([]byte, 8)
	binary.BigEndian.PutUint64(id, e.id)
	var out []byte
	for _, a := range []struct {
		typ   uint16
		value []byte
	}{{lwtunnelIPID, id}, {lwtunnelIPDst, e.dst.AsSlice()}} {
		attr := make([]byte, 4, 4+len(a.value))
		binary.NativeEndian.PutUint16(attr, uint16(4+len(a.value)))
		binary.NativeEndian.PutUint16(attr[2:], a.typ)
		out = append(out, append(attr, a.value...)...) // both values are 4-byte aligned
	}
	return out, nil
}

func (e *ipEncap) Decode([]byte) error {
	return errors.New("reading a route's ip encap back is not needed")
}

func (e *ipEncap) String() string { return fmt.Sprintf("ip id %d dst %s", e.id, e.dst) }

func (e *ipEncap) Equal(o netlink.Encap) bool {
	other, ok := o.(*ipEncap)
	return ok && *other == *e
}
