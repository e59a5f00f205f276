package scenarios

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
)

// DefaultVxlanPort is the IANA port iproute2 users expect; the kernel's default is 8472.
const DefaultVxlanPort = 4789

// Vxlan is one vxlan device (`ip link add NAME type vxlan id VNI local L remote R dstport P
// [dev UNDERLAY]`), created in the namespace that holds its underlay: a vxlan moved to another
// namespace keeps its UDP socket where it was created. A pair of them, one in each of two
// namespaces, makes an overlay.
type Vxlan struct {
	NS       string   `yaml:"ns"`
	Name     string   `yaml:"name"`
	VNI      int      `yaml:"vni"`
	Port     int      `yaml:"port"`     // UDP destination port; default 4789 (IANA), not the kernel's 8472
	Local    string   `yaml:"local"`    // underlay source address, carried by a device in NS
	Remote   string   `yaml:"remote"`   // the peer's underlay address, carried by a device of the topology
	Underlay string   `yaml:"underlay"` // lower device in NS (`dev`): the vxlan inherits its TSO limits
	Learning *bool    `yaml:"learning"` // default false (iproute2's default is true)
	UDPCsum  *bool    `yaml:"udp_csum"` // default: the kernel's (off over IPv4, on over IPv6)
	MTU      int      `yaml:"mtu"`      // 0: the kernel's (the lower device's MTU - 50, or 1450)
	Addrs    []string `yaml:"addrs"`    // overlay addresses
	// Recreate deletes and creates the device again after each state's settings are applied
	// to the other devices, so that every state measures what it inherits from its underlay.
	Recreate bool `yaml:"recreate"`
}

// Endpoint returns the vxlan as a device of the topology.
func (x *Vxlan) Endpoint() Endpoint { return Endpoint{NS: x.NS, Name: x.Name, Addrs: x.Addrs} }

// Devices implements LinkSpec.
func (x *Vxlan) Devices() []Endpoint { return []Endpoint{x.Endpoint()} }

// Stage implements LinkSpec: its underlay address (and lower device) must exist first.
func (x *Vxlan) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the vxlan driver and the UDP tunnel and offload code under it.
func (x *Vxlan) KernelSources() []string {
	return []string{"drivers/net/vxlan/", "net/ipv4/udp_tunnel_core.c", "net/ipv4/udp_offload.c"}
}

// Modules implements LinkSpec.
func (x *Vxlan) Modules() []KernelModule { return []KernelModule{{"vxlan", []string{"VXLAN"}}} }

// LowerDevice implements Stacked.
func (x *Vxlan) LowerDevice() string {
	if x.Underlay == "" {
		return ""
	}
	return x.NS + "/" + x.Underlay
}

// RecreatedPerState implements Recreated.
func (x *Vxlan) RecreatedPerState() bool { return x.Recreate }

// Command implements LinkSpec.
func (x *Vxlan) Command(nsName func(string) string, alias string) string {
	ns := nsName(x.NS)
	args := []string{"ip", "-n", ns, "link", "add", x.Name}
	if x.MTU != 0 {
		args = append(args, "mtu", fmt.Sprint(x.MTU))
	}
	args = append(args, "type", "vxlan", "id", fmt.Sprint(x.VNI), "local", x.Local, "remote", x.Remote, "dstport", fmt.Sprint(x.Port))
	if x.Underlay != "" {
		args = append(args, "dev", x.Underlay)
	}
	if x.Learning != nil && *x.Learning {
		args = append(args, "learning")
	} else {
		args = append(args, "nolearning")
	}
	if x.UDPCsum != nil {
		v6 := netip.MustParseAddr(x.Local).Is6()
		switch {
		case !v6 && *x.UDPCsum:
			args = append(args, "udpcsum")
		case !v6:
			args = append(args, "noudpcsum")
		case !*x.UDPCsum:
			args = append(args, "udp6zerocsumtx", "udp6zerocsumrx")
		}
	}
	return shellq.Join(args) + fmt.Sprintf(" && ip -n %s link set %s alias %s", shellq.Word(ns), shellq.Word(x.Name), alias)
}

func (x *Vxlan) setDefaults(written func(string) bool) {
	if !written("port") {
		x.Port = DefaultVxlanPort
	}
}

func (x *Vxlan) check(v *validator, path string, t *topologyIndex) {
	underlay := map[netip.Addr]string{} // the underlay addresses, before the overlay's join them
	for a, ref := range t.owner {
		underlay[a] = ref
	}
	d := v.endpoint(path, x.Endpoint(), t.namespaces, t.devices, t.owner)
	if x.VNI < 1 || x.VNI > 1<<24-1 {
		if x.VNI == 0 {
			v.add(path+".vni", "missing: the VXLAN network identifier, 1 to 16777215")
		} else {
			v.add(path+".vni", "%d: want 1 to 16777215", x.VNI)
		}
	}
	if x.Port < 1 || x.Port > 65535 {
		v.add(path+".port", "%d: want 1 to 65535 (default %d)", x.Port, DefaultVxlanPort)
	}
	if x.Underlay != "" && t.devices[x.NS+"/"+x.Underlay] == nil {
		v.add(path+".underlay", "no device %s/%s in the topology to be the lower device", x.NS, x.Underlay)
	}
	local := v.underlayAddr(path+".local", x.Local, "the underlay source address, carried by a device in namespace "+x.NS, underlay)
	if local.IsValid() {
		ref := underlay[local]
		switch {
		case x.Underlay != "" && ref != x.NS+"/"+x.Underlay:
			v.add(path+".local", "%s is on %s, not on the underlay %s/%s", local, ref, x.NS, x.Underlay)
		case !strings.HasPrefix(ref, x.NS+"/"):
			v.add(path+".local", "%s is on %s, not in namespace %s where the vxlan is created", local, ref, x.NS)
		}
	}
	remote := v.underlayAddr(path+".remote", x.Remote, "the peer's underlay address, carried by a device of the topology", underlay)
	if remote.IsValid() && strings.HasPrefix(underlay[remote], x.NS+"/") {
		v.add(path+".remote", "%s is in namespace %s itself; the remote end lives in another namespace", remote, x.NS)
	}
	if local.IsValid() && remote.IsValid() && local.Is4() != remote.Is4() {
		v.add(path+".remote", "%s and the local address %s are of different families", remote, local)
	}
	v.mtu(path+".mtu", x.MTU, d != nil && d.ipv6, "device")
}
