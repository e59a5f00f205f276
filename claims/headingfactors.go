package claims

import (
	"regexp"
	"strings"
)

// Tool outputs under headings that name two things at once, the state and a setting, each
// heading one combination ("6.18-rc4 [base] [drop]", "6.18-rc4 [base+v1] [drop]", ...):
// the runs of one setting are the states' measurements of it, in the states' order. With
// three states or more the baseline is compared with the last; those between are left as
// further states, not paired.

// pathHeading is a heading in effect, with its level: how far in its line starts, a bullet
// half a step further.
type pathHeading struct {
	level int
	text  string
}

// maxPathDepth bounds the headings in effect: a message nests a few levels.
const maxPathDepth = 8

// enterPath takes a heading (its line raw, and its text) into the path: it ends the headings
// at its level or deeper, and nests under those above.
func (c *context) enterPath(raw, text string) {
	level := 2 * indentOf(raw)
	if bulletRe.MatchString(raw) {
		level++
	}
	k := len(c.path)
	for k > 0 && c.path[k-1].level >= level {
		k--
	}
	c.path = append(c.path[:k:k], pathHeading{level, text})
	if len(c.path) > maxPathDepth {
		c.path = c.path[len(c.path)-maxPathDepth:]
	}
}

// bulletRe is a list item's line: its marker, then its text.
var bulletRe = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,2}[.)])\s+(\S.*)$`)

// wrappedHeading is the heading at lines[i] (its text h) with the line it continues: a
// list item's text wrapped before its colon ("- TCP with a 192-byte buffer (the smallest
// without" over "  a loss of rate):") is one heading, at the item's level. It returns the
// heading's first line and its text.
func wrappedHeading(lines []line, i int, h string) (raw, text string) {
	if i == 0 || bulletRe.MatchString(lines[i].text) || headingRe.MatchString(lines[i-1].text) {
		return lines[i].text, h
	}
	m := bulletRe.FindStringSubmatch(lines[i-1].text)
	if m == nil || indentOf(lines[i].text) <= indentOf(lines[i-1].text) {
		return lines[i].text, h
	}
	return lines[i-1].text, strings.TrimSpace(m[1]) + " " + strings.TrimSpace(h)
}

// indentOf is how far a line's text starts, a tab to the next multiple of 8.
func indentOf(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		default:
			return n
		}
	}
	return n
}

// pathText is the headings in effect as one heading, outermost first, cut by semicolons
// (headingParts cuts there).
func (c context) pathText() string {
	var texts []string
	for _, h := range c.path {
		texts = append(texts, strings.ReplaceAll(h.text, ";", ","))
	}
	return strings.Join(texts, "; ")
}

// maxHeadingParts bounds the parts a heading is cut into: a heading names a few things.
const maxHeadingParts = 8

// headingParts cuts a heading into the things it names: the pieces between brackets,
// parentheses, commas and semicolons ("6.18-rc4 [base+v1] [drop, one queue]": 6.18-rc4,
// base+v1, drop, one queue).
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

// headingFactors gives the tools' measurements under headings of varying parts their
// states and settings: the part one of whose values extends the others' ("base" and
// "base+v2": the first the baseline, a tree with changes after it) or whose values the words
// of the states place is the state; the other varying parts are settings of the
// measurement. Measurements of states between the baseline and the last are taken out;
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
		var all [][]string
		for _, k := range idx {
			all = append(all, measurementParts(ms[k].heading))
		}
		states := values0(all, statePos)
		base := baselineOf(states)
		last := states[len(states)-1]
		if last == base {
			last = states[len(states)-2]
		}
		for n, k := range idx {
			if len(condPos) > 0 {
				var setting []string
				for _, pos := range condPos {
					setting = append(setting, labelKey(all[n][pos]))
				}
				conds := copyConds(ms[k].conditions)
				conds["setting"] = strings.Join(setting, " / ")
				ms[k].conditions = conds
			}
			switch all[n][statePos] {
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

// measurementParts are the parts of a measurement's headings: the headings in effect where
// several are (pathText), or the parts of the one (headingParts).
func measurementParts(heading string) []string {
	if path := strings.Split(heading, "; "); len(path) > 1 {
		return path
	}
	return headingParts(heading)
}

// headingFactorsOf finds, for the measurements idx of one key, the part of their headings
// that is the state and the parts that are settings: two measurements or more, each
// heading cut into as many parts, each combination of values once, and one varying part
// told a state by its values. A part the patch's own words tell (strongly: "with this
// patch", or one value extending the others) decides over parts weaker words tell ("without
// background load", "with background load"), and over the states the headings gave the measurements
// as they were read; without a strong one, every measurement must have been left without a
// state.
func headingFactorsOf(ms []measurement, idx []int) (statePos int, condPos []int, ok bool) {
	if len(idx) < 2 {
		return 0, nil, false
	}
	var all [][]string
	combos := map[string]bool{}
	placed := false
	for _, k := range idx {
		p := measurementParts(ms[k].heading)
		if len(p) < 2 || len(p) > maxHeadingParts || len(all) > 0 && len(p) != len(all[0]) {
			return 0, nil, false
		}
		combo := strings.Join(p, "\x00")
		if combos[combo] {
			return 0, nil, false // two runs under one heading: a series, not a combination
		}
		combos[combo] = true
		all = append(all, p)
		placed = placed || ms[k].state != ""
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
	var told, strong []int
	for _, pos := range varying {
		v := values0(all, pos)
		if baselineOf(v) == "" {
			continue
		}
		told = append(told, pos)
		if stronglyStates(v) {
			strong = append(strong, pos)
		}
	}
	switch {
	case len(strong) == 1:
		statePos = strong[0]
	case len(strong) == 0 && len(told) == 1 && !placed:
		statePos = told[0]
	default:
		return 0, nil, false
	}
	for _, pos := range varying {
		if pos != statePos {
			condPos = append(condPos, pos)
		}
	}
	return statePos, condPos, true
}

// stronglyStates: the values are states by the patch's own words (each placed by a strong
// word of the states, one before and one after at least) or by one extending the others.
func stronglyStates(values []string) bool {
	if extendedBase(values) != "" {
		return true
	}
	sides := map[string]bool{}
	for _, v := range values {
		side, strong, _ := stateOf(v)
		if side == "" || !strong {
			return false
		}
		sides[side] = true
	}
	return sides["before"] && sides["after"]
}

// extendedBase is the one of values every other extends ("base" of "base+v1" and
// "base+v2"), "" where none is.
func extendedBase(values []string) string {
	for _, v := range values {
		all := true
		for _, w := range values {
			if w != v && !extends(w, v) {
				all = false
				break
			}
		}
		if all {
			return v
		}
	}
	return ""
}

// extends: w is v with more after it, "base+v2" of "base".
func extends(w, v string) bool {
	return strings.HasPrefix(w, v) && len(w) > len(v) && strings.ContainsRune("+-_ ", rune(w[len(v)]))
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
// one value every other extends ("base" of "base+v1" and "base+v2"), or the one the words of
// the states place before while one at least is placed after ("vanilla", "patched").
func baselineOf(values []string) string {
	if len(values) < 2 {
		return ""
	}
	if v := extendedBase(values); v != "" {
		return v
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

// betweenReason is what the report says of a measurement of a state between the baseline and
// the last.
const betweenReason = "a measurement of a state between the baseline and the last (headings of a state and a setting): not paired"
