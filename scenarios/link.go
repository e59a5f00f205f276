package scenarios

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
)

// Link is one link entry of a topology; exactly one kind is set. A kind is a field whose
// type implements LinkSpec, named by its YAML key; adding a kind is adding such a field and
// the file that defines its type (link_veth.go, link_vxlan.go, link_macvlan.go, link_ipvlan.go, link_bridge.go, link_geneve.go, link_tunnel.go, link_netkit.go, link_nic.go), plus the file
// in package topo that creates it. Open vSwitch bridges are in Topology.OVS.
type Link struct {
	Veth    *Veth        `yaml:"veth"`
	Vxlan   *Vxlan       `yaml:"vxlan"`
	Macvlan *Macvlan     `yaml:"macvlan"`
	Ipvlan  *Ipvlan      `yaml:"ipvlan"`
	Bridge  *LinuxBridge `yaml:"bridge"`
	Geneve  *Geneve      `yaml:"geneve"`
	Tunnel  *IPTunnel    `yaml:"tunnel"`
	Netkit  *Netkit      `yaml:"netkit"`
	NIC     *NICPair     `yaml:"nic"`
}

// LinkSpec is what every link kind provides, so that validation, planning, the guests'
// modules and the live topology never ask which kind a link is.
type LinkSpec interface {
	// Devices are the devices the link creates: the first is the one its command creates in
	// its namespace (the one deleted to remove it), the others come with it.
	Devices() []Endpoint
	// Stage orders creation: LinkOwn devices first, then LinkOnTop ones, which a device of
	// the first stage must carry (a lower device, an underlay address).
	Stage() int
	// Command is the iproute2 command that creates the link, its devices named with the
	// run's alias; ns gives a scenario namespace's full name.
	Command(ns func(string) string, alias string) string
	// Modules are the kernel modules the kind needs, each with the config options that build
	// it: what a guest loads, what `nsperf kconfig` prints and what a kernel under test is
	// checked for before it boots.
	Modules() []KernelModule
	// KernelSources are the kernel source paths (files, or directories ending in /) that
	// carry the kind's traffic: a patch that touches one is exercised by a scenario with the
	// kind (`nsperf build`'s hints).
	KernelSources() []string
	// setDefaults fills what the scenario leaves out; written says whether the file sets a
	// key of the kind's mapping.
	setDefaults(written func(key string) bool)
	// check validates the link against what the topology has so far.
	check(v *validator, path string, t *topologyIndex)
}

// KernelSources are the kernel source paths a scenario's traffic runs through: its link
// kinds' and, with an Open vSwitch bridge, net/openvswitch/.
func KernelSources(s *Scenario) []string {
	var out []string
	for _, l := range s.Topology.Links {
		if spec := l.Spec(); spec != nil {
			out = append(out, spec.KernelSources()...)
		}
	}
	if s.Topology.OVS != nil {
		out = append(out, "net/openvswitch/")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Exercises returns the paths of KernelSources(s) that a touched file is in.
func Exercises(s *Scenario, touched []string) []string {
	var out []string
	for _, src := range KernelSources(s) {
		for _, f := range touched {
			if f == src || (strings.HasSuffix(src, "/") && strings.HasPrefix(f, src)) {
				out = append(out, src)
				break
			}
		}
	}
	return out
}

// KernelModule is a kernel module with the config options that build it: its own first
// (CONFIG_VXLAN builds vxlan.ko), then any it needs besides.
type KernelModule struct {
	Name    string
	Options []string // without CONFIG_
}

// LinkKindSpecs are a LinkSpec of each link kind, by YAML key, with nothing set: what a kind
// declares about itself (Modules) without a scenario.
func LinkKindSpecs() map[string]LinkSpec {
	out := map[string]LinkSpec{}
	for _, f := range linkFields {
		out[f.key] = reflect.New(reflect.TypeOf(Link{}).Field(f.index).Type.Elem()).Interface().(LinkSpec)
	}
	return out
}

// Link stages, in the order they are created.
const (
	LinkOwn   = 0 // devices that stand alone (veth pairs)
	LinkOnTop = 1 // devices that need others of the topology first (a vxlan's underlay, a macvlan's lower device)
)

// LinkStages are the stages in creation order.
var LinkStages = []int{LinkOwn, LinkOnTop}

// Stacked is a LinkSpec whose device sits on a lower device of the topology, whose limits it
// may inherit: LowerDevice is "ns/dev", "" for none.
type Stacked interface{ LowerDevice() string }

// Recreated is a LinkSpec whose device is created anew in each state, after the others are
// set, so that it inherits what the state gave its lower device.
type Recreated interface{ RecreatedPerState() bool }

var linkSpecType = reflect.TypeOf((*LinkSpec)(nil)).Elem()

// linkFields are the Link fields that are kinds, by YAML key, in declaration order.
var linkFields = specFields(reflect.TypeOf(Link{}), linkSpecType)

// LinkKinds are the YAML keys of the link kinds.
func LinkKinds() []string { return fieldKeys(linkFields) }

// kinds returns the kinds a link sets, by YAML key: one when it is valid.
func (l Link) kinds() (names []string, specs []LinkSpec) { return setFields[LinkSpec](l, linkFields) }

// Kind returns the link's kind (its YAML key), "" if none is set.
func (l Link) Kind() string { names, _ := l.kinds(); return first(names) }

// Spec returns the link's settings, nil if no kind is set.
func (l Link) Spec() LinkSpec { _, specs := l.kinds(); return first(specs) }

// specField is a struct field whose type implements a spec interface, by YAML key.
type specField struct {
	key   string
	index int
}

// specFields lists the fields of struct type t whose type implements iface.
func specFields(t, iface reflect.Type) []specField {
	var out []specField
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Type.Implements(iface) {
			out = append(out, specField{strings.Split(f.Tag.Get("yaml"), ",")[0], i})
		}
	}
	return out
}

// setFields returns the fields of struct value v among fields that are set (not nil), with
// their YAML keys.
func setFields[S any](v any, fields []specField) (names []string, specs []S) {
	rv := reflect.ValueOf(v)
	for _, f := range fields {
		if fv := rv.Field(f.index); !fv.IsNil() {
			names, specs = append(names, f.key), append(specs, fv.Interface().(S))
		}
	}
	return names, specs
}

// first is the first element of xs, the zero value if there is none.
func first[T any](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[0]
}

func fieldKeys(fields []specField) []string {
	var names []string
	for _, f := range fields {
		names = append(names, f.key)
	}
	return names
}

// topologyIndex is what validation knows of the topology so far: its namespaces, the devices
// it creates ("ns/dev") and which device carries each address.
type topologyIndex struct {
	namespaces map[string]bool
	devices    map[string]*device
	owner      map[netip.Addr]string
}
