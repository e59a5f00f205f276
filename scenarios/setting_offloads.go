package scenarios

import (
	"maps"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Offloads are ethtool features a state sets by kernel name (`ethtool -K DEV
// tx-udp_tnl-segmentation off`), per device ("ns/dev"); features a state leaves out are as
// the device was built.
type Offloads map[string]map[string]Switch

func init() { registerSetting(func() Setting { return Offloads{} }) }

// Key implements Setting.
func (Offloads) Key() string { return "offloads" }

// Scope implements Setting.
func (Offloads) Scope() Scope { return DeviceScope }

// Phases implements Setting: after the NAPI knobs a state leaves out are reset, before XDP.
func (Offloads) Phases() []int { return []int{PhaseFeatures} }

// MayDiffer implements Setting.
func (Offloads) MayDiffer() bool { return false }

// Targets implements Setting: the devices.
func (o Offloads) Targets() []string { return slices.Sorted(maps.Keys(o)) }

// Check implements Setting: a device of the topology, features by their kernel names.
func (o Offloads) Check(c *SettingCheck) {
	for _, ref := range o.Targets() {
		if ok, _ := c.Device(ref, ref); !ok {
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(o[ref])) {
			if !featureNameRE.MatchString(f) {
				c.Problem(ref+"."+f, "%q is not an ethtool feature name (kernel names, e.g. tx-udp_tnl-segmentation)", f)
			}
		}
	}
}

// Command implements Setting: `ip netns exec NS ethtool -K DEV FEATURE on|off ...`.
func (o Offloads) Command(ref string, _ int, sh Shell) string {
	if len(o[ref]) == 0 {
		return ""
	}
	ns, dev := SplitTarget(ref)
	args := []string{"ip", "netns", "exec", sh.NS(ns), "ethtool", "-K", dev}
	for _, f := range slices.Sorted(maps.Keys(o[ref])) {
		args = append(args, f, o[ref][f].String())
	}
	return shellq.Join(args)
}

// Kernel implements Setting.
func (Offloads) Kernel() KernelNeeds { return KernelNeeds{} }

// String spells a feature setting as ethtool does: on or off.
func (s Switch) String() string {
	if s {
		return "on"
	}
	return "off"
}

// Toggles implements Toggler: "offloads off" when it switches some feature off (veth-udp's
// gro-off, vxlan's sw-off); switching features on only is no such state.
func (o Offloads) Toggles() []string {
	for _, features := range o {
		for _, on := range features {
			if !on {
				return []string{"offloads off"}
			}
		}
	}
	return nil
}

// ReadToggle implements ToggleReader: `ethtool -K eth0 tso off gro on` (also --features);
// what follows it is measured with it.
func (Offloads) ReadToggle(cmd string) (SettingToggle, bool) {
	f := strings.Fields(cmd)
	if len(f) < 5 || f[0] != "ethtool" || (f[1] != "-K" && f[1] != "--features") {
		return SettingToggle{}, false
	}
	t := SettingToggle{Device: f[2], Values: map[string]string{}, Measured: true}
	for i := 3; i+1 < len(f); i += 2 {
		t.Values[f[i]] = f[i+1]
	}
	return t, true
}

// DraftToggles implements ToggleDrafter: the features as the toggles switch them on both ends
// after (the last word for each), the other way before.
func (Offloads) DraftToggles(shown []SettingToggle, on DraftTopology) SettingDraft {
	before, after := map[string]string{}, map[string]string{}
	for _, t := range shown {
		for k, v := range t.Values {
			if other, ok := map[string]string{"on": "off", "off": "on"}[v]; ok {
				before[k], after[k] = other, v
			}
		}
	}
	return SettingDraft{Before: DraftPerTarget("offloads", on.Devices, before, ""), After: DraftPerTarget("offloads", on.Devices, after, "")}
}
