package scenarios

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
)

// DeviceKnobs are the knobs a state sets per device ("ns/dev"), by name (the registry in
// package knobs): sizes set with `ip link set`, and NAPI's, set in the device's sysfs
// (threaded, gro_flush_timeout). A knob left out is as the device was created, so that no
// state inherits values from the state measured before it.
type DeviceKnobs map[string]DeviceSettings

func init() { registerSetting(func() Setting { return DeviceKnobs{} }) }

// Key implements Setting.
func (DeviceKnobs) Key() string { return "devices" }

// Names implements Named: the knobs it sets (gso_max_size, mtu).
func (d DeviceKnobs) Names() []string {
	var out []string
	for _, set := range d {
		for name := range set {
			out = append(out, name)
		}
	}
	return out
}

// Scope implements Setting.
func (DeviceKnobs) Scope() Scope { return DeviceScope }

// Phases implements Setting: the sizes first; the NAPI knobs a state leaves out reset while
// the device still has the NAPI the state before gave it (GRO or XDP on: the kernel refuses
// them on a device without, and keeps them for the next it gets); the state's own NAPI knobs
// last, once the features and XDP that give the NAPI are set.
func (DeviceKnobs) Phases() []int { return []int{PhaseLimits, PhaseNAPIReset, PhaseNAPI} }

// MayDiffer implements Setting.
func (DeviceKnobs) MayDiffer() bool { return false }

// Targets implements Setting: the devices.
func (d DeviceKnobs) Targets() []string { return slices.Sorted(maps.Keys(d)) }

// Kernel implements Setting.
func (d DeviceKnobs) Kernel() KernelNeeds {
	var out KernelNeeds
	for _, ref := range d.Targets() {
		for name := range d[ref] {
			if k, ok := knobs.Lookup(name); ok && k.Kconfig != "" && !slices.Contains(out.Options, k.Kconfig) {
				out.Options = append(out.Options, k.Kconfig)
				out.Why = "a state sets " + k.Name
			}
		}
	}
	slices.Sort(out.Options)
	return out
}

// Check implements Setting: a device of the topology, each knob in the registry's range.
func (d DeviceKnobs) Check(c *SettingCheck) {
	for _, ref := range d.Targets() {
		ok, ipv6 := c.Device(ref, ref)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(d[ref])) {
			if k, ok := knobs.Lookup(name); ok {
				if problem := k.Check(d[ref][name], ipv6); problem != "" {
					c.Problem(ref+"."+name, "%s", problem)
				}
			}
		}
	}
}

// Command implements Setting: `ip link set` for the sizes (plain ones, then IPv4 ones, which
// iproute2 before 6.3 does not know); the device's sysfs files for NAPI's knobs.
func (d DeviceKnobs) Command(ref string, phase int, sh Shell) string {
	ns, dev := SplitTarget(ref)
	ds := d[ref]
	switch phase {
	case PhaseLimits:
		var plain, ipv4 []string
		for _, k := range knobs.Settable() {
			if v, set := ds[k.Name]; set && k.Sysfs == "" {
				kv := fmt.Sprintf("%s %d", k.Name, v)
				if k.IPv4 {
					ipv4 = append(ipv4, kv)
				} else {
					plain = append(plain, kv)
				}
			}
		}
		prefix := fmt.Sprintf("ip -n %s link set dev %s", shellq.Word(sh.NS(ns)), shellq.Word(dev))
		var lines []string
		if len(plain) > 0 {
			lines = append(lines, prefix+" "+strings.Join(plain, " "))
		}
		if len(ipv4) > 0 {
			lines = append(lines, prefix+" "+strings.Join(ipv4, " ")+" || echo 'needs iproute2 >= 6.3: nsperf sets it through netlink' >&2")
		}
		return strings.Join(lines, "\n")
	case PhaseNAPI:
		var lines []string
		for _, k := range knobs.SysfsKnobs() {
			if v, set := ds[k.Name]; set {
				// No iproute2 word for it: the device's file, in the namespace's own sysfs.
				write := fmt.Sprintf("echo %s > /sys/class/net/%s/%s", k.SysfsText(v), dev, k.Sysfs)
				if strings.Contains(k.Sysfs, "*") { // a file per queue: every one
					write = fmt.Sprintf("echo %s | tee /sys/class/net/%s/%s >/dev/null", k.SysfsText(v), dev, k.Sysfs)
				}
				lines = append(lines, fmt.Sprintf("ip netns exec %s sh -c %s", shellq.Word(sh.NS(ns)), shellq.Word(write)))
			}
		}
		return strings.Join(lines, "\n")
	}
	return ""
}

