package scenarios

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
)

// RouteSettings are the attributes a state gives one route of a namespace while it is
// measured (`ip -n NS route change TO ... initcwnd 40 quickack 1`): the knobs TCP patches
// about connection start and ACKs are measured with. Those a state leaves out, and every
// attribute of a route a state does not name, are as the route was built.
type RouteSettings struct {
	InitCwnd *int    `yaml:"initcwnd"` // segments, 1 to 1024; 0: the kernel's default
	InitRwnd *int    `yaml:"initrwnd"`
	QuickACK *bool   `yaml:"quickack"`
	Congctl  *string `yaml:"congctl"` // a congestion control for the route's connections; "": none of its own
}

// Args are the route attributes as iproute2 writes them, in its order.
func (r RouteSettings) Args() []string {
	var out []string
	if r.InitCwnd != nil {
		out = append(out, "initcwnd", strconv.Itoa(*r.InitCwnd))
	}
	if r.InitRwnd != nil {
		out = append(out, "initrwnd", strconv.Itoa(*r.InitRwnd))
	}
	if r.QuickACK != nil {
		out = append(out, "quickack", map[bool]string{true: "1", false: "0"}[*r.QuickACK])
	}
	if r.Congctl != nil && *r.Congctl != "" {
		out = append(out, "congctl", *r.Congctl)
	}
	return out
}

// StateRoute returns the route a state's routes.NS.TO names: the topology's route to TO in NS,
// or the route the kernel made for the subnet of an address of a device in NS (`proto kernel
// scope link`), as a Route with its device. TO is a prefix, default or default6.
func (s *Scenario) StateRoute(ns, to string) (Route, bool) {
	want := Route{To: to}.Prefix()
	if !want.IsValid() {
		return Route{}, false
	}
	for _, r := range s.Topology.Routes {
		if r.NS == ns && r.Prefix() == want {
			return r, true
		}
	}
	for _, ep := range s.Devices() {
		if ep.NS != ns {
			continue
		}
		for _, a := range ep.Addrs {
			if p, err := netip.ParsePrefix(a); err == nil && p.Masked() == want {
				return Route{NS: ns, To: want.String(), Dev: ep.Name}, true
			}
		}
	}
	return Route{}, false
}

// RouteAttrs give routes attributes while a state is measured (`ip -n NS route change TO
// ... initcwnd 40`), key: the namespace, then the route's destination: a route of the
// topology, or the kernel's route to a device's subnet (StateRoute).
type RouteAttrs map[string]map[string]RouteSettings

func init() { registerSetting(func() Setting { return RouteAttrs{} }) }

// Key implements Setting.
func (RouteAttrs) Key() string { return "routes" }

// Names implements Named: the attributes it gives a route (initcwnd, initrwnd, quickack,
// congctl).
func (r RouteAttrs) Names() []string {
	var out []string
	for _, routes := range r {
		for _, set := range routes {
			for i, a := range set.Args() {
				if i%2 == 0 {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// Scope implements Setting.
func (RouteAttrs) Scope() Scope { return NamespaceScope }

// Phases implements Setting: after the sysctls.
func (RouteAttrs) Phases() []int { return []int{PhaseRoutes} }

// MayDiffer implements Setting.
func (RouteAttrs) MayDiffer() bool { return false }

// Targets implements Setting: "ns/to" for each route.
func (r RouteAttrs) Targets() []string {
	var out []string
	for ns, routes := range r {
		for to := range routes {
			out = append(out, ns+"/"+to)
		}
	}
	slices.Sort(out)
	return out
}

// Attrs are the attributes the value gives a route ("ns/to"), and whether it names it.
func (r RouteAttrs) Attrs(target string) (RouteSettings, bool) {
	ns, to := SplitTarget(target)
	rs, ok := r[ns][to]
	return rs, ok
}

// Command implements Setting: `ip -n NS route change TO via VIA dev DEV initcwnd N ...`.
func (r RouteAttrs) Command(target string, _ int, sh Shell) string {
	rs, set := r.Attrs(target)
	ns, to := SplitTarget(target)
	route, ok := sh.Scenario.StateRoute(ns, to)
	if !set || !ok {
		return ""
	}
	args := []string{"ip", "-n", sh.NS(ns), "route", "change", route.Prefix().String()}
	if route.Via != "" {
		args = append(args, "via", route.Via)
	}
	if route.Dev != "" {
		args = append(args, "dev", route.Dev)
	}
	return shellq.Join(append(args, rs.Args()...))
}

// Kernel implements Setting: the modules of the congestion controls it names.
func (r RouteAttrs) Kernel() KernelNeeds {
	var out KernelNeeds
	for _, routes := range r {
		for _, rs := range routes {
			if rs.Congctl != nil {
				if m, ok := congestionModule(*rs.Congctl); ok {
					out.Modules = append(out.Modules, m)
				}
			}
		}
	}
	return out
}

// Check implements Setting: a namespace of the topology, a route of it (declared, or the
// kernel's for a device's subnet), and attributes in range.
func (r RouteAttrs) Check(c *SettingCheck) {
	for _, ns := range slices.Sorted(maps.Keys(r)) {
		if !c.Namespace(ns, ns) {
			continue
		}
		for _, to := range slices.Sorted(maps.Keys(r[ns])) {
			sub := ns + "." + to
			if !(Route{To: to}).Prefix().IsValid() {
				c.Problem(sub, "%q: want a prefix (198.19.0.0/24, 2001:3::/64), default or default6", to)
				continue
			}
			if _, ok := c.Scenario.StateRoute(ns, to); !ok {
				c.Problem(sub, "namespace %s has no route to %s: name a route of topology.routes, or the subnet of an address of one of its devices (e.g. 198.18.0.0/24 for 198.18.0.1/24)", ns, to)
				continue
			}
			rs := r[ns][to]
			for key, n := range map[string]*int{"initcwnd": rs.InitCwnd, "initrwnd": rs.InitRwnd} {
				if n != nil && (*n < 0 || *n > 1024) {
					c.Problem(sub+"."+key, "%d: want 1 to 1024 segments, or 0 for the kernel's default", *n)
				}
			}
			if rs.Congctl != nil && *rs.Congctl != "" && !congctlRE.MatchString(*rs.Congctl) {
				c.Problem(sub+".congctl", "%q is not a congestion control's name (e.g. cubic, bbr, reno)", *rs.Congctl)
			}
			if rs == (RouteSettings{}) {
				c.Problem(sub, "no attribute: set initcwnd, initrwnd, quickack or congctl, or leave the route out")
			}
		}
	}
}

// CongestionControls are the congestion controls the scenario's topology names, in its routes
// and its sysctls (knobs.CongestionControlSysctl), sorted: each is a kernel module (tcp_bbr)
// unless built in. A state's are its settings' (Setting.Kernel).
func (s *Scenario) CongestionControls() []string {
	seen := map[string]bool{}
	for _, c := range s.Expand() {
		for _, r := range c.Scenario.Topology.Routes {
			if r.Congctl != "" {
				seen[r.Congctl] = true
			}
		}
		for _, set := range c.Scenario.Topology.Sysctls {
			if name := strings.TrimSpace(set[knobs.CongestionControlSysctl]); name != "" {
				seen[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// CongestionModule is the module and config option of a congestion control (tcp_bbr,
// TCP_CONG_BBR); reno is the kernel's own and has none.
func CongestionModule(name string) (module, option string, ok bool) {
	if name == "reno" {
		return "", "", false
	}
	return "tcp_" + name, "TCP_CONG_" + strings.ToUpper(name), true
}
