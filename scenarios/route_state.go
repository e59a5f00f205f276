package scenarios

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

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

// StateRouteKeys are the routes any state of the scenario gives attributes to, as "ns" and
// "to" pairs, sorted: those a state that leaves them out resets to their built attributes.
func (s *Scenario) StateRouteKeys() [][2]string {
	seen := map[[2]string]bool{}
	for _, st := range s.States {
		for ns, routes := range st.Routes {
			for to := range routes {
				seen[[2]string{ns, to}] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
}

// stateRoutes checks a state's routes: a namespace of the topology, a route of it (declared,
// or the kernel's for a device's subnet), and attributes in range.
func (v *validator) stateRoutes(path string, st State, namespaces map[string]bool) {
	for _, ns := range slices.Sorted(maps.Keys(st.Routes)) {
		npath := path + ".routes." + ns
		if !namespaces[ns] {
			v.add(npath, "no namespace %s in the topology%s", ns, have(namespaces))
			continue
		}
		for _, to := range slices.Sorted(maps.Keys(st.Routes[ns])) {
			rpath := npath + "." + to
			if !(Route{To: to}).Prefix().IsValid() {
				v.add(rpath, "%q: want a prefix (198.19.0.0/24, 2001:3::/64), default or default6", to)
				continue
			}
			if _, ok := v.s.StateRoute(ns, to); !ok {
				v.add(rpath, "namespace %s has no route to %s: name a route of topology.routes, or the subnet of an address of one of its devices (e.g. 198.18.0.0/24 for 198.18.0.1/24)", ns, to)
				continue
			}
			rs := st.Routes[ns][to]
			for key, n := range map[string]*int{"initcwnd": rs.InitCwnd, "initrwnd": rs.InitRwnd} {
				if n != nil && (*n < 0 || *n > 1024) {
					v.add(rpath+"."+key, "%d: want 1 to 1024 segments, or 0 for the kernel's default", *n)
				}
			}
			if rs.Congctl != nil && *rs.Congctl != "" && !congctlRE.MatchString(*rs.Congctl) {
				v.add(rpath+".congctl", "%q is not a congestion control's name (e.g. cubic, bbr, reno)", *rs.Congctl)
			}
			if rs == (RouteSettings{}) {
				v.add(rpath, "no attribute: set initcwnd, initrwnd, quickack or congctl, or leave the route out")
			}
		}
	}
}

// CongestionControls are the congestion controls the scenario's routes name, topology's and
// states', and its sysctls (knobs.CongestionControlSysctl), sorted: each is a kernel module
// (tcp_bbr) unless built in.
func (s *Scenario) CongestionControls() []string {
	seen := map[string]bool{}
	sysctls := func(byNS map[string]map[string]string) {
		for _, set := range byNS {
			if name := strings.TrimSpace(set[knobs.CongestionControlSysctl]); name != "" {
				seen[name] = true
			}
		}
	}
	for _, c := range s.Expand() {
		for _, r := range c.Scenario.Topology.Routes {
			if r.Congctl != "" {
				seen[r.Congctl] = true
			}
		}
		sysctls(c.Scenario.Topology.Sysctls)
		for _, st := range c.Scenario.States {
			sysctls(st.Sysctls)
			for _, routes := range st.Routes {
				for _, rs := range routes {
					if rs.Congctl != nil && *rs.Congctl != "" {
						seen[*rs.Congctl] = true
					}
				}
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
