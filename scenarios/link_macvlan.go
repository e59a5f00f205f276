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
	return stackedCommand("macvlan", ns(m.NS), m.Name, m.Lower, m.MTU, m.Mode, alias)
}

func (m *Macvlan) setDefaults(written func(string) bool) {
	if !written("mode") {
		m.Mode = MacvlanModes[0]
	}
}

func (m *Macvlan) check(v *validator, path string, t *topologyIndex) {
	checkStacked(v, path, t, m.Devices()[0], m.Lower, m.MTU, m.Mode, MacvlanModes)
}

// stackedCommand is the iproute2 command that creates a device of kind on a lower device of
// its namespace: `ip -n NS link add NAME link LOWER [mtu M] type KIND mode MODE`, then its
// alias.
func stackedCommand(kind, ns, name, lower string, mtu int, mode, alias string) string {
	n, dev := shellq.Word(ns), shellq.Word(name)
	mtuArg := ""
	if mtu != 0 {
		mtuArg = fmt.Sprintf(" mtu %d", mtu)
	}
	return fmt.Sprintf("ip -n %s link add %s link %s%s type %s mode %s && ip -n %s link set %s alias %s",
		n, dev, shellq.Word(lower), mtuArg, kind, mode, n, dev, alias)
}

// lowerLocated checks that a stacked device's lower device exists in lowerNS.
func lowerLocated(v *validator, path string, t *topologyIndex, lowerNS, lower string) {
	switch {
	case lower == "":
		v.add(path+".lower", "missing: the lower device in namespace %s, e.g. eth0", lowerNS)
	case t.devices[lowerNS+"/"+lower] == nil:
		v.add(path+".lower", "no device %s/%s in the topology to be the lower device", lowerNS, lower)
	}
}

// checkStacked validates a device on a lower device of its namespace (macvlan, ipvlan): the
// lower device exists, the mode is one of modes, the device's addresses and MTU.
func checkStacked(v *validator, path string, t *topologyIndex, dev Endpoint, lower string, mtu int, mode string, modes []string) {
	checkStackedIn(v, path, t, dev, dev.NS, lower, mtu, mode, modes)
}

// checkStackedIn is checkStacked for a device whose lower device is in lowerNS.
func checkStackedIn(v *validator, path string, t *topologyIndex, dev Endpoint, lowerNS, lower string, mtu int, mode string, modes []string) {
	lowerLocated(v, path, t, lowerNS, lower)
	if !slices.Contains(modes, mode) {
		v.add(path+".mode", "%q: want %s", mode, orList(modes))
	}
	d := v.endpoint(path, dev, t.namespaces, t.devices, t.owner)
	v.mtu(path+".mtu", mtu, d != nil && d.ipv6, "device")
}
