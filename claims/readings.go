package claims

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// A line longer than maxReadLine, or with more than maxFiguresPerLine figures, is output
// no one reads as a result: it gives no readings (and costs no memory per figure).
const (
	maxReadLine       = 1000
	maxFiguresPerLine = 16
)

// reading is one figure a line gives of one state, before pairing: the generic reader's
// unit of work. Its key says what it measures within its block (the line's label or shape
// and the figure's place in the line), so that the same key in two states is a comparison.
type reading struct {
	key    string
	metric string
	unit   string
	value  float64
	side   string // before, after, "?" (a state no word decides)
	state  string // the state's name as the text writes it
	line   int    // input line
	idx    int    // index in the message's lines
	// named: a figure a tool printed under its own name (nstat's counters, neper's and
	// sockperf's name=value, ping's rtt): what it measures is that name, never one of
	// nsperf's metrics by coincidence of words.
	named bool
	// conds are what names the reading besides its key's text: a table's column and row.
	conds map[string]string
	// summary is the central figure the author printed after a row of runs ("... avg:
	// 150.85"), the row's runs each a reading; summarized says there is one.
	summary    float64
	summarized bool
}

// block is what the text has said of the figures that follow: the state a heading or a
// label named, and the block they are in (the last condition heading or command).
type block struct {
	side, state string
	cond        string
	// round is the side and block of the state heading that started the current
	// comparison: a heading of the other side continues it, in the block it started in
	// (what a sub-heading of the first state set does not carry over).
	roundSide, roundCond string
	// lead is the text of the sentence before the comparison being read, on earlier lines
	// or before an earlier comparison of its line, each comparison in it cut out: a change
	// it states orients a "vs" ("improves UDP_RR by 4% (61.2k vs 58.8k trans/s)\nand
	// TCP_STREAM by 2% (36.1 vs 35.4 Gbit/s)").
	lead string
	// then is the side of the paragraph after this one, where a heading names both states in
	// order ("before and after the patch:" over two paragraphs of the same labels); thenState
	// its word. armed: this paragraph has figures, so the next one is the other state's.
	then, thenState string
	armed           bool
	// thenAt is the line (its number) where the other state starts when the heading's
	// paragraph is two bare figures, one line each (bareFigurePair); 0 for none.
	thenAt int
}

// itemMarker is what starts an item of a list before its label: a bullet, a number or a
// letter with its stop or bracket ("- ", "2. ", "2) ", "2 - ", "[c] ", "(b) ", "b) ").
const itemMarker = `[-*•]\s+|\d+[.)]\s+|\d+\s+-\s+|\[[a-z0-9]{1,2}\]\s+|\([a-z0-9]{1,2}\)\s+|[a-z]\)\s+`

var (
	// labelRe is "label: rest", "label - rest", "label = rest", with a bullet, a number or a
	// letter before the label ("- ", "2) ", "2 - ", "[c] ", "(b) ", "b) "): "- Before the change:
	// 2.41Mpps", "Rx goodput - 812 Mbps", "[b] with the cache: 1.83 Mpps" (a marker the prose
	// refers to the line by).
	labelRe = regexp.MustCompile(`^\s*(?:` + itemMarker + `)?([^:]{1,80}?)\s*(?::\s|:$|\s[-=]\s|\t+)\s*(.*)$`)
	// labelColonRe is labelRe's colon alone: where a line has "label: rest", a tab or a dash
	// inside the label does not end it ("After\t(ring=512): 3.2 Gbps").
	labelColonRe = regexp.MustCompile(`^\s*(?:` + itemMarker + `)?([^:]{1,80}?)\s*(?::\s|:$)\s*(.*)$`)
	// counterRe is a counter line of nstat or /proc: "TcpOutSegs   20481733   0.0".
	counterRe = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9_.]{2,60})\s+([\d,]+(?:\.\d+)?)(?:\s+[\d.]+)?\s*(?:#.*)?$`)
	// perfStatRe is a perf stat line: "2,507,118  context-switches  # 31022.410 M/sec",
	// "1,203 L1-dcache-load-misses", "12.5 msec task-clock", older perf's "86870.6 task-clock
	// (msec)", an event with its modifier ("cycles:u"). A capital starts only a hyphenated
	// event's name (LLC-loads): "41.5 Gbps" is a figure and its unit.
	perfStatRe = regexp.MustCompile(`^\s*([\d,]+(?:\.\d+)?)\s+(?:msec\s+)?((?:[a-z][\w-]*|[A-Za-z]\w*-[\w-]+)(?::[ukhGHp]+)?)\s*(?:\(msec\))?\s*(?:#.*)?$`)
	// bareTotalRe is a line of one number: what super_netperf prints.
	bareTotalRe = regexp.MustCompile(`^\s*([\d,]+(?:\.\d+)?)\s*$`)
	// profileRe is a perf report/top line: "3.07%  [kernel]  [k] tcp_ack".
	profileRe = regexp.MustCompile(`^\s*([\d.]+)%\s+.*\[[k.]\]\s+(\S+)\s*$`)
	// histogramRe is a bpftrace histogram bucket: "[128, 256)   1044087 |@@@|".
	histogramRe = regexp.MustCompile(`\|@*\s*\|\s*$`)
	arrowRe     = regexp.MustCompile(`(^|[^\w/.^*x-])~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%/]+(?:/s(?:ec)?)?)?\s*(->|=>|→|-->|\s(?:vs\.?|versus)\s)\s*~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%/]+(?:/s(?:ec)?)?)?`)
	// iperf3IntervalRe is a row of iperf3's report; only its summary rows (sender, receiver)
	// are a run's result.
	iperf3IntervalRe = regexp.MustCompile(`^\s*\[\s*(?:\d+|SUM)\](?:\[[\w-]+\])?\s+([\d.]+)-\s*([\d.]+)\s+sec\b`)
	iperf3EndRe      = regexp.MustCompile(`\b(sender|receiver)\s*$`)
	// commentRe is a comment a tool prints after its figure: perf stat's and nstat's "# ...".
	commentRe = regexp.MustCompile(`\s#\s.*$`)
	// statedParenRe is a change stated beside a figure: "9.12 Mpps (+6.3%)".
	statedParenRe = regexp.MustCompile(`\(\s*[-+~]?[\d.]+\s?%\s*\)`)
	// uname -a output: the kernel release names the tree a run was on.
	unameRe = regexp.MustCompile(`^\s*Linux\s+\S+\s+(\d+\.\d+\S*)\s+#\d+`)
)

// lineReadings reads the figures of line i under b: an arrow ("X -> Y") is a claim of its
// own (returned as a pair); a labelled line, a tool's output line or a counter gives
// readings of b's state (or of the state its label names).
// stateLeadRe is a line that starts with a few words and goes on with a figure, no colon
// between: a label when its words name a state ("- base      8.42 Mpps"); a word may be the
// patches of a series a step has ("v6.13-rc1 + 1-2/2   2.36 Mpps").
var stateLeadRe = regexp.MustCompile(`^\s*(?:[-*•]\s+|\d+[.)]\s+)?([A-Za-z][\w+./-]*(?:\s(?:[A-Za-z+][\w+./-]*|\d{1,2}(?:-\d{1,2})?/\d{1,2})){0,3})\s+(~?\d.*)$`)

