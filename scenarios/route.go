package scenarios

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
)

// Route is a route in a namespace of the topology, with the attributes TCP patches are
// measured with: `ip -n NS route add TO via VIA [dev DEV] [initcwnd N] [initrwnd N]
// [quickack 1] [congctl NAME]`. A namespace between client and server that forwards (a
// router) needs routes in the client's and the server's namespaces through it, and
// net.ipv4.ip_forward (net.ipv6.conf.all.forwarding) in Topology.Sysctls.
type Route struct {
	NS       string `yaml:"ns"`
	To       string `yaml:"to"`  // a prefix (198.19.0.0/24, 2001:3::/64), or default (IPv4) / default6
	Via      string `yaml:"via"` // the gateway, on a subnet of the namespace; or only dev
	Dev      string `yaml:"dev"` // the device, in NS; default: the kernel's choice by via
	InitCwnd int    `yaml:"initcwnd"`
	InitRwnd int    `yaml:"initrwnd"`
	QuickACK bool   `yaml:"quickack"`
	Congctl  string `yaml:"congctl"` // a congestion control for the route's connections
	// Encap sends the route's packets through a tunnel device in external (collect_metadata)
	// mode with these tunnel keys: `encap ip id VNI dst R` (a geneve with external: true).
	Encap *RouteEncap `yaml:"encap"`
}

// RouteEncap is a route's lightweight tunnel: the tunnel id (a Geneve VNI) and the outer
// destination, the peer's underlay address.
type RouteEncap struct {
	ID  int    `yaml:"id"`
	Dst string `yaml:"dst"`
}

// Prefix is the route's destination.
func (r Route) Prefix() netip.Prefix {
	switch r.To {
	case "default":
		return netip.MustParsePrefix("0.0.0.0/0")
	case "default6":
		return netip.MustParsePrefix("::/0")
	}
	p, _ := netip.ParsePrefix(r.To)
	return p.Masked()
}

// Gateway is the route's gateway, the zero Addr without one.
func (r Route) Gateway() netip.Addr {
	a, _ := netip.ParseAddr(r.Via)
	return a
}

// Command is the iproute2 equivalent, ns giving a scenario namespace's full name.
func (r Route) Command(ns func(string) string) string {
	args := []string{"ip", "-n", ns(r.NS), "route", "add", r.Prefix().String()}
	if r.Via != "" {
		args = append(args, "via", r.Via)
	}
	if r.Dev != "" {
		args = append(args, "dev", r.Dev)
	}
	if r.InitCwnd > 0 {
		args = append(args, "initcwnd", fmt.Sprint(r.InitCwnd))
	}
	if r.InitRwnd > 0 {
		args = append(args, "initrwnd", fmt.Sprint(r.InitRwnd))
	}
	if r.QuickACK {
		args = append(args, "quickack", "1")
	}
	if r.Congctl != "" {
		args = append(args, "congctl", r.Congctl)
	}
	if r.Encap != nil {
		kind := "ip"
		if a, err := netip.ParseAddr(r.Encap.Dst); err == nil && a.Is6() {
			kind = "ip6"
		}
		args = append(args, "encap", kind, "id", fmt.Sprint(r.Encap.ID), "dst", r.Encap.Dst)
	}
	return shellq.Join(args)
}

var congctlRE = knobs.CongestionControlName

