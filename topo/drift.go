package topo

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/topo/plan"
)

// Drift reads every device back and says how it differs from the state as it was applied
// (devices, as Apply returned them): a knob or feature changed from outside the run while it
// measured, and the state's sysctls. Equivalent: `ip -d link show DEV; ethtool -k DEV;
// sysctl NAME` compared with the read-back after applying the state.
func (l *Live) Drift(applied map[string]machine.DeviceState) ([]string, error) {
	out, err := l.sysctlDrift()
	if err != nil {
		return nil, err
	}
	routes, err := l.routeDrift()
	if err != nil {
		return nil, err
	}
	out = append(out, routes...)
	for _, ref := range slices.Sorted(maps.Keys(applied)) {
		want := applied[ref]
		got, err := l.ReadAttrs(ref)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, err)
		}
		for _, name := range slices.Sorted(maps.Keys(want.Attrs)) {
			if got[name] != want.Attrs[name] {
				out = append(out, fmt.Sprintf("%s %s is %d, applied %d", ref, name, got[name], want.Attrs[name]))
			}
		}
		if want.XDP != "" {
			if got, err := l.readXDP(ref); err != nil {
				return nil, fmt.Errorf("read back %s: %w", ref, err)
			} else if got != want.XDP {
				out = append(out, fmt.Sprintf("%s xdp is %q, applied %q", ref, got, want.XDP))
			}
		}
		if len(want.Features) == 0 {
			continue
		}
		features, err := l.readFeatures(ref, slices.Collect(maps.Keys(want.Features)))
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, err)
		}
		for _, f := range slices.Sorted(maps.Keys(want.Features)) {
			if features[f] != want.Features[f] {
				out = append(out, fmt.Sprintf("%s %s is %s, applied %s", ref, f, plan.OnOff(features[f]), plan.OnOff(want.Features[f])))
			}
		}
	}
	return out, nil
}