// stateAfterFigureRe is a line of one figure with its unit, then the name of its state ("21.3
// Gbit/s without the patch", "1.91 Mpps (baseline)", "4.2 us - patched"): the figure first,
// as some authors list the results of each state, one a line.
var stateAfterFigureRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?(~?\d[\d.,]*\s?[A-Za-zµ%][A-Za-zµ%/]*)\s+(?:[-–—:]\s+)?\(?([A-Za-z][\w+./-]*(?:\s[A-Za-z+][\w+./-]*){0,4})\)?\.?\s*$`)

// settingsTailRe is a list of a test's settings after a figure, each a name and a whole
// number, apart by commas: ", clients 8, runs 5".
var settingsTailRe = regexp.MustCompile(`(?:,\s*[A-Za-z][A-Za-z_ -]{0,24}?\s+\d+)+\s*$`)

// trailingNoteRe is a note in parentheses or brackets at the end of a line, which may name
// another line by its marker inside ("(+3.1% over [b])").
var trailingNoteRe = regexp.MustCompile(`\s*[(\[](?:[^()\[\]]|\[[^()\[\]]*\]|\([^()\[\]]*\))*[)\]]\s*$`)

// trimAnnotations takes the notes an author adds after a figure off the end of a line ("(+6.3%,
// p=0.002)", "[n=5]"), so that the figure keys like its other state's, which has none; a
// line that is only a note keeps it.
func trimAnnotations(rest string) string {
	for k := 0; k < 4; k++ {
		loc := trailingNoteRe.FindStringIndex(rest)
		if loc == nil {
			break
		}
		note, t := rest[loc[0]:], rest[:loc[0]]
		// A note of statistics, not a condition ("(1 flow)") nor a figure in other units.
		if !statNoteRe.MatchString(note) || unitFigures(note) > 0 || len(readFigures(t).figures) == 0 {
			break
		}
		rest = t
	}
	return rest
}

// unitFigures counts a text's figures with a unit other than percent.
func unitFigures(s string) int {
	n := 0
	for _, f := range readFigures(s).measured() {
		if f.unit.kind != "percent" {
			n++
		}
	}
	return n
}

// statNoteRe is what a note of statistics has: a change in percent, a p-value, a sample
// count ("n=5", "3 runs", "median of 10"), a spread, a factor of change ("~5.5x fewer",
// "1.3x").
var statNoteRe = regexp.MustCompile(`(?i)%|\b\d+(?:\.\d+)?\s?x\b|\bp\s*[=<]|\bn\s*=|±|\+-|stddev|\bsd\b|\bcv\b|\b\d+\s+(?:runs?|iterations?|samples?|trials?|rounds?)\b|\b(?:avg|average|mean|median|best)\s+of\s+\d+`)

// runOrdinalRe is a run's number in a label ("run #2", "#3", "iteration 4"): runs of one
// state are one series, so the number is no part of the key.
var runOrdinalRe = regexp.MustCompile(`(?i)(?:^|\s)(?:(?:run|iteration|iter|trial|try|round|sample|test)\s*#?\s*\d+|#\d+)\s*$`)

// wholeRun: the interval line at lines[i] is iperf2's summary of a run, which says neither
// sender nor receiver: it starts at 0 and spans more than the interval line before it
// ("0.0-60.0 sec" after "58.0-60.0 sec").
func wholeRun(lines []line, i int) bool {
	span := func(t string) (start, length float64, ok bool) {
		m := iperf3IntervalRe.FindStringSubmatch(t)
		if m == nil {
			return 0, 0, false
		}
		a, err1 := strconv.ParseFloat(m[1], 64)
		b, err2 := strconv.ParseFloat(m[2], 64)
		return a, b - a, err1 == nil && err2 == nil
	}
	start, length, ok := span(lines[i].text)
	if !ok || start != 0 || i == 0 {
		return false
	}
	_, before, ok := span(lines[i-1].text)
	return ok && length > before
}

// nameAbove is the label of a line that is one figure alone, given by indentation: a short
// line without figures right above it, indented less ("    TCP_RR" / "        28110 trans/s").
func nameAbove(lines []line, i int) string {
	sh := readFigures(lines[i].text)
	if i == 0 || len(sh.figures) != 1 || len(strings.Fields(sh.shape)) != 1 {
		return ""
	}
	above := lines[i-1].text
	name := strings.TrimSpace(above)
	if name == "" || len(strings.Fields(name)) > 4 || len(readFigures(above).figures) > 0 || strings.HasSuffix(name, ":") {
		return ""
	}
	if indent(above) >= indent(lines[i].text) {
		return ""
	}
	return name
}

func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// lineLabel is a line's label (with letters in it, no "[...]" bucket) and what follows it;
// "" and the whole line where it has none. A state's name followed by a figure is a label
// without a colon ("- patched  9.31 Mpps").
func lineLabel(text string) (label, rest string) {
	if m := runNumberLeadRe.FindStringSubmatch(text); m != nil && len(readFigures(m[2]).figures) > 0 {
		// "#3 before 61230 after 64912": a run's number labels what its line compares, as
		// "run 3:" would
		return "run " + strings.TrimPrefix(m[1], "#"), m[2]
	}
	if m := ordinalDashRe.FindStringSubmatch(text); m != nil && len(readFigures(m[1]).figures) > 0 {
		// "1 - baseline   9.24 Gbit/s": a list numbered with dashes; the number is the
		// item's, the figure comes after its name
		text = m[1]
	}
	if m := valueDashLabelRe.FindStringSubmatch(text); m != nil && len(readFigures(m[2]).figures) == 0 {
		// before the label at a dash: "4.2 us - baseline" is a figure and its name, not a
		// label "4.2 us"
		return strings.TrimSpace(m[2]), m[1]
	}
	if m := labelMatch(text); m != nil && (strings.ContainsAny(m[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") || releaseLabel(m[1])) && !strings.HasPrefix(strings.TrimSpace(m[1]), "[") {
		return strings.TrimSpace(m[1]), m[2]
	}
	if m := stateLeadRe.FindStringSubmatch(text); m != nil && (stateNamed(m[1]) || releaseOnly(m[1])) {
		// a release names a tree as a state does ("v6.13-rc1   1.98 Mpps" over
		// "v6.13-rc1 + series   2.36 Mpps")
		return m[1], m[2]
	}
	if m := stateAfterFigureRe.FindStringSubmatch(text); m != nil && stateNamed(m[2]) {
		return m[2], m[1]
	}
	if m := gapLabelRe.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1]), m[2]
	}
	if m := commitLabelRe.FindStringSubmatch(text); m != nil && commitIDRe.MatchString(m[2]) {
		return strings.TrimSpace(m[1]), m[3]
	}
	if m := releaseLabelRe.FindStringSubmatch(text); m != nil {
		return m[1], m[2]
	}
	if m := rowNameRe.FindStringSubmatch(text); m != nil && len(readFigures(m[1]).measured()) == 0 && len(readFigures(m[2]).measured()) >= 2 {
		// "ice, v6.12 + series   21.9 Mpps   4.1 Mpps": a row's name, a gap, its figures
		return strings.TrimSpace(m[1]), m[2]
	}
	if m := parameterLabelRe.FindStringSubmatch(text); m != nil && !runLabelRe.MatchString(m[1]+m[2]) {
		return m[1] + m[2], m[3]
	}
	if m := parameterUnitLabelRe.FindStringSubmatch(text); m != nil && !runLabelRe.MatchString(m[1]) {
		return m[1], m[2]
	}
	if m := percentileRowRe.FindStringSubmatch(text); m != nil {
		return "p" + trimZeros(m[1]), m[2]
	}
	if m := stateCommaRe.FindStringSubmatch(text); m != nil && stateNamed(m[1]) {
		return strings.TrimSpace(m[1]) + " " + strings.TrimSpace(m[2]), m[3]
	}
	return "", text
}

// percentileRowRe is a row of a latency distribution, the percentile then its latency, maybe
// a note after ("99.990%   38.12ms  <<< the stall", as wrk prints it).
var percentileRowRe = regexp.MustCompile(`^\s*(\d{1,3}(?:\.\d+)?)%\s+(~?\d[\d.,]*\s?(?:ms|us|µs|usec|msec|ns|s|sec))\b`)

// stateCommaRe is a state's name, a comma, then what is measured and its figure: "* Without
// this series, throughput 12.4Mbps".
var stateCommaRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?([^,:\d]{2,40}),\s+([A-Za-z][\w /-]{0,30}?)\s+(~?\d[\d.,]*\s?[A-Za-zµ%/]*)\s*$`)

// arrowSpreads is a line that compares two figures with an arrow, each followed by its spread
// in parentheses ("21.4 (σ 0.3) -> 23.0 (σ 0.2) Gbps"), without the spreads, as every reader
// sees it (the spread is a note of its figure); any other line as it is. It comes before
// scaledFigures, which writes "124.9k" out when its unit follows it.
func arrowSpreads(text string) string {
	if spread := spreadNoteRe.ReplaceAllString(text, ""); spread != text && arrowRe.MatchString(spread) {
		return spread
	}
	return text
}

// statWordFigureRe is a statistic's name and the figure it names: "mean 21.4", "median=21.5",
// "stdev: 0.3", "p99 48".
var statWordFigureRe = regexp.MustCompile(`(?i)\b(mean|avg|average|median|min|max|stdev|std-?dev|std|sd|p\d{2}(?:\.\d{1,3})?)\s*[=:]?\s*~?[-+]?\d`)

// spreadStatRe names a spread: the figure it names is no measurement of the state.
var spreadStatRe = regexp.MustCompile(`(?i)^(?:stdev|std-?dev|std|sd)$`)

// statisticNames are the statistics' names before each of a line's n figures ("mean 21.4
// Gbit/s, median 21.5 Gbit/s, stdev 0.3 Gbit/s"), nil unless every figure has one.
func statisticNames(rest string, n int) []string {
	ms := statWordFigureRe.FindAllStringSubmatch(rest, -1)
	if len(ms) != n || n < 2 {
		return nil
	}
	names := make([]string, n)
	for k, m := range ms {
		names[k] = m[1]
	}
	return names
}

// statisticsReadings are a line's named statistics in the unit written once at its end
// ("mean 36.82  median 36.90  stdev 0.41  Gbit/s"), the spread none of the state's figures.
func statisticsReadings(names []string, u unit, sh shaped, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading) []reading {
	var rs []reading
	for k, f := range sh.figures {
		if spreadStatRe.MatchString(names[k]) {
			continue
		}
		v := f.value
		if f.bare {
			v *= u.factor
		}
		r := mk("v", metricOf(u), u.norm, k, v, sh.shape)
		r.conds = copyConds(r.conds)
		r.conds["statistic"] = strings.ToLower(names[k])
		rs = append(rs, r)
	}
	return rs
}

// statUnitAtEndRe is a line's unit alone after its last figure, at the line's end.
var statUnitAtEndRe = regexp.MustCompile(`\d\s+[(\[]?([A-Za-zµ/%]+)[)\]]?\s*$`)

// statisticsUnitAtEnd reads a line of named statistics whose unit is written once, after the
// last figure at the line's end ("mean 36.82  median 36.90  stdev 0.41  Gbit/s"): each
// figure's statistic, and that unit; ok only when every figure is named, there are two at
// least, and none but the last carries a unit of its own.
func statisticsUnitAtEnd(rest string, sh shaped) (names []string, u unit, ok bool) {
	n := len(sh.figures)
	if names = statisticNames(rest, n); names == nil {
		return nil, unit{}, false
	}
	for _, f := range sh.figures[:n-1] {
		if !f.bare {
			return nil, unit{}, false
		}
	}
	m := statUnitAtEndRe.FindStringSubmatch(strings.TrimRight(rest, " \t\r."))
	if m == nil {
		return nil, unit{}, false
	}
	if u, ok = lookupUnit(m[1]); !ok || u.kind == "percent" {
		return nil, unit{}, false
	}
	return names, u, true
}

// spreadNoteRe is a figure's spread in parentheses after it: "(σ 0.3)", "(stdev 0.4k)", "(±
// 1.2%)", "(sd=0.02)".
var spreadNoteRe = regexp.MustCompile(`(?i)\s*\((?:σ|sd|stdev|std|std-dev|stddev|±|\+-|\+/-)\s*[=:]?\s*~?\d[\d.,]*\s?[a-zµ%/]*\)`)

// trimZeros writes a percentile without its trailing zeros: "99.900" is "99.9", "50.000" "50".
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// summaryTailRe is a row of runs that ends with a named figure, their average or median
// ("... avg: 150.85", "... mean = 150.8", a name however it is spelled): the runs are the
// measurement (its first group), their summary (the second) is no run of its own.
var summaryTailRe = regexp.MustCompile(`^(.*\d[\d.,]*\s+~?\d[\d.,]*)\s+[A-Za-z]{2,8}\.?\s*[:=]\s*~?([\d.,]+)\s*$`)

// withoutSummary is a row of runs without the summary it ends with, and that summary.
func withoutSummary(rest string) (runs string, summary float64, ok bool) {
	if m := summaryTailRe.FindStringSubmatch(rest); m != nil {
		if v, okv := parseNumber(m[2]); okv {
			return m[1], v, true
		}
	}
	return rest, 0, false
}

// releaseLabel: a label that is a kernel's release written without a letter ("6.13:",
// "6.12.4"), its major number one Linux has had (2 to 9), so no ratio or figure ("1.5:").
func releaseLabel(label string) bool {
	v, ok := kernelVersion(strings.TrimSuffix(strings.TrimSpace(label), "+"))
	return ok && v[0] >= 2 && v[0] <= 9
}

// runNumberLeadRe is a line that starts with a run's number: "#3 ...", "#3: ...".
var runNumberLeadRe = regexp.MustCompile(`^\s*(#\d{1,3}):?\s+(\S.*)$`)

// ordinalDashRe is an item of a list numbered with a dash after each number: "1 - baseline
// 9.24 Gbit/s", "2 – with the series: 9.81".
var ordinalDashRe = regexp.MustCompile(`^\s*\d{1,2}\s+[-–]\s+([A-Za-z].*)$`)

// valueDashLabelRe is a list item that gives its figure first and its name after a dash:
// "* 5,102,336 - baseline", "- 9.2 Gbit/s -- with the series".
var valueDashLabelRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?(~?\d[\d.,]*(?:\s?[A-Za-zµ%/]+)?)\s+(?:-{1,2}|–|—)\s+([A-Za-z][^:=|]{0,60}?)\s*$`)

// wordsThenFigureRe is a line of words and one figure at its end, a single space apart (the
// words may start with the plus of what they add to a base: "+ whole series 6.02").
var wordsThenFigureRe = regexp.MustCompile(`^\s*((?:\+\s?)?[A-Za-z][^\d:=|]{0,60}?[A-Za-z)\]])\s+(~?\d[\d.,]*(?:\s?[A-Za-zµ%/]+(?:/s(?:ec)?)?)?)\s*$`)

// gapLabelRe is a name, two spaces or more, and one figure: a list aligned by its values
// ("    zero-copy      11.37", "copy mode  1.02 Mpps", "+ patches 1-2   5.77": a name may
// start with the plus of what it adds to a base, end in a number or a range of them, and hold
// a release's number, "v6.12 (no patch)", "6.12-rc3", "6.1.55": a bare "9.12" is a figure).
var gapLabelRe = regexp.MustCompile(`^\s*((?:\+\s?)?(?:v\d+\.\d+(?:\.\d+)?(?:-rc\d+)?\b|[A-Za-z])(?:[^\d:=|]|v\d+\.\d+(?:\.\d+)?(?:-rc\d+)?\b|\d+\.\d+(?:\.\d+|-rc\d+)\b){0,60}?(?:[A-Za-z)\]]|[A-Za-z]\s\d{1,3}(?:-\d{1,3})?))\s{2,}(~?\d[\d.,]*(?:\s?[A-Za-zµ%/]+(?:/s(?:ec)?)?)?)\s*$`)

// commitLabelRe is a tree named by a commit's id, its parent's ("1a2b3c4d^", "1a2b3c4d~1") or
// with something added ("1a2b3c4d + this patch"), maybe a note after it, two spaces or more,
// and one figure: group 2 the id.
var commitLabelRe = regexp.MustCompile(`^\s*((?:\+\s?)?([0-9a-f]{7,40})(?:\^+|~\d{1,2})?(?:\s+[^\d:=|]{0,60}?[A-Za-z)\]])?)\s+(~?\d[\d.,]*(?:\s?[A-Za-zµ%/]+(?:/s(?:ec)?)?)?)\s*$`)

// parameterLabelRe is a row named by the value of the parameter it varies, then one figure: a
// case of a sweep, not a run ("txq=4  7.02 Mpps", "2 queues   17.1 Gbit/s", "64B  3.1 Mpps",
// "q8  11.4"). The name is an assignment (a space or more parts it from its figure), a count
// with its noun or unit, or a word with its number glued on; two spaces or more part those
// from their figure, as a list aligned by its values does. A run's number ("run2",
// "#3") is no parameter: its caller checks runLabelRe.
var parameterLabelRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?(?:([A-Za-z][\w.-]{0,20}=[\w.,/-]{1,12})\s+|(\d[\d.,]{0,8}\s?[A-Za-z][A-Za-z_-]{0,15}|[A-Za-z]{1,12}\d{1,5})\s{2,})(~?\d[\d.,]*(?:\s?[A-Za-zµ%/]+(?:/s(?:ec)?)?)?)\s*$`)

// parameterUnitLabelRe is such a count or numbered word a single space from a figure with its
// unit ("2 queues 17.1 Gbit/s", a list aligned with single spaces): the unit ends the figure,
// so the space cannot be inside a name.
var parameterUnitLabelRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?(\d[\d.,]{0,8}\s?[A-Za-z][A-Za-z_-]{0,15}|[A-Za-z]{1,12}\d{1,5})\s(~?\d[\d.,]*\s?[A-Za-zµ%][A-Za-zµ%/]*)\s*$`)

// releaseLabelRe is a kernel's release naming its line's figure with its unit:
// "6.12.0-rc3   21.4 Gbit/s", "6.12.0-rc3+  23.0 Gbit/s" (a tree with changes).
var releaseLabelRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?(\d+\.\d+(?:\.\d+)?(?:-rc\d+)?(?:[-+][\w.+-]*)?)\s+(~?\d[\d.,]*\s?[A-Za-zµ%][A-Za-zµ%/]*)\s*$`)

