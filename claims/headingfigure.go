package claims

import (
	"regexp"
	"strings"
)

// A state's heading that carries the state's headline figure in parentheses, over the block
// of that state ("Before (1.62 Mpps):" over perf stat's counters, "After (1.97 Mpps):" over
// the next): the two figures of one unit are the headline's pair.

// headingFigureRe is such a heading: a state's words, a figure with its unit in parentheses,
// a colon at the end.
var headingFigureRe = regexp.MustCompile(`^\s*([A-Za-z][^():]{0,40}?)\s*\(\s*(~?\d[\d.,]*\s?[A-Za-zµ/%]+)\s*\)\s*:\s*$`)

// headingFigureClaims pairs the figures of two such headings, one of each state, of one
// unit; nothing where there are more or fewer, or no word decides their states.
func (r *Report) headingFigureClaims(lines []line) {
	type headed struct {
		state, figure string
		n             int
	}
	var hs []headed
	for _, l := range lines {
		if m := headingFigureRe.FindStringSubmatch(l.text); m != nil {
			hs = append(hs, headed{strings.TrimSpace(m[1]), m[2], l.n})
		}
	}
	if len(hs) != 2 {
		return
	}
	s1, s2 := sidesOf(hs[0].state, hs[1].state, false)
	vb, ub, okb := parseValue(strings.TrimPrefix(hs[0].figure, "~"))
	va, ua, oka := parseValue(strings.TrimPrefix(hs[1].figure, "~"))
	if s1 == "" || s1 == s2 || !okb || !oka || ub.norm == "" || ub.norm != ua.norm || ub.kind == "percent" {
		return
	}
	first := proseReading(vb, ub, hs[0].n, hs[0].state)
	second := proseReading(va, ua, hs[1].n, hs[1].state)
	r.addInOrder(first, second, s1)
}
