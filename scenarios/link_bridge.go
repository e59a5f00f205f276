package scenarios

import (
	"fmt"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
)

// LinuxBridge is a Linux bridge in a namespace with devices of that namespace as its ports
// (`ip -n NS link add NAME type bridge && ip -n NS link set PORT master NAME`): traffic
// between client and server is switched through net/bridge/ (br_handle_frame,
// br_forward). STP is off, so a port forwards at once. Open vSwitch bridges are
// Topology.OVS.
type LinuxBridge struct {
	NS    string   `yaml:"ns"`
	Name  string   `yaml:"name"`
	Ports []string `yaml:"ports"` // devices in NS, typically veth ends of the client's and server's pairs
	MTU   int      `yaml:"mtu"`   // 0: the kernel's (the smallest of the ports')
	Addrs []string `yaml:"addrs"` // the bridge's own, if the namespace talks through it
}

// Devices implements LinkSpec.
func (b *LinuxBridge) Devices() []Endpoint {
	return []Endpoint{{NS: b.NS, Name: b.Name, Addrs: b.Addrs}}
}

// Stage implements LinkSpec: its ports must exist first.
func (b *LinuxBridge) Stage() int { return LinkOnTop }

// KernelSources implements LinkSpec: the bridge.
func (b *LinuxBridge) KernelSources() []string { return []string{"net/bridge/"} }

// Modules implements LinkSpec.
func (b *LinuxBridge) Modules() []KernelModule {
	return []KernelModule{{"bridge", []string{"BRIDGE"}}}
}

// Command implements LinkSpec.
func (b *LinuxBridge) Command(ns func(string) string, alias string) string {
	n, dev := shellq.Word(ns(b.NS)), shellq.Word(b.Name)
	mtuArg := ""
	if b.MTU != 0 {
		mtuArg = fmt.Sprintf(" mtu %d", b.MTU)
	}
	lines := []string{fmt.Sprintf("ip -n %s link add %s%s type bridge stp_state 0 && ip -n %s link set %s alias %s", n, dev, mtuArg, n, dev, alias)}
	for _, p := range b.Ports {
		lines = append(lines, fmt.Sprintf("ip -n %s link set %s master %s", n, shellq.Word(p), dev))
	}
	return strings.Join(lines, " && ")
}

func (b *LinuxBridge) setDefaults(func(string) bool) {}

func (b *LinuxBridge) check(v *validator, path string, t *topologyIndex) {
	if len(b.Ports) == 0 {
		v.add(path+".ports", "missing: the devices of namespace %s to bridge, e.g. [p0, p1]", b.NS)
	}
	seen := map[string]bool{}
	for i, p := range b.Ports {
		ppath := fmt.Sprintf("%s.ports[%d]", path, i)
		switch {
		case seen[p]:
			v.add(ppath, "%s twice", p)
		case p == b.Name:
			v.add(ppath, "a bridge is not its own port")
		case t.devices[b.NS+"/"+p] == nil:
			v.add(ppath, "no device %s/%s in the topology: a port is a device of the bridge's namespace", b.NS, p)
		case len(t.devices[b.NS+"/"+p].addrs) > 0:
			v.add(ppath, "%s/%s has addresses: a bridge's port carries none (give them to the bridge)", b.NS, p)
		}
		seen[p] = true
	}
	d := v.endpoint(path, b.Devices()[0], t.namespaces, t.devices, t.owner)
	v.mtu(path+".mtu", b.MTU, d != nil && d.ipv6, "bridge")
}