// rowNameRe is a row of a table aligned by spaces: its name (words, a release's number among
// them), two spaces or more, then only its figures, each with its unit, apart by wide gaps.
var rowNameRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?([A-Za-z][^\t]{0,60}?\S)\s{2,}((?:~?\d[\d.,]*\s?[A-Za-zµ%][A-Za-zµ%/]*(?:\s{2,}|\s*$)){2,})$`)

// labelMatch is a line's label and rest: at a colon where it has one, else at a dash, an
// equals sign or a tab.
func labelMatch(text string) []string {
	if m := labelColonRe.FindStringSubmatch(text); m != nil {
		return m
	}
	return labelRe.FindStringSubmatch(text)
}

// verdictLineRe is a selftest's line for one case, ending in its verdict ("  net,port   28s
// [ OK ]", "TEST: ipv4 route   [FAIL]"): the figures on it (how long the case took) are no
// result of the case.
var verdictLineRe = regexp.MustCompile(`\[\s*(?:OK|FAIL|SKIP|PASS|XFAIL|ERROR)\s*\]\s*$`)

func lineReadings(lines []line, i int, b block) (rs []reading, pairs [][2]reading) {
	if rs, done := wholeLineReadings(lines, i, b); done {
		return rs, nil
	}
	if ps := labelledArrows(lines, i, b); ps != nil {
		return nil, ps
	}
	label, rest := readingLabel(lines, i, b)
	if label == "" {
		// the sentence the line continues, whose words may name a state (a name before a
		// gap, below, may be its verb: "the patched kernel" over "sends 4.87 vs 4.02 Gbit/s")
		b.lead = sentenceBefore(lines, i)
	}
	if m := gapArrowRe.FindStringSubmatch(lines[i].text); label == "" && m != nil && startsWithArrow(m[2]) {
		label, rest = m[1], m[2] // "TCP_MAERTS    8812.4  ->  9390.1": a name, a gap, a comparison
	}
	pairLabel := label
	if pairLabel == "" {
		pairLabel = unitHeadingAbove(lines, i)
	} else if _, ok := labelUnit(pairLabel); !ok {
		if u := cmp.Or(parenUnitAbove(lines, i), footnoteUnit(lines, paragraphEnd(lines, i))); u != "" {
			pairLabel += " (" + u + ")" // "p99: 48 -> 31" under "latency percentiles (usec):", or over "(usec)"
		}
	}
	if ps := proseComparisons(pairLabel, rest, lines[i].n, i, b); ps != nil {
		return nil, ps
	}
	if p, ok := linePair(pairLabel, wrappedTail(lines, i, rest), lines[i].n, i, b); ok {
		return nil, [][2]reading{p}
	}
	if m := unitNameLeadRe.FindStringSubmatch(lines[i].text); label == "" && m != nil {
		// "tput(Gbps)  base=41.2  patched=44.9": a name with its unit in parentheses, then
		// both states with their figures
		if _, _, ok := parenUnit(m[1]); ok {
			if p, ok := inlineStates(m[1], m[2], lines[i].n, i, b); ok {
				return nil, [][2]reading{p}
			}
		}
	}
	if side, _, lrest := stateOf(label); side != "" {
		// "before 41.2   after 44.9": the first state taken for the line's label; the line
		// names both, under the heading's unit if any
		if p, ok := inlineStates(unitHeadingAbove(lines, i), lines[i].text, lines[i].n, i, b); ok {
			return nil, [][2]reading{p}
		}
		// "rx_packets/s   before: 1.82M   after: 2.11M": what is measured, then both states
		text := strings.TrimSpace(lines[i].text)
		if what := strings.TrimSpace(lrest); what != "" && strings.HasPrefix(text, what) {
			if p, ok := inlineStates(what, text[len(what):], lines[i].n, i, b); ok {
				return nil, [][2]reading{p}
			}
		}
	}
	ls := labelState(lines, i, b, label)
	if ls.side == "" {
		return nil, nil
	}
	keyLabel := ls.key
	mk := func(kind, metric, unitName string, pos int, v float64, shape string) reading {
		return reading{key: fmt.Sprintf("%s|%s|%s|%s|%d", b.cond, kind, keyLabel, shape, pos), metric: metric, unit: unitName, value: round(v),
			side: ls.side, state: ls.state, line: lines[i].n, idx: i, named: kind != "v" && kind != "t"}
	}
	if rs := slashNamedFigures(lines, i, rest, &keyLabel, mk); rs != nil {
		return rs, nil
	}
	if rs := namedItemFigures(rest, mk); rs != nil {
		return rs, nil
	}
	return figureReadings(lines[i].text, label, rest, ls.fromLabel, b, &keyLabel, mk), nil
}

// spacedItemRe is one item of a list of named figures: a name, then its figure, then maybe
// its unit ("throughput 178.2 Gbps", "cycles/byte 0.91", "retrans 1203"); namedItemRe is
// the same with a colon after the name.
var spacedItemRe = regexp.MustCompile(`^([A-Za-z][\w/.%-]*(?:\s[A-Za-z][\w/.%-]*){0,3})\s+~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s?([A-Za-zµ/%][A-Za-zµ/%]*)?$`)

// namedItemFigures reads a state's line that lists its figures by name, apart by commas or
// semicolons, at least one of them without a unit ("Before: throughput 178.2 Gbps,
// cycles/byte 0.91"): a reading of each, keyed by its name; nil where an item is not one
// name and one figure, or two items share a name.
func namedItemFigures(rest string, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading) []reading {
	items := strings.FieldsFunc(strings.TrimRight(strings.TrimSpace(rest), "."), func(r rune) bool { return r == ',' || r == ';' })
	if len(items) < 2 || len(items) > maxFiguresPerLine {
		return nil
	}
	var rs []reading
	bare, seen := 0, map[string]bool{}
	for k, item := range items {
		m := spacedItemRe.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil || seen[strings.ToLower(m[1])] {
			return nil
		}
		seen[strings.ToLower(m[1])] = true
		v, ok := parseNumber(m[2])
		if !ok {
			return nil
		}
		u, known := lookupUnit(m[3])
		switch {
		case m[3] == "":
			bare++
			u = unit{factor: 1}
			if lu, ok := labelUnit(m[1]); ok {
				u = lu
			}
		case !known:
			return nil
		}
		metric := metricOf(u)
		if u.norm == "" {
			metric = metricName(m[1])
		}
		rs = append(rs, mk("n", metric, u.norm, k, v*u.factor, strings.ToLower(m[1])))
	}
	if bare == 0 {
		return nil // every item with its unit: the figures' own reader takes them
	}
	return rs
}

// gapArrowRe is a line that names a comparison and gives it after a space or a gap; a word of
// the name may be a note in parentheses ("CPU (softirq)    61.2% => 55.0%").
var gapArrowRe = regexp.MustCompile(`^\s*([A-Za-z][\w./+-]*(?: (?:[A-Za-z][\w./+-]*|\([A-Za-z][\w ,./+-]{0,24}\))){0,3})\s+(~?\d.*)$`)

// startsWithArrow: rest is a comparison of two figures from its start ("8812.4  ->  9390.1
// (+6.6%)"), nothing before its first figure.
func startsWithArrow(rest string) bool {
	loc := arrowRe.FindStringIndex(rest)
	return loc != nil && loc[0] == 0
}

// paragraphEnd is the index of the first blank line after lines[i], or len(lines).
func paragraphEnd(lines []line, i int) int {
	for i < len(lines) && strings.TrimSpace(lines[i].text) != "" {
		i++
	}
	return i
}

// slashNamesRe is a heading's names of slash-joined figures: "(p50/p99)", "(min / avg / max)".
var slashNamesRe = regexp.MustCompile(`\(\s*([A-Za-z][\w.]*(?:\s*/\s*[A-Za-z][\w.]*){1,4})\s*\)`)

// slashLeadNamesRe is a heading that opens with the names its figures are joined by slashes
// in, without parentheses: "p50/p99/p999 latency (us)". Each name has two characters or more
// ("Gbit/s" and "w/o" are no names).
var slashLeadNamesRe = regexp.MustCompile(`^\s*([A-Za-z][\w.]+(?:\s*/\s*[A-Za-z][\w.]+){1,4})\s`)

// slashNames are the names a heading joins by slashes (slashNamesRe, slashLeadNamesRe); nil
// where it joins none, or where what it joins is a unit.
func slashNames(h string) []string {
	m := slashNamesRe.FindStringSubmatch(h)
	if m == nil {
		m = slashLeadNamesRe.FindStringSubmatch(h)
	}
	if m == nil {
		return nil
	}
	if _, unit := lookupUnit(strings.ReplaceAll(m[1], " ", "")); unit {
		return nil
	}
	return strings.Split(m[1], "/")
}

// slashFiguresRe is a line's rest of two to five bare figures joined by slashes: "12.1 / 30.5".
var slashFiguresRe = regexp.MustCompile(`^\s*~?\d[\d.,]*(?:\s*/\s*~?\d[\d.,]*){1,4}\s*$`)

// slashNamedFigures reads a state's line of figures joined by slashes ("before: 12.1 / 30.5")
// under a heading that names them in the same order and gives their unit ("latency in
// microseconds (p50/p99):"): one reading per name, keyed by it. nil where the heading names
// other than as many as there are figures.
func slashNamedFigures(lines []line, i int, rest string, keyLabel *string, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading) []reading {
	if !slashFiguresRe.MatchString(rest) {
		return nil
	}
	h, names := "", []string(nil)
	for k := i - 1; k >= 0 && i-k <= 8 && strings.TrimSpace(lines[k].text) != ""; k-- {
		if headingRe.MatchString(lines[k].text) {
			if names = slashNames(strings.TrimSuffix(strings.TrimSpace(lines[k].text), ":")); names != nil {
				h = strings.TrimSuffix(strings.TrimSpace(lines[k].text), ":")
				break
			}
		}
	}
	if names == nil {
		return nil
	}
	figures := strings.Split(rest, "/")
	u, ok := headingUnit(slashLeadNamesRe.ReplaceAllString(slashNamesRe.ReplaceAllString(h, ""), ""))
	if len(names) != len(figures) || !ok {
		return nil
	}
	var out []reading
	for k, f := range figures {
		v, ok := parseNumber(strings.TrimPrefix(strings.TrimSpace(f), "~"))
		if !ok {
			return nil
		}
		name := strings.TrimSpace(names[k])
		metric := metricOf(u)
		if sm := latencyStatRe.FindStringSubmatch(name); sm != nil && len(sm[0]) == len(name) && u.kind == "time" {
			metric = statMetric(sm) // "p99", "min", "mean": that statistic's latency
		}
		*keyLabel = labelKey(name)
		out = append(out, mk("v", metric, u.norm, 0, v*u.factor, "#"+u.norm))
	}
	return out
}

// wholeLineReadings reads the lines whose shape says what they are, whatever their label:
// done with nothing for a dump, a histogram, an iperf3 interval or a selftest's verdict; done
// with readings for a list of named figures or ping's count line.
func wholeLineReadings(lines []line, i int, b block) (rs []reading, done bool) {
	l := lines[i]
	text := l.text
	if len(text) > maxReadLine {
		return nil, true // a dump, not a line a reader writes a result on
	}
	if histogramRe.MatchString(text) || iperf3IntervalRe.MatchString(text) && !iperf3EndRe.MatchString(text) && !wholeRun(lines, i) || verdictLineRe.MatchString(text) {
		return nil, true
	}
	if rs := namedList(text, l.n, i, b); rs != nil {
		return rs, true
	}
	if m := pingLossRe.FindStringSubmatch(text); m != nil && b.side != "" {
		// ping's count line: its loss is the figure; the counts and the time describe the run
		if v, ok := parseNumber(m[1]); ok {
			rs := []reading{{key: b.cond + "|ping|packet loss", metric: "packet_loss", unit: "%", value: v, side: b.side, state: b.state, line: l.n, idx: i, named: true}}
			if t := pingTimeRe.FindStringSubmatch(text); t != nil && floodAbove(lines, i) {
				// a flood of a fixed count: how long it took to send them is its result
				if ms, ok := parseNumber(t[1]); ok {
					rs = append(rs, reading{key: b.cond + "|ping|flood time", metric: "flood_time", unit: "us", value: ms * 1e3, side: b.side, state: b.state, line: l.n, idx: i, named: true})
				}
			}
			return rs, true
		}
	}
	return nil, false
}

// floodAbove: a flood ping's command (pingFloodRe) stands on one of the three lines above
// lines[i], over its statistics.
func floodAbove(lines []line, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if pingFloodRe.MatchString(lines[k].text) {
			return true
		}
	}
	return false
}

// readingLabel is the name a line gives its figures and the rest of the line: its label, the
// name on the line above, or under a state's heading the words before a figure.
func readingLabel(lines []line, i int, b block) (label, rest string) {
	text := lines[i].text
	label, rest = lineLabel(text)
	if label == "" {
		label = nameAbove(lines, i)
	}
	if m := wordsThenFigureRe.FindStringSubmatch(text); label == "" && m != nil && len(strings.Fields(m[1])) <= 4 && (b.side != "" || namedFigureParagraph(lines, i)) {
		// Under a state's heading, "copy mode 1.02": a name and its figure a space apart.
		label, rest = strings.TrimSpace(m[1]), m[2]
	}
	return label, rest
}

// listLabel is the label of lines[k] as a list of results gives it: before a colon or a gap
// (lineLabel), or a short name a single space from its figure in a paragraph of such lines
// (namedFigureParagraph: "seqcount 14.62 Mpps" over "spinlock 12.90 Mpps").
func listLabel(lines []line, k int) (label, rest string) {
	label, rest = lineLabel(lines[k].text)
	if m := wordsThenFigureRe.FindStringSubmatch(lines[k].text); label == "" && m != nil && len(strings.Fields(m[1])) <= 4 && namedFigureParagraph(lines, k) {
		label, rest = strings.TrimSpace(m[1]), m[2]
	}
	return label, rest
}

// namedFigureParagraph: lines[i] is in a paragraph of its own whose every line is a short name
// and one figure with its unit ("Throughput 10.1 Gbps", "Tail latency 48 us"): a result named
// without a colon, which stands alone as a label's does. In prose words before a figure are a
// sentence ("tested with 8 queues"), so outside a state's heading only such paragraphs count.
func namedFigureParagraph(lines []line, i int) bool {
	named := func(text string) bool {
		m := wordsThenFigureRe.FindStringSubmatch(text)
		return m != nil && len(strings.Fields(m[1])) <= 3 && strings.IndexFunc(m[2], unicode.IsLetter) >= 0
	}
	start, end := i, i
	for start > 0 && strings.TrimSpace(lines[start-1].text) != "" {
		start--
	}
	if start < i && headingRe.MatchString(lines[start].text) {
		start++ // the paragraph's heading ("Average latency over 10 runs:") names no figure
	}
	for end+1 < len(lines) && strings.TrimSpace(lines[end+1].text) != "" {
		end++
	}
	if end-start >= 8 {
		return false
	}
	for k := start; k <= end; k++ {
		if !named(lines[k].text) {
			return false
		}
	}
	return true
}

// unitHeadingAbove is the heading right above lines[i] (a blank line between allowed) where it
// names a unit (headingUnit: "Throughput of sctp_test with 64 paths, MB/s:" over "(before) 412
// (after) 588"): it names what the line's bare figures measure. "" where there is none.
func unitHeadingAbove(lines []line, i int) string {
	h := headingOver(lines, lines[i].n)
	if _, ok := headingUnit(h); !ok {
		return ""
	}
	return h
}

// parenUnitAbove is the unit in parentheses of the heading over lines[i]'s block (the nearest
// heading line above, no blank line between, at most a dozen lines up): "latency percentiles
// (usec), before -> after:" over "p99: 48 -> 31", or one without a colon over lines indented
// under it. "" where there is none.
func parenUnitAbove(lines []line, i int) string {
	for k := i - 1; k >= 0 && i-k <= 12 && strings.TrimSpace(lines[k].text) != ""; k-- {
		if !headingRe.MatchString(lines[k].text) && !indentedHeading(lines, k) {
			continue
		}
		text, _, _ := parenUnit(lines[k].text)
		return text
	}
	return ""
}

// wrappedTail is the rest of lines[i] with the first words of the next line where a sentence
// wraps right after a comparison's second figure ("(36.2 Gbps vs 34.8" over "Gbps before)"):
// the next line, no labelled line of its own, starts with the figure's unit, and the words
// that name its state follow, or it starts with those words and ends the sentence.
func wrappedTail(lines []line, i int, rest string) string {
	loc := arrowRe.FindStringIndex(rest)
	if loc == nil || strings.TrimSpace(rest[loc[1]:]) != "" || i+1 >= len(lines) || strings.TrimSpace(lines[i+1].text) == "" {
		return rest
	}
	next := strings.Fields(lines[i+1].text)
	if label, _ := lineLabel(lines[i+1].text); label != "" {
		return rest // a line of its own ("cycles per packet: 165 -> 142"), not the sentence's end
	}
	if _, unit := lookupUnit(strings.TrimRight(next[0], ".,;)")); !unit {
		// "... 1.41 Mpps vs 1.12 Mpps" over "on net-next.": the sentence ends with the words
		// that name a figure's state
		end, _, _ := strings.Cut(strings.TrimSpace(lines[i+1].text), ".")
		end, _, _ = strings.Cut(end, ",")
		if side, _, _ := stateOf(end); side != "" && len(strings.Fields(end)) <= 5 {
			return strings.TrimRight(rest, " ") + " " + end
		}
		return rest
	}
	if len(next) > 4 {
		next = next[:4]
	}
	return strings.TrimRight(rest, " ") + " " + strings.Join(next, " ")
}

// unitNameLeadRe is a line that starts with a short name whose parenthesis gives the unit
// ("tput(Gbps)", "RR rate (trans/s)"), and the rest.
var unitNameLeadRe = regexp.MustCompile(`^\s*([A-Za-z][\w/ .-]{0,40}?\s?\([^()]{1,30}\))\s+(\S.*)$`)

// labelledArrows reads a line of two or more labelled comparisons ("64B: 1.21 -> 1.47,
// 512B: 1.10 -> 1.29", apart by any punctuation or space): each comparison ends a segment,
// which is a line of its own, its label what it measures or a condition of it, under the
// heading's unit. nil unless every segment is one.
func labelledArrows(lines []line, i int, b block) [][2]reading {
	text := strings.TrimSpace(lines[i].text)
	arrows := arrowRe.FindAllStringIndex(text, 8)
	if len(arrows) < 2 || strings.Trim(text[arrows[len(arrows)-1][1]:], " \t.,;") != "" {
		return nil
	}
	var segments []string
	start := 0
	for _, a := range arrows {
		segments = append(segments, strings.TrimLeft(text[start:a[1]], " \t,;|"))
		start = a[1]
	}
	var out [][2]reading
	for _, seg := range segments {
		m := labelColonRe.FindStringSubmatch(seg)
		if m == nil || len(arrowRe.FindAllStringIndex(m[2], 2)) != 1 {
			return nil
		}
		label := strings.TrimSpace(m[1])
		if _, ok := labelUnit(label); !ok {
			if u := parenUnitAbove(lines, i); u != "" {
				label += " (" + u + ")"
			}
		}
		p, ok := linePair(label, m[2], lines[i].n, i, b)
		if !ok {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// sentenceBefore is the start of the sentence line i continues, from the lines before it in
// its paragraph (at most three), with their comparisons cut out; "" when line i starts it.
func sentenceBefore(lines []line, i int) string {
	var parts []string
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		t := strings.TrimSpace(lines[j].text)
		if t == "" || strings.HasSuffix(t, ".") || strings.HasSuffix(t, ":") {
			break
		}
		parts = append([]string{t}, parts...)
	}
	text := strings.Join(parts, " ")
	if k := strings.LastIndex(text, ". "); k >= 0 {
		text = text[k+2:]
	}
	return arrowRe.ReplaceAllString(text, "$1")
}

// proseComparisons reads a line (or what follows its label) that makes two or more comparisons, each with its
// own figures ("improves UDP_RR by 4% (61.2k vs 58.8k trans/s) and TCP_STREAM by 2% (36.1 vs
// 35.4 Gbit/s)"): each is read as a line of its own, the text before it (its comparisons
// cut out) the lead that orients a "vs". nil unless every comparison is read.
func proseComparisons(label, text string, n, i int, b block) [][2]reading {
	arrows := arrowRe.FindAllStringIndex(text, 8)
	if len(arrows) < 2 {
		return nil
	}
	var out [][2]reading
	sentence := b.lead
	prev := 0
	for _, a := range arrows {
		sentence += " " + text[prev:a[0]]
		seg := b
		seg.lead = sentence
		p, ok := linePair(label, text[a[0]:a[1]], n, i, seg)
		if !ok {
			return nil
		}
		out = append(out, p)
		prev = a[1]
	}
	return out
}

// linePair is a line that compares its two states itself: an arrow, the states inline, or
// joined by a slash.
func linePair(label, rest string, n, i int, b block) ([2]reading, bool) {
	for _, read := range []func(label, rest string, n, i int, b block) ([2]reading, bool){arrowPair, inlineStates, slashStates} {
		if p, ok := read(label, rest, n, i, b); ok {
			return p, true
		}
	}
	return [2]reading{}, false
}

// lineState is the state of a line's figures and the key of what they measure.
type lineState struct {
	side, state, key string
	fromLabel        bool // the label's words, or its siblings', name its side
}

// labelState decides a line's state: by its label's words, by how it differs from its
// siblings, or by the heading's block; a list of variants names its states by its labels.
func labelState(lines []line, i int, b block, label string) lineState {
	st := lineState{side: b.side, state: b.state}
	if label == "" {
		return st
	}
	ls, strong, lrest := stateOf(label)
	siblings := siblingLabels(lines, i)
	if ls != "" && !strong && strongSibling(siblings) {
		// Among states a patch word names ("baseline"), a setting word names a variant
		// ("order0 no cache"), not the side.
		ls, lrest = "", label
	}
	testName := ""
	if ls != "" && (b.side == "before" || b.side == "after") && ls != b.side && strings.TrimSpace(lrest) != "" && len(siblings) <= 1 {
		// Under "After the change:", "baseline test (one filter): 3120455 pps":
		// the heading names the state; a state word inside a longer label names a test,
		// keyed as the same label under the other heading is (its state words out).
		ls, testName = "", labelKey(runOrdinalRe.ReplaceAllString(lrest, ""))
	}
	if ls == "" && bareContrast(label, siblings) {
		// "w/:" beside "w/o:", "with:" beside "without:": the other word of the pair, bare
		ls = "after"
	}
	vs, vkey, variant := labelVariant(siblings, label, ls)
	st.fromLabel = variant && vs != "?" || ls != ""
	switch {
	case variant:
		st.side, st.state, st.key = vs, label, vkey // named by how it differs from its siblings
	case ls != "":
		st.side, st.state, st.key = ls, label, labelKey(runOrdinalRe.ReplaceAllString(lrest, ""))
		if lrest != "" && slices.ContainsFunc(siblings, func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), strings.TrimSpace(lrest)) }) {
			st.key = "" // "HEAD+patch" beside "HEAD": what is left of it is the base it extends
		}
	case releasesApart(label, siblings):
		// "6.13.0-rc2+" beside "6.13.0-rc2" under a heading that names the patch: the
		// releases are the states, for the releases to decide
		st.side, st.state = "?", label
	case b.side == "?" && settingValuesApart(label, siblings):
		// "rcvwnd 10" beside "rcvwnd 64" under a heading that names no state: the setting's
		// values are the states, for the message to decide
		st.side, st.state = "?", label
	case b.side != "":
		st.key = labelKey(runOrdinalRe.ReplaceAllString(label, ""))
	default: // a list of variants: the labels are the states
		st.side, st.state = "?", label
	}
	if testName != "" {
		st.key = testName
	}
	return st
}

// settingValuesApart: label is a setting at a number ("rcvwnd 10", "iw=64") and a sibling
// label is the same setting at another.
func settingValuesApart(label string, siblings []string) bool {
	m := settingStateRe.FindStringSubmatch(label)
	if m == nil {
		return false
	}
	if _, ok := parseNumber(m[2]); !ok {
		return false
	}
	return slices.ContainsFunc(siblings, func(s string) bool {
		o := settingStateRe.FindStringSubmatch(s)
		if o == nil || !strings.EqualFold(o[1], m[1]) || o[2] == m[2] {
			return false
		}
		_, ok := parseNumber(o[2])
		return ok
	})
}

// releasesApart: label is a kernel's release and a sibling label another one, or the same
// with changes on it (a trailing "+").
func releasesApart(label string, siblings []string) bool {
	if _, ok := kernelVersion(strings.TrimSuffix(label, "+")); !ok {
		return false
	}
	return slices.ContainsFunc(siblings, func(s string) bool {
		_, ok := kernelVersion(strings.TrimSuffix(s, "+"))
		return ok && s != label
	})
}

// bareContrast says whether label is the after's word of a contrast pair alone ("w/",
// "with") and a sibling label is the before's word of that pair alone ("w/o", "without").
func bareContrast(label string, siblings []string) bool {
	bare := func(s string) string { return strings.TrimSpace(parenRe.ReplaceAllString(s, "")) } // "with (Gbps)"
	l := bare(label)
	for _, c := range contrastPairs {
		if strings.EqualFold(l, c[1]) && slices.ContainsFunc(siblings, func(s string) bool { return strings.EqualFold(bare(s), c[0]) }) {
			return true
		}
	}
	return false
}

// figureReadings reads a line's figures once its state is known: perf stat's counter, figures
// with units, a tool's name=value, a label's unit over a bare figure, a state's runs in a row,
// or the named figures of a line without a label. keyLabel is what mk keys by; a reader that
// names the figure itself sets it.
func figureReadings(text, label, rest string, sideOfLabel bool, b block, keyLabel *string, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading) []reading {
	if m := perfStatRe.FindStringSubmatch(text); m != nil && label == "" {
		// perf stat's "65,945.29 msec task-clock  # ...": the event names the figure.
		if v, ok := parseNumber(m[1]); ok {
			*keyLabel = m[2]
			u := "count"
			if strings.Contains(text, " msec ") || strings.Contains(text, "(msec)") {
				u, v = "us", v*1e3
			}
			return []reading{mk("p", m[2], u, 0, v, "")}
		}
	}
	sh := readFigures(trimAnnotations(statedParenRe.ReplaceAllString(commentRe.ReplaceAllString(rest, ""), "")))
	var rs []reading
	if vals, u, ok := runsSharingAUnit(label, trimAnnotations(rest), sideOfLabel); ok {
		// "w/o: 11.2, 11.4, 11.1 Gbps": one state's runs, the unit written once or after each
		for _, v := range vals {
			rs = append(rs, mk("v", metricOf(u), u.norm, 0, v*u.factor, "#"+u.norm))
		}
		return rs
	}
	if names, u, ok := statisticsUnitAtEnd(rest, sh); ok {
		return statisticsReadings(names, u, sh, mk)
	}
	if ms := sh.measured(); len(ms) > maxFiguresPerLine {
		return nil
	} else if len(ms) > 0 {
		names := statisticNames(rest, len(ms))
		for k, f := range ms {
			if names != nil && spreadStatRe.MatchString(names[k]) {
				continue // "stdev 0.3 Gbit/s": the spread of the state's figures, not one of them
			}
			r := mk("v", metricOf(f.unit), f.unit.norm, k, f.value, sh.shape)
			if names != nil {
				r.conds = copyConds(r.conds)
				r.conds["statistic"] = strings.ToLower(names[k])
			}
			rs = append(rs, r)
		}
		return rs
	}
	if got := assignments(text, mk); len(got) > 0 {
		return got
	}
	if f, ok := rateCount(label, trimAnnotations(rest)); ok && len(sh.figures) == 0 {
		sh = shaped{figures: []figure{f}, shape: "#"}
	}
	if loc := settingsTailRe.FindStringIndex(rest); label != "" && loc != nil && len(sh.figures) > 1 {
		// "Server CPU busy (%): 71.4, clients 8, runs 5": the figure, then the settings of
		// its test, named; the label's unit is the figure's
		if head := readFigures(rest[:loc[0]]); len(head.figures) == 1 && strings.TrimSpace(head.shape) == "#" {
			if u, ok := headingUnit(label); ok {
				return []reading{mk("v", metricOf(u), u.norm, 0, head.figures[0].value*u.factor, "#"+u.norm)}
			}
		}
	}
	if label != "" && len(sh.figures) == 1 && strings.TrimSpace(sh.shape) == "#" {
		if u, ok := headingUnit(label); ok {
			// "Requests/sec: 184233.41", "throughput (Gbps): 9.4": the label's unit
			return []reading{mk("v", metricOf(u), u.norm, 0, sh.figures[0].value*u.factor, "#"+u.norm)}
		}
		if metric, unitName, factor := totalOf(b.cond); unitName != "" {
			// "before: 1843122" under super_netperf's command: its total, labelled
			return []reading{mk("v", metric, unitName, 0, sh.figures[0].value*factor, "#"+unitName)}
		}
		return []reading{mk("v", "", "", 0, sh.figures[0].value, "#")}
	}
	if runs, summary, summarized := runsInARow(label, trimAnnotations(rest), sideOfLabel); runs != nil {
		// "before: 18.2 18.5 18.1": one measurement's runs, a series of one side; the
		// label's unit is theirs ("Before (Gbps): 9.41 9.38")
		u, labelled := labelUnit(label)
		for _, v := range runs {
			r := mk("v", "", "", 0, v, "#")
			if labelled {
				r = mk("v", metricOf(u), u.norm, 0, v*u.factor, "#"+u.norm)
			}
			r.summary, r.summarized = summary, summarized
			if labelled {
				r.summary *= u.factor
			}
			rs = append(rs, r)
		}
		return rs
	}
	if label != "" {
		return nil
	}
	return namedReadings(text, b, mk, keyLabel)
}

var (
	// logTimeRe is a log line's clock at its start, its date before it or not ("11:16:03 ",
	// "2024/09/24 11:10:01 ", "2024-09-24T11:10:01.5 "): when, not what was measured.
	logTimeRe = regexp.MustCompile(`^\s*(?:\d{4}[-/]\d{2}[-/]\d{2}[ T])?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\s+`)
	// namedItemRe is one "name: figure" of a list of them on a line.
	namedItemRe = regexp.MustCompile(`^([A-Za-z][\w/ .%()-]{0,30}?):\s*(~?[-+]?\d[\d.,]*(?:\s?[A-Za-zµ%/]+)?)$`)
)

// namedList reads a line that is a list of named figures, each "name: figure", apart by commas
// or semicolons, a log's clock before them or not ("11:16:03 req: 1416761, req/s: 283352.1",
// "rx: 1.2 Mpps; tx: 1.1 Mpps"), under a state's heading: one reading per name, in the unit
// its figure or its name gives. nil for any other line.
func namedList(text string, n, idx int, b block) []reading {
	if b.side == "" {
		return nil
	}
	items := listSplitRe.Split(strings.TrimSpace(logTimeRe.ReplaceAllString(text, "")), -1)
	if len(items) < 2 {
		return nil
	}
	var out []reading
	for _, item := range items {
		m := namedItemRe.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			return nil
		}
		name := strings.TrimSpace(m[1])
		if side, _, _ := stateOf(name); side != "" {
			return nil // "before: 5, after: 6": the states, inlineStates's
		}
		sh := readFigures(m[2])
		if len(sh.figures) != 1 {
			return nil
		}
		f := sh.figures[0]
		if f.bare {
			if u, ok := labelUnit(name); ok {
				f = figure{value: f.value * u.factor, unit: u, raw: f.raw}
			}
		}
		out = append(out, reading{key: b.cond + "|list|" + labelKey(name), metric: metricOf(f.unit), unit: f.unit.norm, value: round(f.value),
			side: b.side, state: b.state, line: n, idx: idx, named: f.bare})
		if f.bare {
			out[len(out)-1].metric = name
		}
	}
	return out
}

// listSplitRe parts the items of a list on a line: a comma or a semicolon and a space (a
// thousands' comma has none).
var listSplitRe = regexp.MustCompile(`[,;]\s+`)

// maxSiblings bounds the lines siblingLabels looks at on each side: a list of states is short.
const maxSiblings = 12

// siblingLabels are the labels of the lines next to lines[i], with no empty line between,
// that each give figures after a label (lines[i]'s among them): a list whose labels may be
// the states of one measurement.
func siblingLabels(lines []line, i int) []string {
	labelled := func(k int) string {
		label, rest := listLabel(lines, k)
		if label == "" || len(readFigures(rest).figures) == 0 {
			return ""
		}
		return label
	}
	start, end := i, i
	for start > 0 && i-start < maxSiblings && labelled(start-1) != "" {
		start--
	}
	for end+1 < len(lines) && end-i < maxSiblings && labelled(end+1) != "" {
		end++
	}
	var out []string
	for k := start; k <= end; k++ {
		out = append(out, labelled(k))
	}
	return out
}

// negationPrefixes glue "without" onto a feature's name: "NOGRO", "no-tso", "non-xdp".
var negationPrefixes = []string{"no-", "no_", "non-", "non_", "no", "non"}

// negatedSibling: a sibling label is own's words with one word negated by a prefix, or own is
// such a sibling's ("no-tso 4q" / "tso 4q"): the negated one is the state before; the key
// is the words they share.
func negatedSibling(siblings [][]string, own []string) (side, key string, ok bool) {
	for _, w := range siblings {
		if len(w) != len(own) || slices.Equal(w, own) {
			continue
		}
		diff := -1
		for k := range w {
			if w[k] != own[k] {
				if diff >= 0 {
					diff = -2
					break
				}
				diff = k
			}
		}
		if diff < 0 {
			continue
		}
		rest := strings.Join(append(append([]string{}, own[:diff]...), own[diff+1:]...), " ")
		for _, p := range negationPrefixes {
			switch {
			case own[diff] == p+w[diff] && len(w[diff]) > 1:
				return "before", rest, true
			case w[diff] == p+own[diff] && len(own[diff]) > 1:
				return "after", rest, true
			}
		}
	}
	return "", "", false
}

// strongSibling: a label of the list is a state a patch word names ("baseline", "patched").
func strongSibling(siblings []string) bool {
	for _, s := range siblings {
		if side, strong, _ := stateOf(s); side != "" && strong {
			return true
		}
	}
	return false
}

// extensionWords join a base's name to what a state adds to it: "X with Y", "X + Y", "X and Y".
var extensionWords = map[string]bool{"with": true, "+": true, "and": true, "plus": true, "w/": true}

// extendsBase: words are base's words and then what a state adds to them ("stock driver" and
// "stock driver with batching", "6.1 rc2" and "6.1 rc2 + patch", "6.13-rc1" and "6.13-rc1+p").
func extendsBase(base, words []string) bool {
	if n := len(base); n > 0 && len(words) == n && slices.Equal(words[:n-1], base[:n-1]) {
		// "v6.13-rc1+p" beside "v6.13-rc1": the last word with something glued on by a plus
		last := words[n-1]
		return strings.HasPrefix(last, base[n-1]+"+") && len(last) > len(base[n-1])+1
	}
	if len(base) == 0 || len(words) <= len(base) || !slices.Equal(words[:len(base)], base) {
		return false
	}
	next := strings.ToLower(words[len(base)])
	return extensionWords[next] || strings.HasPrefix(next, "+")
}

// labelVariant reads a label among its siblings' when they name states by how they differ:
//   - the first label is the base and each other adds to it ("stock driver", "stock driver
//     with batching", "stock driver + batching and prefetch"): the base is the state before,
//     the others are after (the last the final one);
//   - the labels share their first and last words and differ between them ("rx stock path",
//     "rx pooled path"): the differing words name the state, and at least one sibling's say
//     which ("stock"). A label no word of its own decides takes the words it shares with its
//     siblings as its key, and "?" as its side; one its words decide keeps stateOf's reading.
//
// key is what the siblings share, the key of the measurement; ok false where neither holds.
func labelVariant(siblings []string, label, ownSide string) (side, key string, ok bool) {
	if len(siblings) < 2 || len(siblings) > 2*maxSiblings {
		return "", "", false
	}
	words := make([][]string, len(siblings))
	for k, s := range siblings {
		words[k] = strings.Fields(strings.ToLower(strings.TrimSpace(parenRe.ReplaceAllString(s, " "))))
		if len(words[k]) == 0 {
			return "", "", false
		}
	}
	own := strings.Fields(strings.ToLower(strings.TrimSpace(parenRe.ReplaceAllString(label, " "))))
	base := words[0]
	extends := true
	for _, w := range words[1:] {
		extends = extends && extendsBase(base, w)
	}
	if extends {
		if slices.Equal(own, base) {
			return "before", strings.Join(base, " "), true
		}
		return "after", strings.Join(base, " "), true
	}
	if side, key, ok := negatedSibling(words, own); ok && ownSide == "" {
		return side, key, true
	}
	// The words all siblings share at the start and at the end.
	pre, suf := len(words[0]), len(words[0])
	for _, w := range words[1:] {
		p := 0
		for p < min(pre, len(w)) && w[p] == words[0][p] {
			p++
		}
		pre = p
		q := 0
		for q < min(suf, len(w)) && w[len(w)-1-q] == words[0][len(words[0])-1-q] {
			q++
		}
		suf = q
	}
	if pre+suf == 0 {
		return "", "", false
	}
	decided := false
	middles := map[string]bool{}
	for _, w := range words {
		if pre+suf >= len(w) || len(w)-pre-suf > 3 {
			return "", "", false
		}
		mid := strings.Join(w[pre:len(w)-suf], " ")
		if middles[mid] {
			return "", "", false
		}
		middles[mid] = true
		if s, _, _ := stateOf(mid); s != "" {
			decided = true
		}
	}
	if !decided || ownSide != "" || pre+suf >= len(own) {
		return "", "", false // a label its own words decide keeps the key they leave
	}
	midSide, _, _ := stateOf(strings.Join(own[pre:len(own)-suf], " "))
	if midSide == "" {
		midSide = "?"
	}
	return midSide, strings.Join(append(append([]string{}, own[:pre]...), own[len(own)-suf:]...), " "), true
}

var (
	// rttRe is ping's summary: "rtt min/avg/max/mdev = 0.030/0.041/0.058/0.008 ms".
	rttRe = regexp.MustCompile(`\b(rtt|round-trip)\s+([a-z]+(?:/[a-z]+)+)\s*=\s*([\d.]+(?:/[\d.]+)+)\s*([a-zµ]+)`)
	// pingLossRe is ping's count line: "100000 packets transmitted, 99990 received, +6 errors,
	// 0.01% packet loss, time 34001ms" (iputils; busybox's "0% packet loss" alike).
	// pingTimeRe is the time on ping's count line; pingFloodRe a flood ping's command (-f) with
	// its count (-c), whose time is how long the count took.
	pingTimeRe  = regexp.MustCompile(`,\s+time\s+(\d+)ms\b`)
	pingFloodRe = regexp.MustCompile(`\bping\b.*\s-[a-zA-Z]*f\b.*\s-c\s*\d|\bping\b.*\s-c\s*\d+.*\s-[a-zA-Z]*f\b`)
	pingLossRe  = regexp.MustCompile(`\bpackets transmitted, \d+ (?:packets )?received,.*?\b([\d.]+)% packet loss\b`)
	// assignRe is "name=value" or "name = value [unit]" as tools print them: neper's
	// "throughput=41152.34", "latency_p99=0.000062"; sockperf's "avg-latency=5.802",
	// "percentile 99.000 =    8.193", "<MAX> observation =   41.233" (MAX and MIN are two names).
	assignRe = regexp.MustCompile(`(?:^|[\s(,>:])((?:<[A-Z]+>\s+)?[A-Za-z<][\w<>.\-]*(?: [\d.]+)?)\s?=\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?:\s+([A-Za-zµ/%]+))?(?:[\s,)]|$)`)
)

// assignments reads the figures a tool prints as names and values: ping's rtt line, one
// reading per statistic; neper's and sockperf's "name=value", the line's first. A name that
// ends in its unit ("throughput_Mbps") gives it.
func assignments(text string, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading) []reading {
	if m := rttRe.FindStringSubmatch(text); m != nil {
		names, vals := strings.Split(m[2], "/"), strings.Split(m[3], "/")
		u, ok := lookupUnit(m[4])
		if len(names) != len(vals) || !ok {
			return nil
		}
		var out []reading
		for k := range names {
			if v, ok := parseNumber(vals[k]); ok {
				out = append(out, mk("r", m[1]+"_"+names[k], u.norm, k, v*u.factor, m[1]+" "+names[k]))
			}
		}
		return out
	}
	m := assignRe.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	name, unitName, factor := m[1], "", 1.0
	if u, ok := lookupUnit(m[3]); ok {
		unitName, factor = u.norm, u.factor
	} else if _, suffix, found := strings.Cut(name, "_"); found {
		if u, ok := lookupUnit(suffix); ok && u.kind != "time" {
			unitName, factor = u.norm, u.factor
		}
	}
	metric := metricName(name)
	if u, ok := unitOnceAtEnd(text); ok && unitName == "" {
		unitName, factor = u.norm, u.factor
		metric = statisticOf(name, u, metric)
	}
	return []reading{mk("n", metric, unitName, 0, v*factor, strings.ToLower(name))}
}

// statisticOf is the metric of a statistic named alone in a line whose unit says what it is
// of ("avg=21.4 ... (Gbit/s)" is a throughput, "avg=412 ... [us]" a mean latency); metric
// for another name.
func statisticOf(name string, u unit, metric string) string {
	word := strings.ToLower(name)
	switch {
	case u.kind == "time" && (word == "avg" || word == "mean" || word == "average"):
		return "mean_latency"
	case u.kind == "time" && word == "median":
		return "p50_latency"
	case u.kind != "time" && u.kind != "percent" && (word == "avg" || word == "mean" || word == "average" || word == "median"):
		return metricOf(u)
	}
	return metric
}

// assignmentsEndRe is a line of several name=value statistics whose unit is written once,
// at its end, bare or in brackets: "avg=21.4 min=20.9 max=21.8 (Gbit/s)", "avg=412 p99=955
// [us]", "... max=21.8 Gbit/s".
var assignmentsEndRe = regexp.MustCompile(`=\s*[-+]?\d+(?:\.\d+)?[\s,;]+[A-Za-z][\w.-]*\s?=\s*[-+]?\d+(?:\.\d+)?\s*[(\[]?([A-Za-zµ/%]+)[)\]]?\s*$`)

// unitOnceAtEnd is the unit a line of name=value statistics writes once at its end, for
// every figure of it that has none of its own.
func unitOnceAtEnd(text string) (unit, bool) {
	m := assignmentsEndRe.FindStringSubmatch(strings.TrimRight(text, " \t\r\n."))
	if m == nil {
		return unit{}, false
	}
	return lookupUnit(m[1])
}

// tailStatesRe is the states of "X vs Y" named in the same order after the figures: "(patched
// vs baseline)", ", new vs old".
var tailStatesRe = regexp.MustCompile(`(?i)^[^()]{0,20}?[(,;]\s*([A-Za-z][\w/+.-]*(?:\s+[\w/+.-]+){0,3}?)\s+(?:vs\.?|versus)\s+([A-Za-z][\w/+.-]*(?:\s+[\w/+.-]+){0,3}?)\s*(?:[).;,]|$)`)

// vsStatesAfter: "X vs Y" followed by the states in the same order, the after's first
// ("9.61 vs 9.12 Gbit/s (patched vs baseline)"): X is the after's figure.
func vsStatesAfter(connector, tail string) bool {
	if !strings.HasPrefix(strings.ToLower(connector), "vs") && !strings.EqualFold(connector, "versus") {
		return false
	}
	if m := tailOrderRe.FindStringSubmatch(tail); m != nil {
		// "22.4 vs 24.0 Gbit/s (net-next first)", "(patched first)", "(base last)"
		side, _, _ := stateOf(m[1])
		first := strings.EqualFold(m[2], "first")
		return side == "after" && first || side == "before" && !first
	}
	m := tailStatesRe.FindStringSubmatch(tail)
	if m == nil {
		return false
	}
	a, _, _ := stateOf(m[1])
	b, _, _ := stateOf(m[2])
	return a == "after" && b == "before"
}

// tailOrderRe is a note after "X vs Y" that says which state's figure comes first or last:
// "(net-next first)", "(patched first)", "(baseline last)".
var tailOrderRe = regexp.MustCompile(`(?i)^[^()]{0,20}?\(\s*([A-Za-z][\w/+.-]*(?:\s+[\w/+.-]+){0,3}?)\s+(first|last)\s*[),;]`)

// vsBeforeNamedLast: "X vs Y" followed by the name of the state before ("9.8 Gbps vs 9.2
// Gbps on net-next", "... vs 9.2 without the patch"): Y is the before's figure, X the after's.
// Arrows say their direction themselves.
func vsBeforeNamedLast(connector, tail string) bool {
	if !strings.HasPrefix(strings.ToLower(connector), "vs") && !strings.EqualFold(connector, "versus") {
		return false
	}
	if tailOrderRe.MatchString(tail) {
		return false // "(net-next first)": the order, not the second figure's state (vsStatesAfter)
	}
	words := strings.Fields(strings.TrimLeft(tail, " ,"))
	if len(words) > 5 {
		words = words[:5]
	}
	side, _, _ := stateOf(strings.TrimRight(strings.Join(words, " "), ".,;)"))
	return side == "before"
}

// statedMoreRe is a change the sentence states by how much the number moved: "~9% more
// throughput", "12% lower latency", "3% fewer cycles".
var statedMoreRe = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s?%\s+(more|higher|less|lower|fewer)\b`)

