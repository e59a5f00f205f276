package topo

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// Check finds, before anything is measured, every state setting that the built devices cannot
// take: sizes above a device's tso_max_size, IPv4 sizes on kernels without them (< 6.3), sysctls
// the namespaces lack and a congestion control they cannot take.
func (l *Live) Check(states []scenarios.State) error {
	var reasons []string
	for _, st := range states {
		for _, r := range l.stateProblems(st) {
			reasons = append(reasons, fmt.Sprintf("state %s: %s", st.Name, r))
		}
	}
	if len(reasons) > 0 {
		return &capability.Error{Reasons: reasons}
	}
	return nil
}

// CheckState is Check for one state, with reasons that do not repeat the state's name.
func (l *Live) CheckState(st scenarios.State) error {
	if reasons := l.stateProblems(st); len(reasons) > 0 {
		return &capability.Error{Reasons: reasons}
	}
	return nil
}

func (l *Live) stateProblems(st scenarios.State) []string {
	var reasons []string
	if len(st.XDP) > 0 && l.kept {
		// The topology outlives nsperf: its XDP links must be pinned to stay.
		if _, err := ensurePinDir(l.ID); err != nil {
			reasons = append(reasons, keptXDPReason(strings.Join(slices.Sorted(maps.Keys(st.XDP)), ", "), err))
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(st.Sysctls)) {
		err := l.Do(ns, func() error {
			for _, name := range slices.Sorted(maps.Keys(st.Sysctls[ns])) {
				if _, err := readSysctl(ns, name); err != nil {
					return err
				}
				if name == knobs.CongestionControlSysctl {
					if problem := congestionControlProblem(ns, st.Sysctls[ns][name]); problem != "" {
						reasons = append(reasons, problem)
					}
				}
			}
			return nil
		})
		var capErr *capability.Error
		switch {
		case errors.As(err, &capErr):
			reasons = append(reasons, capErr.Reasons...)
		case err != nil:
			reasons = append(reasons, err.Error())
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(st.Devices)) {
		pristine, ok := l.pristine[ref]
		if !ok {
			reasons = append(reasons, fmt.Sprintf("no device %s in this topology", ref))
			continue
		}
		ds := st.Devices[ref]
		for _, k := range knobs.Settable() {
			if v, set := ds[k.Name]; set {
				if r := capabilityProblem(ref, k, v, pristine); r != "" {
					reasons = append(reasons, r)
				}
			}
		}
	}
	return reasons
}

// capabilityProblem explains why a device cannot take a value, or returns "".
func capabilityProblem(ref string, k knobs.Knob, v uint32, pristine Attrs) string {
	if k.Bound != "" && v > pristine[k.Bound] {
		return fmt.Sprintf("%s %d > %s %d of %s", k.Name, v, k.Bound, pristine[k.Bound], ref)
	}
	if k.IPv4 && !hasIPv4Knobs(pristine) {
		return fmt.Sprintf("%s of %s: this kernel has no IPv4 BIG TCP knobs (Linux 6.3 added them)", k.Name, ref)
	}
	return ""
}

// hasIPv4Knobs: kernels before 6.3 report no IPv4 sizes (0), and have no knob to set.
func hasIPv4Knobs(a Attrs) bool { return a["gso_ipv4_max_size"] != 0 }

// Apply puts every device in the state by carrying out the plan's state steps: the knobs and
// features the state sets, and the build-time values for those it leaves out. Devices marked
// recreate are deleted and created again after all others are set, so that they inherit from
// their lower device what this state gave it; the state's own settings for them follow. Every
// device is read back, and a value that did not stick is an error. Returns the devices by
// "ns/dev". Equivalent: plan.StateShell of the same steps.
func (l *Live) Apply(st scenarios.State) (map[string]machine.DeviceState, error) {
	devices := map[string]*machine.DeviceState{}
	for _, step := range l.Plan.StateSteps(st) {
		if step.Kind == plan.SetSysctls {
			if err := l.applySysctls(step.NS, step.Sysctls); err != nil {
				return nil, fmt.Errorf("state %s: %w", st.Name, err)
			}
			continue
		}
		if step.Kind == plan.SetRoute {
			if err := l.applyRoute(step); err != nil {
				return nil, fmt.Errorf("state %s: %w", st.Name, err)
			}
			continue
		}
		ref := step.NS + "/" + step.Dev
		ds := devices[ref]
		if ds == nil {
			ds = &machine.DeviceState{}
			devices[ref] = ds
		}
		if err := l.applyStep(ref, step, ds); err != nil {
			return nil, fmt.Errorf("state %s: %w", st.Name, err)
		}
	}
	lower := map[string]string{}
	for _, link := range l.Plan.Scenario.Topology.Links {
		if d, ok := link.Spec().(scenarios.Stacked); ok && d.LowerDevice() != "" {
			lower[link.Spec().Devices()[0].Ref()] = d.LowerDevice()
		}
	}
	out := map[string]machine.DeviceState{}
	for ref, ds := range devices {
		got, err := l.ReadAttrs(ref)
		if err != nil {
			return nil, err
		}
		want := Desired(l.pristine[ref], st.Devices[ref])
		for _, k := range knobs.Settable() {
			if got[k.Name] != want[k.Name] {
				return nil, fmt.Errorf("state %s: %s of %s reads back %d after setting %d", st.Name, k.Name, ref, got[k.Name], want[k.Name])
			}
		}
		ds.Attrs, ds.Lower = got, lower[ref]
		out[ref] = *ds
	}
	return out, nil
}

// applyStep carries out one state step on a device.
func (l *Live) applyStep(ref string, step plan.Step, ds *machine.DeviceState) error {
	switch step.Kind {
	case plan.SetKnobs:
		return l.applyKnobs(ref, step.Knobs)
	case plan.SetQdisc:
		var want scenarios.Qdisc
		if step.Qdisc != nil {
			want = *step.Qdisc
		}
		q, err := l.applyQdisc(ref, want)
		ds.Qdisc = q
		return err
	case plan.SetOffloads:
		if len(l.pristineFeatures[ref]) == 0 {
			return nil
		}
		want := maps.Clone(l.pristineFeatures[ref])
		for f, v := range step.Offloads {
			want[f] = bool(v)
		}
		got, err := l.applyFeatures(ref, want)
		ds.Features = got
		return err
	case plan.ResetNAPI:
		return l.applySysfsKnobs(ref, step.Knobs, false)
	case plan.SetNAPI:
		return l.applySysfsKnobs(ref, step.Knobs, true)
	case plan.SetXDP:
		if step.XDP == "" && l.xdp[ref] == nil {
			return nil // nothing attached, nothing asked: no read-back to do
		}
		x, err := l.applyXDP(ref, step.XDP)
		ds.XDP = x
		return err
	case plan.Recreate:
		ds.Recreated = true
		return l.recreate(ref)
	}
	return fmt.Errorf("unknown state step %q", step.Kind)
}

// applyKnobs sets a device's knobs to its built values overridden by the state's: plain sizes
// first, then the IPv4 ones, each only where it differs.
func (l *Live) applyKnobs(ref string, ds scenarios.DeviceSettings) error {
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

// set changes one knob of a device, explaining the kernel's refusals.
func (l *Live) set(ref string, k knobs.Knob, v uint32) error {
	if k.Sysfs != "" {
		if err := l.setSysfsKnob(ref, k, v); err != nil {
			return fmt.Errorf("set %s %d on %s: %w", k.Name, v, ref, err)
		}
		return nil
	}
	ns, dev := splitRef(ref)
	err := l.withLink(ns, dev, func(h *netlink.Handle, link netlink.Link) error { return setKnob(h, link, k, v) })
	if err == nil {
		return nil
	}
	// Handles give a bare errno, without the kernel's extended ack text: explain it here.
	if errors.Is(err, unix.EINVAL) {
		if r := capabilityProblem(ref, k, v, l.pristine[ref]); r != "" {
			return &capability.Error{Reasons: []string{r}}
		}
	}
	if errors.Is(err, unix.ERANGE) {
		return fmt.Errorf("set %s %d on %s: below the smallest size this kernel accepts: %w", k.Name, v, ref, err)
	}
	return fmt.Errorf("set %s %d on %s: %w", k.Name, v, ref, err)
}
