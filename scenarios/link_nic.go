package scenarios

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
)

// NICPair is two emulated NICs of one model connected back to back, one in each of two
// namespaces: QEMU gives the guest both, on a hub of their own (`-netdev hubport,hubid=N
// -device MODEL,netdev=...,mac=...`), and nsperf moves each into its namespace by its MAC
// address (`ip link set dev DEV netns NS`, then renamed). Traffic between them runs through
// the model's driver (virtio_net, e1000e) and the device QEMU emulates: a patch to that driver
// is measured in a guest booted with it, in virtual time. The host has no such NICs: the kind
// exists only with --kernel.
type NICPair struct {
	Model string   `yaml:"model"` // a NICModels name: virtio-net (default), e1000e, e1000
	A     Endpoint `yaml:"a"`
	B     Endpoint `yaml:"b"`
	MTU   int      `yaml:"mtu"`
}

// NICModel is a NIC QEMU emulates and the driver that runs it.
type NICModel struct {
	Name    string       // what a scenario names it
	Device  string       // QEMU's -device name
	Module  KernelModule // the driver
	Sources []string     // the driver's source files or folders
}

// NICModels are the emulated NICs a NIC pair takes, the default first. Each is a PCI device
// of QEMU 7.2's x86 machine whose driver Debian's kernel builds as a module.
var NICModels = []NICModel{
	{"virtio-net", "virtio-net-pci", KernelModule{"virtio_net", []string{"VIRTIO_NET"}}, []string{"drivers/net/virtio_net.c"}},
	{"e1000e", "e1000e", KernelModule{"e1000e", []string{"E1000E"}}, []string{"drivers/net/ethernet/intel/e1000e/"}},
	{"e1000", "e1000", KernelModule{"e1000", []string{"E1000"}}, []string{"drivers/net/ethernet/intel/e1000/"}},
}

// NICModelNames are the names of NICModels.
func NICModelNames() []string {
	var out []string
	for _, m := range NICModels {
		out = append(out, m.Name)
	}
	return out
}

// nicModel is the model of a pair, the default where it names none (a kind's spec without
// a scenario: LinkKindSpecs); ok false for a name NICModels lacks.
func (n *NICPair) nicModel() (NICModel, bool) {
	if n.Model == "" {
		return NICModels[0], true
	}
	for _, m := range NICModels {
		if m.Name == n.Model {
			return m, true
		}
	}
	return NICModel{}, false
}

// EmulatedSources are the driver sources of every NIC model: code a guest with the model's
// NICs runs, though it is a hardware driver's.
func EmulatedSources() []string {
	var out []string
	for _, m := range NICModels {
		out = append(out, m.Sources...)
	}
	return out
}

// Devices implements LinkSpec.
func (n *NICPair) Devices() []Endpoint { return []Endpoint{n.A, n.B} }

// Stage implements LinkSpec.
func (n *NICPair) Stage() int { return LinkOwn }

// KernelSources implements LinkSpec: the model's driver.
func (n *NICPair) KernelSources() []string {
	m, _ := n.nicModel()
	return m.Sources
}

// Modules implements LinkSpec: the model's driver.
func (n *NICPair) Modules() []KernelModule {
	m, ok := n.nicModel()
	if !ok {
		return nil
	}
	return []KernelModule{m.Module}
}

// EmulatedNIC is one NIC the guest's machine must have: QEMU's device and its MAC address.
type EmulatedNIC struct {
	Device string
	MAC    string
}

// Emulated is a LinkSpec whose devices the machine provides rather than the kernel creates:
// a guest booted with them (package vm) has them.
type Emulated interface {
	// EmulatedNICs are the NICs, connected to each other and to nothing else.
	EmulatedNICs() []EmulatedNIC
}

// EmulatedNICs implements Emulated: end A's NIC, then B's.
func (n *NICPair) EmulatedNICs() []EmulatedNIC {
	m, _ := n.nicModel()
	return []EmulatedNIC{{m.Device, NICMAC(n.A)}, {m.Device, NICMAC(n.B)}}
}

// NICMAC is the MAC address of the emulated NIC that becomes end: QEMU's prefix 52:54:00 and
// three bytes of a hash of the end's namespace and name, so that the guest's NIC is found by
// the scenario alone, whatever name the kernel gave it at boot.
func NICMAC(end Endpoint) string {
	h := fnv.New32a()
	h.Write([]byte(end.NS + "/" + end.Name))
	s := h.Sum32()
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", byte(s>>16), byte(s>>8), byte(s))
}

// Command implements LinkSpec: each NIC found by its MAC address in /sys/class/net, moved into
// its namespace, renamed and given the run's alias.
func (n *NICPair) Command(ns func(string) string, alias string) string {
	cmd := ""
	for i, end := range n.Devices() {
		full, name := shellq.Word(ns(end.NS)), shellq.Word(end.Name)
		if i > 0 {
			cmd += " && "
		}
		cmd += fmt.Sprintf(`d=$(grep -lx %s /sys/class/net/*/address | cut -d/ -f5) && ip link set dev "$d" netns %s && ip -n %s link set dev "$d" name %s && ip -n %s link set %s alias %s`,
			NICMAC(end), full, full, name, full, name, alias)
		if n.MTU != 0 {
			cmd += fmt.Sprintf(" && ip -n %s link set %s mtu %d", full, name, n.MTU)
		}
	}
	return cmd
}

func (n *NICPair) setDefaults(written func(string) bool) {
	if !written("model") {
		n.Model = NICModels[0].Name
	}
}

func (n *NICPair) check(val *validator, path string, t *topologyIndex) {
	a := val.endpoint(path+".a", n.A, t.namespaces, t.devices, t.owner)
	b := val.endpoint(path+".b", n.B, t.namespaces, t.devices, t.owner)
	if !slices.Contains(NICModelNames(), n.Model) {
		val.add(path+".model", "%q: want %s (NICs QEMU emulates and nsperf knows the driver of)", n.Model, orList(NICModelNames()))
	}
	if n.A.NS != "" && n.A.NS == n.B.NS {
		val.add(path+".b.ns", "%q: both NICs of a pair in one namespace talk to each other through the local route, not the wire: put b in another namespace", n.B.NS)
	}
	val.mtu(path+".mtu", n.MTU, (a != nil && a.ipv6) || (b != nil && b.ipv6), "link")
}
