package claims

import (
	"regexp"
	"slices"
	"strings"
)

// A claim whose figures carry no unit takes the one the heading over them names, where the
// heading starts or ends with it: "Requests per second (UDP_RR, one flow):", "Transactions/s,
// one flow:", "Throughput of 64 streams, Gbit/s:" over "before  41230" / "after  44871".

// headingUnitReach is how many lines above a claim's first the heading may be, blank lines
// included: a heading, a blank line, the rows.
const headingUnitReach = 2

// headingUnits gives the unitless claims the unit of the heading right above them.
func (r *Report) headingUnits(lines []line) {
	for k := range r.Claims {
		c := &r.Claims[k]
		// A claim named by a label with a figure in it ("64B", "8 queues") has that case for
		// its metric's name, not what it measures: the heading's unit says that.
		caseNamed := strings.ContainsAny(c.Metric, "0123456789")
		if c.Unit != "" || c.Metric != "value" && !caseNamed || len(c.Lines) == 0 {
			continue
		}
		first := slices.Min(c.Lines)
		h := headingOver(lines, first)
		if h == "" {
			h = headingOverRows(lines, first)
		}
		u, ok := headingUnit(h)
		if !ok {
			// a group's sub-heading without a unit ("2. IPv6") under a caption that has one
			// ("Packets per second, in kpps:")
			u, ok = headingUnit(captionOverGroups(lines, first))
		}
		if h == "" || !ok {
			u, ok = noteUnitBelow(lines, slices.Max(c.Lines))
		}
		if !ok || u.kind == "percent" {
			continue
		}
		if caseNamed {
			c.Conditions = copyConds(c.Conditions)
			if _, ok := c.Conditions["row"]; !ok {
				c.Conditions["row"] = c.Metric
			}
		}
		c.Metric, c.Unit = metricOf(u), u.norm
		for _, v := range []*Values{&c.Before, &c.After} {
			for i := range v.Values {
				v.Values[i] = round(v.Values[i] * u.factor)
			}
			v.Median = round(v.Median * u.factor)
		}
	}
}

// headingOver is the heading (a line ending in a colon, or one over lines indented under it)
// at most headingUnitReach lines above line number n, with only blank lines between; "" where
// there is none.
func headingOver(lines []line, n int) string {
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
	for k := at - 1; k >= 0 && at-k <= headingUnitReach; k-- {
		t := lines[k].text
		if strings.TrimSpace(t) == "" {
			continue
		}
		if m := headingRe.FindStringSubmatch(t); m != nil {
			return m[1]
		}
		if indentedHeading(lines, k) {
			return strings.TrimSpace(t)
		}
		return ""
	}
	return ""
}

// maxGroupsUnderCaption bounds how far up captionOverGroups looks: a few groups of a few
// lines each.
const maxGroupsUnderCaption = 40

// captionOverGroups is the caption over the groups line n is in, each group a sub-heading and
// its lines ("Packets per second, in kpps:" over "1. IPv4" and its before and after, then
// "2. IPv6" and its): walking up from n's sub-heading, past the lines indented deeper than
// it, blank lines and the other sub-headings at its indentation, the first heading with a
// colon whose next line (a blank line between or not) is itself a sub-heading. "" where there
// is none: prose, or a line at the sub-headings' indentation that heads nothing, comes first.
func captionOverGroups(lines []line, n int) string {
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
	sub := -1
	for k := at - 1; k >= 0 && at-k <= headingUnitReach; k-- {
		if strings.TrimSpace(lines[k].text) != "" {
			sub = k
			break
		}
	}
	// a group's sub-heading: a heading with a colon, or a line over lines indented deeper
	// ("1. IPv4, 64 byte frames" over "   before: 9120")
	heads := func(k int) bool {
		return headingRe.MatchString(lines[k].text) || k+1 < len(lines) && strings.TrimSpace(lines[k+1].text) != "" &&
			indent(lines[k+1].text) > indent(lines[k].text)
	}
	headsNext := func(k int) bool { // the next line but blank ones is a sub-heading
		for j := k + 1; j < len(lines) && j <= k+2; j++ {
			if strings.TrimSpace(lines[j].text) != "" {
				return heads(j)
			}
		}
		return false
	}
	if sub < 0 || !heads(sub) {
		return ""
	}
	for k := sub - 1; k >= 0 && sub-k <= maxGroupsUnderCaption; k-- {
		t := lines[k].text
		switch {
		case strings.TrimSpace(t) == "" || indent(t) > indent(lines[sub].text):
		case headingRe.MatchString(t) && headsNext(k):
			return headingRe.FindStringSubmatch(t)[1]
		case heads(k) && indent(t) == indent(lines[sub].text):
			// another group's sub-heading
		default:
			return ""
		}
	}
	return ""
}