// statedByRe is a change stated by a verb or a comparative and "by N%" ("improves TCP_RR by
// 6%", "reduces the latency by 12%", "gets faster by 7%", "goes down by 5%"), or by N% and a
// judgement ("8% faster", "a 5% improvement").
var statedByRe = regexp.MustCompile(`(?i)\b(improv\w*|boost\w*|increas\w*|rais\w*|reduc\w*|decreas\w*|cuts?|lowers?|regress\w*|faster|slower|better|worse|higher|up|down|drop\w*|fall\w*|fell|grow\w*|grew|ris(?:e|es|ing)|rose|shrink\w*|shrank)\b[^.;()%]{0,40}?\bby\s+(?:~|about\s+)?(\d+(?:\.\d+)?)\s?%|(\d+(?:\.\d+)?)\s?%\s+(better|faster|improvement|gain|speed-?up|slower|worse|regression)\b`)

// statedByMoreRe is a further "by N%" of statedByRe's verb, after its figures in parentheses:
// "(...) and TCP_STREAM by 2%".
var statedByMoreRe = regexp.MustCompile(`(?i)^[\s()]*,?\s*(?:and\s+)?[^.;()%\d]{0,40}?\bby\s+(?:~|about\s+)?(\d+(?:\.\d+)?)\s?%`)

