package claims

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var (
	pipeSplitRe = regexp.MustCompile(`\s*\|\s*`)
	// stateHeaderRe names a column of states, not what is measured.
	stateHeaderRe = regexp.MustCompile(`(?i)^(kernel|tree|version|state|config(uration)?|setup|branch|build|commit|variant|mode)s?$`)
	// statedRowRe names a table's row of stated changes, not a state: "Delta", "increase (%)".
	statedRowRe = regexp.MustCompile(`(?i)^(?:%\s*)?(?:percent(?:age)?|` + changeWords + `)\b`)
	// changeColumnRe names a table's column of stated changes: "Change", "Delta", "Diff (%)",
	// "Gain", "%".
	changeColumnRe = regexp.MustCompile(`(?i)^(?:%\s*)?(?:` + changeWords + `|Δ|%|\+/-)\s*(?:\(?%\)?)?$`)
)

// changeWords are the words an author heads a stated change with, in a row's label or a
// column's name.
const changeWords = `change|delta|diff(?:erence)?|gain|improvement|increase|decrease|reduction|uplift|boost|speedup|slowdown|ratio`

// tableRow is one row of a table: its label and its cells after the label.
type tableRow struct {
	label string
	cells []string
	n     int
}

// cell is the row's cell k; "" where the row is shorter (a row cut with fewer cells than the
// header names).
func (r tableRow) cell(k int) string {
	if k < 0 || k >= len(r.cells) {
		return ""
	}
	return r.cells[k]
}

// splitRow splits a table line into cells: at pipes ("| a | b |", "a | b"), at tabs, or at
// two or more spaces. A "label: value" first cell is two cells ("Before: 4.4Mpps | 6.0Mpps");
// a first cell "n = 8" or "rx-1" is one (a row's name, its setting).
func splitRow(text string) []string {
	t := strings.TrimRight(text, " ")
	var cells []string
	switch {
	case strings.Contains(t, "|"):
		t = strings.Trim(strings.TrimSpace(t), "|")
		cells = pipeSplitRe.Split(strings.TrimSpace(t), -1)
		if strings.HasPrefix(strings.TrimSpace(text), "|") && strings.TrimSpace(t) != t {
			cells = pipeSplitRe.Split(t, -1)
		}
		// Pipes between all columns but the first two: "Size   64 | 128" has them apart by
		// spaces, as a table aligned by spaces does. (Spaces inside a later cell are its own:
		// "xdp_redirect   eth0->veth0".)
		if len(cells) > 0 {
			cells = append(splitCellsRe.Split(strings.TrimSpace(cells[0]), -1), cells[1:]...)
		}
	case strings.Contains(t, "\t"):
		// at tabs, and at spaces where a row mixes them in ("ring:\t\t1385  9997\t1492")
		cells = splitCellsRe.Split(strings.TrimSpace(t), -1)
	default:
		cells = splitCellsRe.Split(strings.TrimSpace(t), -1)
	}
	cells = joinOpenParens(cells)
	for k := range cells {
		cells[k] = strings.TrimSpace(cells[k])
	}
	if len(cells) > 0 {
		if m := labelColonRe.FindStringSubmatch(cells[0]); m != nil && m[2] != "" && len(readFigures(m[2]).figures) > 0 && (!strings.Contains(m[1], " ") || len(strings.Fields(m[1])) <= 4 && stateNamed(m[1])) {
			cells = append([]string{strings.TrimSpace(m[1]), strings.TrimSpace(m[2])}, cells[1:]...)
		}
	}
	return cells
}

// joinOpenParens puts back together a cell the split cut inside its parentheses: a note
// padded to align ("2173.983 MB/s(  5.22%)") is one cell, not two.
func joinOpenParens(cells []string) []string {
	var out []string
	open := 0
	for _, c := range cells {
		if open > 0 && len(out) > 0 {
			out[len(out)-1] += "  " + c
		} else {
			out = append(out, c)
		}
		open += strings.Count(c, "(") - strings.Count(c, ")")
		if open < 0 {
			open = 0
		}
	}
	return out
}

// spacedThousandsRe is a cell that is one figure whose thousands are grouped by single spaces
// ("2 214", "31 870"), as SI writes them.
var spacedThousandsRe = regexp.MustCompile(`^\d{1,3}(?: \d{3})+(?:\.\d+)?$`)

// stateNamed: a label names a state of the change ("Without patch", "Base kernel").
func stateNamed(label string) bool {
	side, _, _ := stateOf(label)
	return side != ""
}

// cellValue is a cell's figure: the first number of it with its unit ("291kpps",
// "0.17±0.02", "6.3s", "539 Mbps"), ok false for a cell that is not one figure.
func cellValue(cell string) (figure, bool) {
	// A marker an author points at a cell with ("71240 (-27%)  <--", "9.1 *"): not the figure's.
	cell = strings.TrimSpace(cellMarkerRe.ReplaceAllString(cell, ""))
	if m := cellNoteRe.FindStringSubmatch(cell); m != nil {
		cell = m[1] // "26.1 us (-2.3 us)", "33.8 (+4.0%)": the figure; its note is a stated change
	} else if m := cellRemarkRe.FindStringSubmatch(cell); m != nil {
		if _, unit := lookupUnit(m[2]); !unit {
			cell = m[1] // "9356.22 (not stable)": the figure; the words are a remark on it
		}
	}
	if spacedThousandsRe.MatchString(cell) {
		cell = strings.ReplaceAll(cell, " ", "") // "31 870": thousands grouped by spaces, one figure
	}
	if spread := cellSpreadRe.ReplaceAllString(cell, ""); spread != cell && kiloCellRe.MatchString(spread) {
		cell = spread // "41.2k ± 0.4k": the figure in thousands, its spread after it
	}
	if m := kiloCellRe.FindStringSubmatch(cell); m != nil {
		// "175k" alone in a value cell is a count in thousands (IOPS beside "7.7M"); in a
		// sentence or a row's name, "64k" is a size.
		if v, ok := parseNumber(m[1]); ok {
			return figure{value: v * scaleSuffix[m[2]], bare: true, raw: cell}, true
		}
	}
	sh := readFigures(cell)
	if len(sh.figures) != 1 || len(strings.Fields(sh.shape)) > 1 {
		return figure{}, false
	}
	return sh.figures[0], true
}

// cellSpreadRe is a spread after a cell's figure, in the figure's own thousands: "± 0.4k".
var cellSpreadRe = regexp.MustCompile(`\s*(?:±|\+-|\+/-)\s*\d[\d.]*[kK]?\s*$`)

// kiloCellRe is a cell of a number and a k for thousands.
var kiloCellRe = regexp.MustCompile(`^(\d+(?:\.\d+)?)([kK])$`)

// cellNoteRe is a cell's figure followed by a note in parentheses that has a number of its
// own: a delta ("(-1.3 us)"), a percent ("(+4.0%)"), a spread or a p-value ("(sd 0.2)",
// "(p=0.01)"). The note annotates the figure; it is not a second figure of the cell.
var cellNoteRe = regexp.MustCompile(`^(\S.*?)\s*\([^()]*\d[^()]*\)$`)

// cellRemarkRe is a cell's figure followed by words in parentheses: a remark ("(noisy)", "(not
// stable)") or its unit ("(Gbps)").
var cellMarkerRe = regexp.MustCompile(`\s+(?:<-+|<=+|\*+|!+|<)\s*$`)

var cellRemarkRe = regexp.MustCompile(`^(~?[-+]?\d[\d.,]*\s*[A-Za-zµ%/]*)\s*\(([A-Za-z][A-Za-z /-]{0,30})\)$`)

// decimalRe is a number with a fraction: a measurement, never a column's name.
var decimalRe = regexp.MustCompile(`^\d+\.\d+$`)

// decimalsAfterName: a row whose cells after its first are all numbers with a fraction ("64B
// 1.21  1.38"), which no header row is.
func decimalsAfterName(text string) bool {
	cells := splitRow(strings.TrimSpace(text))
	if len(cells) < 3 {
		cells = strings.Fields(text) // aligned with single spaces
	}
	if len(cells) < 3 {
		return false
	}
	for _, c := range cells[1:] {
		if !decimalRe.MatchString(strings.TrimSpace(c)) {
			return false
		}
	}
	return true
}

// stateTable reads a table at lines[i] (its header row) whose rows or columns are states:
// "Before/After" rows under configuration columns ("IOMMU on | IOMMU off", "Rx  Tx"),
// "net | this series" columns beside rows of tests, "Vanilla/Patched" rows under
// message sizes, "BIG TCP off / on" columns with a "CV off / on" column. Each value of the
// other dimension is a claim. A table whose states no word names is left to the other
// readers.
func stateTable(lines []line, i int, ctx context) (claims []Claim, next, skipped int) {
	if arrowRe.MatchString(lines[i].text) || decimalsAfterName(lines[i].text) {
		// "IPIs/s   182k  =>  41k": a line that compares two figures is a reading, no
		// header, though its figures look like sizes ("182k") and so not like figures;
		// "64B   1.21   1.38" is a table's first row, whose columns no header names
		return nil, i, 0
	}
	if claims, next, skipped := splitTable(lines, i, ctx, splitRow); next > i {
		return claims, next, skipped
	}
	if alt, end, ok := sameHeaderTables(lines, i, splitRow); ok {
		if claims, next, skipped := splitTable(alt, 0, ctx, splitRow); next > 0 {
			return claims, end, skipped
		}
	}
	// Two header rows of pipes, the upper's cells spanning the lower's by where their pipes
	// stand, a rule between them or not: read as one row of joined names.
	if lower, ok := spannedLower(lines, i); ok {
		if joined, ok := spanHeader(lines[i].text, lines[lower].text); ok {
			alt := append([]line{}, lines...)
			alt[lower].text = joined
			if claims, next, skipped := splitTable(alt, lower, ctx, splitRow); next > lower {
				return claims, next, skipped
			}
		}
	}
	// Two header rows, the upper grouping the lower's columns: read as one row of joined names.
	if i+1 < len(lines) && namesOnly(lines[i].text) && namesOnly(lines[i+1].text) {
		if joined, ok := stackedHeader(lines[i].text, lines[i+1].text); ok {
			alt := append([]line{}, lines...)
			alt[i+1].text = joined
			if claims, next, skipped := splitTable(alt, i+1, ctx, splitRow); next > i+1 {
				return claims, next, skipped
			}
		}
		if joined, ok := groupHeader(lines[i].text, lines[i+1].text); ok {
			alt := append([]line{}, lines...)
			alt[i+1].text = joined
			if claims, next, skipped := splitTable(alt, i+1, ctx, splitRow); next > i+1 {
				return claims, next, skipped
			}
		}
		if joined, ok := unitsUnderHeader(lines[i].text, lines[i+1].text); ok {
			alt := append([]line{}, lines...)
			alt[i+1].text = joined
			if claims, next, skipped := splitTable(alt, i+1, ctx, splitRow); next > i+1 {
				return claims, next, skipped
			}
		}
		if joined, ok := spanningHeader(lines[i].text, lines[i+1].text); ok {
			alt := append([]line{}, lines...)
			alt[i+1].text = joined
			if claims, next, skipped := splitTable(alt, i+1, ctx, splitRow); next > i+1 {
				return claims, next, skipped
			}
		}
	}
	if cuts := alignedColumns(lines, i); cuts != nil {
		if claims, next, skipped := splitTable(lines, i, ctx, cuts.split); next > i {
			return claims, next, skipped
		}
	}
	if claims, next := stateSpanClaims(lines, i, ctx); next > i {
		return claims, next, 0
	}
	if k := trailingFigureColumns(lines, i); k > 0 {
		return splitTable(lines, i, ctx, func(text string) []string { return splitTrailing(text, k) })
	}
	return nil, i, 0
}

// scaleApartRe is a scale written as a word of its own before its unit: "K pps", "M pps",
// "G bit/s".
var scaleApartRe = regexp.MustCompile(`\b([kKMG])\s+(pps|bps|bit/s|bits/s|b/s|B/s|Bps)\b`)

// joinScale writes a scale apart from its unit ("K pps") as one unit ("Kpps").
func joinScale(text string) string { return scaleApartRe.ReplaceAllString(text, "$1$2") }

// headerRow: a table's line, cut into cells, can be its header: two cells or more (not too
// many), no measured figure (the counts and sizes that name a column aside: "4 queues"), no
// sentence, not a state's row ("| old | -z | 3498 | 16.0 |") and not a row of figures and a
// switch's value ("1500   off   5").
func headerRow(header []string, text string) bool {
	masked := readFigures(maskParameters(text))
	if len(header) < 2 || len(header) > maxTableColumns || len(masked.measured()) > 0 || strings.TrimSpace(text) == "" || proseSentence(text) {
		return false
	}
	if slices.ContainsFunc(header, func(c string) bool { return len(strings.Fields(c)) > 8 }) {
		return false // a cell of a sentence's words: prose cut where the rows below align, no column's name
	}
	return !(stateNamed(header[0]) && len(masked.figures) >= 2) && slices.ContainsFunc(header, headerName)
}

// headerName: a header's cell that names something, not a bare number or a switch's value
// ("off", "on"), which only a row has.
func headerName(cell string) bool {
	c := strings.ToLower(strings.TrimSpace(cell))
	return !toggleOff[c] && !toggleOn[c] && !countCellRe.MatchString(c)
}

// countCellRe is a whole count, maybe with its scale ("9820", "877k", "1.2m"): a row's figure,
// no column's name (a release, "6.6", is one).
var countCellRe = regexp.MustCompile(`^(?:\d+|\d+(?:\.\d+)?[kmg])$`)

// namesOnly: a header row's figures are none, or only the counts and sizes that name a test's
// setting ("4 queues", "64B", "1 flow"), never a measurement.
func namesOnly(text string) bool {
	masked := countNounRe.ReplaceAllStringFunc(maskParameters(text), func(m string) string {
		word := strings.TrimLeft(m, "0123456789 ")
		if u, ok := lookupUnit(word); ok && u.norm != "" {
			return m // "10 Gbps": a figure
		}
		return strings.Repeat("#", len(m)-len(word)) + word // "2 rings": what the column counts
	})
	return len(readFigures(masked).figures) == 0
}

// countNounRe is a whole number and the word after it.
var countNounRe = regexp.MustCompile(`\b\d+ ?[A-Za-z]+\b`)