// indentedHeading: lines[k] is a heading without its colon over lines indented deeper
// ("TCP_RR (trans/s)" over "  without: 41002"): short and without a measurement outside its
// parentheses, where a caption lists the test's settings and the unit ("Results (veth, MTU
// 1500, Gbit/s)": no figure of 1500 Gbit/s).
func indentedHeading(lines []line, k int) bool {
	outside := parenRe.ReplaceAllString(lines[k].text, " ")
	return k+1 < len(lines) && strings.TrimSpace(lines[k+1].text) != "" && len(strings.Fields(outside)) <= 6 &&
		len(readFigures(outside).measured()) == 0 && indent(lines[k+1].text) > indent(lines[k].text)
}

// maxRowsUnderHeading bounds how far up headingOverRows looks: a block of rows.
const maxRowsUnderHeading = 40

// headingOverRows is the heading over the block of rows line n is in: the lines above it up
// to the heading all hold figures, with no blank line between but one right under the heading
// ("Mpps, higher is better:" over "64B: 11.2 -> 13.0" and "512B: 7.9 -> 8.4"); "" where there
// is none.
func headingOverRows(lines []line, n int) string {
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
	for k := at - 1; k >= 0 && at-k <= maxRowsUnderHeading; k-- {
		t := lines[k].text
		if m := headingRe.FindStringSubmatch(t); m != nil {
			return m[1]
		}
		if strings.TrimSpace(t) == "" && k > 0 {
			// one blank line between the heading and its block of rows
			if m := headingRe.FindStringSubmatch(lines[k-1].text); m != nil {
				return m[1]
			}
		}
		if strings.TrimSpace(t) == "" || len(readFigures(t).figures) == 0 {
			return ""
		}
	}
	return ""
}

// countedVerbRe is a rate with the verb of what is counted between the noun and its time:
// "packets received per second", "requests served/s".
var countedVerbRe = regexp.MustCompile(`(?i)^(\S+)\s+(?:sent|received|forwarded|processed|handled|served|completed|delivered|transmitted)\s+(per\s+s\w*|/\s*s\w*)$`)

// directionPrefixRe is the direction a counter's name starts with: "rx_", "tx ".
var directionPrefixRe = regexp.MustCompile(`(?i)^\s*(?:rx|tx)[_ ]`)

// parenListRe is a parenthesis of a heading, its items apart by commas or semicolons.
var parenListRe = regexp.MustCompile(`\(([^()]{1,80})\)`)

// parenUnit is the unit a heading gives in parentheses: "(Mpps)", or the one unit among a
// parenthesis' items, "(Mpps, one core)", "(3 runs; usec)"; its text as written, and the unit.
func parenUnit(h string) (string, unit, bool) {
	for _, m := range parenListRe.FindAllStringSubmatch(h, -1) {
		var texts []string
		var units []unit
		for _, item := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' }) {
			if u, ok := lookupUnit(strings.TrimSpace(item)); ok && u.norm != "" {
				texts, units = append(texts, strings.TrimSpace(item)), append(units, u)
			}
		}
		if len(units) == 1 {
			return texts[0], units[0], true
		}
	}
	return "", unit{}, false
}

// inUnitRe is a unit a caption gives after "in": "rates in Mpps", "all figures in usec".
var inUnitRe = regexp.MustCompile(`(?i)\bin\s+([A-Za-zµ%/^]+)`)

