package scenarios

import (
	"fmt"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Ipvlan is an ipvlan device on a lower device of its namespace (`ip link add NAME link LOWER
// type ipvlan mode MODE`): it sends through the lower device with the lower device's MAC
// address, switching by IP address; l2 mode resolves neighbours itself, l3 and l3s route
// through the lower device's namespace (l3s through its netfilter hooks too). Like macvlan it
// inherits the lower device's TSO limits when it is created.
type Ipvlan struct {
	NS    string   `yaml:"ns"`
	Name  string   `yaml:"name"`
	Lower string   `yaml:"lower"` // the lower device, in NS
	Mode  string   `yaml:"mode"`  // l2 (default), l3 or l3s
	MTU   int      `yaml:"mtu"`   // 0: the lower device's
	Addrs []string `yaml:"addrs"`
}

// IpvlanModes are the modes an ipvlan takes, the default first.
var IpvlanModes = []string{"l2", "l3", "l3s"}

// Devices implements LinkSpec.
func (m *Ipvlan) Devices() []Endpoint { return []Endpoint{{NS: m.NS, Name: m.Name, Addrs: m.Addrs}} }

// Stage implements LinkSpec: its lower device must exist first.
func (m *Ipvlan) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the ipvlan driver.
func (m *Ipvlan) KernelSources() []string { return []string{"drivers/net/ipvlan/"} }

// Modules implements LinkSpec.
func (m *Ipvlan) Modules() []KernelModule {
	return []KernelModule{{"ipvlan", []string{"IPVLAN"}}}
}

// LowerDevice implements Stacked.
func (m *Ipvlan) LowerDevice() string { return m.NS + "/" + m.Lower }

// Command implements LinkSpec.
func (m *Ipvlan) Command(ns func(string) string, alias string) string {
	n, name := shellq.Word(ns(m.NS)), shellq.Word(m.Name)
	mtu := ""
	if m.MTU != 0 {
		mtu = fmt.Sprintf(" mtu %d", m.MTU)
	}
	return fmt.Sprintf("ip -n %s link add %s link %s%s type ipvlan mode %s && ip -n %s link set %s alias %s",
		n, name, shellq.Word(m.Lower), mtu, m.Mode, n, name, alias)
}

func (m *Ipvlan) setDefaults(written func(string) bool) {
	if !written("mode") {
		m.Mode = IpvlanModes[0]
	}
}

func (m *Ipvlan) check(v *validator, path string, t *topologyIndex) {
	lower := t.devices[m.NS+"/"+m.Lower]
	switch {
	case m.Lower == "":
		v.add(path+".lower", "missing: the lower device in namespace %s, e.g. eth0", m.NS)
	case lower == nil:
		v.add(path+".lower", "no device %s/%s in the topology to be the lower device", m.NS, m.Lower)
	}
	if !slices.Contains(IpvlanModes, m.Mode) {
		v.add(path+".mode", "%q: want %s", m.Mode, orList(IpvlanModes))
	}
	d := v.endpoint(path, m.Devices()[0], t.namespaces, t.devices, t.owner)
	v.mtu(path+".mtu", m.MTU, d != nil && d.ipv6, "device")
}