// trailingFigureColumns reads a table whose columns are a single space apart and do not line
// up ("baseline 21.4 12.1 5.5" under "size 64 256 1024"): every row under the header ends in
// the same number of figures, two or more, after its label's words, and the header ends in as
// many names. The number of those columns; 0 for no such table. An empty line may stand
// between the header and its rows.
func trailingFigureColumns(lines []line, i int) int {
	header := strings.Fields(lines[i].text)
	k, rows := 0, 0
	for j := i + 1; j < len(lines) && j <= i+maxAlignedRows; j++ {
		f := strings.Fields(lines[j].text)
		if len(f) == 0 {
			if j == i+1 {
				continue
			}
			break
		}
		n := 0
		for n < len(f) && figureToken(f[len(f)-1-n]) {
			n++
		}
		if n == len(f) {
			n-- // the label: the first word, a figure or not ("4096 ...": a size's row)
		}
		if n < 2 || k > 0 && n != k {
			break
		}
		k = n
		rows++
	}
	if rows < 2 || len(header) < k || len(readFigures(lines[i].text).measured()) > 0 {
		return 0
	}
	return k
}

// figureToken: a word that is one figure, with its unit glued or none ("21.4", "3.0%", "+1.7%").
func figureToken(w string) bool {
	sh := readFigures(w)
	return len(sh.figures) == 1 && strings.Trim(sh.shape, "#% ") == ""
}

// sizeName: a column's name that is a value of what the columns vary: "64", "1500B", "64/8"
// (a size and a count).
func sizeName(c string) bool {
	for _, part := range strings.Split(c, "/") {
		if !figureToken(part) {
			return false
		}
	}
	return true
}

// splitTrailing cuts a line into its label (the words before its last k) and its last k words.
func splitTrailing(text string, k int) []string {
	f := strings.Fields(text)
	if len(f) < k {
		return f
	}
	return append([]string{strings.Join(f[:len(f)-k], " ")}, f[len(f)-k:]...)
}

// sameHeaderTables joins the table at lines[i] with the tables after it that repeat its
// header (a column of stated changes added or not), with empty lines and a few lines of prose
// between them ("Now with the ring on:"): one state's table each, told apart by a setting's
// column, read as one table. The lines of all as one table (the later headers, rules and
// prose left out, each line keeping its number) and the index in lines past the last; false
// where no second table follows.
func sameHeaderTables(lines []line, i int, splitRow func(string) []string) ([]line, int, bool) {
	header := splitRow(lines[i].text)
	same := func(text string) bool {
		cells := splitRow(text)
		if len(cells) == len(header)+1 && changeColumnRe.MatchString(cells[len(cells)-1]) {
			cells = cells[:len(header)]
		}
		return len(header) >= 3 && slices.EqualFunc(cells, header, strings.EqualFold)
	}
	out := []line{lines[i]}
	tables, j := 1, i+1
	for {
		for ; j < len(lines) && strings.TrimSpace(lines[j].text) != ""; j++ {
			out = append(out, lines[j])
		}
		end := j
		k, prose := j, 0
		for ; k < len(lines) && k-j <= 8 && !same(lines[k].text); k++ {
			if strings.TrimSpace(lines[k].text) != "" {
				prose++
			}
		}
		if k == len(lines) || k-j > 8 || prose > 3 {
			return out, end, tables >= 2
		}
		tables++
		j = k + 1
	}
}

// maxAlignedWidth bounds the width of a table whose columns are found by alignment: a
// mail's table is a screen wide; a longer line is not cut this way. maxAlignedRows bounds
// its rows.
const maxAlignedWidth = 400

// maxAlignedRows bounds its rows: each line of a block may start one, so unbounded the search
// grows with the square of a block's lines; a longer table is read only where two spaces cut
// it.
const maxAlignedRows = 200

// columnSpans are the columns of a table found by the alignment of its rows: the runs of
// character positions where some row has a character, between positions where every row has
// a space. They serve tables aligned with single spaces ("tcp_stream 9.41  9.87" under
// "test       base  patched"), which two-space splitting cannot cut.
type columnSpans [][2]int

// alignedColumns finds the columns of the block at lines[i] (to its first empty line) by
// alignment, tabs expanded to 8; nil where the block is not a table of two or more columns
// and two or more rows, or has pipes (splitRow reads those).
func alignedColumns(lines []line, i int) columnSpans {
	var rows [][]rune // a rune a column: "µs" and "→" are one character wide
	for j := i; j < len(lines); j++ {
		if strings.TrimSpace(lines[j].text) == "" {
			// groups of rows under one header, an empty line between them (or between the
			// header and its rows)
			if len(rows) >= 1 && j+1 < len(lines) && len(readFigures(lines[j+1].text).measured()) > 0 && len(readFigures(lines[j+1].text).figures) >= 2 {
				continue // a row, not a sentence with a figure in it
			}
			break
		}
		t := expandTabs(strings.TrimRight(lines[j].text, " "))
		if strings.Contains(t, "|") || len(t) > maxAlignedWidth || j-i > maxAlignedRows {
			return nil
		}
		if !separatorRe.MatchString(t) {
			rows = append(rows, []rune(t))
		}
	}
	// A line that ends in a colon is a heading over the block, not its header row, however
	// its words happen to line up with the rows' gaps.
	if len(rows) < 3 || strings.HasSuffix(string(rows[0]), ":") {
		return nil
	}
	// The header row may be wider than a column's cells, but it names every column of
	// figures in the rows below it and has a space in the gap before each: a line whose words
	// run across those gaps or stop short of the last column ("- Results (IOMMU on)" over a
	// table) is a heading, not the table's header.
	body := spansOf(rows[1:])
	for k := 0; k+1 < len(body); k++ {
		if !ownFigures(rows[1:], body[k+1]) {
			continue // a gap inside the labels ("8 flows, irq on cpu 0"), a unit or a note
		}
		named := false // and a name over each column of figures
		for c := body[k+1][0]; c < body[k+1][1] && c < len(rows[0]); c++ {
			named = named || rows[0][c] != ' '
		}
		if !named {
			return nil
		}
		gapHasSpace := false
		for c := body[k][1]; c < body[k+1][0]; c++ {
			gapHasSpace = gapHasSpace || c >= len(rows[0]) || rows[0][c] == ' '
		}
		if !gapHasSpace {
			return nil
		}
	}
	spans := unnamedJoined(headerOnlyJoined(spansOf(rows), rows[1:]), rows)
	if len(spans) < 2 {
		return nil
	}
	return spans
}

// headerOnlyJoined joins a span only the header row has characters in to the span on its
// left: the header's words past its column's cells ("Before (Gbps)" over "38.2", "msg size"
// over "1500") belong to that column, not to one of their own.
func headerOnlyJoined(spans columnSpans, body [][]rune) columnSpans {
	var out columnSpans
	for _, sp := range spans {
		empty := true
		for _, r := range body {
			for c := sp[0]; c < sp[1] && c < len(r); c++ {
				empty = empty && r[c] == ' '
			}
		}
		if empty && len(out) > 0 {
			out[len(out)-1][1] = sp[1]
			continue
		}
		out = append(out, sp)
	}
	return out
}

// unnamedJoined joins a span the header row has nothing over to the span on its left where
// it holds no figure of its own: the unit of the figures left of it ("28.4 us" cut at its
// single space) or a note in parentheses ("26.1 us (-2.3 us)").
func unnamedJoined(spans columnSpans, rows [][]rune) columnSpans {
	var out columnSpans
	for _, sp := range spans {
		named := false
		for c := sp[0]; c < sp[1] && c < len(rows[0]); c++ {
			named = named || rows[0][c] != ' '
		}
		if !named && len(out) > 0 && unitsOrNotes(rows[1:], sp) {
			out[len(out)-1][1] = sp[1]
			continue
		}
		out = append(out, sp)
	}
	return out
}

// unitsOrNotes: each row's text in the span is a unit ("us", "Mpps") or a note in
// parentheses, or nothing.
func unitsOrNotes(rows [][]rune, span [2]int) bool {
	for _, r := range rows {
		if span[0] >= len(r) {
			continue
		}
		cell := strings.TrimSpace(string(r[span[0]:min(span[1], len(r))]))
		if _, unit := lookupUnit(cell); cell != "" && !unit && !(strings.HasPrefix(cell, "(") && strings.HasSuffix(cell, ")")) {
			return false
		}
	}
	return true
}

// ownFigures: some row has a figure in the span that is not in parentheses (a note of the
// figure on its left).
func ownFigures(rows [][]rune, span [2]int) bool {
	for _, r := range rows {
		if span[0] < len(r) {
			cell := string(r[span[0]:min(span[1], len(r))])
			if len(readFigures(cell).figures) > 0 && !strings.ContainsAny(cell, "()") {
				return true
			}
		}
	}
	return false
}

// spansOf are the runs of positions where some row has a character.
func spansOf(rows [][]rune) columnSpans {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	used := make([]bool, width)
	for _, r := range rows {
		for k := 0; k < len(r); k++ {
			if r[k] != ' ' {
				used[k] = true
			}
		}
	}
	var spans columnSpans
	for k := 0; k < width; {
		if !used[k] {
			k++
			continue
		}
		start := k
		for k < width && used[k] {
			k++
		}
		spans = append(spans, [2]int{start, k})
	}
	return spans
}

// split cuts a row at the columns; a row's text is read with its tabs expanded.
func (c columnSpans) split(text string) []string {
	t := []rune(expandTabs(strings.TrimRight(text, " ")))
	var cells []string
	for _, sp := range c {
		if sp[0] >= len(t) {
			break
		}
		cells = append(cells, strings.TrimSpace(string(t[sp[0]:min(sp[1], len(t))])))
	}
	return cells
}

// expandTabs writes tabs as spaces to the next multiple of 8, as a terminal shows them.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// statedCellRe is a cell that states a change: "+100%", "+ 20%", "-6.9 %".
var statedCellRe = regexp.MustCompile(`^[-+−]\s*\d+(?:\.\d+)?\s*%$`)

// dropStatedTail takes off a last column of stated changes that only the rows of the change
// fill ("bw diff": "+100%" on each after row, nothing on its before row), with its header.
func dropStatedTail(rows []tableRow, header []string) ([]tableRow, []string) {
	width := len(rows[0].cells)
	for _, r := range rows {
		width = min(width, len(r.cells))
	}
	longer := 0
	for _, r := range rows {
		switch {
		case len(r.cells) == width:
		case len(r.cells) == width+1 && statedCellRe.MatchString(strings.TrimSpace(r.cell(width))):
			longer++
		default:
			return rows, header
		}
	}
	if longer == 0 || longer == len(rows) {
		return rows, header
	}
	out := make([]tableRow, len(rows))
	for k, r := range rows {
		out[k] = tableRow{label: r.label, cells: r.cells[:width], n: r.n}
	}
	if len(header) == width+2 {
		header = header[:width+1]
	}
	return out, header
}

// tableShape puts a table's header over its rows: a unit column at the end and a column of
// stated changes only some rows fill taken off, every row as wide, the header's first name
// the corner when it names the labels' column, and a second header row of units joined to
// the names above it. ok is false where the rows and the header do not fit.
func tableShape(header []string, rows []tableRow) (corner string, cols []string, out []tableRow, ok bool) {
	rows = unitColumnAtEnd(rows, len(header))
	rows, header = dropStatedTail(rows, header)
	width := len(rows[0].cells)
	for _, r := range rows {
		width = min(width, len(r.cells))
	}
	rows, header = dropSparseTail(rows, header, width)
	for _, r := range rows {
		if len(r.cells) != width {
			return "", nil, nil, false
		}
	}
	cols = header
	if len(header) == width+1 {
		corner, cols = header[0], header[1:]
	} else if len(header) != width {
		return "", nil, nil, false
	}
	if units, ok := unitRow(rows[0]); ok && len(units) == len(cols) && len(rows) > 2 {
		// A second header row of units ("kpps  kpps" under "vanilla  patched"): each
		// column's unit, written as a header's "(unit)".
		cols = slices.Clone(cols)
		for k := range cols {
			cols[k] += " (" + units[k] + ")"
		}
		rows = rows[1:]
	}
	return corner, cols, rows, true
}

// dropSparseTail takes off the header's last columns that most rows leave empty (a note of a
// few rows: "drop rate, patched / base" over "1200 / 9800" in one row and nothing in the
// others), where the cells cut off are no single figures: the table is its first width
// columns after the label.
func dropSparseTail(rows []tableRow, header []string, width int) ([]tableRow, []string) {
	if width < 2 || len(header) <= width+1 {
		return rows, header
	}
	for _, r := range rows {
		for _, c := range r.cells[width:] {
			if _, ok := cellValue(c); ok {
				return rows, header // a figure in a later column: a row of its own shape
			}
		}
	}
	out := make([]tableRow, len(rows))
	for k, r := range rows {
		out[k] = r
		out[k].cells = r.cells[:width]
	}
	return out, header[:width+1]
}

// maxTableColumns bounds the columns of a table read: a message's tables are a screen wide
// (an LKP comparison has about ten columns); a wider one is no table a reader compares by eye
// and is said as a table not read (unreadTables).
const maxTableColumns = 100

// proseSentence: a line that is a sentence of prose (six words or more, ending with a full
// stop), which heads no table: its last words would otherwise name the columns below.
func proseSentence(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasSuffix(t, ".") && !strings.HasSuffix(t, "..") && len(strings.Fields(t)) >= 6
}

