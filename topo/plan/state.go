package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
)

// The kinds of state steps, per device.
const (
	SetKnobs    StepKind = "knobs"    // the knobs the state sets; the live side resets the others
	SetQdisc    StepKind = "qdisc"    // the root qdisc the state attaches, or none
	SetOffloads StepKind = "offloads" // the ethtool features the state sets; the others as built
	Recreate    StepKind = "recreate" // delete the device and run its build steps again
	// SetSysctls, per namespace: the sysctls the state sets; the live side resets those other
	// states set to their values as built.
	SetSysctls StepKind = "sysctls"
	// SetXDP, per device: the XDP program the state attaches (Step.XDP), or none.
	SetXDP StepKind = "xdp"
	// ResetNAPI, per device, before the offloads: the knobs read and set in sysfs (threaded,
	// gro_flush_timeout, napi_defer_hard_irqs) that the state leaves out go back to their built
	// values while the device still has the NAPI the state before gave it (GRO or XDP on); the
	// kernel refuses them on a device without NAPI, and keeps them for the next one it gets.
	ResetNAPI StepKind = "napi-reset"
	// SetNAPI, per device, last: the state's own sysfs knobs, once the offloads and XDP that
	// give a device its NAPI are set.
	SetNAPI StepKind = "napi"
	// SetRoute, per route some state gives attributes (Step.RouteAttrs), after the sysctls
	// (a route's congctl may need one): the live side gives the others their built attributes.
	SetRoute StepKind = "route"
)

// StateSteps returns the steps that put every device of the topology into a state: knobs
// (IPv6, i.e. plain, sizes before IPv4 ones, because setting a plain size of 64K or less also
// overwrites the IPv4 one), qdiscs and offloads of the devices built once; then the devices
// marked recreate are created anew, so that they inherit from their lower device what this
// state gave it, and get their own settings. Every device has its steps even where the state
// sets nothing: the live side then resets it to its built values, so that no state inherits
// from the one measured before it; the shell rendering prints nothing for it.
func (p *Plan) StateSteps(st scenarios.State) []Step {
	var built, recreated []string
	for _, ep := range p.Scenario.Devices() {
		if p.recreated(ep.Ref()) {
			recreated = append(recreated, ep.Ref())
		} else {
			built = append(built, ep.Ref())
		}
	}
	slices.Sort(built)
	slices.Sort(recreated)
	out := p.sysctlSteps(st)
	out = append(out, p.routeSteps(st)...)
	out = append(out, p.deviceStateSteps(st, built)...)
	for _, ref := range recreated {
		ns, dev, _ := strings.Cut(ref, "/")
		lines := []string{fmt.Sprintf("%s link del %s  # created anew: it inherits from its lower device as set now", p.ip(ns), shellq.Word(dev))}
		for _, step := range p.DeviceSteps(ns, dev) {
			lines = append(lines, step.Do)
		}
		out = append(out, Step{Kind: Recreate, NS: ns, Dev: dev, Do: strings.Join(lines, "\n")})
	}
	return append(out, p.deviceStateSteps(st, recreated)...)
}

// sysctlSteps: the sysctls of each namespace some state of the scenario sets sysctls in, first
// (a device's settings may depend on them; none depends on a device's).
func (p *Plan) sysctlSteps(st scenarios.State) []Step {
	named := map[string]bool{}
	for _, other := range p.Scenario.States {
		for ns := range other.Sysctls {
			named[ns] = true
		}
	}
	var out []Step
	for _, ns := range slices.Sorted(maps.Keys(named)) {
		out = append(out, Step{Kind: SetSysctls, NS: ns, Sysctls: st.Sysctls[ns], Do: sysctlShell(p.RunID.Namespace(ns), st.Sysctls[ns])})
	}
	return out
}

// routeSteps: each route some state of the scenario gives attributes, with this state's
// (`ip -n NS route change TO via VIA dev DEV initcwnd N ...`; nothing printed for a route the
// state leaves as built).
func (p *Plan) routeSteps(st scenarios.State) []Step {
	var out []Step
	for _, key := range p.Scenario.StateRouteKeys() {
		ns, to := key[0], key[1]
		route, ok := p.Scenario.StateRoute(ns, to)
		if !ok {
			continue // refused by the loader
		}
		step := Step{Kind: SetRoute, NS: ns, Route: &route}
		if rs, set := st.Routes[ns][to]; set {
			step.RouteAttrs = &rs
			args := []string{"ip", "-n", p.RunID.Namespace(ns), "route", "change", route.Prefix().String()}
			if route.Via != "" {
				args = append(args, "via", route.Via)
			}
			if route.Dev != "" {
				args = append(args, "dev", route.Dev)
			}
			step.Do = shellq.Join(append(args, rs.Args()...))
		}
		out = append(out, step)
	}
	return out
}

