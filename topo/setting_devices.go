package topo

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// devicesApplier sets the devices' knobs a state sets (scenarios.DeviceKnobs): sizes through
// netlink, NAPI's in sysfs; the others go back to their values as built (Live.pristine).
type devicesApplier struct{}

func init() { RegisterApplier("devices", func() SettingApplier { return devicesApplier{} }) }

// Check: a size above the device's limit, or an IPv4 size on a kernel without them.
func (devicesApplier) Check(l *Live, value scenarios.Setting) []string {
	d, _ := value.(scenarios.DeviceKnobs)
	var reasons []string
	for _, ref := range d.Targets() {
		pristine, ok := l.pristine[ref]
		if !ok {
			reasons = append(reasons, fmt.Sprintf("no device %s in this topology", ref))
			continue
		}
		for _, k := range knobs.Settable() {
			if v, set := d[ref][k.Name]; set {
				if r := capabilityProblem(ref, k, v, pristine); r != "" {
					reasons = append(reasons, r)
				}
			}
		}
	}
	return reasons
}

// Apply: the sizes first, the NAPI knobs the state leaves out before the features, its own
// last; then the device is read back, every knob as wanted, and that is its record.
func (devicesApplier) Apply(l *Live, step plan.Step) (any, error) {
	d, _ := step.Setting.(scenarios.DeviceKnobs)
	ref, ds := step.Target, d[step.Target]
	switch step.Phase {
	case scenarios.PhaseLimits:
		return nil, applyKnobs(l, ref, ds)
	case scenarios.PhaseNAPIReset:
		return nil, applySysfsKnobs(l, ref, ds, false)
	case scenarios.PhaseNAPI:
		if err := applySysfsKnobs(l, ref, ds, true); err != nil {
			return nil, err
		}
		got, err := l.ReadAttrs(ref)
		if err != nil {
			return nil, err
		}
		want := Desired(l.pristine[ref], ds)
		for _, k := range knobs.Settable() {
			if got[k.Name] != want[k.Name] {
				return nil, fmt.Errorf("%s of %s reads back %d after setting %d", k.Name, ref, got[k.Name], want[k.Name])
			}
		}
		return got, nil
	}
	return nil, fmt.Errorf("devices: no phase %d", step.Phase)
}

// Drift: each attribute read back against the one recorded.
func (devicesApplier) Drift(l *Live, ref string, record any) ([]string, error) {
	want := record.(Attrs)
	got, err := l.ReadAttrs(ref)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got[name] != want[name] {
			out = append(out, fmt.Sprintf("%s %s is %d, applied %d", ref, name, got[name], want[name]))
		}
	}
	return out, nil
}

// Record: the attributes of every device, as read back.
func (devicesApplier) Record(rec *results.StateRecord, records map[string]any) {
	rec.Devices = map[string]map[string]uint64{}
	for ref, a := range records {
		rec.Devices[ref] = a.(Attrs).Widen()
	}
}

// applyKnobs sets a device's knobs to its built values overridden by the state's: plain sizes
// first, then the IPv4 ones, each only where it differs.
func applyKnobs(l *Live, ref string, ds scenarios.DeviceSettings) error {
	want := Desired(l.pristine[ref], ds)
	for _, ipv4 := range []bool{false, true} {
		have, err := l.ReadAttrs(ref)
		if err != nil {
			return err
		}
		for _, k := range knobs.Settable() {
			if k.IPv4 != ipv4 || k.Sysfs != "" || have[k.Name] == want[k.Name] {
				continue // sysfs knobs come last (applySysfsKnobs)
			}
			if k.IPv4 && !hasIPv4Knobs(l.pristine[ref]) {
				continue // the kernel has no such knob; Check refuses states that set it
			}
			if err := l.set(ref, k, want[k.Name]); err != nil {
				return err
			}
		}
	}
	return nil
}
