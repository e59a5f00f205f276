package topo

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	linkMakers["vxlan"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		x := spec.(*scenarios.Vxlan)
		vx, err := l.vxlanDevice(x)
		if err != nil {
			return err
		}
		return l.addDevice(x.NS, vx, undo)
	}
}

// vxlanDevice is `ip -n NS link add NAME type vxlan id VNI local L remote R dstport P [dev U]`,
// created in its own namespace, which holds its underlay.
func (l *Live) vxlanDevice(x *scenarios.Vxlan) (*netlink.Vxlan, error) {
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
	if x.Underlay != "" {
		lower, err := l.spaces[x.NS].nl.LinkByName(x.Underlay)
		if err != nil {
			return nil, fmt.Errorf("underlay %s/%s: %w", x.NS, x.Underlay, err)
		}
		vx.VtepDevIndex = lower.Attrs().Index
	}
	return vx, nil
}