// statedTimesBaseRe is a change stated as a multiple of the baseline's figure: "1.12x the
// baseline throughput", "0.9 times the original".
var statedTimesBaseRe = regexp.MustCompile(`(?i)\b(\d+(?:\.\d+)?)\s?(?:x|times)\s+(?:the\s+|that\s+of\s+the\s+)?(?:baseline|base|original|old|previous|unpatched|stock|vanilla)\b`)

// tailChange is the signed percentage right after a pair's figures ("9.71 vs 9.33 Gbps
// (+4.1%)"), as a lead statedChange reads; "" where there is none.
func tailChange(tail string) string {
	if m := signedPercentRe.FindStringIndex(tail); m != nil && m[0] <= 12 {
		return tail[:m[1]]
	}
	return ""
}

// signedPercentRe is a percentage written with its sign: "+4.1%", "-3 %".
var signedPercentRe = regexp.MustCompile(`(?:^|[\s(:,])([-+]\d+(?:\.\d+)?)\s?%`)

// statedChange is the last change lead states and its sign as a fraction, with higher telling
// which way is better (nil: not known); ok false where it states none it can sign.
func statedChange(lead string, higher *bool) (want float64, ok bool) {
	if ms := statedTimesBaseRe.FindAllStringSubmatch(lead, -1); ms != nil {
		x, _ := strconv.ParseFloat(ms[len(ms)-1][1], 64)
		return x - 1, x > 0
	}
	if ms := statedMoreRe.FindAllStringSubmatch(lead, -1); ms != nil {
		m := ms[len(ms)-1]
		pct, _ := strconv.ParseFloat(m[1], 64)
		if w := strings.ToLower(m[2]); w == "less" || w == "lower" || w == "fewer" {
			return -pct / 100, true
		}
		return pct / 100, true
	}
	ms := statedByRe.FindAllStringSubmatchIndex(lead, -1)
	if ms == nil {
		// "throughput: +4.1% (9.71 Gbps vs 9.33 Gbps)": a signed percentage before the figures
		if ss := signedPercentRe.FindAllStringSubmatch(lead, -1); ss != nil {
			pct, _ := strconv.ParseFloat(ss[len(ss)-1][1], 64)
			return pct / 100, true
		}
		return 0, false
	}
	at := ms[len(ms)-1]
	g := func(k int) string {
		if at[2*k] < 0 {
			return ""
		}
		return lead[at[2*k]:at[2*k+1]]
	}
	word, number := strings.ToLower(g(1)+g(4)), g(2)+g(3)
	for rest := lead[at[1]:]; g(1) != ""; {
		// "improves UDP_RR by 4% (...) and TCP_STREAM by 2%": the verb goes on to the next
		// "by N%" of its sentence.
		c := statedByMoreRe.FindStringSubmatchIndex(rest)
		if c == nil {
			break
		}
		number, rest = rest[c[2]:c[3]], rest[c[1]:]
	}
	pct, _ := strconv.ParseFloat(number, 64)
	switch {
	case slices.ContainsFunc([]string{"increas", "rais", "boost", "higher", "up", "grow", "grew", "ris", "rose"}, func(p string) bool { return strings.HasPrefix(word, p) }):
		return pct / 100, true
	case slices.ContainsFunc([]string{"reduc", "decreas", "cut", "lower", "down", "drop", "fall", "fell", "shr"}, func(p string) bool { return strings.HasPrefix(word, p) }):
		return -pct / 100, true
	case higher == nil:
		return 0, false
	}
	better := !(strings.HasPrefix(word, "slower") || strings.HasPrefix(word, "worse") || strings.HasPrefix(word, "regress"))
	if better == *higher {
		return pct / 100, true
	}
	return -pct / 100, true
}

