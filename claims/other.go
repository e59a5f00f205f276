package claims

import (
	"regexp"
	"strconv"
	"strings"
)

// stated is a change the text states: 18.1% (for IPv4), 6,144 %.
type stated struct {
	change float64
	family string // IPv4, IPv6, or "" for the text's one claim
	line   int
}

var (
	beforeAfterRe = regexp.MustCompile(`(?i)^\s*(before|after)\b[^:]*:\s*(.+?)\s*$`)
	percentLineRe = regexp.MustCompile(`(?i)^\s*(?:percent(?:age)?\s+)?(increase|improvement|gain|decrease|reduction|change)\s*:\s*([-+]?[\d,.]+)\s*%`)
	perFamilyRe   = regexp.MustCompile(`([-+]?\d+(?:\.\d+)?)\s?%\s+for\s+(IPv4|IPv6)`)
	proseRe       = regexp.MustCompile(`(?i)\b(increase[sd]?|improve[sd]?|improvement|faster|gain|boost(?:s|ed)?|decrease[sd]?|reduce[sd]?|reduction|lower|drop(?:s|ped)?|slower|regress(?:es|ed|ion)?)\b[^.%]{0,40}?([-+]?\d+(?:\.\d+)?)\s?%`)
	timesRe       = regexp.MustCompile(`(?i)\b(\d+(?:\.\d+)?)\s?(?:x|times)\s+(?:faster|higher|more|better)`)
	directionRe   = regexp.MustCompile(`(?i)\b(increase[sd]?|improve[sd]?|improvement|faster|lower latenc\w*|higher throughput|better)\b`)
	splitCellsRe  = regexp.MustCompile(`\s{2,}|\t+`)
	familyRe      = regexp.MustCompile(`IPv[46]`)
)

// other reads what starts at lines[i] besides netperf's classic blocks: netperf -O rows, a
// table with a header row, a "Before/After: N unit" line, and stated changes in prose. next
// is past what it took (i when it took nothing).
func (r *Report) other(lines []line, i int, ctx context) ([]measurement, int) {
	if ms, next := netperfRows(lines, i, ctx); next > i {
		return ms, next
	}
	if ms, next := nsperfTable(lines, i, ctx); next > i {
		return ms, next
	}
	if ms, next := table(lines, i, ctx); next > i {
		return ms, next
	}
	text := lines[i].text
	if m := percentLineRe.FindStringSubmatch(text); m != nil {
		if v, ok := parseNumber(strings.TrimSuffix(m[2], ".")); ok {
			r.stated = append(r.stated, stated{change: round(sign(m[1]) * v / 100), line: lines[i].n})
		}
		return nil, i + 1
	}
	if m := beforeAfterRe.FindStringSubmatch(text); m != nil {
		if v, u, ok := parseValue(m[2]); ok && u.kind != "percent" {
			return []measurement{{metric: metricOf(u), unit: u.norm, values: []float64{round(v)}, state: strings.ToLower(m[1]),
				conditions: ctx.conditions, lines: []int{lines[i].n}}}, i + 1
		}
	}
	return nil, i
}

// paragraphChanges collects the changes the prose states, a paragraph at a time (a sentence
// may run over lines: "by 18.1%\nfor IPv4 and 34.7% for IPv6"), each with the line its
// number is on, and the directions a paragraph names without a number.
func (r *Report) paragraphChanges(lines []line) {
	for start := 0; start < len(lines); {
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end].text) != "" && !percentLineRe.MatchString(lines[end].text) {
			end++
		}
		if end == start {
			start++
			continue
		}
		r.proseChanges(lines[start:end])
		start = end
	}
}

