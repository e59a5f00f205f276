package topo

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// sysctlsApplier sets the sysctls a state sets in a namespace (scenarios.Sysctls), and puts
// those other states set back to their values as built.
type sysctlsApplier struct {
	pristine map[string]string // the sysctls any state sets, as built, by "ns/name"
}

func init() {
	RegisterApplier("sysctls", func() SettingApplier { return &sysctlsApplier{pristine: map[string]string{}} })
}

// Check: a sysctl the namespace lacks, a congestion control it cannot take.
func (a *sysctlsApplier) Check(l *Live, value scenarios.Setting) []string {
	s, _ := value.(scenarios.Sysctls)
	var reasons []string
	for _, ns := range s.Targets() {
		err := l.Do(ns, func() error {
			for _, name := range slices.Sorted(maps.Keys(s[ns])) {
				if _, err := readSysctl(ns, name); err != nil {
					return err
				}
				if name == knobs.CongestionControlSysctl {
					if problem := congestionControlProblem(ns, s[ns][name]); problem != "" {
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
	return reasons
}

// Apply puts a namespace's sysctls (those any state sets) at the state's values, and the
// others at their values as built, writing only those that differ, and reads each back: the
// record is the namespace's, by name. Equivalent: `ip netns exec NS sysctl -w NAME=VALUE`.
// The first time a sysctl is seen, its value is the one as built: the namespace is nsperf's
// and new, and goes with the topology, so nothing nsperf writes outlives the run.
func (a *sysctlsApplier) Apply(l *Live, step plan.Step) (any, error) {
	ns := step.Target
	s, _ := step.Setting.(scenarios.Sysctls)
	set := s[ns]
	got := map[string]string{}
	err := l.Do(ns, func() error {
		for _, name := range sysctlNames(l.Plan.Scenario, ns) {
			have, err := readSysctl(ns, name)
			if _, setHere := set[name]; !setHere && errors.Is(err, capability.ErrMissing) {
				continue // another state's, which this namespace lacks: nothing to reset
			}
			if err != nil {
				return err
			}
			key := ns + "/" + name
			if _, seen := a.pristine[key]; !seen {
				a.pristine[key] = have
			}
			want, ok := set[name]
			if !ok {
				want = a.pristine[key]
			}
			if have != knobs.SysctlValue(want) {
				if err := writeSysctl(ns, name, want); err != nil {
					return err
				}
				if have, err = readSysctl(ns, name); err != nil {
					return err
				}
				if have != knobs.SysctlValue(want) {
					return fmt.Errorf("sysctl %s in %s reads back %q after writing %q", name, ns, have, want)
				}
			}
			got[name] = have
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// sysctlNames are the sysctls any state of the scenario sets in a namespace: those a state
// that leaves them out resets.
func sysctlNames(s *scenarios.Scenario, ns string) []string {
	names := map[string]bool{}
	for _, st := range s.States {
		set, _ := st.Settings.Of("sysctls").(scenarios.Sysctls)
		for name := range set[ns] {
			names[name] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// Drift: which sysctls of a namespace changed since the state was applied.
func (a *sysctlsApplier) Drift(l *Live, ns string, record any) ([]string, error) {
	applied := record.(map[string]string)
	var out []string
	err := l.Do(ns, func() error {
		for _, name := range slices.Sorted(maps.Keys(applied)) {
			have, err := readSysctl(ns, name)
			if err != nil {
				return err
			}
			if have != applied[name] {
				out = append(out, fmt.Sprintf("sysctl %s in %s is %q, applied %q", name, ns, have, applied[name]))
			}
		}
		return nil
	})
	return out, err
}

// Record: the sysctls of each namespace, as read back.
func (a *sysctlsApplier) Record(rec *results.StateRecord, records map[string]any) {
	for ns, r := range records {
		if rec.Sysctls == nil {
			rec.Sysctls = map[string]map[string]string{}
		}
		rec.Sysctls[ns] = maps.Clone(r.(map[string]string))
	}
}

// readSysctl reads a sysctl as the kernel prints it, fields separated by one space; the
// calling thread is in the namespace. A sysctl the namespace lacks is a capability the
// scenario needs: the kernel has no such setting, or it is machine-wide on this kernel.
func readSysctl(ns, name string) (string, error) {
	data, err := os.ReadFile(knobs.SysctlPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", &capability.Error{Reasons: []string{fmt.Sprintf("sysctl %s: namespace %s has no such setting on this kernel (not a network sysctl of its own here, or too old or too new a kernel)", name, ns)}}
	}
	if err != nil {
		return "", fmt.Errorf("read sysctl %s in %s: %w", name, ns, err)
	}
	return knobs.SysctlValue(string(data)), nil
}

// writeSysctl writes a value as sysctl -w does (one write of the value and a newline); the
// calling thread is in the namespace. A congestion control the namespace cannot take is a
// capability the scenario needs.
func writeSysctl(ns, name, value string) error {
	f, err := os.OpenFile(knobs.SysctlPath(name), os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("sysctl -w %s in %s: %w", name, ns, err)
	}
	_, err = f.WriteString(value + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if name == knobs.CongestionControlSysctl && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM)) {
		if problem := congestionControlProblem(ns, value); problem != "" {
			return &capability.Error{Reasons: []string{problem}}
		}
	}
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sysctl -w %s=%q in %s: the kernel refuses the value (out of its range, or not one it knows): %w", name, value, ns, err)
	}
	if err != nil {
		return fmt.Errorf("sysctl -w %s=%q in %s: %w", name, value, ns, err)
	}
	return nil
}

// congestionControlProblem says why namespace ns cannot take congestion control name as its
// default (knobs.CongestionControlSysctl), "" if it can; the calling thread is in the namespace.
// Both lists are the machine's, read in the namespace as the kernel checks them.
func congestionControlProblem(ns, name string) string {
	name = strings.TrimSpace(name)
	available, err := os.ReadFile(knobs.SysctlPath("net.ipv4.tcp_available_congestion_control"))
	if err != nil {
		return ""
	}
	if !slices.Contains(strings.Fields(string(available)), name) {
		return fmt.Sprintf("sysctl %s=%s in %s: %s", knobs.CongestionControlSysctl, name, ns, noCongestionControl(name, string(available)))
	}
	allowed, err := os.ReadFile(knobs.SysctlPath("net.ipv4.tcp_allowed_congestion_control"))
	if err == nil && !slices.Contains(strings.Fields(string(allowed)), name) {
		return fmt.Sprintf("sysctl %s=%s in %s: a network namespace may take only a congestion control of the machine's net.ipv4.tcp_allowed_congestion_control (%s), which nsperf does not change: add %s to it on the machine (sysctl -w net.ipv4.tcp_allowed_congestion_control=\"%s %s\")",
			knobs.CongestionControlSysctl, name, ns, knobs.SysctlValue(string(allowed)), name, knobs.SysctlValue(string(allowed)), name)
	}
	return ""
}

// noCongestionControl says that the kernel has no congestion control name, with the option
// that builds it and those it has (net.ipv4.tcp_available_congestion_control, which lists a
// module's only once it is loaded).
func noCongestionControl(name, available string) string {
	_, option, ok := scenarios.CongestionModule(name)
	if !ok {
		return fmt.Sprintf("this kernel has no %s congestion control (loaded here: %s)", name, knobs.SysctlValue(available))
	}
	return fmt.Sprintf("this kernel has no %s congestion control: it needs CONFIG_%s (module tcp_%s; loaded here: %s)", name, option, name, knobs.SysctlValue(available))
}

// routeCongestionControl says that a route's congestion control is not in this kernel, with
// the option that builds it: the list of those it has is the machine's, the same in every
// namespace.
func routeCongestionControl(name string) string {
	available, _ := os.ReadFile(knobs.SysctlPath("net.ipv4.tcp_available_congestion_control"))
	return noCongestionControl(name, string(available))
}
