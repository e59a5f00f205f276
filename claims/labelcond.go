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

// labelConditions gives the claims of each group that nothing tells apart a row condition
// that does: the label all of a claim's lines carry, the heading over them, the case in
// parentheses after its figures, or the words its two labels share (a heading's words that
// every label carries tell none), the first that tells every claim of the group apart.
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
		_ = r.rowsBy(group, func(c Claim) string { return lineLabelOf(c, lines) }) ||
			r.rowsBy(group, func(c Claim) string { return headingOf(c, lines) }) ||
			r.rowsBy(group, func(c Claim) string { return parenOf(c, lines) }) ||
			r.rowsBy(group, func(c Claim) string { return sharedLabelWords(c.Before.Label, c.After.Label) })
	}
}

// rowsBy gives each claim of group the name named gives it as its row condition, where every
// claim has one, none has a row already and the names tell them all apart; it says whether it
// did.
func (r *Report) rowsBy(group []int, named func(Claim) string) bool {
	seen := map[string]bool{}
	names := make([]string, len(group))
	for k, i := range group {
		c := r.Claims[i]
		names[k] = named(c)
		if names[k] == "" || seen[names[k]] || c.Conditions["row"] != "" {
			return false
		}
		seen[names[k]] = true
	}
	for k, i := range group {
		c := &r.Claims[i]
		if c.Conditions == nil {
			c.Conditions = map[string]string{}
		}
		c.Conditions["row"] = names[k]
	}
	return true
}

// notAState is name, or "" where it names a state (a state's words tell no case).
func notAState(name string) string {
	if side, _, _ := stateOf(name); side != "" {
		return ""
	}
	return name
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

// lineLabelOf is the one label all of a claim's lines carry ("2) TCP_RR: 30211 -> 31888
// trans/s"; "TX: 14.2 Mpps" under one state's heading and "TX: 16.0 Mpps" under the other's),
// list markers off; "" where they carry none, several, or a state's.
func lineLabelOf(c Claim, lines []line) string {
	label := ""
	for k, n := range c.Lines {
		at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
		if at < 0 {
			return ""
		}
		l, _ := lineLabel(lines[at].text)
		l = strings.TrimSpace(listMarkerRe.ReplaceAllString(l, ""))
		if k > 0 && !strings.EqualFold(l, label) {
			return "" // lines of other labels: the states' own, or another's
		}
		label = l
	}
	return notAState(label)
}

// listMarkerRe is a list item's marker before a label: "2)", "3.", "2 -", "-", "*".
var listMarkerRe = regexp.MustCompile(`^\s*(?:\d{1,2}[.)]|\d{1,2}\s+-|[-*•])\s+`)

// headingOf is the line a claim's lines stand together under, indented less (a heading or a
// bullet without measured figures: "- veth, 1 queue" over "  - before: 2.91 Mpps" / "  -
// after: 3.30 Mpps"), its list marker and colon off; "" where there is none or it names a
// state.
func headingOf(c Claim, lines []line) string {
	first, last := slices.Min(c.Lines), slices.Max(c.Lines)
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == first })
	if at < 1 || last-first > 3 {
		return ""
	}
	above := lines[at-1].text
	name := strings.TrimSuffix(strings.TrimSpace(listMarkerRe.ReplaceAllString(above, "")), ":")
	if len(strings.Fields(name)) > 6 || len(readFigures(above).measured()) > 0 || indent(above) >= indent(lines[at].text) {
		return ""
	}
	return notAState(name)
}

// parenOf is the case in parentheses right after each of a claim's two figures, the same on
// both sides ("3.21 Mpps (64B)" under one state and "3.88 Mpps (64B)" under the other); ""
// where there is none, or it names a state.
func parenOf(c Claim, lines []line) string {
	if len(c.Before.Values) != 1 || len(c.After.Values) != 1 {
		return ""
	}
	name := ""
	for k, v := range []Values{c.Before, c.After} {
		p := parenAfterFigure(v.Values[0], c.Unit, c.Lines, lines)
		if p == "" || k > 0 && p != name {
			return ""
		}
		name = p
	}
	return notAState(name)
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
