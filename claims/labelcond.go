package claims

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Pairs of one measurement that nothing tells apart (the same metric, unit and conditions)
// are often told apart by their states' labels, which carry the case besides the state:
// "vanilla, GRO off" / "patched, GRO off" and "vanilla, GRO on" / "patched, GRO on". The words
// both labels of a pair share are its case, a condition (row) of each.

// labelConditions gives the claims of each group that nothing tells apart the words their
// two labels share, as their row condition, where those words tell every claim of the group
// apart (a heading's words that every label carries tell none).
func (r *Report) labelConditions(lines []line) {
	key := func(c Claim) string {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(c.Conditions)) {
			b.WriteString(k + "=" + c.Conditions[k] + ";")
		}
		return c.Metric + "|" + c.Quantity + "|" + c.Unit + "|" + b.String()
	}
	groups := map[string][]int{}
	for i, c := range r.Claims {
		groups[key(c)] = append(groups[key(c)], i)
	}
	for _, group := range groups {
		if len(group) < 2 {
			continue
		}
		if r.lineLabelConditions(group, lines) || r.headingConditions(group, lines) || r.parenConditions(group, lines) {
			continue
		}
		words := map[string]bool{}
		for _, i := range group {
			c := r.Claims[i]
			w := sharedLabelWords(c.Before.Label, c.After.Label)
			if w == "" || words[w] || c.Conditions["row"] != "" {
				words = nil
				break
			}
			words[w] = true
		}
		if words == nil {
			continue
		}
		for _, i := range group {
			c := &r.Claims[i]
			if c.Conditions == nil {
				c.Conditions = map[string]string{}
			}
			c.Conditions["row"] = sharedLabelWords(c.Before.Label, c.After.Label)
		}
	}
}

// labelWordSep splits a label into its words: spaces, commas, colons, semicolons and
// parentheses apart.
var labelWordSep = func(r rune) bool { return strings.ContainsRune(" \t,;:()[]", r) }

// sharedLabelWords are the words two labels share, in the before's order, when each also has
// words of its own (its state's): "GRO off" of "vanilla, GRO off" and "patched, GRO off"; ""
// when they share none or one label is the other's words and more.
func sharedLabelWords(before, after string) string {
	b, a := strings.FieldsFunc(before, labelWordSep), strings.FieldsFunc(after, labelWordSep)
	var common []string
	own := 0
	for _, w := range b {
		if slices.Contains(a, w) {
			common = append(common, w)
		} else {
			own++
		}
	}
	if own == 0 || len(common) == len(a) || len(common) == 0 {
		return ""
	}
	return strings.Join(common, " ")
}

// lineLabelConditions gives each claim of a group whose lines all carry one label ("2)
// TCP_RR: 30211 -> 31888 trans/s"; "TX: 14.2 Mpps" under one state's heading and "TX: 16.0
// Mpps" under the other's) that label as its row condition, where the labels tell every claim
// of the group apart and name no state; it says whether it did.
func (r *Report) lineLabelConditions(group []int, lines []line) bool {
	labels := map[string]bool{}
	var got []string
	for _, i := range group {
		c := r.Claims[i]
		if c.Conditions["row"] != "" {
			return false
		}
		label := ""
		for k, n := range c.Lines {
			at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
			if at < 0 {
				return false
			}
			l, _ := lineLabel(lines[at].text)
			l = strings.TrimSpace(listMarkerRe.ReplaceAllString(l, ""))
			if k > 0 && !strings.EqualFold(l, label) {
				return false // lines of other labels: the states' own, or another's
			}
			label = l
		}
		if side, _, _ := stateOf(label); label == "" || side != "" || labels[label] {
			return false
		}
		labels[label] = true
		got = append(got, label)
	}
	for k, i := range group {
		c := &r.Claims[i]
		if c.Conditions == nil {
			c.Conditions = map[string]string{}
		}
		c.Conditions["row"] = got[k]
	}
	return true
}

// listMarkerRe is a list item's marker before a label: "2)", "3.", "-", "*".
var listMarkerRe = regexp.MustCompile(`^\s*(?:\d{1,2}[.)]|[-*•])\s+`)

// headingConditions gives each claim of a group whose lines stand together under a line of
// their own (a heading or a bullet without figures, indented less: "- veth, 1 queue" over
// "  - before: 2.91 Mpps" / "  - after: 3.30 Mpps") that line's words as its row condition,
// where they tell every claim of the group apart and name no state; it says whether it did.
func (r *Report) headingConditions(group []int, lines []line) bool {
	seen := map[string]bool{}
	var got []string
	for _, i := range group {
		c := r.Claims[i]
		first, last := slices.Min(c.Lines), slices.Max(c.Lines)
		at := slices.IndexFunc(lines, func(l line) bool { return l.n == first })
		if c.Conditions["row"] != "" || at < 1 || last-first > 3 {
			return false
		}
		above := lines[at-1].text
		name := strings.TrimSuffix(strings.TrimSpace(listMarkerRe.ReplaceAllString(above, "")), ":")
		if side, _, _ := stateOf(name); name == "" || side != "" || seen[name] || len(strings.Fields(name)) > 6 ||
			len(readFigures(above).measured()) > 0 || indent(above) >= indent(lines[at].text) {
			return false
		}
		seen[name] = true
		got = append(got, name)
	}
	for k, i := range group {
		c := &r.Claims[i]
		if c.Conditions == nil {
			c.Conditions = map[string]string{}
		}
		c.Conditions["row"] = got[k]
	}
	return true
}

// parenConditions gives each claim of a group the words in parentheses right after its
// figure on each of its lines ("3.21 Mpps (64B), 0.81 Mpps (1518B)" under each state), the
// same on both sides, as its row condition, where they tell every claim apart; it says whether
// it did.
func (r *Report) parenConditions(group []int, lines []line) bool {
	seen := map[string]bool{}
	var got []string
	for _, i := range group {
		c := r.Claims[i]
		if c.Conditions["row"] != "" || len(c.Before.Values) != 1 || len(c.After.Values) != 1 {
			return false
		}
		name := ""
		for k, v := range []Values{c.Before, c.After} {
			p := parenAfterFigure(v.Values[0], c.Unit, c.Lines, lines)
			if p == "" || k > 0 && p != name {
				return false
			}
			name = p
		}
		if side, _, _ := stateOf(name); side != "" || seen[name] {
			return false
		}
		seen[name] = true
		got = append(got, name)
	}
	for k, i := range group {
		c := &r.Claims[i]
		if c.Conditions == nil {
			c.Conditions = map[string]string{}
		}
		c.Conditions["row"] = got[k]
	}
	return true
}

// figureParenRe is a figure, its unit, then words in parentheses: "0.81 Mpps (1518B)".
var figureParenRe = regexp.MustCompile(`(\d[\d.,]*)\s?[A-Za-zµ/%]*\s*\(([^()]{1,30})\)`)

// parenAfterFigure is the parenthesis right after the figure of value (in the claim's unit,
// as written or scaled by its unit) on one of the claim's lines; "" where there is none.
func parenAfterFigure(value float64, unitNorm string, claimLines []int, lines []line) string {
	for _, l := range lines {
		if !slices.Contains(claimLines, l.n) {
			continue
		}
		for _, m := range figureParenRe.FindAllStringSubmatch(l.text, -1) {
			v, u, ok := parseValue(strings.TrimSpace(strings.TrimSuffix(m[0], "("+m[2]+")")))
			if ok && u.norm == unitNorm && math.Abs(v-value) <= 1e-9*math.Max(1, math.Abs(value)) {
				return strings.TrimSpace(m[2])
			}
		}
	}
	return ""
}