// splitTable reads the table at lines[i] with its rows cut into cells by split.
func splitTable(lines []line, i int, ctx context, splitRow func(string) []string) (claims []Claim, next, skipped int) {
	header := splitRow(lines[i].text)
	if !headerRow(header, lines[i].text) {
		return nil, i, 0
	}
	var rows []tableRow
	group := "" // the heading of a group of rows inside the table ("alloc:" over "fast:", "slow:")
	isRow := func(k int) bool {
		// A line in parentheses under the table is its note ("(Mpps, 7 runs of 20 s)"), never a row.
		note := k < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[k].text), "(") && strings.HasSuffix(strings.TrimSpace(lines[k].text), ")")
		return k < len(lines) && !note && len(rows) > 0 && len(splitRow(lines[k].text)) == len(rows[0].cells)+1 && len(readFigures(lines[k].text).figures) > 0
	}
	groupHeading := func(k int) bool { return groupHeadingAt(lines, k, splitRow) }
	j := i + 1
	for ; j < len(lines); j++ {
		t := lines[j].text
		if strings.TrimSpace(t) == "" {
			if len(rows) == 0 && j == i+1 && j+1 < len(lines) && headerBody(header, lines[j+1].text, splitRow) {
				continue // an empty line between the header and its rows
			}
			// Groups of rows under one header, an empty line between them: the table goes on
			// where the next line is a row of as many cells, with figures, or a group's heading.
			if len(rows) > 0 && j+1 < len(lines) && (isRow(j+1) && len(readFigures(lines[j+1].text).measured()) > 0 || group != "" && groupHeading(j+1) && isRow(j+2)) {
				continue
			}
			break
		}
		if separatorRe.MatchString(t) {
			continue
		}
		if groupHeading(j) {
			group = strings.TrimSuffix(strings.TrimSpace(t), ":")
			continue
		}
		cells := labelWithinFirstColumn(lines[i].text, t, splitRow(t), len(header))
		if n := len(cells); n > len(header) && n > 2 && strings.HasPrefix(cells[n-1], "(") && strings.HasSuffix(cells[n-1], ")") && statNoteRe.MatchString(cells[n-1]) {
			// "patched  19.8  23.1  31.0   (-5.1%, p=0.003)": the author's note of the row's
			// statistics after its cells, no column
			cells = cells[:n-1]
		}
		if units, ok := headerUnitRow(header, cells); ok && len(rows) == 0 {
			rows = append(rows, tableRow{cells: units, n: lines[j].n})
			continue
		}
		cells = padStatedChange(fitCells(unitOfLastFigure(header, trailingUnitOnFigures(header, cells)), len(header)), header)
		if len(cells) < 3 && !(len(cells) == 2 && len(header) <= 2) {
			break
		}
		if len(rows) == MaxClaims {
			skipped++ // the table is read to its end; what a report keeps is bounded (MaxClaims)
			continue
		}
		label, rest := rowLabel(header, cells)
		if group != "" {
			label = group + " " + label
		}
		rows = append(rows, tableRow{label: label, cells: rest, n: lines[j].n})
	}
	if len(rows) == 1 && rows[0].label == "" {
		// One row of figures without a label under the states' names: the whole table.
		if claims := unlabelledRowClaims(header, rows[0], ctx, lines, i, j); claims != nil {
			return claims, j, skipped
		}
	}
	if len(rows) == 0 || len(rows) == 1 && (rows[0].label == "" || len(readFigures(strings.Join(header, "  ")).figures) > 0) {
		// One labelled row is a table ("TCP_RR  48030  53902" under "base  patched"), under a
		// header of names: a row of figures above it is no header.
		return nil, i, 0
	}
	corner, cols, rows, ok := tableShape(header, rows)
	if !ok {
		return nil, i, 0
	}
	out := tableClaims(cornerWithUnit(corner, lines, i, j), cols, rows, ctx)
	if out == nil {
		return nil, i, 0
	}
	return out, j, skipped
}

// labelWithinFirstColumn joins the first cells of a row that has more cells than its header
// where they all end before the header's second name starts: a label with a wide space inside
// it ("tcp_stream  1 flow" under "Test", its figures under "Before" and "After"). Only where
// the header is the line above as written (its names over the label column and over each of
// the row's other cells), without tabs, whose widths the text does not show.
func labelWithinFirstColumn(header, row string, cells []string, n int) []string {
	if len(cells) != n+1 || n < 2 || strings.ContainsAny(header+row, "|\t") {
		return cells
	}
	names := splitRow(header)
	hs, ok := cellSpans(header, names)
	rs, ok2 := cellSpans(row, cells)
	if len(names) != n || !ok || !ok2 || hs[0][0]-rs[0][0] > 2 || rs[0][0]-hs[0][0] > 2 || rs[1][1] > hs[1][0] {
		return cells // no name over the labels, or the second cell reaches the second column
	}
	for k := 1; k < n; k++ {
		if rs[k+1][1] < hs[k][0]-2 || rs[k+1][0] > hs[k][1]+2 {
			return cells // a cell not under its name
		}
	}
	return append([]string{cells[0] + " " + cells[1]}, cells[2:]...)
}

// cellSpans are where each cell stands in its line, start and end, in order.
func cellSpans(line string, cells []string) ([][2]int, bool) {
	spans := make([][2]int, len(cells))
	end := 0
	for k, c := range cells {
		at := strings.Index(line[end:], c)
		if at < 0 {
			return nil, false
		}
		spans[k] = [2]int{end + at, end + at + len(c)}
		end = spans[k][1]
	}
	return spans, true
}

// fitCells cuts a row's figures apart where fewer cells than the header's came of it, or joins
// its label's words where more did.
func fitCells(cells []string, header int) []string {
	if len(cells) < header {
		return splitFigureCells(cells, header)
	}
	if len(cells) > header+1 {
		return joinLabelCells(cells)
	}
	return cells
}

// trailingUnitOnFigures gives a row of bare figures, one under each of the header's names,
// the unit written once after them ("1.92    2.15  Mpps" under "before  after"), each figure.
func trailingUnitOnFigures(header, cells []string) []string {
	n := len(cells) - 1
	if n < 1 || n != len(header) || !isUnit(cells[n]) {
		return cells
	}
	out := make([]string, n)
	for k, c := range cells[:n] {
		f := readFigures(c)
		if len(f.figures) != 1 || len(f.measured()) != 0 {
			return cells
		}
		out[k] = c + " " + cells[n]
	}
	return out
}

// leadingNumberRe is a cell's figure before its unit: "23.9 Gbit/s", "~41Gbps".
var leadingNumberRe = regexp.MustCompile(`^~?[-+]?\d[\d,]*(?:\.\d+)?\s*`)

// unitOfLastFigure gives a row's bare figures the unit written once, on its last figure
// ("tcp_stream  21.3   23.9 Gbit/s"): the figures right before it bare numbers, the cell
// before them the row's label, and the header names a state over each of the figures (a
// bare number beside a rate is otherwise a condition: a count of queues, a size). A signed
// percentage is a stated change, not the row's unit: one after the figures is passed over.
func unitOfLastFigure(header, cells []string) []string {
	n := len(cells) - 1
	for n > 0 && percentCell(cells[n]) {
		n-- // "64  1.20  1.50 Mpps  +25%": the stated change after the figures
	}
	if n < 2 {
		return cells
	}
	last := readFigures(cells[n])
	if len(last.figures) != 1 || len(last.measured()) != 1 || last.figures[0].unit.kind == "percent" || last.figures[0].unit.kind == "" {
		return cells
	}
	unitText := strings.TrimSpace(cells[n][len(leadingNumberRe.FindString(strings.TrimSpace(cells[n]))):])
	if unitText == "" {
		return cells
	}
	out := slices.Clone(cells)
	k := n - 1
	for ; k >= 1; k-- {
		c := strings.TrimSpace(cells[k])
		if c == "" || leadingNumberRe.FindString(c) != c {
			break // not a bare number
		}
		out[k] = c + " " + unitText
	}
	if k == n-1 || len(readFigures(strings.Join(cells[:k+1], " ")).measured()) > 0 {
		return cells // no bare figure before the last, or a measurement among the label's cells
	}
	states := 0
	for _, h := range header {
		if stateNamed(h) {
			states++
		}
	}
	if states < n-k {
		return cells
	}
	return out
}

// percentCell: a cell is one signed percentage, a stated change ("+25%", "(-5.1%)"), not a
// share ("97%").
func percentCell(cell string) bool {
	f, t := readFigures(cell), strings.Trim(strings.TrimSpace(cell), "()")
	signed := strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") || strings.HasPrefix(t, "−")
	return len(f.figures) == 1 && f.figures[0].unit.kind == "percent" && len(strings.Fields(cell)) == 1 && signed
}

// headerUnitRow: cells are a second header row of units under the states' names, the
// corner's cell empty or none ("          |  Mpps  |  Mpps"), which tableShape joins to the
// names.
func headerUnitRow(header, cells []string) ([]string, bool) {
	units, ok := unitRow(tableRow{cells: cells})
	return units, ok && (len(units) == len(header)-1 || len(units) == len(header))
}

// groupHeadingAt: lines[k] names the table's rows under it, a heading with a colon ("alloc:"
// over "fast:", "slow:"), or without one where the row under it is indented deeper (a row's
// name on a line of its own, its condition and figures on the next).
func groupHeadingAt(lines []line, k int, splitRow func(string) []string) bool {
	t := strings.TrimSpace(lines[k].text)
	if k+1 >= len(lines) || len(splitRow(lines[k+1].text)) < 3 || len(readFigures(lines[k+1].text).figures) == 0 {
		return false
	}
	if strings.HasSuffix(t, ":") {
		return len(strings.Fields(t)) <= 3 && len(readFigures(t).figures) == 0
	}
	return len(strings.Fields(t)) <= 4 && len(splitRow(lines[k].text)) == 1 && len(readFigures(t).measured()) == 0 &&
		indent(lines[k+1].text) > indent(lines[k].text)
}

// cornerWithUnit gives a table's corner the unit its caption above the header (at lines[i])
// or its note below the rows (at lines[j]) says, where the corner says none: the corner's to
// give every bare figure.
func cornerWithUnit(corner string, lines []line, i, j int) string {
	if _, has := labelUnit(corner); has {
		return corner
	}
	if u := cmp.Or(captionUnit(lines, i), footnoteUnit(lines, j)); u != "" {
		return strings.TrimSpace(corner + " (" + u + ")")
	}
	return corner
}

// rowLabel cuts a row's cells into its label and the rest; an unlabelledRow's label is "".
func rowLabel(header, cells []string) (string, []string) {
	if unlabelledRow(header, cells) {
		return "", cells // "3.11  3.59  +15%" under "baseline  patched  diff"
	}
	return cells[0], cells[1:]
}

// unlabelledRow: a row of as many cells as the header has names, the first a figure, under
// a header whose first name is a state's ("baseline  patched  diff"), not a corner's
// ("size"): the row has no label of its own.
func unlabelledRow(header, cells []string) bool {
	if len(cells) != len(header) || len(header) < 2 {
		return false
	}
	if _, ok := cellValue(cells[0]); !ok {
		return false
	}
	side, _, _ := stateOf(header[0])
	side, _ = wholeLabel(header[0], side, false)
	return side != ""
}

// unlabelledRowClaims reads a table of one unlabelled row under the states' names: the
// states' figures, the unit from the caption above, or a note below (lines[end]), where the
// cells carry none.
func unlabelledRowClaims(header []string, row tableRow, ctx context, lines []line, headerAt, end int) []Claim {
	corner := ""
	if u := cmp.Or(captionUnit(lines, headerAt), footnoteUnit(lines, end)); u != "" {
		corner = "(" + u + ")"
	}
	return tableClaims(corner, header, []tableRow{row}, ctx)
}

// padStatedChange gives a row of one figure that stops short of the header's last columns,
// where those are stated changes, empty cells there: the baseline's row has no change to
// state. (A wider row is a row as it is: a long table's rows leave cells empty themselves.)
func padStatedChange(cells, header []string) []string {
	if len(cells) != 2 || len(cells) >= len(header) {
		return cells
	}
	for _, name := range header[len(cells):] {
		if !changeColumnRe.MatchString(name) {
			return cells
		}
	}
	return append(cells, make([]string, len(header)-len(cells))...)
}

// headerBody: a line is a row under the header: as many cells, or one more (the header has
// no corner), with a measured figure.
func headerBody(header []string, text string, splitRow func(string) []string) bool {
	n := len(splitRow(text))
	return (n == len(header) || n == len(header)+1) && len(readFigures(text).figures) >= n-1
}

// captionUnitRe is a unit a table's caption gives its figures: "rate in Mpps", "(usec)",
// "64KB writes, Gbit/s:", "numbers are Mpps".
var captionUnitRe = regexp.MustCompile(`(?:\bin\s+|\bare\s+|\(|,\s+(?:in\s+)?)([A-Za-zµ%/]+(?:\s+/\s+[A-Za-z]+)?)\)?(?:[\s,.:;]|$)`)

// captionUnit is the unit the line just above a table's header rows (an empty line between or
// not, rules and upper header rows not counted) says its figures are in, "" where it says none.
func captionUnit(lines []line, header int) string {
	j := header - 1
	upperRow := func(t string) bool {
		if strings.Contains(t, "|") {
			return len(readFigures(t).measured()) == 0
		}
		// an upper header row of names apart by wide spaces ("4 queues    16 queues"), no
		// caption (one phrase, or ending in a colon)
		return len(splitRow(t)) >= 2 && namesOnly(t) && !strings.HasSuffix(strings.TrimSpace(t), ":") && !proseSentence(t)
	}
	for j >= 0 && j >= header-4 && (strings.TrimSpace(lines[j].text) == "" || separatorRe.MatchString(lines[j].text) || upperRow(lines[j].text)) {
		j--
	}
	if j < 0 || j < header-4 || strings.Contains(lines[j].text, "|") {
		return ""
	}
	caption := joinScale(lines[j].text)
	for _, m := range captionUnitRe.FindAllStringSubmatch(caption, -1) {
		if u, ok := lookupUnit(m[1]); ok && u.norm != "" && u.kind != "percent" {
			return slashSpacesRe.ReplaceAllString(m[1], "/") // one word, as a label's unit is
		}
	}
	for _, m := range captionEdgeUnitRe.FindAllStringSubmatch(caption, -1) {
		word := cmp.Or(m[1], m[2])
		if u, ok := lookupUnit(word); ok && u.norm != "" && u.kind != "percent" && !spelledTimeRe.MatchString(word) {
			return word
		}
	}
	// A caption that opens with a rate's unit, words after it ("Gbit/s through a bond of two
	// ports, by xmit_hash_policy:", "Mpps forwarded, 64B:").
	if m := captionLeadRateRe.FindStringSubmatch(caption); m != nil {
		if u, ok := lookupUnit(m[1]); ok && (u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
			return m[1]
		}
	}
	// A caption that opens with a rate spelled in words, where it was counted after it
	// ("Frames per second received on the interlink port:").
	if m := captionLeadWordsRateRe.FindStringSubmatch(caption); m != nil {
		if u, ok := lookupUnit(strings.ToLower(m[1])); ok && (u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
			return strings.ToLower(strings.Fields(m[1])[0]) + "/s" // one word, as a corner's unit is read
		}
	}
	// A caption that names one request/response test and no unit ("64 netperf TCP_RR flows:"):
	// the test's transactions per second.
	if tests := rrTestWordRe.FindAllString(caption, -1); len(tests) > 0 && !slices.ContainsFunc(tests, func(t string) bool { return !strings.EqualFold(t, tests[0]) }) &&
		!streamTestWordRe.MatchString(caption) {
		return "trans/s"
	}
	// A caption of several lines: the unit "in" which its figures are, said on a line of the
	// same paragraph above ("Aggregate throughput in Gbit/s of N flows (netperf, / 30 s
	// each), as our harness writes it:").
	for k := j - 1; k >= 0 && k >= j-2 && strings.TrimSpace(lines[k].text) != ""; k-- {
		for _, m := range captionInUnitRe.FindAllStringSubmatch(lines[k].text, -1) {
			if u, ok := lookupUnit(m[1]); ok && u.norm != "" && u.kind != "percent" && u.kind != "time" {
				return m[1]
			}
		}
	}
	// A rate's unit as a word of the caption's paragraph, after no figure ("frames redirected,
	// Mpps as xdp-bench counts them"): the one such unit it names.
	found := ""
	for k := j; k >= 0 && k >= j-2 && strings.TrimSpace(lines[k].text) != ""; k-- {
		words := strings.Fields(joinScale(lines[k].text))
		for w, word := range words {
			word = strings.Trim(word, ",.:;()")
			if w > 0 && len(readFigures(words[w-1]).figures) > 0 {
				continue // a figure's unit ("a 100 Gbit/s link"), not the table's
			}
			u, ok := lookupUnit(word)
			if !ok || !(u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
				continue
			}
			if found != "" && found != word {
				return "" // two units: which the figures are in, the caption does not say
			}
			found = word
		}
	}
	return found
}

