package scenarios

import (
	"fmt"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Veth is a veth pair with one end in each of two namespaces (`ip link add ... type veth peer`).
type Veth struct {
	A   Endpoint `yaml:"a"`
	B   Endpoint `yaml:"b"`
	MTU int      `yaml:"mtu"` // 0: the kernel default (1500)
}

// Devices implements LinkSpec: end A, created in its namespace, and its peer B.
func (v *Veth) Devices() []Endpoint { return []Endpoint{v.A, v.B} }

// Stage implements LinkSpec.
func (v *Veth) Stage() int { return LinkOwn }

// KernelSources implements LinkSpec: veth, and the core every packet goes through.
func (v *Veth) KernelSources() []string { return []string{"drivers/net/veth.c", "net/core/"} }

// Modules implements LinkSpec.
func (v *Veth) Modules() []KernelModule { return []KernelModule{{"veth", []string{"VETH"}}} }

// Command implements LinkSpec: `ip -n A link add A mtu M type veth peer name B netns B mtu M`
// with the alias on both ends.
func (v *Veth) Command(ns func(string) string, alias string) string {
	a, b := "ip -n "+shellq.Word(ns(v.A.NS)), "ip -n "+shellq.Word(ns(v.B.NS))
	return fmt.Sprintf("%s && %s link set %s alias %s && %s link set %s alias %s",
		VethAddCommand(a, v.A.Name, v.B.Name, ns(v.B.NS), v.MTU), a, shellq.Word(v.A.Name), alias, b, shellq.Word(v.B.Name), alias)
}

// VethAddCommand is the iproute2 command that creates a veth pair: `IP link add NAME [mtu M]
// type veth peer name PEER netns NS [mtu M]`, ip the command with its namespace (`ip -n X`,
// or `ip` for the root namespace), mtu 0 for the default. Every veth nsperf makes is this.
func VethAddCommand(ip, name, peer, peerNS string, mtu int) string {
	m := ""
	if mtu != 0 {
		m = fmt.Sprintf(" mtu %d", mtu)
	}
	return fmt.Sprintf("%s link add %s%s type veth peer name %s netns %s%s", ip, shellq.Word(name), m, shellq.Word(peer), shellq.Word(peerNS), m)
}

func (v *Veth) setDefaults(func(string) bool) {}

func (v *Veth) check(val *validator, path string, t *topologyIndex) {
	a := val.endpoint(path+".a", v.A, t.namespaces, t.devices, t.owner)
	b := val.endpoint(path+".b", v.B, t.namespaces, t.devices, t.owner)
	val.mtu(path+".mtu", v.MTU, (a != nil && a.ipv6) || (b != nil && b.ipv6), "link")
}
