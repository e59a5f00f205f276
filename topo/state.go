package topo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/scenarios"
)

// CapabilityError says that the kernel or a device cannot do what a scenario asks: the run is
// skipped (exit 4), not failed.
type CapabilityError struct{ Reasons []string }

func (e *CapabilityError) Error() string {
	return "this kernel cannot apply the scenario: " + strings.Join(e.Reasons, "; ")
}

// Check finds, before anything is measured, every state setting that the built devices cannot
// take: sizes above a device's tso_max_size and IPv4 sizes on kernels without them (< 6.3).
func (l *Live) Check(states []scenarios.State) error {
	var reasons []string
	for _, st := range states {
		for _, ref := range sortedRefs(st.Devices) {
			pristine, ok := l.pristine[ref]
			if !ok {
				return fmt.Errorf("state %s: no device %s in this topology", st.Name, ref)
			}
			for _, k := range knobs {
				if v := k.get(st.Devices[ref]); v != nil {
					if r := capabilityProblem(ref, k.name, *v, pristine); r != "" {
						reasons = append(reasons, fmt.Sprintf("state %s: %s", st.Name, r))
					}
				}
			}
		}
	}
	if len(reasons) > 0 {
		return &CapabilityError{Reasons: reasons}
	}
	return nil
}

// capabilityProblem explains why a device cannot take a value, or returns "".
func capabilityProblem(ref, knob string, v uint32, pristine Attrs) string {
	switch knob {
	case "gso_max_size", "gso_ipv4_max_size":
		if v > pristine.TSOMaxSize {
			return fmt.Sprintf("%s %d > tso_max_size %d of %s", knob, v, pristine.TSOMaxSize, ref)
		}
	case "gso_max_segs":
		if v > pristine.TSOMaxSegs {
			return fmt.Sprintf("%s %d > tso_max_segs %d of %s", knob, v, pristine.TSOMaxSegs, ref)
		}
	}
	if (knob == "gso_ipv4_max_size" || knob == "gro_ipv4_max_size") && pristine.GSOIPv4MaxSize == 0 {
		return fmt.Sprintf("%s: this kernel has no IPv4 BIG TCP knobs (Linux 6.3 added them)", knob)
	}
	return ""
}

// Apply puts every device in the state: the knobs the state sets, and the build-time values
// for those it leaves out. Plain (IPv6) sizes go first, because setting one of 64K or less also
// overwrites its IPv4 twin; the IPv4 sizes follow. It then reads every device back and returns
// the effective attributes, by "ns/dev"; a value that did not stick is an error.
// Equivalent: `ip -n NS link set dev DEV gso_max_size N gro_max_size N ...`.
func (l *Live) Apply(st scenarios.State) (map[string]Attrs, error) {
	effective := map[string]Attrs{}
	for _, ref := range l.Devices() {
		want := Desired(l.pristine[ref], st.Devices[ref])
		for _, ipv4 := range []bool{false, true} {
			have, err := l.ReadAttrs(ref)
			if err != nil {
				return nil, err
			}
			for _, k := range knobs {
				if k.ipv4 != ipv4 || *have.field(k.name) == *want.field(k.name) {
					continue
				}
				if k.ipv4 && l.pristine[ref].GSOIPv4MaxSize == 0 {
					continue // the kernel has no such knob; Check refuses states that set it
				}
				if err := l.set(ref, k.name, *want.field(k.name)); err != nil {
					return nil, fmt.Errorf("state %s: %w", st.Name, err)
				}
			}
		}
		got, err := l.ReadAttrs(ref)
		if err != nil {
			return nil, err
		}
		for _, k := range knobs {
			if *got.field(k.name) != *want.field(k.name) {
				return nil, fmt.Errorf("state %s: %s of %s reads back %d after setting %d", st.Name, k.name, ref, *got.field(k.name), *want.field(k.name))
			}
		}
		effective[ref] = got
	}
	return effective, nil
}

// set changes one knob of a device, explaining the kernel's refusals.
func (l *Live) set(ref, knob string, v uint32) error {
	ns, dev := splitRef(ref)
	err := l.withLink(ns, dev, func(h *netlink.Handle, link netlink.Link) error {
		switch knob {
		case "mtu":
			return h.LinkSetMTU(link, int(v))
		case "gso_max_size":
			return h.LinkSetGSOMaxSize(link, int(v))
		case "gso_max_segs":
			return h.LinkSetGSOMaxSegs(link, int(v))
		case "gro_max_size":
			return h.LinkSetGROMaxSize(link, int(v))
		case "gso_ipv4_max_size":
			return h.LinkSetGSOIPv4MaxSize(link, int(v))
		case "gro_ipv4_max_size":
			return h.LinkSetGROIPv4MaxSize(link, int(v))
		}
		return fmt.Errorf("unknown knob %s", knob)
	})
	if err == nil {
		return nil
	}
	// Handles give a bare errno, without the kernel's extended ack text: explain it here.
	if errors.Is(err, unix.EINVAL) {
		if r := capabilityProblem(ref, knob, v, l.pristine[ref]); r != "" {
			return &CapabilityError{Reasons: []string{r}}
		}
	}
	if errors.Is(err, unix.ERANGE) {
		return fmt.Errorf("set %s %d on %s: below the smallest size this kernel accepts: %w", knob, v, ref, err)
	}
	return fmt.Errorf("set %s %d on %s: %w", knob, v, ref, err)
}
