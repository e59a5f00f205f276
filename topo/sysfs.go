package topo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
			v, err := readSysfsKnob(sys, dev, k)
			if err != nil {
				return fmt.Errorf("read %s of %s: %w", k.Name, ref, err)
			}
			a[k.Name] = v
		}
		return nil
	})
}

// sysfsFiles are the files of a knob of dev under the sysfs mounted at sys: one, or one per
// queue for a pattern (queues/rx-*/rps_cpus).
func sysfsFiles(sys, dev string, k knobs.Knob) ([]string, error) {
	pattern := filepath.Join(sys, "class", "net", dev, k.Sysfs)
	if !strings.Contains(k.Sysfs, "*") {
		return []string{pattern}, nil
	}
	files, err := filepath.Glob(pattern)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no %s: %w", strings.TrimPrefix(pattern, sys), os.ErrNotExist)
	}
	return files, err
}

// readSysfsKnob reads a knob's files; the files of a pattern must agree (a queue set apart
// from the others is no state nsperf set).
func readSysfsKnob(sys, dev string, k knobs.Knob) (uint32, error) {
	files, err := sysfsFiles(sys, dev, k)
	if err != nil {
		return 0, err
	}
	var first uint32
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		v, err := k.ParseSysfs(string(data))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", strings.TrimPrefix(f, sys), err)
		}
		if i == 0 {
			first = v
		} else if v != first {
			return 0, fmt.Errorf("its queues differ: %s is %s, %s is %s", strings.TrimPrefix(files[0], sys), k.SysfsText(first), strings.TrimPrefix(f, sys), k.SysfsText(v))
		}
	}
	return first, nil
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
		files, err := sysfsFiles(sys, dev, k)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := os.WriteFile(f, []byte(k.SysfsText(v)+"\n"), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, unix.EOPNOTSUPP) && k.Kind == knobs.NAPI {
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
