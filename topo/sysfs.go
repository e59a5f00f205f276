package topo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"golang.org/x/sys/unix"
)

// readSysfsKnobs reads a device's sysfs knobs into a, from its namespace's own sysfs
// (`ip netns exec NS cat /sys/class/net/DEV/threaded`).
func (l *Live) readSysfsKnobs(ref string, a Attrs) error {
	ns, dev := splitRef(ref)
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	return netnsx.WithSysfs(sp.fd, func(sys string) error {
		for _, k := range knobs.SysfsKnobs() {
			data, err := os.ReadFile(filepath.Join(sys, "class", "net", dev, k.Sysfs))
			if err != nil {
				return fmt.Errorf("read %s of %s: %w", k.Name, ref, err)
			}
			v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 32)
			if err != nil {
				return fmt.Errorf("read %s of %s: %q is no number", k.Name, ref, data)
			}
			a[k.Name] = uint32(v)
		}
		return nil
	})
}

// setSysfsKnob writes one sysfs knob of a device (`ip netns exec NS sh -c 'echo V >
// /sys/class/net/DEV/FILE'`).
func (l *Live) setSysfsKnob(ref string, k knobs.Knob, v uint32) error {
	ns, dev := splitRef(ref)
	sp, ok := l.spaces[ns]
	if !ok {
		return fmt.Errorf("no namespace %s in this topology", ns)
	}
	err := netnsx.WithSysfs(sp.fd, func(sys string) error {
		return os.WriteFile(filepath.Join(sys, "class", "net", dev, k.Sysfs), []byte(strconv.FormatUint(uint64(v), 10)+"\n"), 0)
	})
	if errors.Is(err, unix.EOPNOTSUPP) {
		return &capability.Error{Reasons: []string{fmt.Sprintf("%s %d on %s: the device has no NAPI to set it on (a veth has one with GRO or an XDP program on)", k.Name, v, ref)}}
	}
	return err
}

// applySysfsKnobs sets a device's sysfs knobs, each only where it differs: with set, those
// the state sets, to its values; without, those it leaves out, to their built values. A
// device whose sysfs knobs no state sets has none to set.
func applySysfsKnobs(l *Live, ref string, ds scenarios.DeviceSettings, set bool) error {
	if !l.sysfsDevices[ref] {
		return nil
	}
	want := Desired(l.pristine[ref], ds)
	have, err := l.ReadAttrs(ref)
	if err != nil {
		return err
	}
	for _, k := range knobs.SysfsKnobs() {
		if _, stateSets := ds[k.Name]; stateSets == set && have[k.Name] != want[k.Name] {
			if err := l.set(ref, k, want[k.Name]); err != nil {
				return err
			}
		}
	}
	return nil
}
