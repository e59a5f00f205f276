package claims

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A latency the text gives with the statistic it is ("p99 went from 48us to 31us", "median
// RTT: 61.2us (vanilla), 55.8us (patched)", under "average latency:") is the metric the tools
// report of it (p99_latency, p50_latency, mean_latency, min_latency, max_latency), which
// nsperf measures; a latency alone is not.

// latencyStatRe is a statistic of a latency in words: a percentile ("p99", "P99.9", "99th
// percentile", "99.9th"), the median, the mean, the least or the most.
var latencyStatRe = regexp.MustCompile(`(?i)\bp(\d{2}(?:\.\d{1,3})?|9{3,5})\b|\b(\d{2}(?:\.\d{1,3})?)(?:th|%)(?:[ -]percentile)?\b|\b(median|mean|average|avg|min|minimum|max|maximum)\b`)

// latencyStats give the time claims whose lines, or the heading right above them, name one
// statistic of a latency the metric of that statistic, where a tool declares it.
func (r *Report) latencyStats(lines []line) {
	for k := range r.Claims {
		c := &r.Claims[k]
		if c.Unit != "us" || (c.Metric != "latency" && c.Quantity != "latency") || len(c.Lines) == 0 {
			continue
		}
		if key, name := conditionStat(c.Conditions); name != "" {
			// A table's column or row of one statistic: its cells are that statistic, whatever
			// else the line carries.
			c.Metric, c.Quantity = name, ""
			delete(c.Conditions, key)
			continue
		}
		if slices.ContainsFunc(c.Lines, func(n int) bool { return otherClaimsLine(r.Claims, k, n) }) {
			// Another claim's figures on its lines: only the word right before each of its own
			// figures says whose statistic it is ("avg 182.3 us, p99 301 us").
			if name := cmp.Or(statBeforeFigures(*c, lines), statInClause(*c, lines)); name != "" {
				c.Metric, c.Quantity = name, ""
			}
			continue
		}
		var text []string
		for _, l := range lines {
			if slices.Contains(c.Lines, l.n) {
				text = append(text, figuresClause(l.text))
			}
		}
		text = append(text, headingOver(lines, slices.Min(c.Lines)))
		name := ""
		for _, m := range latencyStatRe.FindAllStringSubmatch(strings.Join(text, " "), -1) {
			n := statMetric(m)
			if n == "" || name != "" && n != name {
				name = "-" // two statistics: which is whose is not said here
				break
			}
			name = n
		}
		if _, ok := declared()[name]; ok {
			c.Metric, c.Quantity = name, ""
		}
	}
}

// conditionStat is the one condition whose whole value names a statistic of a latency that a
// tool declares ("P99", "50th", "median"), and that statistic's metric; "" for none.
func conditionStat(conditions map[string]string) (key, metric string) {
	found := 0
	for k, v := range conditions {
		v = strings.TrimSpace(latencyNameRe.ReplaceAllString(v, " ")) // "p99 latency" is the p99
		m := latencyStatRe.FindStringSubmatch(v)
		if m == nil || strings.TrimSpace(v) != m[0] {
			continue
		}
		if name := statMetric(m); name != "" {
			if _, ok := declared()[name]; ok {
				key, metric = k, name
				found++
			}
		}
	}
	if found != 1 {
		return "", "" // two statistics: which the cells are is not said
	}
	return key, metric
}

// latencyNameRe is the word of a column's or a row's name that says it is a latency, beside
// the statistic: "p99 latency", "avg lat", "RTT median".
var latencyNameRe = regexp.MustCompile(`(?i)\b(?:latency|lat|rtt)\b`)

// statBeforeFigures is the metric of the statistic named by the word right before each of a
// claim's two figures on its lines ("p99 301 us" and "p99 240 us"), or before the word of a
// latency there ("p99 latency 301 us", "avg RTT 41 us"), the same for both and one
// a tool declares; "" otherwise, and on a line of an assignment, whose name is what it
// measures (a function's average time is no request's latency).
func statBeforeFigures(c Claim, lines []line) string {
	name := ""
	for _, v := range []Values{c.Before, c.After} {
		if len(v.Values) != 1 {
			return ""
		}
		figure := strconv.FormatFloat(v.Values[0], 'f', -1, 64)
		found := ""
		for _, l := range lines {
			if !slices.Contains(c.Lines, l.n) {
				continue
			}
			if strings.Contains(l.text, "=") {
				return "" // "poll = 8078553.0 us / 190999.0 hits = AVG 42.3 us": the name is the measure
			}
			i := strings.Index(l.text, figure)
			if i < 0 || i+len(figure) < len(l.text) && l.text[i+len(figure)] >= '0' && l.text[i+len(figure)] <= '9' {
				continue
			}
			words := strings.Fields(strings.TrimRight(l.text[:i], " =:"))
			if len(words) > 1 && latencyNameRe.FindString(words[len(words)-1]) == strings.Trim(words[len(words)-1], ",;:(") {
				words = words[:len(words)-1] // "p99 latency 410 usec": the statistic before the word of a latency
			}
			if len(words) == 0 {
				return ""
			}
			m := latencyStatRe.FindStringSubmatch(words[len(words)-1])
			if m == nil || m[0] != strings.Trim(words[len(words)-1], ",;:(") {
				return ""
			}
			found = statMetric(m)
			break
		}
		if found == "" || name != "" && found != name {
			return ""
		}
		name = found
	}
	if _, ok := declared()[name]; !ok {
		return ""
	}
	return name
}

// clauseBreakRe ends a clause of a sentence that carries several claims: "... per second and
// cuts p99 latency (from 52 us to 46 us)".
var clauseBreakRe = regexp.MustCompile(`(?i),|;|\band\b|\bwhile\b|\bbut\b`)

// statInClause is the metric of the one statistic of a latency named in the clause that holds
// the claim's first figure, on a line with other claims' figures; "" where the clause names
// none, or more than one.
func statInClause(c Claim, lines []line) string {
	if len(c.Before.Values) != 1 || len(c.Lines) != 1 {
		return ""
	}
	figure := strconv.FormatFloat(c.Before.Values[0], 'f', -1, 64)
	for _, l := range lines {
		if l.n != c.Lines[0] {
			continue
		}
		i := strings.Index(l.text, figure)
		if i < 0 || strings.Count(l.text, figure) != 1 {
			return ""
		}
		clause := l.text[:i]
		if b := clauseBreakRe.FindAllStringIndex(clause, -1); len(b) > 0 {
			clause = clause[b[len(b)-1][1]:]
		}
		ms := latencyStatRe.FindAllStringSubmatch(clause, -1)
		if len(ms) != 1 {
			return ""
		}
		if name := statMetric(ms[0]); name != "" {
			if _, ok := declared()[name]; ok {
				return name
			}
		}
	}
	return ""
}

// statMetric is the metric of a latencyStatRe match: p99_latency, p999_latency,
// p50_latency, mean_latency, min_latency, max_latency.
func statMetric(m []string) string {
	switch word := strings.ToLower(m[3]); {
	case m[1] != "":
		return "p" + strings.ReplaceAll(m[1], ".", "") + "_latency"
	case m[2] != "":
		return "p" + strings.ReplaceAll(m[2], ".", "") + "_latency"
	case word == "median":
		return "p50_latency"
	case word == "mean" || word == "average" || word == "avg":
		return "mean_latency"
	case strings.HasPrefix(word, "min"):
		return "min_latency"
	case strings.HasPrefix(word, "max"):
		return "max_latency"
	}
	return ""
}

// figuresClause is a line up to the end of the clause of its first figure (a full stop or a
// semicolon after it): "48 us before and 31 us after; the 99th is unchanged" is of the mean.
func figuresClause(text string) string { return upToAfterFigure(text, ". ", "; ") }