// headingUnit is the unit a heading starts with (before its first parenthesis or comma, or
// as its first word) or
// ends with (a word, or words: "per second"), or gives in parentheses or after "in" as a
// caption does.
func headingUnit(h string) (unit, bool) {
	h = directionPrefixRe.ReplaceAllString(h, "") // "rx_packets/s" counts packets per second
	head := h
	if i := strings.IndexAny(head, "(,"); i > 0 {
		head = head[:i]
	}
	head = strings.TrimSpace(head)
	if m := countedVerbRe.FindStringSubmatch(head); m != nil {
		head = m[1] + " " + m[2] // "datagrams sent per second": datagrams per second
	}
	for _, cand := range []string{head, strings.ToLower(head)} {
		if cand == strings.ToLower(head) && !strings.Contains(head, " ") {
			continue // a unit in one word keeps its case: MB/s is not mb/s
		}
		if u, ok := lookupUnit(cand); ok && u.norm != "" {
			return u, true
		}
	}
	if u, ok := labelUnit(h); ok {
		return u, true
	}
	// A rate as the first word: "pps before", "Gbps with 8 queues" (not "Cycles per packet":
	// a count, whose "per" makes it another thing).
	if f := strings.Fields(h); len(f) >= 2 && len(f[0]) >= 2 {
		if u, ok := lookupUnit(strings.Trim(f[0], "()[]:,")); ok && (u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
			return u, true
		}
	}
	for _, part := range []string{h, head} {
		words := strings.Fields(strings.ToLower(part))
		for n := min(4, len(words)); n >= 2; n-- { // a unit of words at the end: "transactions per second"
			if u, ok := lookupUnit(strings.Join(words[len(words)-n:], " ")); ok && u.norm != "" {
				return u, true
			}
		}
	}
	if _, u, ok := parenUnit(h); ok {
		return u, true
	}
	// A unit as one of the heading's parts between commas: "tc filter lookup cost, ns per
	// packet (lower is better):".
	if strings.Contains(h, ",") {
		for _, part := range strings.Split(parenRe.ReplaceAllString(h, " "), ",") {
			p := strings.Replace(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(part), ":")), " per ", "/", 1)
			if u, ok := lookupUnit(p); ok && u.norm != "" && u.kind != "percent" {
				return u, true
			}
		}
	}
	// A rate of words first, then what it is of: "Packets per second through cake with 1024
	// flows", "transactions per second, 8 threads".
	if words := strings.Fields(strings.ToLower(strings.NewReplacer(",", " ", ":", " ").Replace(h))); len(words) > 3 {
		for n := 4; n >= 3; n-- {
			if u, ok := lookupUnit(strings.Join(words[:n], " ")); ok && (u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
				return u, true
			}
		}
	}
	for _, m := range inUnitRe.FindAllStringSubmatch(h, -1) { // "Results, in Mpps (3 runs each)"
		if u, ok := lookupUnit(m[1]); ok && u.norm != "" && u.kind != "percent" {
			return u, true
		}
	}
	return unit{}, false
}

// noteUnitBelow is the unit a short note under the block of a claim's lines opens with, a
// blank line between: "Transactions per second; higher is better.", "All figures are in
// Mpps." (the note's first clause is the unit, nothing else). Every claim of the block (the
// lines down to the blank one) takes the same note.
func noteUnitBelow(lines []line, n int) (unit, bool) {
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == n })
	if at < 0 {
		return unit{}, false
	}
	end := at + 1
	for end < len(lines) && end-at <= maxAlignedRows && strings.TrimSpace(lines[end].text) != "" {
		end++
	}
	for k := end; k < len(lines) && k-end < headingUnitReach; k++ {
		t := strings.TrimSpace(lines[k].text)
		if t == "" {
			continue
		}
		if m := footnoteSentenceRe.FindStringSubmatch(t); m != nil {
			return lookupUnit(m[1])
		}
		clause, _, _ := strings.Cut(strings.TrimPrefix(t, "("), ";")
		clause = strings.TrimRight(strings.TrimSpace(strings.SplitN(clause, ",", 2)[0]), ".")
		if len(strings.Fields(clause)) > 4 {
			return unit{}, false
		}
		if u, ok := lookupUnit(strings.ToLower(clause)); ok && u.norm != "" && u.kind != "percent" {
			return u, true
		}
		return unit{}, false
	}
	return unit{}, false
}
