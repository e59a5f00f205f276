package claims

import (
	"regexp"
	"slices"
	"strings"
)

// Rows of two figures each whose columns no header names, where a sentence says which column
// is which state: "Results with the patch applied are on the right." over "TCP_STREAM 64K
// 9.21 Gbps | 9.44 Gbps"; "(Mpps, base then patched)" under rows of two bare figures; "left:
// vanilla, right: patched". Each row is a pair, keyed by its name.

// columnOrderReach is how many lines above the rows (or below them) the sentence may be.
const columnOrderReach = 3

var (
	// sideColumnRe is a state's words and the column they are in, either way round: "the
	// patch applied are on the right", "left column: baseline", "first column is without".
	sideColumnRe = regexp.MustCompile(`(?i)\b(left|right|first|second)\b(?:\s+(?:column|side|one))?\s*(?:[:=]|is|are|shows?|has|holds?)?\s*([A-Za-z][\w/ +-]{0,40}?)\s*(?:[,;.)]|$)|([A-Za-z][\w/ +-]{0,40}?)\s+(?:(?:is|are)\s+)?(?:shown\s+)?(?:on|in)\s+the\s+(left|right|first|second)\b`)
	// thenOrderRe is two states' names in the columns' order: "base then patched", "before
	// and after", "w/o / w/".
	thenOrderRe = regexp.MustCompile(`(?i)\b([A-Za-z][\w/+-]*(?:\s[A-Za-z][\w+-]*)?)\s+(?:then|followed\s+by|/|vs\.?|and)\s+([A-Za-z][\w/+-]*(?:\s[A-Za-z][\w+-]*)?)\s*["'”’]?\s*(?:[,;.):]|$)`)
)

// columnSides is the side of the left column's figures that a sentence gives: "before" when
// the left column is the baseline, "after" when it is the patched state, "" when it says
// neither.
func columnSides(text string) string {
	left := func(pos string) bool { p := strings.ToLower(pos); return p == "left" || p == "first" }
	for _, m := range sideColumnRe.FindAllStringSubmatch(text, -1) {
		pos, words := m[1], m[2]
		if pos == "" {
			pos, words = m[4], m[3]
		}
		side, strong, _ := stateOf(words)
		if side == "" || !strong {
			continue
		}
		if left(pos) == (side == "before") {
			return "before"
		}
		return "after"
	}
	for _, m := range thenOrderRe.FindAllStringSubmatch(text, -1) {
		first, _, _ := stateOf(m[1])
		second, _, _ := stateOf(m[2])
		if first != "" && second != "" && first != second {
			return first
		}
	}
	return ""
}

// rowCellsRe cuts a row into its cells: a pipe, a tab or two spaces or more.
var rowCellsRe = regexp.MustCompile(`\s*\|\s*|\t+|\s{2,}`)

// singleSpacedRowRe is a row written with single spaces: a name, then two figures with their
// units or without, a pipe between them or not.
var singleSpacedRowRe = regexp.MustCompile(`^\s*(\S.*?)\s+(~?\d[\d.,]*(?:\s?[A-Za-zµ/%]+)?)\s+\|?\s*(~?\d[\d.,]*(?:\s?[A-Za-zµ/%]+)?)\s*$`)

// slashRowRe is a row of a name, a colon and two figures apart by a slash with spaces around
// it (a unit's slash has none).
var slashRowRe = regexp.MustCompile(`^\s*([^:|]*[A-Za-z][^:|]*?)\s*:\s*(~?\d[\d.,]*(?:\s?[A-Za-zµ/%]+)?)\s+/\s+(~?\d[\d.,]*(?:\s?[A-Za-zµ/%]+)?)\s*$`)

// twoFigureRow is a row's name (its first cell, with a letter in it) and its two figures of
// one unit, one in each other cell.
func twoFigureRow(text string) (name string, figs []figure, ok bool) {
	var cells []string
	for _, c := range rowCellsRe.Split(strings.TrimSpace(text), -1) {
		if c != "" {
			cells = append(cells, c)
		}
	}
	if m := slashRowRe.FindStringSubmatch(text); m != nil {
		// "2 vCPUs  :  2.05 / 2.44": a name, a colon, the two figures apart by a slash
		cells = m[1:]
	}
	if len(cells) != 3 {
		// single spaces: the name, then two figures at the line's end ("64B 1.02 1.19")
		m := singleSpacedRowRe.FindStringSubmatch(text)
		if m == nil {
			return "", nil, false
		}
		cells = m[1:]
	}
	if !strings.ContainsAny(cells[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return "", nil, false
	}
	for _, c := range cells[1:] {
		f, ok := cellValue(c)
		if !ok {
			return "", nil, false
		}
		figs = append(figs, f)
	}
	if figs[0].unit.norm != figs[1].unit.norm {
		return "", nil, false
	}
	return cells[0], figs, true
}

// columnOrderClaims reads each block of two or more rows of two figures, none of whose lines
// gave a claim, under or over a sentence that says which column is which state.
func (r *Report) columnOrderClaims(lines []line) {
	used := r.claimedLines()
	for i := 0; i < len(lines); i++ {
		j := i
		for j < len(lines) && !used[lines[j].n] {
			if _, _, ok := twoFigureRow(lines[j].text); !ok {
				break
			}
			j++
		}
		if j-i < 2 {
			continue
		}
		side := ""
		for k := max(0, i-columnOrderReach); k < min(len(lines), j+columnOrderReach) && side == ""; k++ {
			if k < i || k >= j {
				side = columnSides(lines[k].text)
			}
		}
		if side != "" {
			r.rowPairs(lines[i:j], side, captionUnit(lines, i))
		}
		i = j
	}
}

// rowPairs pairs each row's two figures, the left one's side given; bare figures take the
// unit the caption above gives (captionUnit), if any.
func (r *Report) rowPairs(rows []line, leftSide, unitName string) {
	var names []string
	var figures [][]figure
	for _, l := range rows {
		name, figs, _ := twoFigureRow(l.text)
		if slices.Contains(names, name) {
			return // rows of one name are runs, not cases: not this layout, none of its rows
		}
		names, figures = append(names, name), append(figures, figs)
	}
	for k, l := range rows {
		name := names[k]
		b, a := headerUnit(figures[k][0], unitName), headerUnit(figures[k][1], unitName)
		if leftSide == "after" {
			b, a = a, b
		}
		metric := ""
		if b.unit.norm != "" {
			metric = metricOf(b.unit)
		}
		rb := reading{metric: metric, unit: b.unit.norm, value: round(b.value), line: l.n, state: "before", conds: map[string]string{"row": name}}
		ra := rb
		ra.value, ra.state = round(a.value), "after"
		r.addPair([2]reading{rb, ra})
	}
}
