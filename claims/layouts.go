package claims

import (
	"regexp"
)

// The layouts the reader knows by their own shape, one entry each: a tool's output read by
// its grammar, or a sentence that compares two figures. An entry names the layout, gives
// its reader, and lists the fixtures of its family in testdata/families, each a message of
// our own words: TestLayoutsReadTheirFixtures switches each layout off in turn and checks
// that a fixture of its family then loses a pair (the layout is what reads it). A new
// layout is an entry here, its reader and a fixture. Tables, headings and labelled lines
// are read by the generic reader (scan.go, table.go, readings.go), not yet from this list.

// toolLayout is a tool's own output, read by its grammar at the line that starts it (next
// > i), or not starting there (next == i).
type toolLayout struct {
	name     string
	read     func(lines []line, i int, ctx context) (ms []measurement, next int, why string)
	fixtures []string
}

// netperfClassicLayout is netperf's classic blocks: read in read's switch (netperfBlock),
// their banner depending on the command before them.
const netperfClassicLayout = "netperf classic blocks"

// toolLayouts are tried in order at every line; netperf's classic blocks come after them.
var toolLayouts = []toolLayout{
	{"iperf3 summaries, intervals and -J", iperf3Output, []string{"iperf3-interval-rows-under-bullets.txt", "iperf3-udp.txt", "iperf3-parallel-sum.txt", "iperf3-bidir-roles.txt", "iperf3-summary-rows-without-header.txt"}},
	{"iperf 2 reports", iperf2Report, []string{"iperf2-report-under-headings.txt", "iperf2-runs-one-after-another.txt"}},
	{"pktgen results", pktgenResult, []string{"pktgen-result.txt"}},
	{"XDP samples' summaries", xdpSampleSummary, []string{"xdp-bench-summaries-three-states.txt"}},
	{"XDP samples' per-interval lines", xdpSampleLines, []string{"xdp-bench-interval-lines.txt"}},
	{"xdpsock statistics", xdpsockStats, []string{"xdpsock-stats-after-first.txt"}},
	{"LKP comparison tables", lkpTable, []string{"lkp-comparison.txt", "lkp-parameters-line-no-headline.txt"}},
	{"mmtests comparison reports", mmtestsReport, []string{"mmtests-compare-means.txt", "mmtests-compare-one-header-row.txt"}},
	{"neper summaries", neperOutput, []string{"neper-stream-summaries.txt", "neper-rr-latency.txt"}},
	{"flent summaries", flentSummary, []string{"flent-summaries-old-new.txt"}},
	{"BPF selftests bench iterations", benchIterations, []string{"bpf-bench-iterations.txt"}},
	{"netperf -k output", netperfKeyval, []string{"netperf-keyval-output.txt"}},
	{"fio reports", fioReport, []string{"fio-status-lines.txt"}},
	{"wrk reports", wrkReport, []string{"wrk-reports.txt"}},
	{"ApacheBench reports", abReport, []string{"ab-reports-base-patched.txt"}},
	{"nuttcp reports", nuttcpReport, []string{"nuttcp-run-lines.txt"}},
	{"ntttcp totals", ntttcpTotals, []string{"ntttcp-totals-before-after.txt"}},
	{"uperf summary lines", uperfSummary, []string{"uperf-summary-lines.txt"}},
	{"sockperf reports", sockperfReport, []string{"sockperf-full-reports.txt", "sockperf-summary.txt", "sockperf-percentile-lines-only.txt"}},
}

// netperfFixtures are the fixtures of netperfClassicLayout.
var netperfFixtures = []string{"netperf-stream-classic.txt", "netperf-demo-interims-toggles-two-devices.txt", "netperf-rr-cpu-two-blocks.txt", "netperf-crr-maerts-banners.txt", "netperf-udp-cc-one-header-state-headings.txt"}

// proseLayout is a sentence shape that compares two figures: its pattern over a
// paragraph's text, and its reader of one match, which says whether the match was a pair.
type proseLayout struct {
	name string
	re   *regexp.Regexp
	read func(r *Report, text string, m []int, lineOf func(int) int) bool
	// overlap: a match that is no pair gives way to one that starts inside it, after its
	// first group ("with 800k routes, without this patch ... 410ns": the next state word on).
	overlap bool
	// parameters: the pattern is matched over the text with the figures of the test's
	// parameters masked (maskParameters: "a 64 byte flood", "on 8 queues"), so that a
	// clause's words may name its test between the state's word and its figure.
	parameters bool
	fixtures   []string
}

// parameterFigureRe is a figure of a test's parameter: a size or a count before its noun.
var parameterFigureRe = regexp.MustCompile(`(?i)\b\d+(?:[-\s]?(?:bytes?|B|KB|KiB|k)|\s(?:queues?|flows?|streams?|cores?|CPUs?|threads?|connections?|sockets?|clients?))(?:[\s,)]|$)`)

