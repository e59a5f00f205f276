package topo

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// offloadsApplier sets the ethtool features a state sets on a device (scenarios.Offloads),
// and those other states set to their values as built.
type offloadsApplier struct {
	pristine map[string]map[string]bool // the features any state sets, as built, by "ns/dev"
}

func init() {
	RegisterApplier("offloads", func() SettingApplier { return &offloadsApplier{pristine: map[string]map[string]bool{}} })
}

// Built reads, per device, the features any state sets, as built.
func (a *offloadsApplier) Built(l *Live) error {
	names := map[string]map[string]bool{}
	for _, st := range l.Plan.Scenario.States {
		o, _ := st.Settings.Of("offloads").(scenarios.Offloads)
		for ref, fs := range o {
			if names[ref] == nil {
				names[ref] = map[string]bool{}
			}
			for f := range fs {
				names[ref][f] = true
			}
		}
	}
	for ref, fs := range names {
		f, err := l.readFeatures(ref, slices.Sorted(maps.Keys(fs)))
		if err != nil {
			return err
		}
		a.pristine[ref] = f
	}
	return nil
}

// Recreated: a device created anew has its features as built anew.
func (a *offloadsApplier) Recreated(l *Live, ref string) error {
	names := slices.Sorted(maps.Keys(a.pristine[ref]))
	if len(names) == 0 {
		return nil
	}
	f, err := l.readFeatures(ref, names)
	a.pristine[ref] = f
	return err
}

// Check: a fixed feature is the device's answer to changing it.
func (a *offloadsApplier) Check(*Live, scenarios.Setting) []string { return nil }

// Apply: the features any state sets, at the state's values or as built, read back; the
// record is what they read back, nil for a device whose features no state sets.
func (a *offloadsApplier) Apply(l *Live, step plan.Step) (any, error) {
	ref := step.Target
	if len(a.pristine[ref]) == 0 {
		return nil, nil
	}
	o, _ := step.Setting.(scenarios.Offloads)
	want := maps.Clone(a.pristine[ref])
	for f, v := range o[ref] {
		want[f] = bool(v)
	}
	return l.applyFeatures(ref, want)
}

// Drift: each feature read back against the one recorded.
func (a *offloadsApplier) Drift(l *Live, ref string, record any) ([]string, error) {
	want := record.(map[string]bool)
	got, err := l.readFeatures(ref, slices.Collect(maps.Keys(want)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range slices.Sorted(maps.Keys(want)) {
		if got[f] != want[f] {
			out = append(out, fmt.Sprintf("%s %s is %s, applied %s", ref, f, scenarios.Switch(got[f]), scenarios.Switch(want[f])))
		}
	}
	return out, nil
}

// Record: the features of each device, as read back.
func (a *offloadsApplier) Record(rec *results.StateRecord, records map[string]any) {
	for ref, f := range records {
		if rec.Features == nil {
			rec.Features = map[string]map[string]bool{}
		}
		rec.Features[ref] = f.(map[string]bool)
	}
}
