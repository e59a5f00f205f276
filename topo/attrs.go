package topo

import (
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
)

// Attrs are the effective attributes of a device, read back from the kernel
// (`ip -d link show DEV`, which on iproute2 6.1 lacks the IPv4 sizes).
type Attrs struct {
	MTU            uint32 `json:"mtu"`
	GSOMaxSize     uint32 `json:"gso_max_size"`
	GSOMaxSegs     uint32 `json:"gso_max_segs"`
	GROMaxSize     uint32 `json:"gro_max_size"`
	GSOIPv4MaxSize uint32 `json:"gso_ipv4_max_size"`
	GROIPv4MaxSize uint32 `json:"gro_ipv4_max_size"`
	TSOMaxSize     uint32 `json:"tso_max_size"`
	TSOMaxSegs     uint32 `json:"tso_max_segs"`
}

func attrsOf(l netlink.Link) Attrs {
	a := l.Attrs()
	return Attrs{
		MTU:            uint32(a.MTU),
		GSOMaxSize:     a.GSOMaxSize,
		GSOMaxSegs:     a.GSOMaxSegs,
		GROMaxSize:     a.GROMaxSize,
		GSOIPv4MaxSize: a.GSOIPv4MaxSize,
		GROIPv4MaxSize: a.GROIPv4MaxSize,
		TSOMaxSize:     a.TSOMaxSize,
		TSOMaxSegs:     a.TSOMaxSegs,
	}
}

// Map returns the attributes by their names (as in `ip -d link show`).
func (a Attrs) Map() map[string]uint64 {
	return map[string]uint64{
		"mtu": uint64(a.MTU), "gso_max_size": uint64(a.GSOMaxSize), "gso_max_segs": uint64(a.GSOMaxSegs),
		"gro_max_size": uint64(a.GROMaxSize), "gso_ipv4_max_size": uint64(a.GSOIPv4MaxSize),
		"gro_ipv4_max_size": uint64(a.GROIPv4MaxSize), "tso_max_size": uint64(a.TSOMaxSize), "tso_max_segs": uint64(a.TSOMaxSegs),
	}
}

// field returns a pointer to the attribute a knob sets.
func (a *Attrs) field(name string) *uint32 {
	switch name {
	case "mtu":
		return &a.MTU
	case "gso_max_size":
		return &a.GSOMaxSize
	case "gso_max_segs":
		return &a.GSOMaxSegs
	case "gro_max_size":
		return &a.GROMaxSize
	case "gso_ipv4_max_size":
		return &a.GSOIPv4MaxSize
	case "gro_ipv4_max_size":
		return &a.GROIPv4MaxSize
	}
	panic("unknown knob " + name)
}

// Desired returns the attributes a state asks of a device: what the device had when it was
// built, overridden by what the state sets. Resetting what a state leaves out keeps each state
// independent of the state measured before it.
func Desired(pristine Attrs, ds scenarios.DeviceSettings) Attrs {
	want := pristine
	for _, k := range knobs {
		if v := k.get(ds); v != nil {
			*want.field(k.name) = *v
		}
	}
	return want
}
