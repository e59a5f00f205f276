package topo

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/knobs"
)

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