// sysctlShell is `ip netns exec NS sysctl -q -w NAME=VALUE...`, "" for none.
func sysctlShell(fullNS string, set map[string]string) string {
	if len(set) == 0 {
		return ""
	}
	args := []string{"ip", "netns", "exec", fullNS, "sysctl", "-q", "-w"}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		args = append(args, name+"="+set[name])
	}
	return shellq.Join(args)
}

// SysctlNames are the sysctls any state of the scenario sets in a namespace: those a state
// that leaves them out resets.
func SysctlNames(s *scenarios.Scenario, ns string) []string {
	names := map[string]bool{}
	for _, st := range s.States {
		for name := range st.Sysctls[ns] {
			names[name] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// deviceStateSteps: for a group of devices, the knobs of each, then the qdiscs, then the
// NAPI knobs the state leaves out reset, the offloads, the XDP programs, then the state's NAPI
// knobs, as a reader runs them.
func (p *Plan) deviceStateSteps(st scenarios.State, refs []string) []Step {
	var out []Step
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		out = append(out, Step{Kind: SetKnobs, NS: ns, Dev: dev, Knobs: st.Devices[ref], Do: p.knobsShell(ns, dev, st.Devices[ref])})
	}
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		step := Step{Kind: SetQdisc, NS: ns, Dev: dev}
		if q, ok := st.Qdiscs[ref]; ok {
			step.Qdisc = &q
			step.Do = fmt.Sprintf("ip netns exec %s tc qdisc replace dev %s root %s", shellq.Word(p.RunID.Namespace(ns)), shellq.Word(dev), q)
		}
		out = append(out, step)
	}
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		out = append(out, Step{Kind: ResetNAPI, NS: ns, Dev: dev, Knobs: st.Devices[ref]})
	}
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		step := Step{Kind: SetOffloads, NS: ns, Dev: dev, Offloads: st.Offloads[ref]}
		if len(step.Offloads) > 0 {
			args := []string{"ip", "netns", "exec", p.RunID.Namespace(ns), "ethtool", "-K", dev}
			for _, f := range slices.Sorted(maps.Keys(step.Offloads)) {
				args = append(args, f, OnOff(bool(step.Offloads[f])))
			}
			step.Do = shellq.Join(args)
		}
		out = append(out, step)
	}
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		step := Step{Kind: SetXDP, NS: ns, Dev: dev, XDP: st.XDP[ref]}
		switch step.XDP {
		case "":
		case scenarios.XDPPass:
			step.Do = fmt.Sprintf("%s link set dev %s xdp obj xdp_pass.o sec xdp  # xdp_pass.o: r0 = XDP_PASS; exit (nsperf loads its own)", p.ip(ns), shellq.Word(dev))
		default:
			step.Do = fmt.Sprintf("%s link set dev %s xdp obj %s sec xdp", p.ip(ns), shellq.Word(dev), shellq.Word(step.XDP))
		}
		out = append(out, step)
	}
	for _, ref := range refs {
		ns, dev, _ := strings.Cut(ref, "/")
		var lines []string
		for _, k := range knobs.SysfsKnobs() {
			if v, set := st.Devices[ref][k.Name]; set {
				// No iproute2 word for it: the device's file, in the namespace's own sysfs.
				lines = append(lines, fmt.Sprintf("ip netns exec %s sh -c %s", shellq.Word(p.RunID.Namespace(ns)),
					shellq.Word(fmt.Sprintf("echo %d > /sys/class/net/%s/%s", v, dev, k.Sysfs))))
			}
		}
		out = append(out, Step{Kind: SetNAPI, NS: ns, Dev: dev, Knobs: st.Devices[ref], Do: strings.Join(lines, "\n")})
	}
	return out
}

// knobsShell is `ip link set` for the knobs a state sets: plain ones, then IPv4 ones, which
// iproute2 before 6.3 does not know.
func (p *Plan) knobsShell(ns, dev string, ds scenarios.DeviceSettings) string {
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
	prefix := fmt.Sprintf("ip -n %s link set dev %s", shellq.Word(p.RunID.Namespace(ns)), shellq.Word(dev))
	var lines []string
	if len(plain) > 0 {
		lines = append(lines, prefix+" "+strings.Join(plain, " "))
	}
	if len(ipv4) > 0 {
		lines = append(lines, prefix+" "+strings.Join(ipv4, " ")+" || echo 'needs iproute2 >= 6.3: nsperf sets it through netlink' >&2")
	}
	return strings.Join(lines, "\n")
}

func (p *Plan) recreated(ref string) bool {
	for _, l := range p.Scenario.Topology.Links {
		if r, ok := l.Spec().(scenarios.Recreated); ok && r.RecreatedPerState() && l.Spec().Devices()[0].Ref() == ref {
			return true
		}
	}
	return false
}

// StateShell renders a state's steps as shell lines.
func StateShell(steps []Step) []string {
	var out []string
	for _, s := range steps {
		if s.Do != "" {
			out = append(out, strings.Split(s.Do, "\n")...)
		}
	}
	return out
}

// OnOff spells a feature setting as ethtool does.
func OnOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