// routes checks each route: a namespace of the topology, a destination and a gateway of one
// family, a gateway on a subnet of the namespace's devices, a device of the namespace, and
// attributes in range. Topology sysctls are checked here too.
func (v *validator) routes(namespaces map[string]bool, devices map[string]*device) {
	for i, r := range v.s.Topology.Routes {
		path := fmt.Sprintf("topology.routes[%d]", i)
		if !namespaces[r.NS] {
			v.add(path+".ns", "no namespace %q in the topology%s", r.NS, have(namespaces))
			continue
		}
		to := r.Prefix()
		if !to.IsValid() {
			v.add(path+".to", "%q: want a prefix (198.19.0.0/24, 2001:3::/64), default or default6", r.To)
			continue
		}
		switch {
		case r.Via == "" && r.Dev == "":
			v.add(path, "a route needs via (a gateway) or dev")
		case r.Via != "" && !r.Gateway().IsValid():
			v.add(path+".via", "%q is not an address", r.Via)
		case r.Via != "" && r.Gateway().Is4() != to.Addr().Is4():
			v.add(path+".via", "%s and %s are of different families", r.Via, to)
		case r.Via != "" && !onLink(r.NS, r.Gateway(), devices):
			v.add(path+".via", "%s is on no subnet of namespace %s's devices: the kernel could not reach it", r.Via, r.NS)
		}
		if r.Dev != "" && devices[r.NS+"/"+r.Dev] == nil {
			v.add(path+".dev", "no device %s/%s in the topology", r.NS, r.Dev)
		}
		for key, n := range map[string]int{"initcwnd": r.InitCwnd, "initrwnd": r.InitRwnd} {
			if n < 0 || n > 1024 {
				v.add(path+"."+key, "%d: want 1 to 1024 segments", n)
			}
		}
		if e := r.Encap; e != nil {
			dst, err := netip.ParseAddr(e.Dst)
			switch {
			case r.Dev == "":
				v.add(path+".dev", "missing: a route with encap goes through a tunnel device in external mode, e.g. gnv0")
			case !v.externalTunnel(r.NS, r.Dev):
				v.add(path+".dev", "%s/%s is no tunnel device in external mode (a geneve with external: true): only such a device takes its tunnel keys from the route", r.NS, r.Dev)
			}
			switch {
			case err != nil:
				v.add(path+".encap.dst", "%q is not an address: the peer's underlay address", e.Dst)
			case !anyDeviceHas(dst, devices):
				v.add(path+".encap.dst", "no device of the topology carries %s; nsperf only sends traffic to addresses it assigns", dst)
			}
			if e.ID < 0 || e.ID > 1<<24-1 {
				v.add(path+".encap.id", "%d: want 0 to 16777215 (a Geneve VNI)", e.ID)
			}
		}
		if r.Congctl != "" && !congctlRE.MatchString(r.Congctl) {
			v.add(path+".congctl", "%q is not a congestion control's name (e.g. cubic, bbr, reno)", r.Congctl)
		}
	}
	sysctls := v.s.Topology.Sysctls
	for _, ns := range slices.Sorted(maps.Keys(sysctls)) {
		path := "topology.sysctls." + ns
		if !namespaces[ns] {
			v.add(path, "no namespace %s in the topology%s", ns, have(namespaces))
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(sysctls[ns])) {
			if problem := knobs.CheckSysctl(name, sysctls[ns][name]); problem != "" {
				v.add(path+"."+name, "%s", problem)
			}
		}
	}
}

// onLink reports whether a gateway is on a subnet of one of a namespace's devices.
func onLink(ns string, gw netip.Addr, devices map[string]*device) bool {
	for ref, d := range devices {
		if len(ref) <= len(ns) || ref[:len(ns)+1] != ns+"/" {
			continue
		}
		for _, p := range d.addrs {
			if p.Contains(gw) {
				return true
			}
		}
	}
	return false
}

// externalTunnel reports whether ns/dev is a tunnel device of the topology in external mode.
func (v *validator) externalTunnel(ns, dev string) bool {
	for _, l := range v.s.Topology.Links {
		if g := l.Geneve; g != nil && g.NS == ns && g.Name == dev && g.External {
			return true
		}
	}
	return false
}

// anyDeviceHas reports whether some device of the topology carries an address.
func anyDeviceHas(a netip.Addr, devices map[string]*device) bool {
	for _, d := range devices {
		for _, p := range d.addrs {
			if p.Addr() == a {
				return true
			}
		}
	}
	return false
}