// maskParameters is text with the digits of its parameters' figures (parameterFigureRe) as
// '#', the same length, so that offsets into it are offsets into text.
// A figure with a scale followed by what it counts per second ("318k transactions per
// second") is a rate, not a size.
func maskParameters(text string) string {
	out := []byte(text)
	for _, loc := range parameterFigureRe.FindAllStringIndex(text, -1) {
		if perSecondAfterRe.MatchString(text[loc[1]-1:]) {
			continue
		}
		for k := loc[0]; k < loc[1]; k++ {
			if out[k] >= '0' && out[k] <= '9' {
				out[k] = '#'
			}
		}
	}
	return string(out)
}

// proseLayouts are read over each paragraph in order.
var proseLayouts = []proseLayout{
	{name: "from X to Y", re: toPairRe, read: (*Report).toPair, fixtures: []string{"prose-from-to-variants.txt", "from-to-unit-written-once.txt", "prose-from-to-after-a-verb-of-setup.txt", "prose-ranges-are-no-pair.txt", "base-behaviour-from-to-then-fixed.txt"}},
	{name: "from X to Y, the unit in the name before", re: namedFromToRe, read: (*Report).namedFromTo, fixtures: []string{"prose-from-to-unit-in-the-name.txt"}},
	{name: "a count per unit of work from X to Y", re: perUnitFromToRe, read: (*Report).perUnitFromTo, fixtures: []string{"prose-count-per-unit-of-work-from-to.txt"}},
	{name: "each figure before its state's words", re: valueFirstRe, read: (*Report).valueFirst, fixtures: []string{"prose-usual-path-then-with.txt", "value-first-one-state-named.txt", "value-first-version-state.txt"}},
	{name: "clauses led by their states", re: stateLedRe, read: (*Report).stateLed, overlap: true, parameters: true, fixtures: []string{"state-led-clauses.txt", "prose-whereas-clauses.txt", "state-led-clauses-parameters-and-it.txt"}},
	{name: "figures labelled by their states in a line", re: stateColonRe, read: (*Report).stateColon, overlap: true, fixtures: []string{"state-colon-figures-in-a-line.txt", "labels-of-two-states-in-a-line.txt"}},
	{name: "figures after their states' names in a line", re: stateNamedRe, read: (*Report).stateNamed, overlap: true, fixtures: []string{"figures-after-state-names-in-a-line.txt", "version-named-states-in-a-sentence.txt"}},
	{name: "a figure and the one it replaced", re: downFromRe, read: (*Report).downFrom, fixtures: []string{"prose-down-from.txt", "prose-instead-of.txt"}},
	{name: "the figure replaced first, after instead of", re: insteadOfFirstRe, read: (*Report).insteadOfFirst, fixtures: []string{"prose-instead-of-first.txt", "prose-instead-of-first-clause-wrapped.txt"}},
	{name: "a figure after to, the one it replaced after from", re: toFromRe, read: (*Report).downFrom, fixtures: []string{"prose-to-then-from.txt"}},
	{name: "a figure compared with its reference", re: comparedRe, read: (*Report).compared, fixtures: []string{"prose-compared-to.txt", "prose-compared-state-after-reference.txt", "prose-compared-to-approximately.txt", "prose-compared-spelled-rate-unit-once.txt"}},
	{name: "a figure, then now and the one that replaced it", re: thenNowRe, read: (*Report).thenNow, fixtures: []string{"prose-then-now.txt"}},
	{name: "lists of figures matched by their order", re: respectivelyRe, read: (*Report).respectively, fixtures: []string{"prose-respectively-lists.txt"}},
	{name: "figures with their states in parentheses", re: parenStatesRe, read: (*Report).parenStates, fixtures: []string{"figures-with-states-in-parentheses.txt"}},
	{name: "two clauses, each naming its side among its words", re: clauseSidesRe, read: (*Report).clauseSides, overlap: true, parameters: true, fixtures: []string{"clauses-naming-their-sides.txt"}},
	{name: "two sentences in a row, each naming its side", re: sentencePairRe, read: (*Report).sentencePair, overlap: true, parameters: true, fixtures: []string{"sentences-naming-their-sides.txt"}},
}

// layoutOff switches layouts off by name: for TestLayoutsReadTheirFixtures only.
var layoutOff = map[string]bool{}

// readProse reads a paragraph's text with one prose layout.
func (r *Report) readProse(l proseLayout, text string, lineOf func(int) int) {
	match := text
	if l.parameters {
		match = maskParameters(text)
	}
	if !l.overlap {
		for _, m := range l.re.FindAllStringSubmatchIndex(match, -1) {
			l.read(r, text, m, lineOf)
		}
		return
	}
	for pos := 0; pos < len(text); {
		m := l.re.FindStringSubmatchIndex(match[pos:])
		if m == nil {
			return
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		if l.read(r, text, m, lineOf) {
			pos = m[1]
		} else {
			pos = m[3]
		}
	}
}
