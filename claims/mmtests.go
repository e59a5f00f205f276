package claims

import (
	"regexp"
	"strings"
)

// mmtests' comparison report (compare-kernels.sh, its Compare.pm and PrintGeneric.pm): one
// column per test run, the first the base. The header splits each run's name at its first
// '-' over two rows (the kernel version over the rest; authors often leave one row of
// their own names); each row is a statistic and a case, then for each run its figure and
// the change from the base in parentheses, the parentheses becoming stars where the change
// is significant:
//
//	                           6.13.0                6.13.0
//	                          vanilla         this-change
//	Hmean     send-64     181.20 (  0.00%)      188.75 *  4.17%*
//
// The means (Amean, Hmean, Gmean, Mean) are the report's figures of a case; Min, Max, the
// quartiles, Stddev, CoeffVar and the trimmed means (BAmean-50) describe the spread of its
// samples and are no claims. With three runs or more, the base is compared with the last.
// mmtests prints no unit: the title over the report may write one ("hackbench (seconds)"),
// and names the benchmark.
var (
	// mmtestsCellRe is one run's cell: its figure and its change from the base.
	mmtestsCellRe = regexp.MustCompile(`(-?\d+(?:\.\d+)?)\s+[(*]\s*(?:[-+]?\d+(?:\.\d+)?|-?nan|-?inf)%[)*]`)
	// mmtestsRowRe is a row: a statistic, a case and two cells or more, the first the base's
	// (a change of 0.00%, or nan where the base is 0).
	mmtestsRowRe  = regexp.MustCompile(`^([A-Z][A-Za-z]*(?:-\d+)?)\s+(\S+)\s+(-?\d+(?:\.\d+)?\s+[(*]\s*(?:0\.00|-?nan)%[)*](?:\s+-?\d+(?:\.\d+)?\s+[(*]\s*(?:[-+]?\d+(?:\.\d+)?|-?nan|-?inf)%[)*])+)\s*$`)
	mmtestsMeanRe = regexp.MustCompile(`^(?:[AHG]mean|Mean)$`)
	// mmtestsMonitorRe is a row of the report's second part, under the same header: the
	// harness's own time and the system's counters over the whole test ("Duration User",
	// "Ops Minor Faults"), each run's figure without a change. They describe the test run,
	// not what it measured.
	mmtestsMonitorRe = regexp.MustCompile(`^(?:Duration|Ops)\s+\S.*?(?:\s+-?\d+(?:\.\d+)?)+\s*$`)
	// mmtestsBenchRe is the benchmark a title names first: netperf-udp, hackbench-process-pipes.
	mmtestsBenchRe = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$`)
)

// maxMMTestsRows bounds a report: a comparison has tens of rows per benchmark.
const maxMMTestsRows = 2000

// mmtestsReport reads the report whose first line (a header row, or its first row where the
// header was left out) is lines[i].
func mmtestsReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	first, names := mmtestsHeader(lines, i)
	if first == i && names == nil {
		if next := mmtestsMonitor(lines, i); next > i {
			return nil, next, ""
		}
	}
	if first >= len(lines) || !mmtestsRowRe.MatchString(strings.TrimSpace(lines[first].text)) {
		return nil, i, ""
	}
	bench, unitName, unitKind, factor := mmtestsTitle(lines, i)
	var out []measurement
	j := first
	for ; j < len(lines) && j-first < maxMMTestsRows; j++ {
		m := mmtestsRowRe.FindStringSubmatch(strings.TrimSpace(lines[j].text))
		if m == nil {
			break
		}
		cells := mmtestsCellRe.FindAllStringSubmatch(m[3], -1)
		if !mmtestsMeanRe.MatchString(m[1]) || len(cells) < 2 || names != nil && len(cells) != len(names) {
			continue
		}
		conds := copyConds(ctx.conditions)
		conds["case"] = m[2]
		// What the row measures: what its unit measures, or else the benchmark, or else the case.
		metric := metricName(m[2])
		if unitName != "" {
			metric = metricOf(unit{kind: unitKind, norm: unitName})
		} else if bench != "" {
			metric = metricName(bench)
		}
		for _, side := range []struct {
			state string
			col   int
		}{{"before", 0}, {"after", len(cells) - 1}} {
			v, ok := parseNumber(cells[side.col][1])
			if !ok {
				continue
			}
			label := m[1] + " " + m[2]
			if names != nil {
				label = names[side.col] + ": " + label
			}
			out = append(out, measurement{tool: "mmtests", metric: metric, unit: unitName, values: []float64{round(v * factor)},
				state: side.state, label: label, conditions: conds, lines: []int{lines[j].n}})
		}
	}
	return out, j, ""
}

// mmtestsHeader finds the header starting at lines[i]: one or two rows of the runs' names
// over a row of the report. It returns the report's first row and the runs' names (the two
// rows' words joined by '-', as the names were before mmtests split them), or i and nil
// where lines[i] is no header.
func mmtestsHeader(lines []line, i int) (int, []string) {
	cellsOf := func(k int) int {
		if k >= len(lines) {
			return -1
		}
		m := mmtestsRowRe.FindStringSubmatch(strings.TrimSpace(lines[k].text))
		if m == nil {
			return -1
		}
		return len(mmtestsCellRe.FindAllString(m[3], -1))
	}
	top := strings.Fields(lines[i].text)
	if len(top) < 2 || cellsOf(i) > 0 {
		return i, nil
	}
	if cellsOf(i+1) == len(top) {
		return i + 1, top
	}
	if i+1 < len(lines) {
		if bottom := strings.Fields(lines[i+1].text); len(bottom) == len(top) && cellsOf(i+2) == len(top) {
			names := make([]string, len(top))
			for k := range top {
				names[k] = top[k] + "-" + bottom[k]
			}
			return i + 2, names
		}
	}
	return i, nil
}

// mmtestsMonitor skips the report's second part (mmtestsMonitorRe) starting at its header,
// lines[i]: it returns the line after it, or i where none starts there.
func mmtestsMonitor(lines []line, i int) int {
	if i+2 >= len(lines) || !mmtestsMonitorRe.MatchString(strings.TrimSpace(lines[i+2].text)) {
		return i
	}
	top, bottom := strings.Fields(lines[i].text), strings.Fields(lines[i+1].text)
	if len(top) < 2 || len(top) != len(bottom) {
		return i
	}
	j := i + 2
	for j < len(lines) && j-i < maxMMTestsRows && mmtestsMonitorRe.MatchString(strings.TrimSpace(lines[j].text)) && len(strings.Fields(lines[j].text)) >= len(top)+2 {
		j++
	}
	return j
}

// mmtestsTitle reads the title over the report starting at lines[i] (the paragraph just
// above it, of up to three lines): the benchmark its first word names, and a unit one of its
// words writes ("(seconds, lower is better)"), with its kind and the factor to normalise it.
func mmtestsTitle(lines []line, i int) (bench, unitName, unitKind string, factor float64) {
	k := i - 1
	for k >= 0 && i-k <= 2 && strings.TrimSpace(lines[k].text) == "" {
		k--
	}
	var title []string
	for ; k >= 0 && len(title) <= 3 && strings.TrimSpace(lines[k].text) != ""; k-- {
		title = append([]string{lines[k].text}, title...)
	}
	if len(title) == 0 || len(title) > 3 {
		return "", "", "", 1
	}
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool {
			return r == ' ' || r == '\t' || r == ',' || r == '(' || r == ')' || r == ';' || r == ':'
		})
	}
	if words := split(title[0]); len(words) > 0 && mmtestsBenchRe.MatchString(words[0]) {
		bench = words[0]
	}
	for _, w := range split(strings.Join(title, " ")) {
		if u, ok := lookupUnit(w); ok {
			return bench, u.norm, u.kind, u.factor
		}
	}
	return bench, "", "", 1
}