// captionLeadWordsRateRe is a rate in words at a caption's start: "Frames per second", "Requests
// per sec".
var captionLeadWordsRateRe = regexp.MustCompile(`(?i)^\s*([A-Za-z]+\s+per\s+sec(?:ond)?)\b`)

// rrTestWordRe and streamTestWordRe are netperf's request/response tests and its streams,
// named in a caption.
var (
	rrTestWordRe     = regexp.MustCompile(`(?i)\b(?:TCP|UDP|SCTP)_(?:RR|CRR|CC)\b`)
	streamTestWordRe = regexp.MustCompile(`(?i)\b(?:TCP|UDP|SCTP)_(?:STREAM|MAERTS|SENDFILE)\b`)
)

// captionInUnitRe is a caption's "in UNIT" on a line of it above the last: a rate's unit only
// ("throughput in Gbit/s"), as a time there is more often the test's ("for 30 s").
var captionInUnitRe = regexp.MustCompile(`\bin\s+([A-Za-zµ/]+)(?:[\s,.:;)]|$)`)

// captionEdgeUnitRe is a caption that ends in its figures' unit ("TCP_RR trans/s:") or
// opens with it ("Gbit/s, 5 runs each:").
var captionEdgeUnitRe = regexp.MustCompile(`\s([A-Za-zµ/]+):\s*$|^\s*([A-Za-zµ/]+)\s*[,:]`)

// captionLeadRateRe is a caption's first word followed by more words: a rate's unit there is
// the figures' ("Gbit/s through a bond ...").
var captionLeadRateRe = regexp.MustCompile(`^\s*([A-Za-zµ/]+)\s+[a-z]`)

// spelledTimeRe is a time's word spelled out, which a caption ends in as the denominator of
// a rate it does not name ("Results per second:"), not as a unit.
var spelledTimeRe = regexp.MustCompile(`(?i)^(?:seconds?|secs?|minutes?|mins?|hours?)$`)

// footnoteRe is a note under a table that opens with its figures' unit: "(Gbit/s)",
// "(Gbit/s, 10 runs)", "(Gbit/s for the streams, transactions/s for RR)": the columns without
// a unit of their own take it.
var footnoteRe = regexp.MustCompile(`^\s*\(\s*([A-Za-z%/]+)\s*(?:[,;)]|\s+(?:for|of|in|on)\s)`)

// footnoteSentenceRe is a note under a table that is a short sentence saying its figures'
// unit: "in Mbit/s.", "All numbers are in Mpps.", "Units: us".
var footnoteSentenceRe = regexp.MustCompile(`(?i)^\s*(?:all\s+)?(?:(?:the\s+)?(?:numbers|figures|values|results|rates)\s+)?(?:are\s+)?(?:in|units?:)\s*([A-Za-zµ/^0-9]+?)\s*\.?\s*$`)

// footnoteUnit is the unit a note on the line just below a table (lines[after]), or after one
// blank line, gives: first in it, or the one unit among a parenthesis' items; "" where none.
func footnoteUnit(lines []line, after int) string {
	if after+1 < len(lines) && strings.TrimSpace(lines[after].text) == "" {
		after++
	}
	if after >= len(lines) {
		return ""
	}
	if m := footnoteRe.FindStringSubmatch(lines[after].text); m != nil {
		if u, ok := lookupUnit(m[1]); ok && u.norm != "" && u.kind != "percent" {
			return m[1]
		}
	}
	// A short sentence that says the unit: "in Mbit/s.", "All numbers in Mpps.", "Units: us".
	if m := footnoteSentenceRe.FindStringSubmatch(lines[after].text); m != nil {
		if u, ok := lookupUnit(m[1]); ok && u.norm != "" && u.kind != "percent" {
			return m[1]
		}
	}
	// A note that is a parenthesis and names one unit among its items: "(netperf, 10^6bits/s)".
	if t := strings.TrimSpace(lines[after].text); strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
		if text, u, ok := parenUnit(t); ok && u.kind != "percent" {
			return text
		}
	}
	return ""
}

// joinLabelCells puts back together a row's label that wider spaces cut into cells ("TCP_RR
// send-1" aligned under "TCP_STREAM send-64"): the cells before the row's last run of values,
// where the row has more cells than its header allows.
func joinLabelCells(cells []string) []string {
	v := 0
	for k := len(cells) - 1; k >= 0; k-- {
		if _, ok := cellValue(cells[k]); !ok {
			break
		}
		v++
	}
	if v == 0 || len(cells)-v < 2 {
		return cells
	}
	label := strings.Join(cells[:len(cells)-v], " ")
	return append([]string{label}, cells[len(cells)-v:]...)
}

// splitFigureCells cuts the cells of a row that hold two or more figures a single space apart
// ("0.000271902 -32.29%"), until the row has want cells: columns of figures whose widths
// differ row by row are apart by one space in some rows and two in others.
func splitFigureCells(cells []string, want int) []string {
	var out []string
	for k, c := range cells {
		toks := strings.Fields(c)
		all := len(toks) >= 2 && len(out)+len(cells)-k-1+len(toks) <= want
		for _, t := range toks {
			_, ok := cellValue(t)
			all = all && ok
		}
		if all {
			out = append(out, toks...)
			continue
		}
		out = append(out, c)
	}
	return out
}

// unitColumnAtEnd moves a last column of units the header does not name ("3.1   4.0   Mpps")
// onto each row's bare figures: one more cell than the header has names, or as many where
// the header's first name is the labels' column ("test  net-next  v3" over "udp 64B  5.10
// 5.62  Mpps": a column of units holds no state's figures). Rows whose figures carry no unit
// (a count of retransmits, a share with its %) may leave the column empty.
func unitColumnAtEnd(rows []tableRow, headerCells int) []tableRow {
	for _, width := range []int{headerCells, headerCells - 1} {
		if out, ok := unitColumnOf(rows, width); ok {
			return out
		}
	}
	return rows
}

// unitColumnOf moves the unit column of rows width cells wide (but the unit) onto their bare
// figures; ok is false where the rows are not so shaped, or no row has a unit there.
func unitColumnOf(rows []tableRow, width int) ([]tableRow, bool) {
	if width < 1 {
		return nil, false
	}
	units := 0
	for _, r := range rows {
		switch {
		case len(r.cells) == width+1 && isUnit(r.cells[width]):
			units++
		case len(r.cells) == width:
		default:
			return nil, false
		}
	}
	if units == 0 {
		return nil, false
	}
	out := make([]tableRow, len(rows))
	for k, r := range rows {
		if len(r.cells) == width {
			out[k] = r
			continue
		}
		unit := r.cells[width]
		cells := slices.Clone(r.cells[:width])
		for c := range cells {
			if f, ok := cellValue(cells[c]); ok && f.bare {
				cells[c] = scaledFigures(cells[c] + " " + unit) // "1.92M" and "pps": 1920000 pps
			}
		}
		out[k] = tableRow{label: r.label, cells: cells, n: r.n}
	}
	return out, true
}

// unitRow: a table row without a label whose every cell is a unit.
func unitRow(r tableRow) ([]string, bool) {
	if strings.TrimSpace(r.label) != "" && !isUnit(r.label) {
		return nil, false
	}
	for _, c := range r.cells {
		if !isUnit(c) {
			return nil, false
		}
	}
	return r.cells, len(r.cells) > 0
}

func isUnit(s string) bool {
	u, ok := lookupUnit(strings.Trim(s, "()[] "))
	return ok && u.norm != ""
}

// stateCandidates are the names of a table that may be its states: the rows' labels but a
// stated change's row, the columns but a CV or a change column; cvCol is the CV column, -1
// without one.
func stateCandidates(cols []string, rows []tableRow) (labels, valueCols []string, cvCol int) {
	for _, r := range rows {
		if !statedRowRe.MatchString(r.label) && !ratioOfRows(r.label, rows) {
			labels = append(labels, r.label)
		}
	}
	cvCol = -1
	for k, c := range cols {
		if strings.HasPrefix(strings.ToUpper(c), "CV") {
			cvCol = k
			continue
		}
		if changeColumnRe.MatchString(c) || bothStatesNamed(c) {
			// the change the two states give, stated, or a column holding both states'
			// figures ("drop rate, patched / base"): no state of its own
			continue
		}
		valueCols = append(valueCols, c)
	}
	return labels, valueCols, cvCol
}

// ratioOfRows: a row's label names two other rows apart by a slash or "vs" ("Acked, this
// series / Acked" under rows "Acked (GB)" and "Acked, this series (GB)"): the row of their
// ratio or difference, no state of its own.
func ratioOfRows(label string, rows []tableRow) bool {
	for _, sep := range []string{" / ", "/", " vs ", " vs. "} {
		a, b, ok := strings.Cut(label, sep)
		if !ok {
			continue
		}
		named := func(part string) bool {
			return slices.ContainsFunc(rows, func(r tableRow) bool { return r.label != label && labelKey(r.label) == labelKey(part) })
		}
		if named(a) && named(b) {
			return true
		}
	}
	return false
}

// bothStatesNamed: a column's name gives two states apart by a slash or "vs" ("drops/s
// patched / net-next", "base vs new"), one on each side.
func bothStatesNamed(name string) bool {
	for _, sep := range []string{" / ", " vs ", " vs. "} {
		if a, b, ok := strings.Cut(name, sep); ok {
			sa, _, _ := stateOf(a)
			sb, _, _ := stateOf(b)
			if sa != "" && sb != "" && sa != sb {
				return true
			}
		}
	}
	return false
}

// tableClaims pairs the states of a table: its rows when their labels name states, else
// its columns.
func tableClaims(corner string, cols []string, rows []tableRow, ctx context) []Claim {
	rows = numberUnlabelledRuns(rows)
	if out := statedAgainstColumnClaims(corner, cols, rows); out != nil {
		return out
	}
	labels, valueCols, cvCol := stateCandidates(cols, rows)
	if runsDown(corner, rows) {
		// Runs down the rows and states across ("run1", "run2", "avg" under "base  patched"):
		// the table read the other way round, each state a series of runs.
		if tcols, trows, ok := transposed(cols, rows); ok {
			return tableClaims(corner, tcols, trows, ctx)
		}
	}
	if out := longTableClaims(corner, cols, rows, ctx); out != nil {
		return out
	}
	if repeatsAName(cols) {
		// A state's name over two or more columns ("vanilla  vanilla  busypoll  busypoll"
		// over a row of flows): a long table written across, read as one down the rows.
		if tcols, trows, ok := transposed(cols, rows); ok {
			if out := longTableClaims(corner, tcols, trows, ctx); out != nil {
				return out
			}
		}
	}
	if out := groupedColumnClaims(corner, cols, rows, cvCol, ctx); out != nil {
		return out
	}
	if tcols, trows, ok := transposed(cols, rows); ok {
		// the states within groups down the rows ("lat_old", "lat_new", "tput_old", ...)
		if out := groupedColumnClaims(corner, tcols, trows, -1, ctx); out != nil {
			return out
		}
	}
	// A baseline and two or more alternatives no word places: the one the Subject names.
	if out := subjectPickClaims(corner, cols, rows, labels, valueCols, cvCol, ctx); out != nil {
		return out
	}
	// Rows and columns both named by words decide first; then one named beside one other.
	for _, full := range []bool{true, false} {
		if b, a, ok := pickStates(labels, full); ok {
			return rowStateClaims(corner, cols, rows, labels[b], labels[a], ctx)
		}
		if b, a, ok := pickStates(valueCols, full); ok {
			return colStateClaims(corner, cols, rows, valueCols[b], valueCols[a], cvCol, ctx)
		}
	}
	if out := baselineRatioClaims(corner, cols, rows, ctx); out != nil {
		return out
	}
	// Among three or more states no word places: the one that is another with something
	// added ("v6.13-rc1+p" under "v6.13-rc1", beside "v6.12") against its base; a feature's
	// state without it and with it ("NoPacing", "CUBIC-fqcodel", "FirstBurstPacing"), the
	// negated one before. The others are references no pair takes. Then two states no word
	// places, decided by the rest of the message (the Subject's "use Y instead of X", the
	// diff's names, a stated change).
	for _, pair := range []func([]string) (int, int, bool){extendedPair, negatedPair, decidedPair(ctx)} {
		if b, a, ok := pair(labels); ok {
			return rowStateClaims(corner, cols, rows, labels[b], labels[a], ctx)
		}
		if b, a, ok := pair(valueCols); ok {
			return colStateClaims(corner, cols, rows, valueCols[b], valueCols[a], cvCol, ctx)
		}
	}
	return nil
}

// decidedPair orders two states no word places by the rest of the message (context.decide).
func decidedPair(ctx context) func([]string) (int, int, bool) {
	return func(names []string) (before, after int, ok bool) {
		if ctx.decide == nil || len(names) != 2 {
			return -1, -1, false
		}
		first, ok := ctx.decide(names[0], names[1])
		if !ok {
			return -1, -1, false
		}
		if first {
			return 0, 1, true
		}
		return 1, 0, true
	}
}

// ratioColumnRe names a column of each row's figure relative to the baseline's: "speedup",
// "ratio", "relative", "normalized", "x".
var ratioColumnRe = regexp.MustCompile(`(?i)^(?:speed-?up|ratio|relative|normali[sz]ed|x|times)$`)

