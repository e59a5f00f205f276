package claims

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// side is the readings of one state of one key: consecutive lines (a run series) or one.
type sideRun struct {
	side, state string
	values      []float64
	lines       []int
	lastIdx     int
}

// pairReadings makes claims of the generic readings: per key, the states it was read in.
// A state read twice apart is ambiguous and the key gives nothing; a before and an after
// pair (the first before with the last after: a baseline and the final state); a before
// and states no word decides pair with the first of them; two states no word decides pair
// only where one label negates the other. Figures equal on both sides, or zero on both,
// are no comparison the text makes.
func (r *Report) pairReadings(rs []reading, lines []line) {
	var order []string
	groups := map[string][]reading{}
	rs = mergeTypos(rs)
	for _, x := range rs {
		if _, ok := groups[x.key]; !ok {
			order = append(order, x.key)
		}
		groups[x.key] = append(groups[x.key], x)
	}
	for _, k := range order {
		runs, ok := sideRuns(groups[k], lines)
		if !ok {
			continue
		}
		b, a, ok := chooseSides(runs)
		if !ok {
			b, a, ok = proseSides(runs, lines)
		}
		if !ok {
			continue
		}
		r.addReadingClaim(groups[k][0], b, a)
	}
}

// sideRuns groups a key's readings by state, in order; false when a state comes back
// after another line of the key. Runs of one state stand on consecutive lines, or each
// after its own command ("$ ./super_netperf ..." repeated before every run).
func sideRuns(rs []reading, lines []line) ([]*sideRun, bool) {
	var runs []*sideRun
	next := func(last, idx int) bool {
		if last+1 == idx {
			return true
		}
		for k := last + 1; k < idx && k < len(lines); k++ {
			if !isCommand(lines[k].text) {
				return false
			}
		}
		return idx > last
	}
	for _, x := range rs {
		if n := len(runs); n > 0 && runs[n-1].state == x.state && runs[n-1].side == x.side && next(runs[n-1].lastIdx, x.idx) {
			cur := runs[n-1]
			cur.values, cur.lines, cur.lastIdx = append(cur.values, x.value), append(cur.lines, x.line), x.idx
			continue
		}
		for _, prev := range runs {
			if prev.state == x.state && prev.side == x.side {
				return nil, false
			}
		}
		runs = append(runs, &sideRun{side: x.side, state: x.state, values: []float64{x.value}, lines: []int{x.line}, lastIdx: x.idx})
	}
	return runs, true
}

// chooseSides picks the before and the after of a key's states.
func chooseSides(runs []*sideRun) (before, after *sideRun, ok bool) {
	var bs, as, us []*sideRun
	for _, s := range runs {
		switch s.side {
		case "before":
			bs = append(bs, s)
		case "after":
			as = append(as, s)
		default:
			us = append(us, s)
		}
	}
	switch {
	case len(bs) >= 1 && len(as) >= 1:
		return bs[0], as[len(as)-1], true
	case len(bs) == 1 && len(us) >= 1 && len(as) == 0:
		// Three or more states, one the baseline: the baseline against the last of the
		// others, the final state ("net-next", "+ patches 1-2", "+ whole series").
		return bs[0], us[len(us)-1], true
	case len(as) == 1 && len(us) == 1 && len(bs) == 0:
		return us[0], as[0], true
	case len(us) == 2 && len(bs) == 0 && len(as) == 0:
		sa, sb := sideOfPair(us[0].state, us[1].state)
		switch {
		case sa == "before":
			return us[0], us[1], true
		case sb == "before":
			return us[1], us[0], true
		}
	}
	return nil, nil, false
}

func (r *Report) addReadingClaim(first reading, b, a *sideRun) {
	mb, ma := median(b.values), median(a.values)
	if mb == ma || mb == 0 && ma == 0 || math.IsNaN(mb) || math.IsNaN(ma) || math.IsInf(mb, 0) || math.IsInf(ma, 0) {
		return
	}
	metric := first.metric
	if metric == "" {
		metric = "value"
	}
	quantity := ""
	if first.named {
		metric, quantity = "", metric
	}
	c := Claim{Metric: metric, Quantity: quantity, Unit: first.unit,
		Before: Values{Values: b.values, Median: round(mb), Label: sideLabel(b.state)},
		After:  Values{Values: a.values, Median: round(ma), Label: sideLabel(a.state)}}
	if mb != 0 {
		c.Change = math.Round((ma/mb-1)*1e4) / 1e4
	}
	c.Lines = append(append([]int{}, b.lines...), a.lines...)
	sort.Ints(c.Lines)
	c.Lines = slices.Compact(c.Lines)
	r.addClaims(c)
}

func (r *Report) addPair(p [2]reading) {
	b := &sideRun{state: p[0].state, values: []float64{p[0].value}, lines: []int{p[0].line}}
	a := &sideRun{state: p[1].state, values: []float64{p[1].value}, lines: []int{p[1].line}}
	if p[0].value == p[1].value {
		// "6.3 s -> 6.3 s" is a comparison the text makes: no change.
		c := Claim{Metric: p[0].metric, Unit: p[0].unit, Before: Values{Values: b.values, Median: b.values[0]},
			After: Values{Values: a.values, Median: a.values[0]}, Lines: []int{p[0].line}}
		r.addClaims(c)
		return
	}
	r.addReadingClaim(p[0], b, a)
}

// sideLabel is how the text names a side, where it says more than "before" or "after".
func sideLabel(state string) string {
	if m := literalState.FindStringSubmatchIndex(state); m != nil && strings.TrimSpace(state[:m[2]]) == "" && strings.TrimSpace(state[m[1]:]) == "" {
		return ""
	}
	return state
}
