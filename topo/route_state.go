package topo

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/topo/plan"
)

// applyRoute gives a route the state's attributes, or its built ones when the state leaves it
// out, and reads it back: `ip -n NS route change TO via VIA dev DEV initcwnd N ...`. The first
// time a route is seen it is as built (the topology's, or the kernel's for a device's subnet);
// it goes with the namespace.
func (l *Live) applyRoute(s plan.Step) error {
	key := s.NS + "/" + s.Route.Prefix().String()
	have, err := l.findRoute(s.NS, s.Route.Prefix())
	if err != nil {
		return err
	}
	built, seen := l.pristineRoutes[key]
	if !seen {
		built = *have
		l.pristineRoutes[key] = built
	}
	want := built
	if rs := s.RouteAttrs; rs != nil {
		if rs.InitCwnd != nil {
			want.InitCwnd = *rs.InitCwnd
		}
		if rs.InitRwnd != nil {
			want.InitRwnd = *rs.InitRwnd
		}
		if rs.QuickACK != nil {
			want.QuickACK = map[bool]int{true: 1, false: 0}[*rs.QuickACK]
		}
		if rs.Congctl != nil {
			want.Congctl = *rs.Congctl
		}
	}
	if routeAttrs(have) != routeAttrs(&want) {
		err := l.spaces[s.NS].nl.RouteReplace(&want)
		if want.Congctl != "" && errors.Is(err, unix.EINVAL) { // ip_metrics_convert: "Unknown tcp congestion algorithm"
			return &capability.Error{Reasons: []string{fmt.Sprintf("route %s in %s: congctl %s: %s", s.Route.Prefix(), s.NS, want.Congctl, routeCongestionControl(want.Congctl))}}
		}
		if err != nil {
			return fmt.Errorf("ip -n %s route change %s %s: %w", s.NS, s.Route.Prefix(), routeAttrs(&want), err)
		}
		if have, err = l.findRoute(s.NS, s.Route.Prefix()); err != nil {
			return err
		}
		if got := routeAttrs(have); got != routeAttrs(&want) {
			return fmt.Errorf("route %s in %s reads back %q after setting %q", s.Route.Prefix(), s.NS, got, routeAttrs(&want))
		}
	}
	if l.routes[s.NS] == nil {
		l.routes[s.NS] = map[string]string{}
	}
	l.routes[s.NS][s.Route.Prefix().String()] = routeAttrs(have)
	return nil
}

// findRoute returns the route to a destination in a namespace's main table (`ip -n NS route
// show TO`), the one a state's routes name.
func (l *Live) findRoute(ns string, to netip.Prefix) (*netlink.Route, error) {
	sp, ok := l.spaces[ns]
	if !ok {
		return nil, fmt.Errorf("no namespace %s in this topology", ns)
	}
	family := netlink.FAMILY_V4
	if to.Addr().Is6() {
		family = netlink.FAMILY_V6
	}
	routes, err := sp.nl.RouteListFiltered(family, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("ip -n %s route show: %w", ns, err)
	}
	for i, r := range routes {
		dst := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if to.Addr().Is6() {
			dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		if r.Dst != nil {
			addr, _ := netip.AddrFromSlice(r.Dst.IP)
			ones, _ := r.Dst.Mask.Size()
			dst = netip.PrefixFrom(addr.Unmap(), ones)
		}
		if dst == to {
			return &routes[i], nil
		}
	}
	return nil, fmt.Errorf("namespace %s has no route to %s (ip -n %s route show %s)", ns, to, ns, to)
}

// routeAttrs are the attributes a state sets, as iproute2 prints them.
func routeAttrs(r *netlink.Route) string {
	var out []string
	if r.InitCwnd != 0 {
		out = append(out, fmt.Sprintf("initcwnd %d", r.InitCwnd))
	}
	if r.InitRwnd != 0 {
		out = append(out, fmt.Sprintf("initrwnd %d", r.InitRwnd))
	}
	if r.QuickACK != 0 {
		out = append(out, fmt.Sprintf("quickack %d", r.QuickACK))
	}
	if r.Congctl != "" {
		out = append(out, "congctl "+r.Congctl)
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, " ")
}

// Routes are the attributes of the routes any state sets, as read back after the state
// applied last, by namespace and destination.
func (l *Live) Routes() map[string]map[string]string {
	out := map[string]map[string]string{}
	for ns, m := range l.routes {
		out[ns] = maps.Clone(m)
	}
	return out
}

// routeDrift says which routes' attributes changed since the state was applied.
func (l *Live) routeDrift() ([]string, error) {
	var out []string
	for _, ns := range slices.Sorted(maps.Keys(l.routes)) {
		for _, to := range slices.Sorted(maps.Keys(l.routes[ns])) {
			r, err := l.findRoute(ns, netip.MustParsePrefix(to))
			if err != nil {
				return nil, err
			}
			if got, applied := routeAttrs(r), l.routes[ns][to]; got != applied {
				out = append(out, fmt.Sprintf("route %s in %s has %s, applied %s", to, ns, got, applied))
			}
		}
	}
	return out, nil
}