// proseChanges reads one paragraph.
func (r *Report) proseChanges(par []line) {
	texts := make([]string, len(par))
	for i, l := range par {
		texts[i] = strings.TrimSpace(l.text)
	}
	text := strings.Join(texts, " ")
	lineOf := func(offset int) int { // the input line of a byte offset in text
		for i, t := range texts {
			if offset <= len(t) {
				return par[i].n
			}
			offset -= len(t) + 1
		}
		return par[len(par)-1].n
	}
	if ms := perFamilyRe.FindAllStringSubmatchIndex(text, -1); len(ms) > 0 {
		for _, m := range ms {
			v, _ := strconv.ParseFloat(text[m[2]:m[3]], 64)
			r.stated = append(r.stated, stated{change: round(v / 100), family: text[m[4]:m[5]], line: lineOf(m[2])})
		}
		return
	}
	if m := proseRe.FindStringSubmatchIndex(text); m != nil {
		v, _ := strconv.ParseFloat(text[m[4]:m[5]], 64)
		r.stated = append(r.stated, stated{change: round(sign(text[m[2]:m[3]]) * v / 100), line: lineOf(m[4])})
		return
	}
	if m := timesRe.FindStringSubmatchIndex(text); m != nil {
		v, _ := strconv.ParseFloat(text[m[2]:m[3]], 64)
		r.stated = append(r.stated, stated{change: v - 1, line: lineOf(m[2])})
		return
	}
	if directionRe.MatchString(text) && !strings.ContainsAny(text, "%") && len(par) <= 3 {
		r.Describes = append(r.Describes, text)
	}
}

func sign(word string) float64 {
	w := strings.ToLower(word)
	if strings.HasPrefix(w, "decrease") || strings.HasPrefix(w, "reduc") || w == "lower" || strings.HasPrefix(w, "drop") || w == "slower" || strings.HasPrefix(w, "regress") {
		return -1
	}
	return 1
}

func metricOf(u unit) string {
	switch u.kind {
	case "trans":
		return "transaction_rate"
	case "time":
		return "latency"
	}
	return "throughput"
}

// table reads a table with a header row at lines[i]: columns apart by two or more spaces,
// rows of a label and values with units; a column of "a% / b%" is the two sides' CVs. The
// first value column is before, the second after; a row's label names its condition.
func table(lines []line, i int, ctx context) ([]measurement, int) {
	header := splitCellsRe.Split(strings.TrimSpace(lines[i].text), -1)
	if len(header) < 3 {
		return nil, i
	}
	var out []measurement
	j := i + 1
	for ; j < len(lines); j++ {
		cells := splitCellsRe.Split(strings.TrimSpace(lines[j].text), -1)
		if len(cells) != len(header) {
			break
		}
		row := tableRow(header, cells, lines[j].n, ctx)
		if row == nil {
			break
		}
		out = append(out, row...)
	}
	if len(out) == 0 {
		return nil, i
	}
	return out, j
}

// tableRow reads one row: the value columns as measurements, a CV column into them.
func tableRow(header, cells []string, n int, ctx context) []measurement {
	var out []measurement
	var cvs []float64
	for k := 1; k < len(cells); k++ {
		if v, u, ok := parseValue(cells[k]); ok && u.kind != "percent" {
			conds := map[string]string{}
			for key, val := range ctx.conditions {
				conds[key] = val
			}
			if fam := familyRe.FindString(cells[0]); fam != "" {
				conds["family"] = fam
			} else {
				conds["row"] = cells[0]
			}
			out = append(out, measurement{metric: metricOf(u), unit: u.norm, values: []float64{round(v)}, label: header[k], conditions: conds, lines: []int{n}})
			continue
		}
		for _, part := range strings.Split(cells[k], "/") {
			if v, u, ok := parseValue(part); ok && u.kind == "percent" {
				cvs = append(cvs, round(v/100))
			}
		}
	}
	if len(out) != 2 {
		return nil
	}
	out[0].state, out[1].state = "before", "after"
	if len(cvs) == 2 {
		out[0].cv, out[1].cv = &cvs[0], &cvs[1]
	}
	return out
}