// higherIsBetter says which way a comparison's figures are better, by their unit or the
// label's: a rate is better higher, a time lower; nil where no unit says.
func higherIsBetter(label, ub, ua string) *bool {
	for _, w := range []string{ub, ua} {
		if u, ok := lookupUnit(w); ok && u.norm != "" {
			return betterHigher(u)
		}
	}
	if u, ok := headingUnit(label); ok {
		return betterHigher(u)
	}
	return nil
}

func betterHigher(u unit) *bool {
	switch u.kind {
	case "rate", "packets", "trans":
		t := true
		return &t
	case "time", "cycles":
		f := false
		return &f
	}
	return nil
}

// vsAgainstStated: "X vs Y" after a stated change ("~9% more throughput (34.5 vs 31.6
// Gbit/s)", "improves TCP_RR by 6% (71k vs 67k trans/s)") whose direction and size fit Y -> X
// and not X -> Y: the figure after the change is written first. lead is the text before the
// comparison; the change it states last is the one that speaks of it.
func vsAgainstStated(connector, lead string, first, second float64, higher *bool) bool {
	if !strings.HasPrefix(strings.ToLower(connector), "vs") && !strings.EqualFold(connector, "versus") || first <= 0 || second <= 0 {
		return false
	}
	want, ok := statedChange(lead, higher)
	if !ok {
		return false
	}
	fits := func(before, after float64) bool {
		got := after/before - 1
		return got*want > 0 && math.Abs(got-want) <= math.Max(0.02, math.Abs(want)/2)
	}
	return !fits(first, second) && fits(second, first)
}

