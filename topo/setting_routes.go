package topo

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// routesApplier gives routes the attributes a state sets (scenarios.RouteAttrs), and those
// other states set their attributes as built.
type routesApplier struct {
	pristine map[string]netlink.Route // the routes any state sets attributes of, as built, by "ns/to"
}

func init() {
	RegisterApplier("routes", func() SettingApplier { return &routesApplier{pristine: map[string]netlink.Route{}} })
}

// Check: nothing to find before a route is changed (a congestion control the kernel lacks is
// the kernel's answer to the change).
func (a *routesApplier) Check(*Live, scenarios.Setting) []string { return nil }

// Apply gives a route ("ns/to") the state's attributes, or its built ones when the state
// leaves it out, and reads it back: `ip -n NS route change TO via VIA dev DEV initcwnd N
// ...`. The first time a route is seen it is as built (the topology's, or the kernel's for a
// device's subnet); it goes with the namespace. The record is its attributes as iproute2
// prints them.
func (a *routesApplier) Apply(l *Live, step plan.Step) (any, error) {
	ns, to := scenarios.SplitTarget(step.Target)
	route, ok := l.Plan.Scenario.StateRoute(ns, to)
	if !ok {
		return nil, fmt.Errorf("namespace %s has no route to %s", ns, to)
	}
	prefix := route.Prefix()
	have, err := l.findRoute(ns, prefix)
	if err != nil {
		return nil, err
	}
	built, seen := a.pristine[step.Target]
	if !seen {
		built = *have
		a.pristine[step.Target] = built
	}
	want := built
	attrs, _ := step.Setting.(scenarios.RouteAttrs)
	if rs, set := attrs.Attrs(step.Target); set {
		setRouteAttrs(&want, rs)
	}
	if routeAttrs(have) != routeAttrs(&want) {
		err := l.spaces[ns].nl.RouteReplace(&want)
		if want.Congctl != "" && errors.Is(err, unix.EINVAL) { // ip_metrics_convert: "Unknown tcp congestion algorithm"
			return nil, &capability.Error{Reasons: []string{fmt.Sprintf("route %s in %s: congctl %s: %s", prefix, ns, want.Congctl, routeCongestionControl(want.Congctl))}}
		}
		if err != nil {
			return nil, fmt.Errorf("ip -n %s route change %s %s: %w", ns, prefix, routeAttrs(&want), err)
		}
		if have, err = l.findRoute(ns, prefix); err != nil {
			return nil, err
		}
		if got := routeAttrs(have); got != routeAttrs(&want) {
			return nil, fmt.Errorf("route %s in %s reads back %q after setting %q", prefix, ns, got, routeAttrs(&want))
		}
	}
	return routeAttrs(have), nil
}

// setRouteAttrs gives a route the attributes a state sets.
func setRouteAttrs(r *netlink.Route, rs scenarios.RouteSettings) {
	if rs.InitCwnd != nil {
		r.InitCwnd = *rs.InitCwnd
	}
	if rs.InitRwnd != nil {
		r.InitRwnd = *rs.InitRwnd
	}
	if rs.QuickACK != nil {
		r.QuickACK = map[bool]int{true: 1, false: 0}[*rs.QuickACK]
	}
	if rs.Congctl != nil {
		r.Congctl = *rs.Congctl
	}
}

// Drift: whether a route's attributes changed since the state was applied.
func (a *routesApplier) Drift(l *Live, target string, record any) ([]string, error) {
	ns, to := scenarios.SplitTarget(target)
	prefix := scenarios.Route{To: to}.Prefix()
	r, err := l.findRoute(ns, prefix)
	if err != nil {
		return nil, err
	}
	if got, applied := routeAttrs(r), record.(string); got != applied {
		return []string{fmt.Sprintf("route %s in %s has %s, applied %s", prefix, ns, got, applied)}, nil
	}
	return nil, nil
}

// Record: the attributes of each route, by namespace and destination (its prefix).
func (a *routesApplier) Record(rec *results.StateRecord, records map[string]any) {
	for target, attrs := range records {
		ns, to := scenarios.SplitTarget(target)
		to = scenarios.Route{To: to}.Prefix().String()
		if rec.Routes == nil {
			rec.Routes = map[string]map[string]string{}
		}
		if rec.Routes[ns] == nil {
			rec.Routes[ns] = map[string]string{}
		}
		rec.Routes[ns][to] = attrs.(string)
	}
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
