package scenarios

import (
	"fmt"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Netkit is a netkit pair with one end in each of two namespaces (`ip link add A type netkit
// mode l3 peer name B netns NS`): the BPF-programmable successor of veth for containers
// (Linux 6.7), whose peer's transmit is the other end's receive without a backlog queue. With
// no BPF program attached both ends forward (policy forward). l3 mode (the default) has no
// Ethernet header and no neighbour to resolve; l2 has both, as veth.
type Netkit struct {
	A    Endpoint `yaml:"a"`
	B    Endpoint `yaml:"b"`
	Mode string   `yaml:"mode"` // l3 (default) or l2
	MTU  int      `yaml:"mtu"`
}

// NetkitModes are the modes a netkit pair takes, the default first.
var NetkitModes = []string{"l3", "l2"}

// Devices implements LinkSpec: end A (the primary), created in its namespace, and its peer B.
func (n *Netkit) Devices() []Endpoint { return []Endpoint{n.A, n.B} }

// Stage implements LinkSpec.
func (n *Netkit) Stage() int { return LinkOwn }

// KernelSources implements LinkSpec: the netkit driver.
func (n *Netkit) KernelSources() []string { return []string{"drivers/net/netkit.c"} }

// Modules implements LinkSpec: netkit is built in or absent (CONFIG_NETKIT is a bool); the
// name is the option's, which a module tree never has.
func (n *Netkit) Modules() []KernelModule { return []KernelModule{{"netkit", []string{"NETKIT"}}} }

// Command implements LinkSpec.
func (n *Netkit) Command(ns func(string) string, alias string) string {
	a, b := "ip -n "+shellq.Word(ns(n.A.NS)), "ip -n "+shellq.Word(ns(n.B.NS))
	m := ""
	if n.MTU != 0 {
		m = fmt.Sprintf(" mtu %d", n.MTU)
	}
	return fmt.Sprintf("%s link add %s%s type netkit mode %s peer name %s netns %s%s && %s link set %s alias %s && %s link set %s alias %s",
		a, shellq.Word(n.A.Name), m, n.Mode, shellq.Word(n.B.Name), shellq.Word(ns(n.B.NS)), m, a, shellq.Word(n.A.Name), alias, b, shellq.Word(n.B.Name), alias)
}

func (n *Netkit) setDefaults(written func(string) bool) {
	if !written("mode") {
		n.Mode = NetkitModes[0]
	}
}

func (n *Netkit) check(val *validator, path string, t *topologyIndex) {
	a := val.endpoint(path+".a", n.A, t.namespaces, t.devices, t.owner)
	b := val.endpoint(path+".b", n.B, t.namespaces, t.devices, t.owner)
	if !slices.Contains(NetkitModes, n.Mode) {
		val.add(path+".mode", "%q: want %s", n.Mode, orList(NetkitModes))
	}
	val.mtu(path+".mtu", n.MTU, (a != nil && a.ipv6) || (b != nil && b.ipv6), "link")
}
