package topo

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

func init() {
	// `ip -n NS link add NAME type MODE local L remote R [ttl T]`
	linkMakers["tunnel"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		t := spec.(*scenarios.IPTunnel)
		local, remote := net.ParseIP(t.Local), net.ParseIP(t.Remote)
		attrs := netlink.LinkAttrs{Name: t.Name, MTU: t.MTU}
		ttl := uint8(t.TTL)
		var dev netlink.Link
		// The library sends every attribute, zeros too: iproute2's defaults are given here
		// (path MTU discovery on; ip6tnl's hop limit 64 and encapsulation limit 4).
		switch t.Mode {
		case "ipip":
			dev = &netlink.Iptun{LinkAttrs: attrs, Local: local, Remote: remote, Ttl: ttl, PMtuDisc: 1}
		case "sit":
			dev = &netlink.Sittun{LinkAttrs: attrs, Local: local, Remote: remote, Ttl: ttl, PMtuDisc: 1}
		case "gre", "ip6gre": // netlink.Gretun is ip6gre when its local address is IPv6
			dev = &netlink.Gretun{LinkAttrs: attrs, Local: local, Remote: remote, Ttl: ttl, PMtuDisc: 1}
		case "ip6tnl":
			if ttl == 0 {
				ttl = 64
			}
			// Proto 0 is `mode any`: IPv4 and IPv6 inside.
			dev = &netlink.Ip6tnl{LinkAttrs: attrs, Local: local, Remote: remote, Ttl: ttl, EncapLimit: 4}
		default:
			return fmt.Errorf("tunnel %s/%s: mode %q", t.NS, t.Name, t.Mode)
		}
		return l.addDevice(t.NS, dev, undo)
	}
}