// LimitDevices are the devices ("ns/dev") any state sets a size limit on, sorted.
func LimitDevices(states []State) []string {
	var out []string
	for _, st := range states {
		d, _ := st.Settings.Of("devices").(DeviceKnobs)
		for ref, set := range d {
			for _, k := range knobs.SizeLimits() {
				if _, ok := set[k]; ok && !slices.Contains(out, ref) {
					out = append(out, ref)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// SysfsDevices are the devices ("ns/dev") whose sysfs knobs (NAPI's) some state sets: their
// read-back includes those knobs, which cost a mount of the namespace's sysfs.
func SysfsDevices(s *Scenario) map[string]bool {
	out := map[string]bool{}
	for _, st := range s.States {
		d, _ := st.Settings.Of("devices").(DeviceKnobs)
		for ref, ds := range d {
			for _, k := range knobs.SysfsKnobs() {
				if _, set := ds[k.Name]; set {
					out[ref] = true
				}
			}
		}
	}
	return out
}

var ipLinkSetRe = regexp.MustCompile(`ip link set (?:dev )?(\S+)((?: \S+ \S+)+)`)

// ReadToggle implements ToggleReader: `ip link set dev eth0 gro_max_size 185000 gso_max_size
// 185000`, every pair of words it sets (the draft keeps the knobs of package knobs); what
// follows it is measured with it.
func (DeviceKnobs) ReadToggle(cmd string) (SettingToggle, bool) {
	m := ipLinkSetRe.FindStringSubmatch(cmd)
	if m == nil {
		return SettingToggle{}, false
	}
	t := SettingToggle{Device: m[1], Values: map[string]string{}, Measured: true}
	f := strings.Fields(m[2])
	for i := 0; i+1 < len(f); i += 2 {
		t.Values[f[i]] = f[i+1]
	}
	return t, true
}

// limitDefaults are the values a device's size limit has before a toggle raises it: 64 KiB.
var limitDefaults = map[string]string{"gso_max_size": "65536", "gro_max_size": "65536", "gso_ipv4_max_size": "65536", "gro_ipv4_max_size": "65536"}

// DraftToggles implements ToggleDrafter: the knobs the toggles set to a number on both ends
// after, the size limits at their 64 KiB defaults before. Other words of `ip link set` (xdp
// obj FILE, up) are no knob a state sets. gso_max_size or gro_max_size raised without their
// IPv4 twins concern IPv6 alone since Linux 6.3.
func (DeviceKnobs) DraftToggles(shown []SettingToggle, on DraftTopology) SettingDraft {
	before, after := map[string]string{}, map[string]string{}
	six, four := false, false
	for _, t := range shown {
		for k, v := range t.Values {
			six = six || k == "gso_max_size" || k == "gro_max_size"
			four = four || strings.Contains(k, "ipv4")
			knob, ok := knobs.Lookup(k)
			if _, err := strconv.ParseUint(v, 10, 32); !ok || !knob.Settable() || err != nil {
				continue
			}
			after[k] = v
			if d, ok := limitDefaults[k]; ok {
				before[k] = d
			}
		}
	}
	return SettingDraft{
		Before:   DraftPerTarget("devices", on.Devices, before, ""),
		After:    DraftPerTarget("devices", on.Devices, after, ""),
		IPv6Only: six && !four,
	}
}
