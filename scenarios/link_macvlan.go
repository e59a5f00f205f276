package scenarios

import (
	"fmt"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Macvlan is a macvlan device on a lower device of its namespace (`ip link add NAME link
// LOWER type macvlan mode MODE`): it sends through the lower device with a MAC address of its
// own, and inherits the lower device's TSO limits when it is created (netif_inherit_tso_max),
// as a vxlan with a lower device does. Its traffic leaves through the lower device: over a
// veth end it reaches the peer's namespace.
type Macvlan struct {
	NS    string   `yaml:"ns"`
	Name  string   `yaml:"name"`
	Lower string   `yaml:"lower"` // the lower device, in NS
	Mode  string   `yaml:"mode"`  // bridge (default), private, vepa or passthru
	MTU   int      `yaml:"mtu"`   // 0: the lower device's
	Addrs []string `yaml:"addrs"`
}

// MacvlanModes are the modes a macvlan takes, the default first.
var MacvlanModes = []string{"bridge", "private", "vepa", "passthru"}

// Devices implements LinkSpec.
func (m *Macvlan) Devices() []Endpoint { return []Endpoint{{NS: m.NS, Name: m.Name, Addrs: m.Addrs}} }

// Stage implements LinkSpec: its lower device must exist first.
func (m *Macvlan) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the macvlan driver.
func (m *Macvlan) KernelSources() []string { return []string{"drivers/net/macvlan.c"} }

// Modules implements LinkSpec.
func (m *Macvlan) Modules() []KernelModule {
	return []KernelModule{{"macvlan", []string{"MACVLAN"}}}
}

// LowerDevice implements Stacked.
func (m *Macvlan) LowerDevice() string { return m.NS + "/" + m.Lower }

// Command implements LinkSpec.
func (m *Macvlan) Command(ns func(string) string, alias string) string {
	n, name := shellq.Word(ns(m.NS)), shellq.Word(m.Name)
	mtu := ""
	if m.MTU != 0 {
		mtu = fmt.Sprintf(" mtu %d", m.MTU)
	}
	return fmt.Sprintf("ip -n %s link add %s link %s%s type macvlan mode %s && ip -n %s link set %s alias %s",
		n, name, shellq.Word(m.Lower), mtu, m.Mode, n, name, alias)
}

func (m *Macvlan) setDefaults(written func(string) bool) {
	if !written("mode") {
		m.Mode = MacvlanModes[0]
	}
}

func (m *Macvlan) check(v *validator, path string, t *topologyIndex) {
	lower := t.devices[m.NS+"/"+m.Lower]
	switch {
	case m.Lower == "":
		v.add(path+".lower", "missing: the lower device in namespace %s, e.g. eth0", m.NS)
	case lower == nil:
		v.add(path+".lower", "no device %s/%s in the topology to be the lower device", m.NS, m.Lower)
	}
	if !slices.Contains(MacvlanModes, m.Mode) {
		v.add(path+".mode", "%q: want %s", m.Mode, orList(MacvlanModes))
	}
	d := v.endpoint(path, m.Devices()[0], t.namespaces, t.devices, t.owner)
	v.mtu(path+".mtu", m.MTU, d != nil && d.ipv6, "device")
}
