package topo

import (
	"reflect"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/knobs"
)

// TestKnobRegistryResolvesInNetlink: every knob names an integer field of netlink.LinkAttrs,
// and every settable knob a Handle.LinkSet method taking (Link, int), so that a new entry
// with a typo fails here and not in the middle of a run.
func TestKnobRegistryResolvesInNetlink(t *testing.T) {
	la := reflect.TypeOf(netlink.LinkAttrs{})
	h := reflect.TypeOf(&netlink.Handle{})
	link := reflect.TypeOf((*netlink.Link)(nil)).Elem()
	for _, k := range knobs.All {
		if k.Sysfs != "" {
			continue // read and set in sysfs (TestNAPIKnobs)
		}
		f, ok := la.FieldByName(k.Netlink)
		if !ok || (f.Type.Kind() != reflect.Int && f.Type.Kind() != reflect.Uint32) {
			t.Errorf("%s: netlink.LinkAttrs.%s is not an int or uint32 field", k.Name, k.Netlink)
		}
		if !k.Settable() {
			continue
		}
		m, ok := h.MethodByName("LinkSet" + k.Netlink)
		if !ok || m.Type.NumIn() != 3 || m.Type.In(1) != link || m.Type.In(2).Kind() != reflect.Int {
			t.Errorf("%s: no method netlink.Handle.LinkSet%s(Link, int)", k.Name, k.Netlink)
		}
	}
	// Reading a link fills every attribute the registry names netlink's.
	a := attrsOf(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{MTU: 1500, GSOMaxSize: 65536, TSOMaxSegs: 65535}})
	if len(a) != len(knobs.All)-len(knobs.SysfsKnobs()) || a["mtu"] != 1500 || a["gso_max_size"] != 65536 || a["tso_max_segs"] != 65535 {
		t.Errorf("attrsOf = %v", a)
	}
}
