package scenarios

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
)

// Sysctls are network sysctls a state sets per namespace (`ip netns exec NS sysctl -w
// net.ipv4.tcp_autocorking=0`), key: the scenario's namespace, then the sysctl's name
// (package knobs says which names). A sysctl some state sets has its value as built in every
// state that leaves it out.
type Sysctls map[string]map[string]string

func init() { registerSetting(func() Setting { return Sysctls{} }) }

// Key implements Setting.
func (Sysctls) Key() string { return "sysctls" }

// Scope implements Setting.
func (Sysctls) Scope() Scope { return NamespaceScope }

// Phases implements Setting: before the routes, whose congctl may need one.
func (Sysctls) Phases() []int { return []int{PhaseSysctls} }

// Targets implements Setting: the namespaces.
func (s Sysctls) Targets() []string { return slices.Sorted(maps.Keys(s)) }

// MayDiffer implements Setting.
func (Sysctls) MayDiffer() bool { return false }

// Check implements Setting: a namespace of the topology, and names and values package knobs
// takes.
func (s Sysctls) Check(c *SettingCheck) {
	for _, ns := range s.Targets() {
		if !c.Namespace(ns, ns) {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s[ns])) {
			if problem := knobs.CheckSysctl(name, s[ns][name]); problem != "" {
				c.Problem(ns+"."+name, "%s", problem)
			}
		}
	}
}

// Command implements Setting: `ip netns exec NS sysctl -q -w NAME=VALUE...`.
func (s Sysctls) Command(ns string, _ int, sh Shell) string { return SysctlCommand(sh.NS(ns), s[ns]) }

// Kernel implements Setting: the module of a default congestion control it sets.
func (s Sysctls) Kernel() KernelNeeds {
	var out KernelNeeds
	for _, set := range s {
		if m, ok := congestionModule(set[knobs.CongestionControlSysctl]); ok {
			out.Modules = append(out.Modules, m)
		}
	}
	return out
}

// congestionModule is the module of a congestion control, if it has one.
func congestionModule(name string) (KernelModule, bool) {
	module, option, ok := CongestionModule(strings.TrimSpace(name))
	if strings.TrimSpace(name) == "" || !ok {
		return KernelModule{}, false
	}
	return KernelModule{Name: module, Options: []string{option}}, true
}

// SysctlCommand is `ip netns exec NS sysctl -q -w NAME=VALUE...` for a namespace's full name,
// "" for none.
func SysctlCommand(fullNS string, set map[string]string) string {
	if len(set) == 0 {
		return ""
	}
	args := []string{"ip", "netns", "exec", fullNS, "sysctl", "-q", "-w"}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		args = append(args, name+"="+set[name])
	}
	return shellq.Join(args)
}

// Names implements Named: each sysctl's last part (tcp_rmem of net.ipv4.tcp_rmem).
func (s Sysctls) Names() []string {
	var out []string
	for _, set := range s {
		for name := range set {
			out = append(out, name[strings.LastIndexAny(name, "./")+1:])
		}
	}
	return out
}

// Toggles implements Toggler: "sysctl NAME" for each it sets.
func (s Sysctls) Toggles() []string {
	var out []string
	for _, set := range s {
		for name := range set {
			out = append(out, "sysctl "+name)
		}
	}
	return out
}

// echoProcSysRe: `echo 0 > /proc/sys/net/ipv4/tcp_autocorking`, also through `| tee [-a]`.
var echoProcSysRe = regexp.MustCompile(`^echo\s+(?:-n\s+)?("[^"]*"|'[^']*'|\S+)\s*(?:>|\|\s*(?:sudo\s+)?tee(?:\s+-a)?)\s*/proc/sys/(\S+)$`)

var sysctlSettingRe = regexp.MustCompile(`([a-z][A-Za-z0-9_.-]*)\s*=\s*("[^"]*"|'[^']*'|\S+)`)

// ReadToggle implements ToggleReader: `sysctl -w net.ipv4.tcp_autocorking=0` (also without
// -w, several at once) and `echo 0 > /proc/sys/net/ipv4/tcp_autocorking`, by dotted name.
func (Sysctls) ReadToggle(cmd string) (SettingToggle, bool) {
	set := map[string]string{}
	if m := echoProcSysRe.FindStringSubmatch(cmd); m != nil {
		set[strings.ReplaceAll(m[2], "/", ".")] = strings.Trim(m[1], `"'`)
	} else if f := strings.Fields(cmd); len(f) >= 2 && f[0] == "sysctl" {
		rest := strings.TrimSpace(strings.TrimPrefix(cmd, "sysctl"))
		for strings.HasPrefix(rest, "-") { // -w, -q, --write
			_, rest, _ = strings.Cut(rest, " ")
			rest = strings.TrimSpace(rest)
		}
		for _, m := range sysctlSettingRe.FindAllStringSubmatch(rest, -1) {
			set[m[1]] = strings.Trim(m[2], `"'`)
		}
	}
	if len(set) == 0 {
		return SettingToggle{}, false
	}
	return SettingToggle{Values: set}, true
}

// DraftToggles implements ToggleDrafter: a sysctl set twice or more to different values
// (`echo 0 > /proc/sys/...`, measured, `echo 9 > ...`, measured) is the first value before and
// the last after; one set once is as built before and set after, in every namespace. Names
// nsperf does not set are noted, not drafted; the others need a shipped scenario whose states
// toggle them.
func (Sysctls) DraftToggles(shown []SettingToggle, on DraftTopology) SettingDraft {
	before, after, first := map[string]string{}, map[string]string{}, map[string]string{}
	var d SettingDraft
	for _, t := range shown {
		for _, name := range slices.Sorted(maps.Keys(t.Values)) {
			v := t.Values[name]
			if knobs.CheckSysctl(name, v) != "" {
				d.Notes = append(d.Notes, "not drafted: sysctl "+name+" (nsperf sets only a namespace's own network sysctls)")
				continue
			}
			if _, seen := first[name]; !seen {
				first[name] = v
				d.Toggles = append(d.Toggles, "sysctl "+name)
			}
			after[name] = v
		}
	}
	for name, v := range first {
		if after[name] != v {
			before[name] = v
		}
	}
	slices.Sort(d.Notes)
	d.Notes = slices.Compact(d.Notes)
	d.Before, d.After = DraftPerTarget("sysctls", on.Namespaces, before, ""), DraftPerTarget("sysctls", on.Namespaces, after, "")
	return d
}
