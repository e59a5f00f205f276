package compare

import "github.com/nsperf/nsperf/results"

// defaultPairs pairs the states every side has by name, in the base's order, as a comparison
// of runs does, except around a state that some sides cannot apply (a patch that raises a
// device's limit: "on" is refused by the stock kernel and applies on the patched one). Such a
// state is a Capability. When the base cannot apply it, the sides that can have it compared
// with the base's baseline state (what the change makes possible), next to baseline with
// baseline (that it changes nothing by default); when another side cannot, its record says
// unavailable and the comparison has no figures.
func defaultPairs(sides []Side) ([]StatePair, []results.Capability) {
	base := sides[0]
	baseline := firstState(base.Result)
	var pairs []StatePair
	var caps []results.Capability
	for _, p := range commonStates(sides) {
		c := results.Capability{State: p.Base, Unavailable: map[string]string{}}
		if why := unavailable(base.Result, p.Base); why != "" {
			c.Unavailable[base.Name] = why
		}
		for _, s := range sides[1:] {
			if why := unavailable(s.Result, p.New); why != "" {
				c.Unavailable[s.Name] = why
			}
		}
		for _, s := range sides {
			if _, no := c.Unavailable[s.Name]; !no {
				c.Applies = append(c.Applies, s.Name)
			}
		}
		_, baseLacks := c.Unavailable[base.Name]
		switch {
		case len(c.Unavailable) == 0 || len(c.Applies) == 0:
			pairs = append(pairs, p) // a capability of nobody, or of everybody
			continue
		case baseLacks && p.Base != baseline:
			c.ComparedWith = StateName(baseline, base.Name)
			pairs = append(pairs, StatePair{Base: baseline, New: p.New})
		default:
			pairs = append(pairs, p)
		}
		caps = append(caps, c)
	}
	return pairs, caps
}

// unavailable is why a result could not apply a state, when no case of it could; "" when
// some case measured it.
func unavailable(r *results.Result, state string) string {
	why := ""
	for _, c := range r.Cases {
		for _, st := range c.States {
			if st.Name != state {
				continue
			}
			if st.Unavailable == "" {
				return ""
			}
			why = st.Unavailable
		}
	}
	return why
}

// firstState is a result's baseline: its first state.
func firstState(r *results.Result) string {
	if names := stateNames(r); len(names) > 0 {
		return names[0]
	}
	return ""
}