// leadAfterRe is a sentence's words before "X vs Y" that name the state after the change as
// what X is of: "The patched kernel forwards", "With this series we get".
var leadAfterRe = regexp.MustCompile(`(?i)\b(?:patched|with\s+(?:this|the|my|our)\s+(?:patch|patches|series|change|changes|fix|patchset)|this\s+(?:patch|series|change|fix|patchset))\b`)

// vsAfterNamedBefore: "X vs Y" after words of its sentence that name the state after the
// change, and none that name the one before, in that sentence or after Y: X is the after's.
func vsAfterNamedBefore(connector, lead, tail string) bool {
	if !strings.HasPrefix(strings.ToLower(connector), "vs") && !strings.EqualFold(connector, "versus") {
		return false
	}
	sentence := lead[strings.LastIndex(lead, ". ")+1:]
	return leadAfterRe.MatchString(sentence) && !clauseBeforeRe.MatchString(sentence) && !leadAfterRe.MatchString(tail)
}

// vsAfterFirst: a label that names its states in the order of its figures ("patched vs
// base: 9.8 vs 9.4") names the state after the change first.
func vsAfterFirst(label string) bool {
	first, second, ok := strings.Cut(strings.ToLower(label), " vs")
	if !ok {
		return false
	}
	a, _, _ := stateOf(first)
	b, _, _ := stateOf(strings.TrimPrefix(strings.TrimPrefix(second, "."), "ersus"))
	return a == "after" && b == "before"
}

// arrowPair reads "X unit -> Y unit" (or "=>", "→", "vs") as a claim: X before, Y after. A side
// without a unit takes the other's; two bare numbers are a claim only on a labelled line
// ("Cycles per byte: 1.9 -> 1.6"). What is around the arrow must not be an
// expression ("65536/1500 -> 44 frames").
func arrowPair(label, rest string, n, i int, b block) ([2]reading, bool) {
	// A figure's spread is not a figure: "18.2 ± 0.3 us -> 16.9 ± 0.2 us".
	rest = spreadRe.ReplaceAllString(rest, "")
	m := arrowRe.FindStringSubmatch(rest)
	if m == nil {
		return [2]reading{}, false
	}
	connector, tail := strings.TrimSpace(m[4]), rest[arrowRe.FindStringIndex(rest)[1]:]
	m = append(m[:4], m[5:]...) // the connector: only "vs" asks which state comes first
	before, ok1 := parseNumber(m[2])
	after, ok2 := parseNumber(m[4])
	if !ok1 || !ok2 {
		return [2]reading{}, false
	}
	// A k or M on a bare number scales it (11.82M -> 12.61M); the label says what it counts.
	if f, ok := scaleSuffix[m[3]]; ok {
		before, m[3] = before*f, ""
	}
	if f, ok := scaleSuffix[m[5]]; ok {
		after, m[5] = after*f, ""
	}
	ub, ua := m[3], m[5]
	if ub == "" && ua == "" {
		// "RPS 120K -> 135K": the word before the figures is their unit.
		if words := strings.Fields(rest[:arrowRe.FindStringIndex(rest)[0]]); len(words) > 0 {
			if _, ok := lookupUnit(words[len(words)-1]); ok {
				ub = words[len(words)-1]
			}
		}
	}
	if ub == "" && ua == "" && label == "" {
		// "The RR test shows a 4% regression (42.1k -> 40.4k)": the sentence names the count
		ub = proseRateUnit(b.lead + " " + rest[:arrowRe.FindStringIndex(rest)[0]])
	}
	lead := b.lead + " " + label + " " + rest[:arrowRe.FindStringIndex(rest)[0]]
	if vsAfterFirst(label) || vsBeforeNamedLast(connector, tail) || vsAfterNamedBefore(connector, lead, tail) || vsStatesAfter(connector, tail) || vsAgainstStated(connector, lead, before, after, higherIsBetter(label, ub, ua)) ||
		vsAgainstStated(connector, tailChange(tail), before, after, nil) {
		before, after, ub, ua = after, before, ua, ub
	}
	u, uAfter, metric, ok := pairUnit(label, ub, ua)
	if !ok {
		return [2]reading{}, false
	}
	r := reading{key: b.cond + "|a|" + labelKey(label), metric: metric, unit: u.norm, line: n, idx: i}
	rb, ra := r, r
	rb.value, rb.side, rb.state = round(before*u.factor), "before", "before"
	ra.value, ra.side, ra.state = round(after*uAfter.factor), "after", "after"
	return [2]reading{rb, ra}, true
}

// pairUnit is the one unit of two figures' written units: a side without one takes the
// other's; two bare numbers say what they measure only under a label (unit factor 1, the
// label as the metric); units of two kinds, or a share without a label, are no pair.
func pairUnit(label, first, second string) (u1, u2 unit, metric string, ok bool) {
	u1, ok1 := lookupUnit(first)
	u2, ok2 := lookupUnit(second)
	switch {
	case first != "" && !ok1, second != "" && !ok2:
		return unit{}, unit{}, "", false
	case ok1 && !ok2:
		u2 = u1
	case ok2 && !ok1:
		u1 = u2
	case !ok1 && !ok2:
		if label == "" {
			return unit{}, unit{}, "", false
		}
		u1, u2 = unit{factor: 1}, unit{factor: 1}
		if u, ok := headingUnit(label); ok { // "Round trip (us)", "Requests per second": the label's unit
			u1, u2 = u, u
		}
	}
	if u1.norm != u2.norm || u1.kind == "percent" && label == "" {
		return unit{}, unit{}, "", false
	}
	metric = metricOf(u1)
	if u1.norm == "" {
		metric = metricName(label)
	} else if m := percentileLabelRe.FindStringSubmatch(label); m != nil && u1.kind == "time" {
		metric = "p" + strings.ReplaceAll(m[1], ".", "") + "_latency" // "p99.9": p999_latency
	}
	return u1, u2, metric, true
}

// percentileLabelRe is a label that names a percentile of a latency: "p99", "P99.9", "p50:".
var percentileLabelRe = regexp.MustCompile(`(?i)^p(\d{1,2}(?:\.\d{1,3})?)\b`)

// labelUnit is the unit a label ends in: "Requests/sec", "throughput (Gbps)", "lat [us]".
func labelUnit(label string) (unit, bool) {
	f := strings.Fields(label)
	if len(f) == 0 {
		return unit{}, false
	}
	last := strings.Trim(f[len(f)-1], "()[]:")
	if u, ok := lookupUnit(last); ok && u.norm != "" {
		return u, true
	}
	if len(f) > 1 && scaleNoteRe.MatchString(f[len(f)-1]) {
		// "rx pps (M)", "bits/s [G]": the unit, then its scale in brackets
		if u, ok := lookupUnit(strings.Trim(f[len(f)-1], "()[]") + strings.Trim(f[len(f)-2], "()[]:")); ok && u.norm != "" {
			return u, true
		}
	}
	if len(last) > 1 && (strings.HasSuffix(last, "%") || strings.HasPrefix(last, "%")) {
		// "cpu%", "util%", mpstat's "%soft": a share, its name glued to the sign
		if u, ok := lookupUnit("%"); ok {
			return u, true
		}
	}
	if m := unitFirstNoteRe.FindStringSubmatch(label); m != nil {
		// "Mpps (64B)", "Gbit/s, 8 queues": a rate's unit, then the case its figures are of
		if u, ok := lookupUnit(m[1]); ok && (u.kind == "rate" || u.kind == "packets" || u.kind == "trans") {
			return u, true
		}
	}
	if loc := trailingNoteRe.FindStringIndex(label); loc != nil && loc[0] > 0 && !strings.ContainsAny(label[:loc[0]], "()[]") {
		// "CPU% (tx)", "Gbit/s [median]": the unit, then a note of what it is of
		if u, ok := labelUnit(label[:loc[0]]); ok {
			return u, true
		}
	}
	if ms := bracketedRe.FindAllStringSubmatch(label, -1); len(ms) == 1 {
		// "Stream (Gbit/s) split off": a group's unit in brackets, the state's words after it
		if u, ok := lookupUnit(strings.TrimSpace(ms[0][1])); ok && u.norm != "" {
			return u, true
		}
	}
	if rrTestRe.MatchString(last) {
		return unit{kind: "trans", norm: "trans/s", factor: 1}, true // netperf's RR tests report transactions/s
	}
	if first := strings.Trim(f[0], "()[]:,"); len(f) > 1 && rrTestRe.MatchString(first) && !latencyStatRe.MatchString(label) && !latencyNameRe.MatchString(label) {
		// "tcp_rr 1 byte", "UDP_RR 64B", "udp_rr, 1 flow": the test's name, then its case
		return unit{kind: "trans", norm: "trans/s", factor: 1}, true
	}
	return unit{}, false
}

// bracketedRe is a word or two in parentheses or brackets.
var bracketedRe = regexp.MustCompile(`[(\[]([^()\[\]]{1,12})[)\]]`)

// scaleNoteRe is a scale alone in brackets, the scale of the unit before it: "(M)", "[K]".
var scaleNoteRe = regexp.MustCompile(`^[(\[][kKMG][)\]]:?$`)

