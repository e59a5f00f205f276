package claims

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// runSeries joins the claims of numbered runs into one claim per measurement, each side the
// runs' series: lines that each compare the states in one run ("run 1: base 9.24 Gbit/s
// patched 9.81 Gbit/s", "run 2: 9.19 -> 9.79 Gbit/s") are one measurement repeated, not
// a case each. A run's name is its row's label, or, for figures without a unit, the label the
// claim was named by ("run_1").
func (r *Report) runSeries(lines []line) {
	run := func(c Claim) string { return runOf(c, lines) }
	if !slices.ContainsFunc(r.Claims, func(c Claim) bool { return run(c) != "" }) {
		return
	}
	var out []Claim
	for i := 0; i < len(r.Claims); {
		j := i + 1
		if run(r.Claims[i]) != "" {
			for j < len(r.Claims) && run(r.Claims[j]) != "" && sameButRun(r.Claims[i], r.Claims[j]) && nextRun(r.Claims[j-1], r.Claims[j], run) {
				j++
			}
		}
		if j-i < 2 {
			out = append(out, r.Claims[i])
			i++
			continue
		}
		out = append(out, joinRuns(r.Claims[i:j], run(r.Claims[i])))
		i = j
	}
	r.Claims = out
}

// runOf is the run a claim is of, or "": its row's name, the name its figures without a
// unit were given, or the run's number that starts its one line ("run 2: ...", "#2  7.88 ->").
func runOf(c Claim, lines []line) string {
	if row := c.Conditions["row"]; runColumnRe.MatchString(strings.TrimSpace(row)) {
		return row
	}
	if name := strings.ReplaceAll(c.Metric+c.Quantity, "_", " "); c.Unit == "" && runColumnRe.MatchString(name) {
		return name
	}
	if len(c.Lines) == 1 {
		for _, l := range lines {
			if l.n == c.Lines[0] {
				if m := runLeadRe.FindStringSubmatch(l.text); m != nil {
					return m[1]
				}
			}
		}
	}
	return ""
}

// runLeadRe is a line that starts with a run's number: "run 2:", "#3 ", "iteration 4)".
var runLeadRe = regexp.MustCompile(`(?i)^\s*((?:run|trial|iter(?:ation)?|try)\s*[#-]?\d{1,3}|#\d{1,3})[.:)]?\s`)

// nextRun: b is the run after a's: its number higher, its lines right after a's (a run's
// numbers starting again, or an empty line between, start another series).
func nextRun(a, b Claim, run func(Claim) string) bool {
	number := func(c Claim) int {
		n, _ := strconv.Atoi(digitRunRe.FindString(run(c)))
		return n
	}
	return number(b) > number(a) && slices.Min(b.Lines)-slices.Max(a.Lines) == 1
}

// sameButRun: two claims of runs measure the same thing in the same conditions.
func sameButRun(a, b Claim) bool {
	rest := func(c Claim) map[string]string {
		m := maps.Clone(c.Conditions)
		delete(m, "row")
		return m
	}
	metric := func(c Claim) string {
		if c.Conditions["row"] == "" {
			return "" // the run's name stands for the metric
		}
		return c.Metric + "/" + c.Quantity
	}
	return a.Tool == b.Tool && a.Unit == b.Unit && metric(a) == metric(b) && maps.Equal(rest(a), rest(b))
}

// joinRuns is one claim whose sides are the runs' figures.
func joinRuns(runs []Claim, firstRun string) Claim {
	c := runs[0]
	c.Conditions = maps.Clone(c.Conditions)
	delete(c.Conditions, "row")
	if len(c.Conditions) == 0 {
		c.Conditions = nil
	}
	if c.Unit == "" && firstRun == strings.ReplaceAll(c.Metric+c.Quantity, "_", " ") {
		c.Metric, c.Quantity = "", "value" // declare's name for a figure without a unit
	}
	var before, after []float64
	var lines []int
	for _, run := range runs {
		before = append(before, run.Before.Values...)
		after = append(after, run.After.Values...)
		lines = append(lines, run.Lines...)
	}
	c.Before = Values{Values: before, Median: round(median(before))}
	c.After = Values{Values: after, Median: round(median(after))}
	c.Change = 0
	if c.Before.Median != 0 {
		c.Change = math.Round((c.After.Median/c.Before.Median-1)*1e4) / 1e4
	}
	sort.Ints(lines)
	c.Lines = slices.Compact(lines)
	c.Stated, c.Mismatch = nil, false
	return c
}