// baselineRatioClaims reads a table of several states, one the baseline ("sendmmsg, batch 32
// (baseline)"), with a column that gives each row's figure relative to the baseline's (1 on
// its row): each other row is a comparison with the baseline, where its ratio agrees with
// the figures (within 2%). The states' names are the rows' labels, or a column of names
// where the labels only number the rows ("3 | new ring, no notification | 4.12 | 1.60").
func baselineRatioClaims(corner string, cols []string, rows []tableRow, ctx context) []Claim {
	ratio, value, names := -1, -1, -1
	for k, c := range cols {
		if ratioColumnRe.MatchString(strings.TrimSpace(c)) {
			ratio = k
		}
	}
	if ratio < 0 || len(rows) < 3 {
		return nil
	}
	for k := range cols {
		if k == ratio {
			continue
		}
		figures, texts := 0, 0
		for _, r := range rows {
			if k >= len(r.cells) {
				return nil
			}
			if _, ok := cellValue(r.cell(k)); ok {
				figures++
			} else if strings.TrimSpace(r.cell(k)) != "" {
				texts++
			}
		}
		switch {
		case figures == len(rows) && value < 0:
			value = k
		case texts == len(rows) && names < 0:
			names = k
		}
	}
	if value < 0 {
		return nil
	}
	name := func(r tableRow) string {
		if names >= 0 && runLabelRe.MatchString(strings.TrimSpace(r.label)) {
			return r.cell(names)
		}
		return r.label
	}
	base := -1
	for k, r := range rows {
		rv, ok := cellValue(r.cell(ratio))
		if side, _, _ := stateOf(name(r)); side == "before" && ok && math.Abs(rv.value-1) < 0.005 {
			if base >= 0 {
				return nil
			}
			base = k
		}
	}
	if base < 0 {
		return nil
	}
	fb, _ := cellValue(rows[base].cell(value))
	if fb.value == 0 {
		return nil
	}
	fb = headerUnit(fb, cols[value], corner)
	var out []Claim
	for k, r := range rows {
		if k == base {
			continue
		}
		fa, _ := cellValue(r.cell(value))
		fa = headerUnit(fa, cols[value], corner)
		rv, ok := cellValue(r.cell(ratio))
		if !ok || math.Abs(fa.value/fb.value-rv.value) > 0.02*rv.value+0.005 {
			return nil // a ratio the figures do not give: not relative to this baseline
		}
		conds := copyConds(ctx.conditions)
		conds["column"] = cols[value]
		if c, ok := tableClaim(cols[value], fb, fa, &tableRow{label: name(rows[base]), n: rows[base].n}, &tableRow{label: name(r), n: r.n}, conds, nil, nil); ok {
			out = append(out, c)
		}
	}
	return out
}

// negatedStemRe is a word that negates a feature glued to its name: "nocork", "nogro",
// "nonxdp", "w/obatching", "withoutgso", "disablepacing"; the stem is the feature's name.
var negatedStemRe = regexp.MustCompile(`^(?:no|non|w/o|without|disabled?)([a-z][a-z0-9]{3,})$`)

