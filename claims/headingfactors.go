package claims

import (
	"fmt"
	"strings"
)

// Tool outputs under headings that name two things at once, the state and a setting, each
// heading one combination ("6.18-rc4 [base] [drop]", "6.18-rc4 [base+v1] [drop]", ...):
// the runs of one setting are the states' measurements of it, in the states' order. With
// three states or more the baseline is compared with the last; those between are left as
// further states, not paired.

// maxHeadingParts bounds the parts a heading is cut into: a heading names a few things.
const maxHeadingParts = 8

// headingParts cuts a heading into the things it names: the pieces between brackets,
// parentheses, commas and semicolons ("net-next (main+v1) (drop, no touch)": net-next,
// main+v1, drop, no touch).
func headingParts(h string) []string {
	h = strings.TrimSuffix(strings.TrimSpace(h), ":")
	var parts []string
	for _, p := range strings.FieldsFunc(h, func(r rune) bool { return strings.ContainsRune("()[],;", r) }) {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// headingFactors gives the tools' measurements that no word placed (state "") under headings
// of one or two varying parts their states and settings: the part one of whose values extends the
// others' ("main" and "main+v2": the first the baseline, a tree with changes after it) or
// whose values the words of the states place is the state; the other part is a setting of
// the measurement. Measurements of states between the baseline and the last are taken out;
// their lines are returned. Where no part is told a state, nothing changes: the order of
// the headings alone is no evidence of which part is the state.
func headingFactors(ms []measurement) (out []measurement, between [][]int) {
	ms = append([]measurement(nil), ms...) // the caller's measurements stay as read
	groups := map[measurementKey][]int{}
	var order []measurementKey
	for k, m := range ms {
		key := measurementKey{m.tool, strings.ToUpper(m.options["test"]), m.metric, m.quantity, conditionKey(m.conditions), ""}
		if len(groups[key]) == 0 {
			order = append(order, key)
		}
		groups[key] = append(groups[key], k)
	}
	drop := map[int]bool{}
	for _, key := range order {
		idx := groups[key]
		statePos, condPos, ok := headingFactorsOf(ms, idx)
		if !ok {
			continue
		}
		var states []string
		seen := map[string]bool{}
		for _, k := range idx {
			v := headingParts(ms[k].heading)[statePos]
			if !seen[v] {
				seen[v] = true
				states = append(states, v)
			}
		}
		base := baselineOf(states)
		if base == "" {
			continue
		}
		last := states[len(states)-1]
		if last == base {
			last = states[len(states)-2]
		}
		for _, k := range idx {
			parts := headingParts(ms[k].heading)
			if condPos >= 0 {
				conds := copyConds(ms[k].conditions)
				conds["setting"] = labelKey(parts[condPos])
				ms[k].conditions = conds
			}
			switch parts[statePos] {
			case base:
				ms[k].state = "before"
			case last:
				ms[k].state = "after"
			default:
				drop[k] = true
				between = append(between, ms[k].lines)
			}
		}
	}
	for k, m := range ms {
		if !drop[k] {
			out = append(out, m)
		}
	}
	return out, between
}

// headingFactorsOf finds, for the measurements idx of one key, the part of their headings
// that is the state and the part that is a setting (-1 where the states alone vary): two
// measurements or more, none placed by a word, each heading cut into as many parts, one or
// two parts varying, each combination of their values once, and one part told a state by its
// values.
func headingFactorsOf(ms []measurement, idx []int) (statePos, condPos int, ok bool) {
	if len(idx) < 2 {
		return 0, 0, false
	}
	var all [][]string
	combos := map[string]bool{}
	for _, k := range idx {
		p := headingParts(ms[k].heading)
		if ms[k].state != "" || len(p) < 2 || len(p) > maxHeadingParts || len(all) > 0 && len(p) != len(all[0]) {
			return 0, 0, false
		}
		combo := strings.Join(p, "\x00")
		if combos[combo] {
			return 0, 0, false // two runs under one heading: a series, not a combination
		}
		combos[combo] = true
		all = append(all, p)
	}
	var varying []int
	for pos := range all[0] {
		for _, p := range all[1:] {
			if p[pos] != all[0][pos] {
				varying = append(varying, pos)
				break
			}
		}
	}
	if len(varying) == 1 {
		// The states alone vary ("[base] [tx]", "[base+v1] [tx]", ...).
		if baselineOf(values0(all, varying[0])) != "" {
			return varying[0], -1, true
		}
		return 0, 0, false
	}
	if len(varying) != 2 {
		return 0, 0, false
	}
	values := func(pos int) []string { return values0(all, pos) }
	a, b := varying[0], varying[1]
	if len(values(a))*len(values(b)) != len(all) {
		return 0, 0, false // not every combination: not two factors crossed
	}
	switch aState, bState := baselineOf(values(a)) != "", baselineOf(values(b)) != ""; {
	case aState && !bState:
		return a, b, true
	case bState && !aState:
		return b, a, true
	}
	return 0, 0, false
}

// values0 are the values of the part pos of the headings, each once, in order.
func values0(all [][]string, pos int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range all {
		if !seen[p[pos]] {
			seen[p[pos]] = true
			out = append(out, p[pos])
		}
	}
	return out
}

// baselineOf is the baseline among a part's values, "" where they are not told states: the
// one value every other extends ("main" of "main+v1" and "main+v2"), or the one the words of
// the states place before while one at least is placed after ("vanilla", "patched").
func baselineOf(values []string) string {
	if len(values) < 2 {
		return ""
	}
	for _, v := range values {
		extended := true
		for _, w := range values {
			if w != v && !(strings.HasPrefix(w, v) && len(w) > len(v) && strings.ContainsRune("+-_ ", rune(w[len(v)]))) {
				extended = false
				break
			}
		}
		if extended {
			return v
		}
	}
	before, after := "", 0
	for _, v := range values {
		switch side, _, _ := stateOf(v); side {
		case "before":
			if before != "" {
				return ""
			}
			before = v
		case "after":
			after++
		}
	}
	if before != "" && after > 0 {
		return before
	}
	return ""
}

// betweenReason is what the report says of a state between the baseline and the last.
func betweenReason(n int) string {
	return fmt.Sprintf("%d measurement(s) of a state between the baseline and the last (headings of a state and a setting): not paired", n)
}
