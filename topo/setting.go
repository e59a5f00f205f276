package topo

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// SettingApplier carries out one setting kind's steps (plan.SetSetting) on a live topology,
// reads them back and says how they drifted: the kernel side of a scenarios.Setting. Each
// kind's file (setting_KIND.go) registers its own (RegisterApplier); a Live makes one of each
// when it is built, which keeps what the kind needs of it (values as built, programs
// attached). Optional: a Built, Teardown, Keep or Recreated method (settingBuilt,
// settingTeardown, settingKeep, settingRecreated) is called when the topology is built, torn
// down, kept up, or a device of it created anew.
type SettingApplier interface {
	// Check says what of a state's value the built topology cannot take, before anything is
	// measured (a kernel without a sysctl, a size above a device's limit).
	Check(l *Live, value scenarios.Setting) []string
	// Apply gives the step's target the state's value (step.Setting, nil where the state
	// leaves the kind out), or its value as built, and reads it back: the record is what
	// drift is checked against and the result records; nil for nothing to record.
	Apply(l *Live, step plan.Step) (record any, err error)
	// Drift says how a target differs from its record now.
	Drift(l *Live, target string, record any) ([]string, error)
	// Record writes the kind's records of a state, by target, into the result's record.
	Record(rec *results.StateRecord, records map[string]any)
}

type (
	settingBuilt     interface{ Built(l *Live) error }
	settingTeardown  interface{ Teardown(l *Live) error }
	settingKeep      interface{ Keep(l *Live) error }
	settingRecreated interface {
		Recreated(l *Live, ref string) error
	}
)

// applierMakers make each setting kind's applier, by the kind's key.
var applierMakers = map[string]func() SettingApplier{}

// RegisterApplier adds the applier of a setting kind, by its key; each kind's file calls it
// from init (and a test, for a kind of its own).
func RegisterApplier(key string, make func() SettingApplier) {
	if _, dup := applierMakers[key]; dup {
		panic("topo: applier of setting kind " + key + " registered twice")
	}
	applierMakers[key] = make
}

// newAppliers makes a Live's appliers, one for each setting kind.
func newAppliers() map[string]SettingApplier {
	out := map[string]SettingApplier{}
	for key, make := range applierMakers {
		out[key] = make()
	}
	return out
}

// applier is the applier of a kind; an error for a kind no file of package topo registers.
func applier(l *Live, key string) (SettingApplier, error) {
	if a, ok := l.appliers[key]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no applier for setting kind %q in package topo", key)
}

// settingHooks calls fn with every applier of the kinds, in the plan's order.
func settingHooks(l *Live, fn func(SettingApplier) error) error {
	var errs []error
	for _, kind := range scenarios.SettingKinds() {
		if a, ok := l.appliers[kind.Key()]; ok {
			errs = append(errs, fn(a))
		}
	}
	return errors.Join(errs...)
}

// Check finds, before anything is measured, every state setting that the built topology
// cannot take: each kind's applier says what (sizes above a device's tso_max_size, IPv4 sizes
// on kernels without them (< 6.3), sysctls the namespaces lack, a congestion control they
// cannot take).
func (l *Live) Check(states []scenarios.State) error {
	var reasons []string
	for _, st := range states {
		for _, r := range stateProblems(l, st) {
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
	if reasons := stateProblems(l, st); len(reasons) > 0 {
		return &capability.Error{Reasons: reasons}
	}
	return nil
}

func stateProblems(l *Live, st scenarios.State) []string {
	var reasons []string
	for _, kind := range scenarios.SettingKinds() {
		value := st.Settings[kind.Key()]
		if value == nil {
			continue
		}
		a, err := applier(l, kind.Key())
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		reasons = append(reasons, a.Check(l, value)...)
	}
	return reasons
}

// Apply puts the topology into a state by carrying out the plan's state steps, each with its
// kind's applier: what the state sets, and the values as built for what it leaves out.
// Devices marked recreate are deleted and created again after all others are set, so that
// they inherit from their lower device what this state gave it; the state's own settings for
// them follow. Every target is read back, and a value that did not stick is an error. Returns
// the state as read back, each kind's records and the devices' places. Equivalent:
// plan.StateShell of the same steps.
func (l *Live) Apply(st scenarios.State) (results.StateRecord, error) {
	var rec results.StateRecord
	l.applied = map[string]map[string]any{}
	for _, step := range l.Plan.StateSteps(st) {
		if err := applyStep(l, step, &rec); err != nil {
			return results.StateRecord{}, fmt.Errorf("state %s: %w", st.Name, err)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(l.appliers)) {
		l.appliers[key].Record(&rec, l.applied[key])
	}
	for _, link := range l.Plan.Scenario.Topology.Links {
		if d, ok := link.Spec().(scenarios.Stacked); ok && d.LowerDevice() != "" {
			if rec.Lower == nil {
				rec.Lower = map[string]string{}
			}
			rec.Lower[link.Spec().Devices()[0].Ref()] = d.LowerDevice()
		}
	}
	slices.Sort(rec.Recreated)
	if err := l.awaitCarrier(); err != nil {
		return results.StateRecord{}, fmt.Errorf("state %s: %w", st.Name, err)
	}
	return rec, nil
}

// applyStep carries out one state step.
func applyStep(l *Live, step plan.Step, rec *results.StateRecord) error {
	switch step.Kind {
	case plan.Recreate:
		ref := step.NS + "/" + step.Dev
		rec.Recreated = append(rec.Recreated, ref)
		return l.recreate(ref)
	case plan.SetSetting:
		a, err := applier(l, step.SettingKey)
		if err != nil {
			return err
		}
		record, err := a.Apply(l, step)
		if err != nil || record == nil {
			return err
		}
		if l.applied[step.SettingKey] == nil {
			l.applied[step.SettingKey] = map[string]any{}
		}
		l.applied[step.SettingKey][step.Target] = record
		return nil
	}
	return fmt.Errorf("unknown state step %q", step.Kind)
}

// Drift reads back every target the last Apply recorded and says how it differs from the
// state as applied: a knob, feature, sysctl or route changed from outside the run while it
// measured. Equivalent: `ip -d link show DEV; ethtool -k DEV; sysctl NAME; ip route show`
// compared with the read-back after applying the state.
func (l *Live) Drift() ([]string, error) {
	var out []string
	for _, kind := range scenarios.SettingKinds() {
		records := l.applied[kind.Key()]
		for _, target := range slices.Sorted(maps.Keys(records)) {
			drift, err := l.appliers[kind.Key()].Drift(l, target, records[target])
			if err != nil {
				return nil, fmt.Errorf("read back %s: %w", target, err)
			}
			out = append(out, drift...)
		}
	}
	return out, nil
}
