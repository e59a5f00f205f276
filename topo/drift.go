package topo

import (
	"fmt"
	"sort"
)

// Drift reads every device back and says how it differs from the state as it was applied
// (devices, as Apply returned them): a knob or feature changed from outside the run while it
// measured. Equivalent: `ip -d link show DEV; ethtool -k DEV` compared with the read-back
// after applying the state.
func (l *Live) Drift(applied map[string]DeviceState) ([]string, error) {
	refs := keys(applied)
	sort.Strings(refs)
	var out []string
	for _, ref := range refs {
		want := applied[ref]
		got, err := l.ReadAttrs(ref)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, err)
		}
		have, had := got.Map(), want.Attrs.Map()
		names := keys(had)
		sort.Strings(names)
		for _, name := range names {
			if have[name] != had[name] {
				out = append(out, fmt.Sprintf("%s %s is %d, applied %d", ref, name, have[name], had[name]))
			}
		}
		if len(want.Features) == 0 {
			continue
		}
		features, err := l.readFeatures(ref, keys(want.Features))
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, err)
		}
		fnames := keys(want.Features)
		sort.Strings(fnames)
		for _, f := range fnames {
			if features[f] != want.Features[f] {
				out = append(out, fmt.Sprintf("%s %s is %s, applied %s", ref, f, onOff(features[f]), onOff(want.Features[f])))
			}
		}
	}
	return out, nil
}
