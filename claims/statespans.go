package claims

import (
	"strings"
)

// A table whose state columns each hold several figures of a row ("17.2 Gbit/s   88% cpu"
// under "before", "19.6 Gbit/s   84% cpu" under "after"): the header names fewer columns than
// the rows have cells, so no cut by cells fits. The header's names say where each state's
// span starts; a row's text from one name's start to the next is that state's, and its
// figures pair with the other state's in the same row by their order and unit.

// stateSpanClaims reads such a table at lines[i] (its header): the claims and the index past
// its last row; next == i where it is no such table.
func stateSpanClaims(lines []line, i int, ctx context) (claims []Claim, next int) {
	top := headerCells(lines[i].text)
	if len(top) < 3 || !namesOnly(lines[i].text) || strings.Contains(lines[i].text, "|") {
		return nil, i
	}
	names := make([]string, len(top)-1)
	for k, c := range top[1:] {
		names[k] = c.text
	}
	b, a, ok := pickStates(names, false)
	if !ok {
		return nil, i
	}
	b, a = b+1, a+1 // indexes into top
	span := func(text []rune, k int) string {
		from, to := top[k].start, len(text)
		if k+1 < len(top) {
			to = top[k+1].start
		}
		if from >= len(text) {
			return ""
		}
		return string(text[from:min(to, len(text))])
	}
	// cutAt: the row has no character at the column where a state's span starts, or the
	// span starts a word there (the cell lines up with its name).
	cutAt := func(text []rune, k int) bool {
		p := top[k].start
		return p >= len(text) || p == 0 || text[p-1] == ' '
	}
	several := false
	j := i + 1
	for ; j < len(lines) && strings.TrimSpace(lines[j].text) != ""; j++ {
		if separatorRe.MatchString(lines[j].text) {
			continue
		}
		text := []rune(expandTabs(lines[j].text))
		for k := 1; k < len(top); k++ {
			if !cutAt(text, k) {
				return nil, i
			}
		}
		label := strings.TrimSpace(string(text[:min(top[1].start, len(text))]))
		fbs, fas := readFigures(span(text, b)).figures, readFigures(span(text, a)).figures
		several = several || len(fbs) > 1 || len(fas) > 1
		if len(fbs) != len(fas) || label == "" {
			continue
		}
		for k := range fbs {
			fb, fa := headerUnit(fbs[k], label), headerUnit(fas[k], label)
			if fb.unit.norm != fa.unit.norm || fb.bare != fa.bare {
				continue
			}
			conds := copyConds(ctx.conditions)
			conds["row"] = label
			if len(fbs) > 1 {
				conds["column"] = fb.unit.norm // "Gbit/s" and "% cpu" of one row told apart
			}
			rb, ra := &tableRow{label: top[b].text, n: lines[j].n}, &tableRow{label: top[a].text, n: lines[j].n}
			if c, ok := tableClaim(label, fb, fa, rb, ra, conds, nil, nil); ok {
				claims = append(claims, c)
			}
		}
	}
	if !several || len(claims) == 0 {
		return nil, i // a table of one figure a cell is splitTable's
	}
	return claims, j
}
