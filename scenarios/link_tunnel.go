package scenarios

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
)

// IPTunnel is a point-to-point IP tunnel (`ip link add NAME type MODE local L remote R`): the
// kernel's own encapsulations, in the namespace that holds the local underlay address.
type IPTunnel struct {
	NS     string   `yaml:"ns"`
	Name   string   `yaml:"name"`
	Mode   string   `yaml:"mode"`   // ipip, sit, gre, ip6gre or ip6tnl (TunnelModes)
	Local  string   `yaml:"local"`  // the underlay source address, carried by a device in NS
	Remote string   `yaml:"remote"` // the peer's underlay address, carried by a device of the topology
	TTL    int      `yaml:"ttl"`    // 0: inherit the inner packet's (the kernel's default)
	MTU    int      `yaml:"mtu"`    // 0: the kernel's
	Addrs  []string `yaml:"addrs"`  // the inner addresses
}

// TunnelMode is what nsperf knows of one IP tunnel mode: the families it carries, the module
// and config options that build it, and the sources its packets run through.
type TunnelMode struct {
	Name      string
	Underlay6 bool // the outer header is IPv6
	Inner4    bool // carries IPv4
	Inner6    bool // carries IPv6
	Module    KernelModule
	Sources   []string // kernel source paths
}

// TunnelModes are the IP tunnels a topology may build.
var TunnelModes = []TunnelMode{
	{Name: "ipip", Inner4: true, Module: KernelModule{"ipip", []string{"NET_IPIP"}},
		Sources: []string{"net/ipv4/ipip.c", "net/ipv4/ip_tunnel.c", "net/ipv4/ip_tunnel_core.c"}},
	{Name: "sit", Inner6: true, Module: KernelModule{"sit", []string{"IPV6_SIT"}},
		Sources: []string{"net/ipv6/sit.c", "net/ipv4/ip_tunnel.c", "net/ipv4/ip_tunnel_core.c"}},
	{Name: "gre", Inner4: true, Inner6: true, Module: KernelModule{"ip_gre", []string{"NET_IPGRE", "NET_IPGRE_DEMUX"}},
		Sources: []string{"net/ipv4/ip_gre.c", "net/ipv4/gre_offload.c", "net/ipv4/ip_tunnel.c", "net/ipv4/ip_tunnel_core.c"}},
	{Name: "ip6gre", Underlay6: true, Inner4: true, Inner6: true, Module: KernelModule{"ip6_gre", []string{"IPV6_GRE", "NET_IPGRE_DEMUX"}},
		Sources: []string{"net/ipv6/ip6_gre.c", "net/ipv4/gre_offload.c", "net/ipv6/ip6_tunnel.c"}},
	{Name: "ip6tnl", Underlay6: true, Inner4: true, Inner6: true, Module: KernelModule{"ip6_tunnel", []string{"IPV6_TUNNEL"}},
		Sources: []string{"net/ipv6/ip6_tunnel.c"}},
}

// TunnelModeOf returns the mode of a name.
func TunnelModeOf(name string) (TunnelMode, bool) {
	i := slices.IndexFunc(TunnelModes, func(m TunnelMode) bool { return m.Name == name })
	if i < 0 {
		return TunnelMode{}, false
	}
	return TunnelModes[i], true
}

// Devices implements LinkSpec.
func (t *IPTunnel) Devices() []Endpoint { return []Endpoint{{NS: t.NS, Name: t.Name, Addrs: t.Addrs}} }

// Stage implements LinkSpec: its underlay address must exist first.
func (t *IPTunnel) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the mode's; every mode's for a tunnel of no mode.
func (t *IPTunnel) KernelSources() []string {
	var out []string
	for _, m := range TunnelModes {
		if t.Mode == "" || m.Name == t.Mode {
			out = append(out, m.Sources...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Modules implements LinkSpec: the mode's module; every mode's for a tunnel of no mode (what
// the kind declares of itself).
func (t *IPTunnel) Modules() []KernelModule {
	var out []KernelModule
	for _, m := range TunnelModes {
		if t.Mode == "" || m.Name == t.Mode {
			out = append(out, m.Module)
		}
	}
	return out
}

// Command implements LinkSpec.
func (t *IPTunnel) Command(nsName func(string) string, alias string) string {
	ns := nsName(t.NS)
	args := []string{"ip", "-n", ns, "link", "add", t.Name}
	if t.MTU != 0 {
		args = append(args, "mtu", fmt.Sprint(t.MTU))
	}
	args = append(args, "type", t.Mode, "local", t.Local, "remote", t.Remote)
	if t.TTL != 0 {
		args = append(args, "ttl", fmt.Sprint(t.TTL))
	}
	if t.Mode == "ip6tnl" {
		args = append(args, "mode", "any") // IPv4 and IPv6 inside (ip6ip6 and ipip6)
	}
	return shellq.Join(args) + fmt.Sprintf(" && ip -n %s link set %s alias %s", shellq.Word(ns), shellq.Word(t.Name), alias)
}

func (t *IPTunnel) setDefaults(func(string) bool) {}

func (t *IPTunnel) check(v *validator, path string, ti *topologyIndex) {
	underlay := map[netip.Addr]string{}
	for a, ref := range ti.owner {
		underlay[a] = ref
	}
	d := v.endpoint(path, t.Devices()[0], ti.namespaces, ti.devices, ti.owner)
	mode, ok := TunnelModeOf(t.Mode)
	if !ok {
		names := make([]string, len(TunnelModes))
		for i, m := range TunnelModes {
			names[i] = m.Name
		}
		v.add(path+".mode", "%q: want %s", t.Mode, orList(names))
	}
	local := v.underlayAddr(path+".local", t.Local, "the underlay source address, carried by a device in namespace "+t.NS, underlay)
	if local.IsValid() && !strings.HasPrefix(underlay[local], t.NS+"/") {
		v.add(path+".local", "%s is on %s, not in namespace %s where the tunnel is created", local, underlay[local], t.NS)
	}
	remote := v.underlayAddr(path+".remote", t.Remote, "the peer's underlay address, carried by a device of the topology", underlay)
	if remote.IsValid() && strings.HasPrefix(underlay[remote], t.NS+"/") {
		v.add(path+".remote", "%s is in namespace %s itself; the remote end lives in another namespace", remote, t.NS)
	}
	if ok {
		for key, a := range map[string]netip.Addr{"local": local, "remote": remote} {
			if a.IsValid() && a.Is6() != mode.Underlay6 {
				v.add(path+"."+key, "%s: %s's outer header is %s", a, mode.Name, map[bool]string{true: "IPv6", false: "IPv4"}[mode.Underlay6])
			}
		}
		for i, s := range t.Addrs {
			if p, err := netip.ParsePrefix(s); err == nil && ((p.Addr().Is4() && !mode.Inner4) || (p.Addr().Is6() && !mode.Inner6)) {
				v.add(fmt.Sprintf("%s.addrs[%d]", path, i), "%s: %s carries no %s", s, mode.Name, map[bool]string{true: "IPv4", false: "IPv6"}[p.Addr().Is4()])
			}
		}
	}
	if t.TTL < 0 || t.TTL > 255 {
		v.add(path+".ttl", "%d: want 1 to 255, or 0 to inherit", t.TTL)
	}
	v.mtu(path+".mtu", t.MTU, d != nil && d.ipv6, "device")
}