// negatedStem is the feature a state's name negates ("NoPacing", "no-gro", "w/o batching"),
// or "": its words are taken apart at spaces, '-' and '_', and a negating word joins the next.
func negatedStem(name string) string {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == ' ' || r == '-' || r == '_' })
	for i, w := range words {
		if m := negatedStemRe.FindStringSubmatch(w); m != nil {
			return m[1]
		}
		if i+1 < len(words) {
			if m := negatedStemRe.FindStringSubmatch(w + words[i+1]); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// extendedPair: exactly one of names is another of them with something added (extendsBase);
// no word of any of them places it.
func extendedPair(names []string) (before, after int, ok bool) {
	if len(names) < 3 {
		return -1, -1, false // two: pickStates' scorer knows "+"
	}
	before, after = -1, -1
	for a, n := range names {
		if side, _, _ := stateOf(n); side != "" {
			return -1, -1, false
		}
		for b, base := range names {
			if a != b && extendsBase(strings.Fields(base), strings.Fields(n)) {
				if after >= 0 {
					return -1, -1, false
				}
				before, after = b, a
			}
		}
	}
	return before, after, after >= 0
}

// negatedPair finds, among three or more state names no word places, one that negates a
// feature ("NoPacing") and exactly one other that names it ("FirstBurstPacing"): the
// feature off is the state before, on the state after; the others are references.
func negatedPair(names []string) (before, after int, ok bool) {
	if len(names) < 3 {
		return -1, -1, false
	}
	before, after = -1, -1
	for k, n := range names {
		if side, _, _ := stateOf(n); side != "" {
			return -1, -1, false // a word places it: pickStates' to decide
		}
		stem := negatedStem(n)
		if stem == "" {
			continue
		}
		for j, other := range names {
			if j == k || negatedStem(other) != "" || !strings.Contains(strings.ToLower(other), stem) {
				continue
			}
			if before >= 0 {
				return -1, -1, false // two readings: none
			}
			before, after = k, j
		}
	}
	return before, after, before >= 0
}

// subjectPickClaims are the claims of a table whose rows or columns are a baseline and
// alternatives, the Subject naming one (baselineAndSubjectPick); nil otherwise.
func subjectPickClaims(corner string, cols []string, rows []tableRow, labels, valueCols []string, cvCol int, ctx context) []Claim {
	if b, a, ok := baselineAndSubjectPick(labels, ctx); ok {
		return rowStateClaims(corner, cols, rows, labels[b], labels[a], ctx)
	}
	if b, a, ok := baselineAndSubjectPick(valueCols, ctx); ok {
		return colStateClaims(corner, cols, rows, valueCols[b], valueCols[a], cvCol, ctx)
	}
	return nil
}

// baselineAndSubjectPick: names are one baseline (a patch's word before) and two or more
// states no word places; the after is the one of those the Subject names (ctx.subjectNames),
// not the last printed.
func baselineAndSubjectPick(names []string, ctx context) (before, after int, ok bool) {
	if len(names) < 3 || ctx.subjectNames == nil {
		return -1, -1, false
	}
	before = -1
	var others []int
	for k, n := range names {
		side, strong, _ := stateOf(n)
		if d := ctx.definedSides[labelKey(n)]; side == "" && d != "" {
			side, strong = d, true // "'global' is the unpatched kernel": the text says which tree it is
		}
		switch {
		case side == "before" && strong && before < 0:
			before = k
		case side == "" || !strong:
			// no word, or a setting's word ("no batching"): beside a tree's baseline, one
			// more variant the Subject may name
			others = append(others, k)
		default:
			return -1, -1, false
		}
	}
	if before < 0 || len(others) < 2 {
		return -1, -1, false
	}
	otherNames := make([]string, len(others))
	for i, k := range others {
		otherNames[i] = names[k]
	}
	if pick := ctx.subjectNames(otherNames); pick >= 0 {
		return before, others[pick], true
	}
	return -1, -1, false
}

// plusBaseIndex is the one of candidates whose name is the name of names[after] before its
// plus ("v6.13" of "v6.13+series"), -1 for none.
func plusBaseIndex(names []string, after int, candidates []int) int {
	base, _, ok := strings.Cut(names[after], "+")
	if base = strings.TrimSpace(base); !ok || base == "" {
		return -1
	}
	for _, k := range candidates {
		if strings.EqualFold(strings.TrimSpace(names[k]), base) {
			return k
		}
	}
	return -1
}

// pickStates finds the before and the after among names: words decide, or one decided and
// one other; strong words over settings.
func pickStates(names []string, full bool) (before, after int, ok bool) {
	if !full && len(names) == 2 {
		// Two names: the one scorer of two labels (which also knows a name beside the same
		// with "+" added, and one short word of a state).
		switch a, _ := sidesOf(names[0], names[1], true); a {
		case "before":
			return 0, 1, true
		case "after":
			return 1, 0, true
		}
	}
	for _, wantStrong := range []bool{true, false} {
		before, after = -1, -1
		var unknown []int
		for k, n := range names {
			side, strong, _ := stateOf(n)
			switch {
			case side == "":
				unknown = append(unknown, k)
			case strong != wantStrong && wantStrong:
				unknown = append(unknown, k)
			case side == "before" && before < 0:
				before = k
			case side == "before":
				return -1, -1, false // two baselines: which pairs with which is the grouping's to say
			case side == "after":
				after = k
			}
		}
		switch {
		case before >= 0 && after >= 0:
			return before, after, true
		case before < 0 && after >= 0 && len(unknown) >= 2 && plusBaseIndex(names, after, unknown) >= 0:
			// "v6.12  v6.13  v6.13+series": the name the change extends is its baseline; the
			// others (an older kernel) are references no pair takes.
			return plusBaseIndex(names, after, unknown), after, true
		case wantStrong && before < 0 && after > 0 && len(unknown) == 1 && unknown[0] == 0 && len(names) >= 3:
			// A first state no word names, then steps each named as the change's ("patch 4",
			// "patch 6"): the first is the reference, against the last step.
			return 0, after, true
		case full:
		case len(names) == 2 && before >= 0 && len(unknown) == 1:
			return before, unknown[0], true
		case len(names) == 2 && after >= 0 && len(unknown) == 1:
			return unknown[0], after, true
		case before >= 0 && after < 0 && len(unknown) >= 2 && siblingOf(names, before, unknown) >= 0:
			// "UDP | RDS (original) | RDS (shared cq)": the baseline's one sibling (its name but
			// for the words in parentheses) is the change; the other names are references.
			return before, siblingOf(names, before, unknown), true
		case !full && !wantStrong && before == 0 && after < 0 && len(unknown) >= 2 && unknown[len(unknown)-1] == len(names)-1:
			// The baseline first, then steps no word places ("patch 1", "patches 1-2",
			// "whole series"): the baseline against the last, the state the steps lead to.
			return before, len(names) - 1, true
		}
	}
	return -1, -1, false
}

// spreadColumnRe is a column of the runs' spread: "stdev", "std dev", "sd", "σ", "+/-".
var spreadColumnRe = regexp.MustCompile(`(?i)^(?:std\.?\s?dev\.?|stdev|stddev|std|sd|s\.d\.|σ|\+/-|\+-|±|(?:std\.?\s)?err(?:or)?|sem)$`)

func rowStateClaims(corner string, cols []string, rows []tableRow, before, after string, ctx context) []Claim {
	var rb, ra *tableRow
	for k := range rows {
		switch rows[k].label {
		case before:
			rb = &rows[k]
		case after:
			ra = &rows[k]
		}
	}
	if c, ok := runColumnsClaim(corner, cols, rb, ra, ctx); ok {
		return []Claim{c}
	}
	var out []Claim
	dimension, unitFrom := "column", corner // what the columns' names are values of
	if corner != "" && !slices.ContainsFunc(cols, func(c string) bool { return !sizeName(c) }) {
		// Sizes or counts across ("64  256  1024" under "size"): the corner names them, not
		// what is measured; a unit in it is the figures' (a caption's, given to the corner).
		dimension, corner = metricName(parenRe.ReplaceAllString(corner, "")), ""
	}
	for k, col := range cols {
		if spreadColumnRe.MatchString(strings.TrimSpace(col)) {
			continue // the spread of the runs beside it ("stdev"), not a measurement
		}
		fb, ok1 := cellValue(rb.cell(k))
		fa, ok2 := cellValue(ra.cell(k))
		fb, fa = zeroInUnit(fb, fa), zeroInUnit(fa, fb)
		if !ok1 || !ok2 || fb.unit.norm != fa.unit.norm {
			continue
		}
		// The unit in the column's name, the corner, or a state's label ("base (Kpps)").
		fb, fa = headerUnit(fb, col, unitFrom, rb.label, ra.label), headerUnit(fa, col, unitFrom, rb.label, ra.label)
		conds := copyConds(ctx.conditions)
		conds[dimension] = col
		what := corner
		if what == "" && dimension != "column" {
			what = "value"
		} else if what == "" || stateHeaderRe.MatchString(what) {
			what = col // the column names what is measured: "p99", "Down"
		}
		if c, ok := tableClaim(what, fb, fa, rb, ra, conds, nil, nil); ok {
			out = append(out, c)
		}
	}
	return out
}

// siblingOf is the one of names[candidates] that is names[base] but for what both say in
// parentheses; -1 where none or more than one is.
func siblingOf(names []string, base int, candidates []int) int {
	outside := func(n string) string { return strings.Join(strings.Fields(parenRe.ReplaceAllString(n, "")), " ") }
	want, found := outside(names[base]), -1
	if want == "" || want == strings.TrimSpace(names[base]) {
		return -1
	}
	for _, k := range candidates {
		if strings.EqualFold(outside(names[k]), want) && strings.Contains(names[k], "(") {
			if found >= 0 {
				return -1
			}
			found = k
		}
	}
	return found
}

// runColumnRe names a column of one run of a series: "run1", "Run 2", "test3", "#4", "trial 5".
// A bare number is no run's column: it is a size or a count ("64", "1500").
var runColumnRe = regexp.MustCompile(`(?i)^(?:(?:run|test|trial|iter(?:ation)?|try)\s*[#-]?|#)\d{1,3}[.:)]?$`)

// summaryColumnRe names a column that sums a series up: its average or median.
var summaryColumnRe = regexp.MustCompile(`(?i)^(?:avg|average|mean|median)\.?$`)

// numberUnlabelledRuns names rows that have no label "run1", "run2", ... where there are two
// or more, none labelled, and each column's figures are alike (none above twice another):
// the runs of one measurement written down the states' columns ("4.51  4.89", "4.49  4.93"
// under "baseline  patched"). Other rows are returned as they are.
func numberUnlabelledRuns(rows []tableRow) []tableRow {
	if len(rows) < 2 || slices.ContainsFunc(rows, func(r tableRow) bool { return strings.TrimSpace(r.label) != "" || len(r.cells) != len(rows[0].cells) }) {
		return rows
	}
	for c := range rows[0].cells {
		var vals []float64
		for _, r := range rows {
			f, ok := cellValue(r.cell(c))
			if !ok || f.value <= 0 {
				return rows
			}
			vals = append(vals, f.value)
		}
		if slices.Max(vals) > 2*slices.Min(vals) {
			return rows
		}
	}
	out := slices.Clone(rows)
	for k := range out {
		out[k].label = fmt.Sprintf("run%d", k+1)
	}
	return out
}

// runsDown: the rows' labels number runs, two or more, with at most their summaries
// ("run1", "run2", "avg"); under a corner that says the rows are runs ("run", "#"), bare
// numbers 1, 2, 3 in order do too.
func runsDown(corner string, rows []tableRow) bool {
	runs := 0
	runCorner := runCornerRe.MatchString(strings.TrimSpace(trailingNoteRe.ReplaceAllString(corner, "")))
	for _, r := range rows {
		switch l := strings.TrimSpace(r.label); {
		case runColumnRe.MatchString(l):
			runs++
		case runCorner && l == strconv.Itoa(runs+1) && !slices.ContainsFunc(r.cells, func(c string) bool { _, ok := cellValue(c); return !ok }):
			runs++ // a numbered row of figures only: a row with words is a numbered variant
		case summaryColumnRe.MatchString(l):
		default:
			return false
		}
	}
	return runs >= 2
}

// runColumnsClaim reads a table whose rows are the states and whose columns are numbered runs
// of one measurement (with or without an average column): one claim, each side its runs.
func runColumnsClaim(corner string, cols []string, rb, ra *tableRow, ctx context) (Claim, bool) {
	var runs []int
	runCorner := runCornerRe.MatchString(strings.TrimSpace(trailingNoteRe.ReplaceAllString(corner, "")))
	for k, col := range cols {
		switch {
		case runColumnRe.MatchString(col), runCorner && runLabelRe.MatchString(col):
			runs = append(runs, k)
		case summaryColumnRe.MatchString(col) || changeColumnRe.MatchString(col):
		default:
			return Claim{}, false
		}
	}
	if len(runs) < 2 {
		return Claim{}, false
	}
	var fbs, fas []figure
	for _, k := range runs {
		fb, ok1 := cellValue(rb.cell(k))
		fa, ok2 := cellValue(ra.cell(k))
		fb, fa = headerUnit(fb, corner), headerUnit(fa, corner)
		if !ok1 || !ok2 || fb.unit.norm != fa.unit.norm || len(fbs) > 0 && fb.unit.norm != fbs[0].unit.norm {
			return Claim{}, false
		}
		fbs, fas = append(fbs, fb), append(fas, fa)
	}
	return tableSeriesClaim(corner, fbs, fas, rb, ra, copyConds(ctx.conditions), nil, nil)
}

// zeroInUnit is a bare 0 in the unit of the other side's figure ("2.9 Mpps" against "0"):
// nothing is nothing in any unit.
func zeroInUnit(f, other figure) figure {
	if f.bare && f.value == 0 && !other.bare {
		f.unit, f.bare = other.unit, false
	}
	return f
}

// headerUnit gives a bare figure the unit its column's name or the table's corner ends in
// ("Throughput (Gbps)", "[msg/sec]").
func headerUnit(f figure, names ...string) figure {
	if !f.bare {
		return f
	}
	for _, n := range names {
		if u, ok := labelUnit(n); ok {
			return figure{value: f.value * u.factor, unit: u, raw: f.raw}
		}
	}
	return f
}

// settingColumnsBefore are the columns left of the first state's (before column end) that
// hold a setting of each row, not a figure measured: named, no state's or release's name,
// and each of its figures repeated in two rows or more ("Streams" 1, 4, 1, 4 beside "MTU"
// 1500, 1500, 9000, 9000). A column of another state's figures ("6.11.0", "tcp" of a
// third tree) repeats none and is no setting.
func settingColumnsBefore(cols []string, rows []tableRow, end, cvCol int) []int {
	var out []int
	for c := 0; c < end && c < len(cols); c++ {
		name := strings.TrimSpace(cols[c])
		if name == "" || c == cvCol || !repeatsEveryValue(rows, c) {
			continue
		}
		if side, _, _ := stateOf(name); side != "" {
			continue
		}
		if _, ok := kernelVersion(name); ok {
			continue
		}
		out = append(out, c)
	}
	return out
}

func colStateClaims(corner string, cols []string, rows []tableRow, before, after string, cvCol int, ctx context) []Claim {
	kb, ka := indexOf(cols, before), indexOf(cols, after)
	if c, ok := runRowsClaim(corner, cols, rows, kb, ka, ctx); ok {
		return []Claim{c}
	}
	settings := settingColumnsBefore(cols, rows, min(kb, ka), cvCol)
	// A signed percent in parentheses in any row of the states' columns makes those columns'
	// percents changes against a third column ("1.21 GB/s(10.0% )" beside "0.84 GB/s(-23.6%)"),
	// not shares.
	signedNotes := false
	for k := range rows {
		for _, c := range []int{kb, ka} {
			if c >= 0 && c < len(rows[k].cells) && signedNoteRe.MatchString(rows[k].cell(c)) {
				signedNotes = true
			}
		}
	}
	var out []Claim
	for k := range rows {
		r := &rows[k]
		if kb < 0 || ka < 0 || max(kb, ka) >= len(r.cells) {
			continue // a row shorter than the header: no figure under one of the states
		}
		fb, ok1 := cellValue(r.cell(kb))
		fa, ok2 := cellValue(r.cell(ka))
		fb, fa = zeroInUnit(fb, fa), zeroInUnit(fa, fb)
		if !ok1 || !ok2 || fb.unit.norm != fa.unit.norm || statedRowRe.MatchString(r.label) {
			continue
		}
		conds := copyConds(ctx.conditions)
		if fam := familyRe.FindString(r.label); fam != "" {
			conds["family"] = fam
		} else if r.label != "" {
			conds["row"] = r.label
		}
		for _, c := range settings {
			// a setting's column between the label and the states' ("MTU  Streams  Before
			// After": the streams), the row's condition as much as its label
			if v := strings.TrimSpace(r.cell(c)); v != "" {
				conds[strings.ToLower(strings.TrimSpace(cols[c]))] = v
			}
		}
		var cvb, cva *float64
		if cvCol >= 0 {
			var cvs []float64
			for _, part := range strings.Split(r.cell(cvCol), "/") {
				if v, u, ok := parseValue(part); ok && u.kind == "percent" {
					cvs = append(cvs, round(v/100))
				}
			}
			if len(cvs) == 2 {
				cvb, cva = &cvs[0], &cvs[1]
			}
		}
		// A unit written once, in the last state's header ("before | after (kpps)"), is the
		// unit of both states' columns: the other column's header is the last place looked.
		fb, fa = headerUnit(fb, cols[kb], r.label, corner, cols[ka]), headerUnit(fa, cols[ka], r.label, corner, cols[kb])
		rb, ra := &tableRow{label: before, n: r.n}, &tableRow{label: after, n: r.n}
		if c, ok := tableClaim(corner, fb, fa, rb, ra, conds, cvb, cva); ok {
			statedInColumn(&c, cols, r)
			out = append(out, c)
		}
		if pb, pa, ok := cellSecondShares(r.cell(kb), r.cell(ka)); ok && !signedNotes {
			// "2341 Mbps (61%)" against "2350 Mbps (47%)": the share in parentheses is a second
			// measurement of each state (a CPU's load beside the throughput)
			sc := copyConds(conds)
			sc["column"] = "share in parentheses"
			if c, ok := tableClaim(corner, pb, pa, rb, ra, sc, nil, nil); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// signedNoteRe is a signed percent in parentheses: "(-23.6%)", "( +3.0 %)".
var signedNoteRe = regexp.MustCompile(`\(\s*[-+−]\s?\d+(?:\.\d+)?\s?%`)

// cellShareRe is a cell's figure with a share in parentheses after it, unsigned: "2341 Mbps
// (61%)".
var cellShareRe = regexp.MustCompile(`^\S.*?\s*\(\s*(\d+(?:\.\d+)?)\s*%\s*\)$`)

// cellSecondShares are the shares two states' cells give in parentheses beside their figures,
// where both give one and they are no change stated against the before: the before's share
// is neither 0% nor 100% (the baseline's own "(0.00%)" or "(100%)" makes the after's a
// stated change or a ratio, which cellValue already takes as a note).
func cellSecondShares(before, after string) (figure, figure, bool) {
	mb, ma := cellShareRe.FindStringSubmatch(strings.TrimSpace(before)), cellShareRe.FindStringSubmatch(strings.TrimSpace(after))
	if mb == nil || ma == nil {
		return figure{}, figure{}, false
	}
	fb, okb := cellValue(mb[1] + "%")
	fa, oka := cellValue(ma[1] + "%")
	if v, _ := parseNumber(mb[1]); !okb || !oka || v == 0 || v == 100 {
		return figure{}, figure{}, false
	}
	return fb, fa, true
}

// statedAgainstColumnClaims reads a table whose columns are a baseline and two or more other
// states, each other state's cells stating in parentheses its change against the baseline's
// cell of the row ("3120400 | 3894100 (+24.8%) | 4011650 (+28.6%)"): the text says which column
// is the baseline by the changes it states against it, whatever the columns' names. Each other
// column is a claim against the baseline, row by row. nil unless exactly one column states no
// change and every stated change agrees with the figures (to the rounding its author wrote).
func statedAgainstColumnClaims(corner string, cols []string, rows []tableRow) []Claim {
	if len(cols) < 3 || len(rows) == 0 {
		return nil
	}
	base := -1
	for c := range cols {
		noted := 0
		for _, r := range rows {
			if anyParenPercentRe.MatchString(r.cell(c)) {
				noted++
			}
		}
		switch {
		case noted == 0:
			if base >= 0 {
				return nil // two columns without a stated change: which is the base is not said
			}
			base = c
		case noted != len(rows):
			return nil
		}
	}
	if base < 0 {
		return nil
	}
	// The states' words have the last say: a base named as the state after, or another column
	// named as a state before ("TCP | RDS before | RDS after", the changes against a
	// reference), is no baseline of the others. A column no word names and whose name shares
	// no word with the others' ("plain TCP" beside "origin" and "with patches") is a reference
	// the text compares with, not a state: left out.
	if side, _, _ := stateOf(cols[base]); side == "after" {
		return nil
	}
	var states []int
	for c := range cols {
		if c == base {
			continue
		}
		side, _, _ := stateOf(cols[c])
		if side == "before" {
			return nil
		}
		others := slices.Delete(slices.Clone(cols), c, c+1)
		if side == "" && !sharesAName(cols[c], others) {
			continue
		}
		states = append(states, c)
	}
	if len(states) == 0 {
		return nil
	}
	var out []Claim
	for _, r := range rows {
		fb, ok := cellValue(r.cell(base))
		if !ok || fb.value == 0 {
			return nil
		}
		for _, c := range states {
			fa, ok := cellValue(r.cell(c))
			m := statedPercentRe.FindStringSubmatch(r.cell(c))
			if !ok || m == nil || fa.unit.norm != fb.unit.norm {
				return nil
			}
			stated, _ := statedPercent(m)
			tolerance := 0.6
			if !strings.Contains(m[2], ".") {
				tolerance = 1 // a whole percent
			}
			if math.Abs((fa.value/fb.value-1)*100-stated) > tolerance {
				return nil // a change against something else
			}
			conds := map[string]string{}
			if r.label != "" {
				conds["row"] = r.label
			}
			hb, ha := headerUnit(fb, cols[base], r.label, corner, cols[c]), headerUnit(fa, cols[c], r.label, corner, cols[base])
			rb, ra := &tableRow{label: cols[base], n: r.n}, &tableRow{label: cols[c], n: r.n}
			if claim, ok := tableClaim(corner, hb, ha, rb, ra, conds, nil, nil); ok {
				v := round(stated / 100)
				claim.Stated = &v
				out = append(out, claim)
			}
		}
	}
	return out
}

// sharesAName: name has a word one of others has too ("batched" of "batched" and
// of "batched + prefetch").
func sharesAName(name string, others []string) bool {
	naming := func(words []string) int { // words that name something: no "the", no "non" of "non-zc"
		n := 0
		for _, w := range words {
			if !commonWords[w] && w != "non" && w != "no" {
				n++
			}
		}
		return n
	}
	return naming(ownWords(name, strings.Join(others, " "))) < naming(wordRe.FindAllString(strings.ToLower(name), -1))
}

// runCornerRe is a table's corner that says its rows are runs: "run", "#", "iteration".
var runCornerRe = regexp.MustCompile(`(?i)^(?:runs?|#|iter(?:ation)?s?|trials?|tries|try|round)$`)

// runRowsClaim is the one claim of a table whose corner says each row is a run ("run" over
// rows 1, 2, 3 under the states' columns): each state's column is its series.
func runRowsClaim(corner string, cols []string, rows []tableRow, kb, ka int, ctx context) (Claim, bool) {
	if !runCornerRe.MatchString(strings.TrimSpace(trailingNoteRe.ReplaceAllString(corner, ""))) || kb < 0 || ka < 0 || len(rows) < 2 {
		return Claim{}, false
	}
	var fbs, fas []figure
	for k := range rows {
		r := &rows[k]
		if max(kb, ka) >= len(r.cells) || !runLabelRe.MatchString(strings.TrimSpace(r.label)) {
			return Claim{}, false
		}
		fb, ok1 := cellValue(r.cell(kb))
		fa, ok2 := cellValue(r.cell(ka))
		if !ok1 || !ok2 {
			return Claim{}, false
		}
		fb, fa = headerUnit(fb, cols[kb], corner, cols[ka]), headerUnit(fa, cols[ka], corner, cols[kb])
		if len(fbs) > 0 && (fb.unit.norm != fbs[0].unit.norm || fa.unit.norm != fas[0].unit.norm) || fb.unit.norm != fa.unit.norm {
			return Claim{}, false
		}
		fbs, fas = append(fbs, fb), append(fas, fa)
	}
	rb, ra := &tableRow{label: cols[kb], n: rows[0].n}, &tableRow{label: cols[ka], n: rows[len(rows)-1].n}
	return tableSeriesClaim(corner, fbs, fas, rb, ra, copyConds(ctx.conditions), nil, nil)
}

func tableClaim(corner string, fb, fa figure, rb, ra *tableRow, conds map[string]string, cvb, cva *float64) (Claim, bool) {
	return tableSeriesClaim(corner, []figure{fb}, []figure{fa}, rb, ra, conds, cvb, cva)
}

// tableSeriesClaim is a table's claim of one measurement whose sides are series of figures
// of one unit (a run a cell), the first figure naming the unit.
func tableSeriesClaim(corner string, fbs, fas []figure, rb, ra *tableRow, conds map[string]string, cvb, cva *float64) (Claim, bool) {
	values := func(fs []figure) []float64 {
		v := make([]float64, len(fs))
		for k, f := range fs {
			v[k] = round(f.value)
		}
		return v
	}
	zero := func(fs []figure) bool {
		return !slices.ContainsFunc(fs, func(f figure) bool { return f.value != 0 })
	}
	if zero(fbs) && zero(fas) {
		return Claim{}, false // zero on both sides is no comparison
	}
	if settingColumn(corner, fbs, fas) {
		return Claim{}, false
	}
	fb, fa := fbs[0], fas[0]
	metric := metricOf(fb.unit)
	if fb.bare {
		metric = metricName(corner)
		if dimensionCornerRe.MatchString(strings.TrimSpace(corner)) || settingColumnRe.MatchString(strings.TrimSpace(corner)) {
			metric = "value" // "test" over the rows' names says what the rows are, not the figures
		}
	}
	mb := measurement{metric: metric, unit: fb.unit.norm, values: values(fbs), cv: cvb, label: rb.label, conditions: conds, lines: []int{rb.n}}
	ma := measurement{metric: metric, unit: fa.unit.norm, values: values(fas), cv: cva, label: ra.label, conditions: conds, lines: []int{ra.n}}
	return newClaim(&mb, &ma), true
}

// statedInColumn gives a claim of a table's row the change its change column states ("delta"
// or "%" over "+7.5%"), where the row has one: the text's own figure for it, checked against the
// figures (half a point apart, or a whole percentage's point, is a mismatch).
func statedInColumn(c *Claim, cols []string, r *tableRow) {
	k := slices.IndexFunc(cols, func(col string) bool { return changeColumnRe.MatchString(col) })
	if k < 0 || k >= len(r.cells) {
		return
	}
	v, u, ok := parseValue(strings.TrimSpace(r.cell(k)))
	if !ok || u.kind != "percent" {
		return
	}
	stated := round(v / 100)
	c.Stated = &stated
	tolerance := 0.005
	if !strings.Contains(r.cell(k), ".") {
		tolerance = 0.01 // a whole percentage
	}
	c.Mismatch = !c.FromZero && math.Abs(stated-c.Change) > tolerance
}

// settingColumn: a column named as a setting of the test (flows, threads, queues), its cells
// whole numbers without a unit, the same under both states ("flows" 1 and 1 beside "Gbit/s"
// 21.4 and 23.0): what the test was, not a measurement of it. (A measurement may well be the
// same under both: a rate at the line's limit.)
func settingColumn(name string, fbs, fas []figure) bool {
	if len(fbs) != len(fas) || !settingColumnRe.MatchString(strings.TrimSpace(name)) {
		return false
	}
	for k := range fbs {
		if !fbs[k].bare || !fas[k].bare || fbs[k].value != fas[k].value || fbs[k].value != math.Trunc(fbs[k].value) {
			return false
		}
	}
	return true
}

// dimensionCornerRe is a table's corner that names what its rows are: the tests, the cases,
// the sizes.
var dimensionCornerRe = regexp.MustCompile(`(?i)^(?:tests?|cases?|benchmarks?|workloads?|scenarios?|configs?|configurations?|setups?|modes?|types?|names?|sizes?|(?:msg|message|packet|pkt|frame)[ _-]?sizes?)$`)

// settingColumnRe names a column of the test's settings: how many of what it ran.
var settingColumnRe = regexp.MustCompile(`(?i)^(?:#\s*)?(?:flows?|threads?|n?threads|streams?|queues?|cpus?|cores?|connections?|conns?|clients?|jobs?|procs?|processes|sessions?|instances?|parallel)$`)

func indexOf(s []string, v string) int {
	for k, x := range s {
		if x == v {
			return k
		}
	}
	return -1
}

func copyConds(c map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		out[k] = v
	}
	return out
}

// rowState is a long table's row's state and what else names the row: the state is the row's
// label, or the last comma-separated part of it ("nthreads=25, baseline"), or a cell that
// names a state.
//
// config are the columns whose figures are the test's settings, not its measurements (a
// table's "mtu", "chunk size" beside its "rxdrop (Mpps)"): they name the group too.
func rowState(r tableRow, config map[int]bool) (side, state, group string) {
	others := []string{}
	label := r.label
	if k := strings.LastIndex(label, ","); k >= 0 {
		s, _, _ := stateOf(label[k+1:])
		if s == "" {
			s = "?" // a state no word decides ("skb_linear"): its group's other row may
		}
		side, state, label = s, strings.TrimSpace(label[k+1:]), strings.Join(strings.Fields(label[:k]), " ")
	}
	if whole, _, _ := stateOf(label); side == "" && whole == "" {
		if m := trailingPatchNounRe.FindStringSubmatch(label); m != nil {
			if s, _, _ := stateOf(m[1]); s == "" && !negationRe.MatchString(m[1]) {
				// "ip6gre patch" beside "ip6gre base": the test's name, then the state's noun
				side, state, label = "after", label, m[1]
			}
		}
	}
	if s, _, rest := stateOf(label); side == "" && s != "" {
		side, state, label = s, label, ""
		if !slices.ContainsFunc(r.cells, func(c string) bool { _, v := cellValue(c); return !v && strings.TrimSpace(c) != "" }) {
			// "ip6gre base", "ip6gre patch" and no cell of words: what the label says besides
			// the state names the row's test
			label = strings.TrimSpace(rest)
		}
	}
	if label != "" {
		others = append(others, label)
	}
	for k, c := range r.cells {
		if _, ok := cellValue(c); ok && !config[k] {
			continue
		}
		if s, _, _ := stateOf(c); s != "" && side == "" {
			side, state = s, c
			continue
		}
		if strings.TrimSpace(c) == "" {
			continue // a toggle column's cell, taken as the row's state
		}
		others = append(others, c)
	}
	return side, state, strings.Join(others, ", ")
}

// trailingPatchNounRe is a row's label that ends in the noun of what the message brings after
// a word or two naming the test: "ip6gre patch", "UDP 64B patched".
var trailingPatchNounRe = regexp.MustCompile(`(?i)^\s*(\S+(?:\s+\S+)?)\s+(?:patch|patched|series|fix|fixed)\s*:?$`)

// negationRe is a word that negates what follows: "no patch", "non-patched".
var negationRe = regexp.MustCompile(`(?i)\b(?:no|not|non|without|w/o|pre|un)\b`)

// toggleRows are a table's rows with the features off and on in columns ks ("batch" off and
// on) taken as each row's state: all off the state before, all on the state after, any other
// mix a step between (betweenToggles); and config with the columns of bare counts beside
// figures with units ("queues" 1 and 4), which say the test.
func toggleRows(rows []tableRow, ks []int, config map[int]bool) ([]tableRow, map[int]bool) {
	rows = slices.Clone(rows)
	for i := range rows {
		r := rows[i]
		cells := slices.Clone(r.cells)
		on := 0
		for _, k := range ks {
			if toggleOn[strings.ToLower(strings.TrimSpace(cells[k]))] {
				on++
			}
			cells[k] = ""
		}
		state := map[bool]string{true: "before", false: betweenToggles}[on == 0]
		if on == len(ks) {
			state = "after"
		}
		rows[i] = tableRow{label: r.label + ", " + state, cells: cells, n: r.n}
	}
	if config == nil {
		config = map[int]bool{}
	}
	var bareCols []int
	withUnits := false // some column's figures carry their units: the bare ones are counts
	for c := range rows[0].cells {
		bare := true
		for _, r := range rows {
			f, ok := cellValue(r.cell(c))
			bare = bare && (ok && f.bare || slices.Contains(ks, c))
			withUnits = withUnits || ok && !f.bare
		}
		if bare {
			bareCols = append(bareCols, c)
		}
	}
	for _, c := range bareCols {
		config[c] = config[c] || withUnits || slices.Contains(ks, c)
	}
	return rows, config
}

// betweenToggles is the state of a row with some of a table's features on and some off.
const betweenToggles = "between"

// toggleOff and toggleOn are the values of a column that switches a feature ("batch",
// "GRO"): without it the state before, with it the state after.
var (
	toggleOff = map[string]bool{"0": true, "off": true, "n": true, "no": true, "false": true, "disabled": true}
	toggleOn  = map[string]bool{"1": true, "on": true, "y": true, "yes": true, "true": true, "enabled": true}
)

// toggleColumns are the cell columns whose values are a feature off and on, both, in rows
// that come in pairs of the same test or more; none where there are none.
func toggleColumns(rows []tableRow) []int {
	if len(rows) < 4 {
		return nil
	}
	var found []int
	for k := range rows[0].cells {
		off, on := 0, 0
		for _, r := range rows {
			if k >= len(r.cells) {
				off, on = -1, -1
				break
			}
			v := strings.ToLower(strings.TrimSpace(r.cell(k)))
			switch {
			case toggleOff[v]:
				off++
			case toggleOn[v]:
				on++
			default:
				off, on = -1, -1
			}
			if off < 0 {
				break
			}
		}
		if off > 0 && on > 0 && off+on == len(rows) {
			found = append(found, k)
		}
	}
	return found
}

// measuredColumn: column c of a long table holds figures of which more than half the rows
// have one of their own: a measurement ("Bw" without a unit in its name), not a setting of
// the test, whose every value each state's row repeats (a value in at most half the rows).
func measuredColumn(rows []tableRow, c int) bool {
	count, ok := figureCounts(rows, c)
	return ok && 2*len(count) > len(rows)
}

// figureCounts counts the figures of column c by how they are written; false where a row has
// no figure there.
func figureCounts(rows []tableRow, c int) (map[string]int, bool) {
	count := map[string]int{}
	for _, r := range rows {
		if c >= len(r.cells) {
			return nil, false
		}
		v := strings.TrimSpace(r.cell(c))
		if _, ok := cellValue(v); !ok {
			return nil, false
		}
		count[v]++
	}
	return count, true
}

// extendedBy: another label of the table is this one with something added ("X + patch",
// "X with Y"), so this one is the base.
func extendedBy(label string, labels map[string]bool) bool {
	if label == "" {
		return false
	}
	base := strings.Fields(label)
	for other := range labels {
		if extendsBase(base, strings.Fields(other)) {
			return true
		}
	}
	return false
}

// extendsOne: label is another of labels with something added to it (extendsBase).
func extendsOne(label string, labels map[string]bool) bool {
	words := strings.Fields(label)
	for other := range labels {
		if other != label && extendsBase(strings.Fields(other), words) {
			return true
		}
	}
	return false
}

// longRowSide is the side of a long table's row and the test it is of (its group); between:
// a step between all toggles off and all on, kept out of the pair.
func longRowSide(r tableRow, config map[int]bool, labels map[string]bool) (side, group string, between bool) {
	side, state, group := rowState(r, config)
	if state == betweenToggles {
		return "", "", true
	}
	label := strings.TrimSpace(r.label)
	switch {
	case side == "" && extendedBy(label, labels):
		// "v6.9" beside "v6.9 + patch": the base of a state that adds to it; the
		// test is named by the other cells
		_, _, group = rowState(tableRow{cells: r.cells}, config)
		side = "before"
	case side == "" && extendsOne(label, labels):
		// "v6.13-rc1+p" beside "v6.13-rc1": what is added to a base, whatever its word
		_, _, group = rowState(tableRow{cells: r.cells}, config)
		side = "after"
	case side == "" && label != "":
		// A state no word names ("busypoll" below "vanilla"): its test's other row may
		// decide it; the test is named by the other cells.
		_, _, group = rowState(tableRow{cells: r.cells}, config)
		side = "?"
	}
	return side, group, false
}

// subjectAlternative is the one of a baseline's alternative rows the Subject names (nil for
// none).
func subjectAlternative(alts []*tableRow, ctx context) *tableRow {
	if ctx.subjectNames == nil {
		return nil
	}
	names := make([]string, len(alts))
	for k, a := range alts {
		names[k] = a.label
	}
	if pick := ctx.subjectNames(names); pick >= 0 {
		return alts[pick]
	}
	return nil
}

// repeatedColumns are the columns of settings of a table whose names say no unit: columns of
// figures that the rows repeat (each value in at least two rows: "flows" 15, 30 under each
// state) left of the columns whose figures are the rows' own (measuredColumn); nil where no
// column is of each kind.
func repeatedColumns(rows []tableRow) map[int]bool {
	if len(rows) == 0 {
		return nil
	}
	config := map[int]bool{}
	measured := 0
	for c := range rows[0].cells {
		switch {
		case measuredColumn(rows, c):
			measured++
		case measured == 0 && repeatsEveryValue(rows, c):
			config[c] = true // left of every measured column
		}
	}
	if measured == 0 || len(config) == 0 {
		return nil
	}
	return config
}

// repeatsEveryValue: every figure of column c stands in two or more rows.
func repeatsEveryValue(rows []tableRow, c int) bool {
	count, ok := figureCounts(rows, c)
	for _, n := range count {
		ok = ok && n >= 2
	}
	return ok
}

// settingColumns are a table's columns of settings: where some column's name carries a unit
// ("rxdrop (Mpps)"), those are the measurements and the columns without one the settings of
// each test ("mtu", "chunk size"); nil where no name carries a unit.
func settingColumns(cols []string) map[int]bool {
	var measured []int
	for k, c := range cols {
		if _, ok := labelUnit(c); ok {
			measured = append(measured, k)
		}
	}
	if len(measured) == 0 || len(measured) == len(cols) {
		return nil
	}
	config := map[int]bool{}
	for k := range cols {
		if !slices.Contains(measured, k) {
			config[k] = true
		}
	}
	return config
}

// longTableClaims reads a "long" table, one row a state and a test: the state in the label,
// in the label's last part or in a cell; the rows of one test (the other cells that are not
// figures) pair their before and after, column by column. nil where the states do not come
// back row after row.
func longTableClaims(corner string, cols []string, rows []tableRow, ctx context) []Claim {
	if out := longTableWith(corner, cols, rows, settingColumns(cols), ctx); out != nil {
		return out
	}
	if settingColumns(cols) == nil {
		// No name says which columns are measured: the figures the rows repeat left of
		// those they do not are the tests' settings ("flows" 15, 30 under each state).
		if config := repeatedColumns(rows); config != nil {
			return longTableWith(corner, cols, rows, config, ctx)
		}
	}
	return nil
}

// longTableWith is longTableClaims with the setting columns config; a bare figure takes its
// column's unit, else the corner's (a caption's or a note's: cornerWithUnit).
func longTableWith(corner string, cols []string, rows []tableRow, config map[int]bool, ctx context) []Claim {
	type sides struct {
		before, after, other *tableRow
		more                 []*tableRow // a third state and on, no word naming them either
	}
	groups := map[string]*sides{}
	var order []string
	repeated := false
	if ks := toggleColumns(rows); len(ks) > 0 {
		rows, config = toggleRows(rows, ks, config)
		for c := range config {
			if measuredColumn(rows, c) {
				delete(config, c) // the toggles say the states; the test is said by fewer values
			}
		}
	}
	labels := map[string]bool{}
	for _, r := range rows {
		labels[strings.TrimSpace(r.label)] = true
	}
	for k := range rows {
		side, group, between := longRowSide(rows[k], config, labels)
		if between {
			continue // a step between all off and all on: kept out of the pair
		}
		if side == "" {
			return nil
		}
		g := groups[group]
		if g == nil {
			g = &sides{}
			groups[group] = g
			order = append(order, group)
		}
		switch {
		case side == "before" && g.before == nil:
			g.before = &rows[k]
		case side == "after":
			g.after = &rows[k]
		case side == "?" && g.other == nil:
			g.other = &rows[k]
		case side == "?" && g.before != nil && !slices.ContainsFunc(append(g.more, g.other), func(o *tableRow) bool { return o.label == rows[k].label }):
			g.more = append(g.more, &rows[k]) // a baseline's alternatives: the Subject may pick one
		default:
			return nil // a state twice in one test: not a long table
		}
		repeated = repeated || len(groups) < k+1
	}
	if !repeated || len(order) < 2 {
		return nil
	}
	var out []Claim
	for _, group := range order {
		g := groups[group]
		switch {
		case g.other == nil || g.before != nil && g.after != nil:
			// the baseline against the final state; a third no word decides stays out
		case g.before != nil && g.after == nil && len(g.more) > 0:
			// the baseline and several alternatives: the one the Subject names, or none
			if g.after = subjectAlternative(append([]*tableRow{g.other}, g.more...), ctx); g.after == nil {
				continue
			}
		case g.before != nil && g.after == nil:
			g.after = g.other // the baseline and one other: the other is the change's
		case g.after != nil && g.before == nil:
			g.before = g.other
		default:
			continue // two or more states no word decides
		}
		if g.before != nil && g.after != nil {
			out = append(out, rowPairClaims(corner, cols, group, g.before, g.after, config, ctx)...)
		}
	}
	return out
}

// rowPairClaims are the claims of a long table's two rows of one test, the state before and
// after, a claim for each column of figures (the setting columns of config left out).
func rowPairClaims(corner string, cols []string, group string, before, after *tableRow, config map[int]bool, ctx context) []Claim {
	var out []Claim
	_, sb, _ := rowState(*before, config)
	_, sa, _ := rowState(*after, config)
	rb, ra := &tableRow{label: sb, n: before.n}, &tableRow{label: sa, n: after.n}
	for k := range before.cells {
		if k >= len(after.cells) || k >= len(cols) {
			break
		}
		if config[k] {
			continue
		}
		fb, ok1 := cellValue(before.cell(k))
		fa, ok2 := cellValue(after.cell(k))
		fb, fa = headerUnit(fb, cols[k], corner), headerUnit(fa, cols[k], corner)
		if !ok1 || !ok2 || fb.unit.norm != fa.unit.norm {
			continue
		}
		conds := copyConds(ctx.conditions)
		conds["row"], conds["column"] = group, cols[k]
		if c, ok := tableClaim(cols[k], fb, fa, rb, ra, conds, nil, nil); ok {
			out = append(out, c)
		}
	}
	return out
}

// repeatsAName: two of the names are the same.
func repeatsAName(names []string) bool {
	seen := map[string]bool{}
	for _, n := range names {
		k := strings.ToLower(strings.TrimSpace(n))
		if k != "" && seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// transposed is the table with its rows as columns: the rows' labels name the columns, each
// column a row named by its header. ok is false for a table with a row of another width.
func transposed(cols []string, rows []tableRow) ([]string, []tableRow, bool) {
	if len(rows) < 2 || len(rows) > maxAlignedRows {
		return nil, nil, false
	}
	tcols := make([]string, len(rows))
	for k, r := range rows {
		if len(r.cells) != len(cols) {
			return nil, nil, false
		}
		tcols[k] = r.label
	}
	trows := make([]tableRow, len(cols))
	for c := range cols {
		trows[c] = tableRow{label: cols[c], n: rows[0].n}
		for _, r := range rows {
			trows[c].cells = append(trows[c].cells, r.cells[c])
		}
	}
	return tcols, trows, true
}

// nameByContrast is the side of a name from another of names that is the same but for the
// other word of a contrast pair (contrastPairs: "with prefetch, 64B" beside "without
// prefetch, 64B"; "no batching" beside "with batching"), and the name without that
// word: what the two share. "" where no name is its twin.
func nameByContrast(name string, names []string) (side, rest string) {
	words := strings.Fields(name)
	for k, w := range words {
		for _, c := range contrastPairs {
			var twin string
			switch {
			case strings.EqualFold(w, c[0]):
				side, twin = "before", c[1]
			case strings.EqualFold(w, c[1]):
				side, twin = "after", c[0]
			default:
				continue
			}
			other := strings.Join(slices.Concat(words[:k], []string{twin}, words[k+1:]), " ")
			if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.Join(strings.Fields(n), " "), other) }) {
				return side, strings.Join(slices.Concat(words[:k], words[k+1:]), " ")
			}
		}
	}
	return "", ""
}

// groupedColumnClaims reads a table whose columns are states within groups ("TCP_STREAM base",
// "TCP_STREAM patched", "TCP_RR base", "TCP_RR patched"; a two-row header makes such names):
// each group's before and after pair, row by row. nil unless there are two groups or more,
// each with one before and one after.
func groupedColumnClaims(corner string, cols []string, rows []tableRow, cvCol int, ctx context) []Claim {
	type pair struct{ before, after string }
	groups := map[string]*pair{}
	var order []string
	for _, c := range cols {
		side, rest := nameByContrast(c, cols)
		if side == "" {
			side, _, rest = stateOf(c)
		}
		if side == "" {
			// "lat_old", "tput-new": a metric and a state glued by an underscore or a dash
			side, _, rest = stateOf(strings.NewReplacer("_", " ", "-", " ").Replace(c))
		}
		if side == "" {
			continue
		}
		g := labelKey(rest)
		if groups[g] == nil {
			groups[g] = &pair{}
			order = append(order, g)
		}
		switch {
		case side == "before" && groups[g].before == "":
			groups[g].before = c
		case side == "after" && groups[g].after == "":
			groups[g].after = c
		default:
			return nil
		}
	}
	if len(order) < 2 {
		return nil
	}
	var out []Claim
	for _, g := range order {
		p := groups[g]
		if p.before == "" || p.after == "" {
			return nil
		}
		for _, c := range colStateClaims(corner, cols, rows, p.before, p.after, cvCol, ctx) {
			c.Conditions = copyConds(c.Conditions)
			c.Conditions["group"] = g
			out = append(out, c)
		}
	}
	return out
}

// stackedHeader joins two header rows of a pipe table cell by cell, each column's name
// written over two lines ("rxdrop" over "(Mpps)", "chunk" over "size"); ok is false unless both
// rows have pipes and as many cells.
func stackedHeader(upper, lower string) (string, bool) {
	if !strings.Contains(upper, "|") || !strings.Contains(lower, "|") {
		return "", false
	}
	trim := func(s string) []string {
		return strings.Split(strings.Trim(strings.TrimSpace(s), "|"), "|")
	}
	u, l := trim(upper), trim(lower)
	if len(u) != len(l) || len(u) < 3 {
		return "", false
	}
	out := make([]string, len(u))
	group := ""
	for k := range u {
		// An upper cell spans the empty ones after it ("| Cycles |  |  | Nanosec |" over
		// "| Before | After | diff | Before |", as in the org-table fixture), as org and markdown tables write a group.
		if up := strings.TrimSpace(u[k]); up != "" || k == 0 {
			group = up
		}
		out[k] = strings.TrimSpace(group + " " + strings.TrimSpace(l[k]))
		if out[k] == "" {
			out[k] = "-"
		}
	}
	return "| " + strings.Join(out, " | ") + " |", true
}

// spannedLower is the line of the lower header row under a header row of pipes at lines[i],
// past a rule between them: both rows of pipes without a cell that is a value (the lower's
// names may count things: "1 flow"), the lower with more cells.
func spannedLower(lines []line, i int) (int, bool) {
	if !strings.Contains(lines[i].text, "|") || !namesOnly(lines[i].text) {
		return 0, false
	}
	j := i + 1
	for j < len(lines) && j < i+3 && (separatorRe.MatchString(lines[j].text) || namedRuleRe.MatchString(lines[j].text)) {
		j++
	}
	if j >= len(lines) || !strings.Contains(lines[j].text, "|") {
		return 0, false
	}
	for _, cell := range splitRow(lines[j].text) {
		if _, ok := cellValue(cell); ok {
			return 0, false // a row of values ("tcp | 10.0 | 12.5"), not names ("1 flow | 8 flows")
		}
	}
	return j, strings.Count(lines[j].text, "|") > strings.Count(lines[i].text, "|")
}

// namedRuleRe is a box-drawn table's rule under its upper header row that leaves the corner's
// name standing ("|  ring  +-------+-------+"): a rule, the name a corner's.
var namedRuleRe = regexp.MustCompile(`^\s*\|?\s*[\w ]{1,20}?\s*\+[-=+]+\|?\s*$`)

// spanHeader joins a header row of pipes over another whose cells it spans ("| without X |
// with X |" over "| 64B | 1500B | 64B | 1500B |"): each lower cell named by the upper cell
// over its middle, as "without X 64B". The pipes' places decide, tabs
// expanded.
func spanHeader(upper, lower string) (string, bool) {
	u, l := []rune(expandTabs(upper)), []rune(expandTabs(lower))
	segments := func(r []rune) [][2]int {
		var out [][2]int
		start := 0
		for k, c := range r {
			if c == '|' {
				out = append(out, [2]int{start, k})
				start = k + 1
			}
		}
		return append(out, [2]int{start, len(r)})
	}
	top := segments(u)
	var cells []string
	for _, seg := range segments(l) {
		text := strings.TrimSpace(string(l[seg[0]:seg[1]]))
		if text == "" && (seg[0] == 0 || seg[1] == len(l)) {
			if seg[0] == 0 && seg[1] > 0 && strings.TrimSpace(string(l[:seg[1]])) == "" && len(cells) == 0 && seg[1] < len(l) && !strings.HasPrefix(strings.TrimSpace(lower), "|") {
				cells = append(cells, "-") // the corner, empty
			}
			continue
		}
		mid := (seg[0] + seg[1]) / 2
		name := ""
		for _, t := range top {
			if t[0] <= mid && mid < t[1] && t[1] <= len(u) {
				name = strings.TrimSpace(string(u[t[0]:t[1]]))
			}
		}
		cells = append(cells, strings.TrimSpace(name+" "+text))
	}
	if len(cells) < 3 {
		return "", false
	}
	return "| " + strings.Join(cells, " | ") + " |", true
}

// groupHeader joins a table's two header rows: each cell of the lower row takes the upper
// row's name whose text stands over it ("TCP_STREAM" over "base" and "patched"). ok is false
// where the upper row does not group the lower.
func groupHeader(upper, lower string) (string, bool) {
	top, low := headerCells(upper), headerCells(lower)
	if len(top) < 2 || len(low) <= len(top) {
		return "", false
	}
	var b strings.Builder
	for k, c := range low {
		name := ""
		for _, t := range top {
			if t.start <= c.start+len([]rune(c.text)) {
				name = t.text
			}
		}
		if k == 0 && top[0].start > c.start && (len(low)-1)%len(top) == 0 && len(low)%len(top) != 0 {
			// the corner ("pkt sz"), left of the groups the upper row names, each group as
			// many columns
			name = ""
		}
		if k > 0 {
			b.WriteString("  ")
		}
		if name != "" {
			b.WriteString(name + " ")
		}
		b.WriteString(c.text)
	}
	return b.String(), true
}

// headerCell is a cell of a header row and the columns it stands over.
type headerCell struct {
	start, end int
	text       string
}

// headerCells cuts a header row at runs of two or more spaces (tabs expanded).
func headerCells(row string) []headerCell {
	r := []rune(expandTabs(row))
	var out []headerCell
	for k := 0; k < len(r); {
		if r[k] == ' ' {
			k++
			continue
		}
		start := k
		for k < len(r) && !(r[k] == ' ' && (k+1 >= len(r) || r[k+1] == ' ')) {
			k++
		}
		out = append(out, headerCell{start, k, strings.TrimSpace(string(r[start:k]))})
	}
	return out
}

// unitsUnderHeader joins a second header row of units to the names above them: each unit
// stands under one name ("Rate" over "(Mpps)"), and names without one keep their own
// ("Queues" over nothing). ok is false unless every cell of the lower row is a unit under a
// name of its own.
func unitsUnderHeader(upper, lower string) (string, bool) {
	top, low := headerCells(upper), headerCells(lower)
	if len(top) < 2 || len(low) == 0 || len(low) > len(top) {
		return "", false
	}
	names := make([]string, len(top))
	for k, t := range top {
		names[k] = t.text
	}
	taken := make([]bool, len(top))
	for _, l := range low {
		if !isUnit(l.text) {
			return "", false
		}
		under := -1
		for j, t := range top {
			if t.start < l.end && l.start < t.end {
				if under >= 0 {
					return "", false // a unit under two names: no column's own
				}
				under = j
			}
		}
		if under < 0 || taken[under] {
			return "", false
		}
		taken[under] = true
		names[under] += " (" + strings.Trim(l.text, "()[] ") + ")"
	}
	return strings.Join(names, "  "), true
}

// spanningHeader joins two header rows where the upper names some columns alone ("Type",
// "Flows": nothing under them) and spans others ("Latency (us)" over "P50  P90  P99", set
// over its group's middle or end, not its start): a lower cell under an upper one takes its
// name; a lower cell under none belongs to the upper name on its right where the one on its
// left has a lower cell of its own (a group's
// name is centred over the group), else to the one on its left. ok is false unless the joined
// row names more columns than the upper.
func spanningHeader(upper, lower string) (string, bool) {
	top, low := headerCells(upper), headerCells(lower)
	if len(top) < 2 || len(low) < 2 {
		return "", false
	}
	over := func(t, l headerCell) bool { return t.start < l.end && l.start < t.end }
	owner := make([]int, len(low))
	hasOwn := make([]bool, len(top))
	for k, l := range low {
		owner[k] = -1
		for j, t := range top {
			if over(t, l) {
				owner[k], hasOwn[j] = j, true
				break
			}
		}
	}
	for k, l := range low {
		if owner[k] >= 0 {
			continue
		}
		left, right := -1, -1
		for j, t := range top {
			if t.end <= l.start {
				left = j
			}
			if t.start >= l.end && right < 0 {
				right = j
			}
		}
		switch {
		case right >= 0 && (left < 0 || hasOwn[left]):
			owner[k] = right // the left name has its own column: a group's name on the right
		case left >= 0:
			owner[k] = left
		default:
			return "", false
		}
	}
	type named struct {
		at   int
		name string
	}
	var cols []named
	used := make([]bool, len(top))
	for k, l := range low {
		used[owner[k]] = true
		name := l.text + " " + top[owner[k]].text // "P50 Latency (us)": the group's unit last
		if isUnit(l.text) {
			name = top[owner[k]].text + " " + l.text // "Throughput (B/s)"
		}
		cols = append(cols, named{l.start, name})
	}
	for j, t := range top {
		if !used[j] {
			cols = append(cols, named{t.start, t.text})
		}
	}
	if len(cols) <= len(top) {
		return "", false
	}
	sort.SliceStable(cols, func(a, b int) bool { return cols[a].at < cols[b].at })
	names := make([]string, len(cols))
	for k, c := range cols {
		names[k] = c.name
	}
	return strings.Join(names, "  "), true
}
