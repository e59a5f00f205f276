package claims

import (
	"regexp"
	"strings"
)

// flent's summary (flent/formatters.py, SummaryFormatter, the default output of `flent`):
// a header of the statistics' names right-aligned in columns, "avg", "median", since 2021
// "99th %", then "# data pts"; then a row a data series, "NAME : MEAN MEDIAN [P99] UNITS N",
// each statistic with two decimals or N/A, the series' units after the last statistic and
// the count of data points last. The count is no result.
var (
	flentHeaderRe = regexp.MustCompile(`^\s*avg\s+median\s+(?:99th %\s+)?# data pts\s*$`)
	flentTitleRe  = regexp.MustCompile(`^\s*(?:[-*]\s+)?(?:Summary of\s+(.*?)|Title:\s+(.*?))\s*:?\s*$`)
	flentDateRe   = regexp.MustCompile(`\s+(?:test\s+)?run\s+from\s+\S+(?:\s+\S+)?$`)
	flentRowRe    = regexp.MustCompile(`^\s*(\S.*?)\s+:\s+((?:N/A|-?\d+(?:\.\d+)?)(?:\s+(?:N/A|-?\d+(?:\.\d+)?)){1,2})\s+(\S+)?\s*\d+\s*$`)
)

// flentSummary reads flent's summary whose header is lines[i]: a measurement for each series
// and statistic, keyed by both.
func flentSummary(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !flentHeaderRe.MatchString(lines[i].text) {
		return nil, i, ""
	}
	// The run's title, above the header: "Summary of tcp_1down test run from DATE" as flent
	// writes it, or as an author rewrote it, "Summary of rrul run 'cake':".
	title := ""
	for k := i - 1; k >= 0 && k >= i-2; k-- {
		if m := flentTitleRe.FindStringSubmatch(lines[k].text); m != nil {
			// The date of flent's own title differs from run to run: the test's name and
			// the title an author gave name the run.
			title = flentDateRe.ReplaceAllString(strings.TrimSpace(m[1]+m[2]), "")
			break
		}
	}
	stats := []string{"avg", "median"}
	if strings.Contains(lines[i].text, "99th") {
		stats = append(stats, "p99")
	}
	var out []measurement
	j := i + 1
	for ; j < len(lines); j++ {
		m := flentRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		values := strings.Fields(m[2])
		if len(values) != len(stats) {
			return nil, j + 1, "a row of flent's summary without a figure for each statistic of its header"
		}
		for k, v := range values {
			if v == "N/A" {
				continue
			}
			f, u, ok := parseValue(v + " " + m[3])
			if !ok {
				if f, ok = parseNumber(v); !ok {
					continue
				}
			}
			conds := copyConds(ctx.conditions)
			conds["series"], conds["statistic"] = strings.TrimSpace(m[1]), stats[k]
			out = append(out, measurement{tool: "flent", metric: metricOf(u), unit: u.norm, values: []float64{f}, state: ctx.state, label: title,
				conditions: conds, lines: []int{lines[j].n}})
		}
	}
	if j == i+1 {
		return nil, i, ""
	}
	return out, j, ""
}
