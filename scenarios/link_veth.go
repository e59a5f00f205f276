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

// Modules implements LinkSpec.
func (v *Veth) Modules() []KernelModule { return []KernelModule{{"veth", []string{"VETH"}}} }

// Command implements LinkSpec: `ip -n A link add A mtu M type veth peer name B netns B mtu M`
// with the alias on both ends.
func (v *Veth) Command(ns func(string) string, alias string) string {
	a, b := shellq.Word(ns(v.A.NS)), shellq.Word(ns(v.B.NS))
	mtu := ""
	if v.MTU != 0 {
		mtu = fmt.Sprintf(" mtu %d", v.MTU)
	}
	return fmt.Sprintf("ip -n %s link add %s%s type veth peer name %s netns %s%s && ip -n %s link set %s alias %s && ip -n %s link set %s alias %s",
		a, shellq.Word(v.A.Name), mtu, shellq.Word(v.B.Name), b, mtu, a, shellq.Word(v.A.Name), alias, b, shellq.Word(v.B.Name), alias)
}

func (v *Veth) setDefaults(func(string) bool) {}

func (v *Veth) check(val *validator, path string, t *topologyIndex) {
	a := val.endpoint(path+".a", v.A, t.namespaces, t.devices, t.owner)
	b := val.endpoint(path+".b", v.B, t.namespaces, t.devices, t.owner)
	val.mtu(path+".mtu", v.MTU, (a != nil && a.ipv6) || (b != nil && b.ipv6), "link")
}
