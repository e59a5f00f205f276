package scenarios

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
)

// DefaultGenevePort is Geneve's IANA port, the kernel's default.
const DefaultGenevePort = 6081

// Geneve is a Geneve tunnel device (`ip link add NAME type geneve id VNI remote R [dstport
// P]`), in the namespace that holds its underlay (its UDP socket stays where it is created).
// With external (collect_metadata: `ip link add NAME type geneve external
// innerprotoinherit`) it has neither id nor remote: each route through it says where its
// packets go (a route's encap: `ip route add PREFIX dev NAME encap ip id VNI dst R`), as OVS
// and eBPF programs use Geneve, and it carries IP packets without an Ethernet header
// (innerprotoinherit), so that no neighbour needs resolving over it.
type Geneve struct {
	NS       string   `yaml:"ns"`
	Name     string   `yaml:"name"`
	VNI      int      `yaml:"vni"`      // not with external
	Remote   string   `yaml:"remote"`   // the peer's underlay address; not with external
	Port     int      `yaml:"port"`     // UDP destination port; default 6081
	External bool     `yaml:"external"` // collect_metadata: the routes' encap decides
	MTU      int      `yaml:"mtu"`      // 0: the kernel's (1500 - 50 over IPv4)
	Addrs    []string `yaml:"addrs"`    // overlay addresses
}

// Devices implements LinkSpec.
func (g *Geneve) Devices() []Endpoint { return []Endpoint{{NS: g.NS, Name: g.Name, Addrs: g.Addrs}} }

// Stage implements LinkSpec: its underlay address must exist first.
func (g *Geneve) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the geneve driver and the UDP tunnel code under it
// (UDP's GSO in udp_offload.c runs only where a packet is segmented in software: the map
// showed it unused over a veth with its tunnel offloads on).
func (g *Geneve) KernelSources() []string {
	return []string{"drivers/net/geneve.c", "net/ipv4/udp_tunnel_core.c"}
}

// Modules implements LinkSpec.
func (g *Geneve) Modules() []KernelModule { return []KernelModule{{"geneve", []string{"GENEVE"}}} }

// Command implements LinkSpec.
func (g *Geneve) Command(nsName func(string) string, alias string) string {
	ns := nsName(g.NS)
	args := []string{"ip", "-n", ns, "link", "add", g.Name}
	if g.MTU != 0 {
		args = append(args, "mtu", fmt.Sprint(g.MTU))
	}
	args = append(args, "type", "geneve")
	if g.External {
		args = append(args, "external", "innerprotoinherit")
	} else {
		args = append(args, "id", fmt.Sprint(g.VNI), "remote", g.Remote)
	}
	args = append(args, "dstport", fmt.Sprint(g.Port))
	return shellq.Join(args) + fmt.Sprintf(" && ip -n %s link set %s alias %s", shellq.Word(ns), shellq.Word(g.Name), alias)
}

func (g *Geneve) setDefaults(written func(string) bool) {
	if !written("port") {
		g.Port = DefaultGenevePort
	}
}

func (g *Geneve) check(v *validator, path string, t *topologyIndex) {
	underlay := map[netip.Addr]string{}
	for a, ref := range t.owner {
		underlay[a] = ref
	}
	d := v.endpoint(path, g.Devices()[0], t.namespaces, t.devices, t.owner)
	if g.Port < 1 || g.Port > 65535 {
		v.add(path+".port", "%d: want 1 to 65535 (default %d)", g.Port, DefaultGenevePort)
	}
	if g.External {
		if g.VNI != 0 || g.Remote != "" {
			v.add(path+".external", "an external geneve has no vni or remote: give them in a route's encap (topology.routes[].encap)")
		}
	} else {
		if g.VNI < 1 || g.VNI > 1<<24-1 {
			v.add(path+".vni", "%d: want 1 to 16777215 (or external: true)", g.VNI)
		}
		remote := v.underlayAddr(path+".remote", g.Remote, "the peer's underlay address, carried by a device of the topology (or external: true)", underlay)
		if remote.IsValid() && strings.HasPrefix(underlay[remote], g.NS+"/") {
			v.add(path+".remote", "%s is in namespace %s itself; the remote end lives in another namespace", remote, g.NS)
		}
	}
	v.mtu(path+".mtu", g.MTU, d != nil && d.ipv6, "device")
}
