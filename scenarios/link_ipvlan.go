package scenarios

import (
	"fmt"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Ipvlan is an ipvlan device on a lower device of its namespace (`ip link add NAME link LOWER
// type ipvlan mode MODE`): it sends through the lower device with the lower device's MAC
// address, switching by IP address; l2 mode resolves neighbours itself, l3 and l3s route
// through the lower device's namespace (l3s through its netfilter hooks too). Like macvlan it
// inherits the lower device's TSO limits when it is created.
type Ipvlan struct {
	NS    string `yaml:"ns"`
	Name  string `yaml:"name"`
	Lower string `yaml:"lower"` // the lower device, in LowerNS
	// LowerNS is the lower device's namespace when the ipvlan lives in another (a
	// container's device over its host's: `ip -n LOWERNS link add NAME link LOWER netns NS
	// type ipvlan`), l3 mode's usual setup: the host routes for it. Default: NS.
	LowerNS string   `yaml:"lower_ns"`
	Mode    string   `yaml:"mode"` // l2 (default), l3 or l3s
	MTU     int      `yaml:"mtu"`  // 0: the lower device's
	Addrs   []string `yaml:"addrs"`
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
func (m *Ipvlan) LowerDevice() string { return m.LowerNS + "/" + m.Lower }

// Command implements LinkSpec.
func (m *Ipvlan) Command(ns func(string) string, alias string) string {
	if m.LowerNS == m.NS {
		return stackedCommand("ipvlan", ns(m.NS), m.Name, m.Lower, m.MTU, m.Mode, alias)
	}
	mtu := ""
	if m.MTU != 0 {
		mtu = fmt.Sprintf(" mtu %d", m.MTU)
	}
	return fmt.Sprintf("ip -n %s link add %s link %s%s netns %s type ipvlan mode %s && ip -n %s link set %s alias %s",
		shellq.Word(ns(m.LowerNS)), shellq.Word(m.Name), shellq.Word(m.Lower), mtu, shellq.Word(ns(m.NS)), m.Mode, shellq.Word(ns(m.NS)), shellq.Word(m.Name), alias)
}

func (m *Ipvlan) setDefaults(written func(string) bool) {
	if !written("mode") {
		m.Mode = IpvlanModes[0]
	}
	if !written("lower_ns") {
		m.LowerNS = m.NS
	}
}

func (m *Ipvlan) check(v *validator, path string, t *topologyIndex) {
	if !t.namespaces[m.LowerNS] {
		v.add(path+".lower_ns", "no namespace %q in the topology%s", m.LowerNS, have(t.namespaces))
		return
	}
	checkStackedIn(v, path, t, m.Devices()[0], m.LowerNS, m.Lower, m.MTU, m.Mode, IpvlanModes)
}
