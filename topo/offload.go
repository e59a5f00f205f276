package topo

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/safchain/ethtool"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/scenarios"
)

// ethtoolIn returns the ethtool handle of a namespace. Its socket is opened inside the
// namespace, and ethtool requests on it reach that namespace's devices.
func (l *Live) ethtoolIn(ns string) (*ethtool.Ethtool, error) {
	sp, ok := l.spaces[ns]
	if !ok {
		return nil, fmt.Errorf("no namespace %s in this topology", ns)
	}
	if sp.eth != nil {
		return sp.eth, nil
	}
	err := netnsx.Do(sp.fd, func() error {
		var err error
		sp.eth, err = ethtool.NewEthtool()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ethtool in %s: %w", ns, err)
	}
	return sp.eth, nil
}

// featureStates reads the named features of a device (`ethtool -k DEV`).
func (l *Live) featureStates(ref string, names []string) (map[string]ethtool.FeatureState, error) {
	ns, dev := splitRef(ref)
	e, err := l.ethtoolIn(ns)
	if err != nil {
		return nil, err
	}
	all, err := e.FeaturesWithState(dev)
	if err != nil {
		return nil, fmt.Errorf("read features of %s: %w", ref, err)
	}
	out := map[string]ethtool.FeatureState{}
	for _, n := range names {
		st, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("%s has no ethtool feature %q (`ip netns exec %s ethtool -k %s` lists the names)", ref, n, l.ID.Namespace(ns), dev)
		}
		out[n] = st
	}
	return out, nil
}

func (l *Live) readFeatures(ref string, names []string) (map[string]bool, error) {
	states, err := l.featureStates(ref, names)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for n, st := range states {
		out[n] = st.Active
	}
	return out, nil
}

// applyFeatures sets a device's features to want (`ethtool -K DEV FEATURE on|off ...`) and
// reads them back. The library reports success even for a fixed feature that did not change,
// so a fixed feature in the wrong state is refused up front, and every feature is checked
// after the change.
func (l *Live) applyFeatures(ref string, want map[string]bool) (map[string]bool, error) {
	names := slices.Sorted(maps.Keys(want))
	have, err := l.featureStates(ref, names)
	if err != nil {
		return nil, err
	}
	change := map[string]bool{}
	var fixed []string
	for _, n := range names {
		if have[n].Active == want[n] {
			continue
		}
		if !have[n].Available {
			fixed = append(fixed, fmt.Sprintf("%s is fixed %s on %s", n, scenarios.Switch(have[n].Active), ref))
			continue
		}
		change[n] = want[n]
	}
	if len(fixed) > 0 {
		return nil, &capability.Error{Reasons: fixed}
	}
	if len(change) > 0 {
		ns, dev := splitRef(ref)
		e, err := l.ethtoolIn(ns)
		if err != nil {
			return nil, err
		}
		if err := e.Change(dev, change); err != nil {
			return nil, fmt.Errorf("set features of %s: %w", ref, err)
		}
	}
	got, err := l.readFeatures(ref, names)
	if err != nil {
		return nil, err
	}
	var wrong []string
	for _, n := range names {
		if got[n] != want[n] {
			wrong = append(wrong, fmt.Sprintf("%s is %s, not %s", n, scenarios.Switch(got[n]), scenarios.Switch(want[n])))
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("%s: features did not change as asked: %s", ref, strings.Join(wrong, "; "))
	}
	return got, nil
}
