package topo

import (
	"fmt"
	"reflect"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
)

// Attrs are the effective attributes of a device by knob name, read back from the kernel
// (`ip -d link show DEV`, which on iproute2 6.1 lacks the IPv4 sizes).
type Attrs = knobs.Values

// attrsOf reads every registered attribute from the netlink library's LinkAttrs field that
// the registry names for it.
func attrsOf(l netlink.Link) Attrs {
	la := reflect.ValueOf(l.Attrs()).Elem()
	a := Attrs{}
	for _, k := range knobs.All {
		if k.Sysfs != "" {
			continue // read from sysfs (readSysfsKnobs)
		}
		f := la.FieldByName(k.Netlink)
		switch f.Kind() {
		case reflect.Int:
			a[k.Name] = uint32(f.Int())
		case reflect.Uint32:
			a[k.Name] = uint32(f.Uint())
		default:
			panic(fmt.Sprintf("knob %s: netlink.LinkAttrs has no integer field %q", k.Name, k.Netlink))
		}
	}
	return a
}

// setKnob sets one knob through the netlink library's Handle.LinkSet<Netlink>, the
// equivalent of `ip link set dev DEV NAME V`.
func setKnob(h *netlink.Handle, link netlink.Link, k knobs.Knob, v uint32) error {
	m := reflect.ValueOf(h).MethodByName("LinkSet" + k.Netlink)
	if !m.IsValid() {
		return fmt.Errorf("knob %s: netlink.Handle has no method LinkSet%s", k.Name, k.Netlink)
	}
	out := m.Call([]reflect.Value{reflect.ValueOf(link), reflect.ValueOf(int(v))})
	if err, _ := out[0].Interface().(error); err != nil {
		return err
	}
	return nil
}

// Desired returns the attributes a state asks of a device: what the device had when it was
// built, overridden by what the state sets. Resetting what a state leaves out keeps each state
// independent of the state measured before it.
func Desired(pristine Attrs, ds scenarios.DeviceSettings) Attrs {
	want := Attrs{}
	for name, v := range pristine {
		want[name] = v
	}
	for name, v := range ds {
		want[name] = v
	}
	return want
}