// unitFirstNoteRe is a label that is a unit, then a note of its case in parentheses or after
// a comma: "Mpps (64B)", "Gbit/s, 8 queues".
var unitFirstNoteRe = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z/]*)\s*(?:\([^()]{1,30}\)|,\s*[^,]{1,30})\s*$`)

// rrTestRe is a netperf request/response test's name: its figures are transactions per second.
var rrTestRe = regexp.MustCompile(`(?i)^(?:TCP|UDP|SCTP)_(?:RR|CRR|CC)$`)

// slashedRunsRe is a row of bare numbers parted by slashes with spaces around them, three
// or more: one state's runs ("41,827 / 41,930 / 41,702"); two are left to the readers of a
// pair ("3.62 / 4.05").
var slashedRunsRe = regexp.MustCompile(`^\s*\d[\d,]*(?:\.\d+)?(?:\s+/\s+\d[\d,]*(?:\.\d+)?){2,}\s*$`)

// runsInARow are the figures of a line that gives one state's runs after its name: a state's
// label, then only bare numbers, at least two, each within a factor of two of the others (runs
// of one measurement, not the figures of several sizes or tests).
//
// sideOfLabel says the label's side was read from the label (its words or its siblings'),
// not from a heading above.
//
// A row that ends with its runs' summary ("avg: 157.9") may spread wider, as long as the
// summary lies among the runs: the author says they are runs of one measurement.
func runsInARow(label, rest string, sideOfLabel bool) (out []float64, summary float64, summarized bool) {
	if slashedRunsRe.MatchString(rest) {
		rest = strings.ReplaceAll(rest, "/", " ") // "41,827 / 41,930 / 41,702": the runs parted by slashes
	}
	runs, summary, summarized := withoutSummary(rest)
	sh := readFigures(runs)
	if label == "" || !sideOfLabel || len(sh.figures) < 2 || strings.Trim(strings.ReplaceAll(sh.shape, "#", ""), " ") != "" {
		return nil, 0, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range sh.figures {
		lo, hi = min(lo, f.value), max(hi, f.value)
		out = append(out, f.value)
	}
	central := summarized && summary >= lo && summary <= hi // an average, not a max or a sum
	switch {
	case lo <= 0:
		return nil, 0, false
	case central:
	case hi > 2*lo:
		return nil, 0, false
	}
	return out, summary, central
}

// runListRe is a list of figures apart by commas, slashes or spaces, the unit written once
// after the last: "11.2, 11.4, 11.1 Gbps", "11.2 11.4 11.1 Gbps", "2.37 / 2.38 / 2.40 Mpps".
var runListRe = regexp.MustCompile(`^\s*((?:~?\d[\d.]*(?:\s*,\s*|\s+/\s+|\s+))+~?\d[\d.]*)\s?([A-Za-zµ/]+)\s*$`)

// groupedNumberRe is one number with its thousands apart by commas ("312,442"), no list of runs.
var groupedNumberRe = regexp.MustCompile(`^\s*~?\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*$`)

// runsSharingAUnit reads a state's line of runs in one unit (runListRe, or each figure with
// the same unit: "2.1 Mpps, 2.2 Mpps, 2.0 Mpps"), as runsInARow its bare runs: at least two,
// none above twice another.
func runsSharingAUnit(label, rest string, sideOfLabel bool) ([]float64, unit, bool) {
	if label == "" || !sideOfLabel {
		return nil, unit{}, false
	}
	var text, unitName string
	if m := runListRe.FindStringSubmatch(rest); m != nil && !groupedNumberRe.MatchString(m[1]) {
		text, unitName = m[1], m[2]
	} else {
		sh := readFigures(rest)
		if len(sh.figures) < 2 || len(sh.measured()) != len(sh.figures) {
			return nil, unit{}, false
		}
		for _, f := range strings.Fields(sh.shape) {
			if f != "#"+sh.figures[0].unit.norm {
				return nil, unit{}, false // words between the figures: not a list of runs
			}
		}
		for _, f := range sh.figures {
			if f.unit.norm != sh.figures[0].unit.norm || f.unit.factor != sh.figures[0].unit.factor {
				return nil, unit{}, false
			}
		}
		text = rest
	}
	var vals []float64
	var u unit
	if unitName != "" {
		var ok bool
		if u, ok = lookupUnit(unitName); !ok || u.norm == "" || u.kind == "percent" {
			return nil, unit{}, false
		}
		for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '/' }) {
			v, ok := parseNumber(strings.TrimPrefix(f, "~"))
			if !ok {
				return nil, unit{}, false
			}
			vals = append(vals, v)
		}
	} else {
		sh := readFigures(text)
		u = sh.figures[0].unit
		for _, f := range sh.figures {
			vals = append(vals, f.value/u.factor)
		}
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if len(vals) < 2 || lo <= 0 || hi > 2*lo {
		return nil, unit{}, false
	}
	return vals, u, true
}

// spreadRe is the spread written after a figure: "± 0.3", "+/- 2.1%", "+-0.05".
var spreadRe = regexp.MustCompile(`\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?%?`)

// slashLabelRe is a label that names both states joined by a slash: "before/after", "old/new",
// "base / patched", "w/o / w/ patch".
var slashLabelRe = regexp.MustCompile(`(?i)(?:^|\s|\()(w/o|[A-Za-z][\w-]*)\s*/\s*(w/|[A-Za-z][\w-]*)(?:\s+` + patchNoun + `)?(?:$|[\s):])`)

// contrastSide is the side a word of contrastPairs names: the first of a pair is before.
func contrastSide(word string) string {
	for _, c := range contrastPairs {
		if strings.EqualFold(word, c[0]) {
			return "before"
		}
	}
	return "after"
}

// slashValuesRe is a rest of two figures joined by a slash, a unit after either: "7.4/8.1
// Gbps", "38 us / 33 us".
var slashValuesRe = regexp.MustCompile(`^\s*~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%]+(?:/s(?:ec)?)?)?\s*/\s*~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%]+(?:/s(?:ec)?)?)?\s*$`)

// statesAfterRe is a rest of figures joined by a slash with the states in parentheses after
// them, joined the same way: "9.41 / 9.87 Gbps (before / after)".
var statesAfterRe = regexp.MustCompile(`^(.*?\d.*?)\s*\(((?:w/o|[A-Za-z][\w-]*)\s*/\s*(?:w/|[A-Za-z][\w-]*))\)\s*$`)

// slashStates reads "Throughput before/after: 7.4/8.1 Gbps": the label's two states, joined
// by a slash, in the order of the figures joined the same way.
func slashStates(label, rest string, n, i int, b block) ([2]reading, bool) {
	if m := statesAfterRe.FindStringSubmatch(rest); m != nil && !slashLabelRe.MatchString(label) {
		// "Throughput: 9.41 / 9.87 Gbps (before / after)": the states after the figures
		label, rest = strings.TrimSpace(label+" ("+m[2]+")"), m[1]
	}
	lm := slashLabelRe.FindStringSubmatchIndex(label)
	vm := slashValuesRe.FindStringSubmatch(rest)
	if lm == nil || vm == nil {
		return [2]reading{}, false
	}
	n1, n2 := label[lm[2]:lm[3]], label[lm[4]:lm[5]]
	s1, _, _ := stateOf(n1)
	s2, _, _ := stateOf(n2)
	if contrasting(n1, n2) && (s1 == "" || s2 == "") {
		// "w/o / w/", "without/with": a contrasting pair, one of whose words may say nothing alone
		s1, s2 = contrastSide(n1), contrastSide(n2)
	}
	if s1 == "" || s2 == "" || s1 == s2 {
		return [2]reading{}, false
	}
	v1, ok1 := parseNumber(vm[1])
	v2, ok2 := parseNumber(vm[3])
	if !ok1 || !ok2 {
		return [2]reading{}, false
	}
	name := strings.TrimSpace(label[:lm[0]] + " " + label[lm[1]:])
	u, u2, metric, ok := pairUnit(name, vm[2], vm[4])
	if !ok {
		return [2]reading{}, false
	}
	r := reading{key: b.cond + "|s|" + labelKey(name), metric: metric, unit: u.norm, line: n, idx: i}
	r1, r2 := r, r
	r1.value, r1.side, r1.state = round(v1*u.factor), s1, n1
	r2.value, r2.side, r2.state = round(v2*u2.factor), s2, n2
	if s1 == "after" {
		r1, r2 = r2, r1
	}
	return [2]reading{r1, r2}, true
}

// inlineStatesRe is a line's rest that names each state before its figure: "old 41.2  new
// 37.9", "base: 9.4 Gbps, patched: 9.8 Gbps", "before 1.21, after 1.48 (Mpps)." (the unit of
// both in parentheses after them), "(before) 412   (after) 588".
var inlineStatesRe = regexp.MustCompile(`^\s*[(\[]?([A-Za-z][\w/+.-]*(?:\s[A-Za-z][\w/+.-]*)?)[)\]]?(?:\s*[:=]\s*|\s+)~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%/]+(?:/s(?:ec)?)?)?\s*[,;]?\s+[(\[]?([A-Za-z][\w/+.-]*(?:\s[A-Za-z][\w/+.-]*)?)[)\]]?(?:\s*[:=]\s*|\s+)~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*([A-Za-zµ%/]+(?:/s(?:ec)?)?)?\s*(?:\(([A-Za-zµ%/^\d]+(?:/s(?:ec)?)?)\))?\s*\.?\s*$`)

// inlineStates reads a line whose rest names two states, each before its figure, as a claim:
// the names must place one before and one after (stateOf), or be a contrasting pair.
func inlineStates(label, rest string, n, i int, b block) ([2]reading, bool) {
	m := inlineStatesRe.FindStringSubmatch(spreadRe.ReplaceAllString(rest, ""))
	if m == nil {
		return [2]reading{}, false
	}
	s1, _, _ := stateOf(m[1])
	s2, _, _ := stateOf(m[4])
	if f1, f4 := firstWord(m[1]), firstWord(m[4]); (s1 == "") != (s2 == "") && contrasting(f1, f4) {
		// "without 41.2  with 38.9": "with" is a state only against its contrast
		other := map[string]string{"before": "after", "after": "before"}
		if s1 == "" {
			s1 = other[s2]
		} else {
			s2 = other[s1]
		}
	}
	if s1 == "" || s2 == "" || s1 == s2 {
		return [2]reading{}, false
	}
	v1, ok1 := parseNumber(m[2])
	v2, ok2 := parseNumber(m[5])
	if !ok1 || !ok2 {
		return [2]reading{}, false
	}
	ub, ua := m[3], m[6]
	// A scale glued on a bare figure ("1.82M") is a factor, not a unit.
	if f, ok := glueScales[ub]; ok {
		v1, ub = v1*f, ""
	}
	if f, ok := glueScales[ua]; ok {
		v2, ua = v2*f, ""
	}
	if ub == "" && ua == "" {
		ub = m[7]
	}
	u, u2, metric, ok := pairUnit(label, ub, ua)
	if !ok && label == "" && ub == "" && ua == "" {
		// "before 41.2   after 44.9" on a line of its own: both states named, no unit given
		u, u2, metric, ok = unit{factor: 1}, unit{factor: 1}, "value", true
	}
	if !ok {
		return [2]reading{}, false
	}
	r := reading{key: b.cond + "|i|" + labelKey(label), metric: metric, unit: u.norm, line: n, idx: i}
	r1, r2 := r, r
	r1.value, r1.side, r1.state = round(v1*u.factor), s1, m[1]
	r2.value, r2.side, r2.state = round(v2*u2.factor), s2, m[4]
	if s1 == "after" {
		r1, r2 = r2, r1
	}
	return [2]reading{r1, r2}, true
}

// glueScales are the scales written glued on a figure without a unit: "412k", "1.82M", "9.1G".
var glueScales = map[string]float64{"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}

// metricName is a label as a metric name: "Cycles per byte" -> cycles_per_byte.
func metricName(label string) string {
	f := strings.FieldsFunc(strings.ToLower(labelKey(label)), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	if len(f) == 0 {
		return "value"
	}
	return strings.Join(f, "_")
}

// releaseSide is the state a kernel release names: "-unpatched", "-vanilla", "-base" are
// before; a release ending in "+" (a tree with changes) or "-patched" is after.
func releaseSide(release string) string {
	for _, part := range strings.FieldsFunc(strings.ToLower(release), func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch part {
		case "unpatched", "vanilla", "base", "baseline", "orig", "stock", "clean":
			return "before"
		case "patched", "fix", "fixed":
			return "after"
		}
	}
	if strings.HasSuffix(release, "+") {
		return "after"
	}
	return ""
}

// superNetperfRe is super_netperf's command: it prints one number, the sum of its netperf
// instances' throughput (10^6bits/s for a stream test, trans/s for request/response).
var superNetperfRe = regexp.MustCompile(`\bsuper_netperf(?:\.sh)?\b`)

// requestResponseRe is a netperf test of transactions: request/response, connect/request/
// response, connect/close (TCP_RR, TCP_CRR, TCP_CC).
var requestResponseRe = regexp.MustCompile(`(?i)-t\s*\S*_(?:RR|CRR|CC)\b`)

// totalOf is what a bare number under a command is: super_netperf's total throughput,
// netperf's result (its default output's last column, or -v 0's one number: TCP_STREAM's
// unless -t names another test), or a number of unknown kind.
func totalOf(cond string) (metric, unitName string, factor float64) {
	if !superNetperfRe.MatchString(cond) && (!netperfCmdRe.MatchString(cond) || netperfSelectorsRe.MatchString(cond)) {
		return "", "", 1 // -o/-O choose what it prints
	}
	if requestResponseRe.MatchString(cond) {
		return "transaction_rate", "trans/s", 1
	}
	if m := netperfTestRe.FindStringSubmatch(cond); m != nil && !streamTestRe.MatchString(m[1]) {
		return "", "", 1 // a test of another kind (UDP_STREAM is a stream; SCTP_STREAM too)
	}
	switch m := netperfFormatRe.FindStringSubmatch(cond); {
	case m == nil || m[1] == "m":
		return "throughput", "bit/s", 1e6 // netperf's default: 10^6bits/s
	case m[1] == "g":
		return "throughput", "bit/s", 1e9
	case m[1] == "k":
		return "throughput", "bit/s", 1e3
	}
	return "", "", 1 // -f G/M/K: bytes, which nsperf reports as bits; not guessed
}

var (
	// netperfCmdRe is netperf's own command (super_netperf is superNetperfRe's).
	netperfCmdRe = regexp.MustCompile(`(?:^|[\s/$#])netperf\s+-`)
	// netperfSelectorsRe: -o or -O, the output selectors, which make the line another shape.
	netperfSelectorsRe = regexp.MustCompile(`\s-[oO](?:\s|$)`)
	// netperfTestRe is the test netperf's -t names; streamTestRe a test of bits per second.
	netperfTestRe = regexp.MustCompile(`-t\s*(\S+)`)
	streamTestRe  = regexp.MustCompile(`(?i)_(?:STREAM|MAERTS|SENDFILE)$`)
	// netperfFormatRe is -f, the units of a stream's throughput: g, m (default), k bits.
	netperfFormatRe = regexp.MustCompile(`\s-f\s*([gmkGMK])\b`)
)

// namedReadings reads a line without a label that a tool printed: a counter (nstat's "Name
// value rate"), a bare total under a command (super_netperf's). keyLabel is set to the
// counter's name, which keys its reading.
func namedReadings(text string, b block, mk func(kind, metric, unitName string, pos int, v float64, shape string) reading, keyLabel *string) []reading {
	if m := counterRe.FindStringSubmatch(text); m != nil {
		v, ok := parseNumber(m[2])
		if ok {
			*keyLabel = m[1]
			return []reading{mk("c", m[1], "count", 0, v, "")}
		}
	}
	if m := bareTotalRe.FindStringSubmatch(text); m != nil {
		if v, ok := parseNumber(m[1]); ok {
			metric, unitName, factor := totalOf(b.cond)
			return []reading{mk("t", metric, unitName, 0, v*factor, "")}
		}
	}
	return nil
}
