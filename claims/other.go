package claims

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
)

// stated is a change the text states: 18.1% (for IPv4), 6,144 %.
type stated struct {
	change float64
	family string // IPv4, IPv6, or "" for the text's one claim
	line   int
	// better: the words judge the change ("improvement", "faster", "regression") rather
	// than say where the figure went ("increase", "lower"), so a time's "38% improvement"
	// is a fall of 38%. times is "N times faster"'s N (0 for a percentage).
	better bool
	times  float64
	// subject is the kind of figure the sentence says changed ("throughput improved by 6%":
	// throughput), "" when its words name none; a lone claim of another kind does not take it.
	subject string
	// onLine: the change stands beside a figure ("9.6 Gbit/s (+5.5%)"), of the claim whose
	// line it is on.
	onLine bool
	// whole: the percentage is written without decimals ("+10%"), which an author gets by
	// rounding or by cutting off (10.6% written 10%): it agrees within a point.
	whole bool
}

// subjectKinds name the kinds of figure a stated change's subject may be, each as metricOf
// names a reading's: the words before the change's verb in its clause.
var subjectKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"throughput", regexp.MustCompile(`(?i)\b(?:throughput|bandwidth|goodput|bitrate|bit rate)\b`)},
	{"packet_rate", regexp.MustCompile(`(?i)\b(?:pps|packet rate|packets per second|forwarding rate)\b`)},
	{"transaction_rate", regexp.MustCompile(`(?i)\b(?:transactions?|trans/s|[A-Z]+_C?RR)\b`)},
	{"latency", regexp.MustCompile(`(?i)\b(?:latency|latencies|rtt|round[- ]trip)\b`)},
	{"share", regexp.MustCompile(`(?i)\b(?:cpu|softirq|utili[sz]ation|usage|load)\b`)},
}

// statedSubject is the kind of figure named by the clause before a stated change's verb at
// offset: back to the sentence's start, a comma or a semicolon.
func statedSubject(text string, offset int) string {
	clause := text[:offset]
	if i := strings.LastIndexAny(clause, ".,;:"); i >= 0 {
		clause = clause[i+1:]
	}
	for _, k := range subjectKinds {
		if k.re.MatchString(clause) {
			return k.kind
		}
	}
	return ""
}

// forClaim is the change s states of claim c: a judged change of a time (lower is better)
// or of a cost in cycles turned round.
func (s stated) forClaim(c Claim) float64 {
	if !s.better || c.Unit != "us" && c.Unit != "cycles" {
		return s.change
	}
	if s.times > 0 {
		return round(1/s.times - 1)
	}
	return -s.change
}

// judgedRe are the words of a change that judge it.
var judgedRe = regexp.MustCompile(`(?i)^(?:improve[sd]?|improvement|faster|gain|boost(?:s|ed)?|slower|regress(?:es|ed|ion)?|better)$`)

// addStated keeps a stated change whose percentage is a number; one past float64's range
// ("by 1000...0%" with 400 digits parses as +Inf, and +Inf/100 rounds to NaN) is said as not
// read, so that no claim carries it into a table as "+Inf%" or into JSON, which has no Inf.
func (r *Report) addStated(s stated) {
	if !results.FinitePercent(s.change) {
		r.addUnparsed(Unparsed{Lines: []int{s.line}, Reason: "a stated change too large for a number: not compared with the figures"})
		return
	}
	r.stated = append(r.stated, s)
}

var (
	percentLineRe = regexp.MustCompile(`(?i)^\s*(?:percent(?:age)?\s+)?(increase|improvement|gain|decrease|reduction|change)\s*:\s*([-+]?[\d,.]+)\s*%`)
	perFamilyRe   = regexp.MustCompile(`([-+]?\d+(?:\.\d+)?)\s?%\s+for\s+(IPv4|IPv6)`)
	proseRe       = regexp.MustCompile(`(?i)\b(increase[sd]?|improve[sd]?|improvement|faster|gain|boost(?:s|ed)?|decrease[sd]?|reduce[sd]?|reduction|lower|drop(?:s|ped)?|slower|regress(?:es|ed|ion)?|(?:went|goes|go|gone|moved?|moves)\s+(?:up|down)|grows?|grew|rises?|rose|climb(?:s|ed)?|jump(?:s|ed)?|falls?|fell|shrinks?|shrank|dips?|dipped)\b[^.;%]{0,40}?([-+]?\d+(?:\.\d+)?)\s?%`)
	// parenChangeRe is a signed percentage in parentheses right after a figure and its unit:
	// "26,877,040 pps (+11.5%)", "3.4 Mpps (-2%)".
	parenChangeRe = regexp.MustCompile(`\d(?:\s?[A-Za-z/]+)?\s*\(\s*([-+]\d+(?:\.\d+)?)\s?%\s*\)`)
	// anyParenPercentRe is a percent in parentheses, signed or not: "(+11.5%)", "(10.0% )".
	anyParenPercentRe = regexp.MustCompile(`\(\s*[-+]?\d+(?:\.\d+)?\s?%\s*\)`)
	fromOrToRe        = regexp.MustCompile(`(?i)\b(?:from|to)\s*~?$`)
	timesRe           = regexp.MustCompile(`(?i)\b(\d+(?:\.\d+)?)\s?(?:x|times)\s+(faster|higher|more|better)`)
	directionRe       = regexp.MustCompile(`(?i)\b(increase[sd]?|improve[sd]?|improvement|faster|lower latenc\w*|higher throughput|better)\b`)
	splitCellsRe      = regexp.MustCompile(`\s{2,}|\t+`)
	familyRe          = regexp.MustCompile(`IPv[46]`)
)

// other reads what starts at lines[i] besides netperf's classic blocks: netperf -O rows, a
// table with a header row, a "Before/After: N unit" line, and stated changes in prose. next
// is past what it took (i when it took nothing).
func (r *Report) other(lines []line, i int, ctx context) ([]measurement, int) {
	if ms, next := netperfRows(lines, i, ctx); next > i {
		return ms, next
	}
	if ms, next := netperfBare(lines, i, ctx); next > i {
		return ms, next
	}
	if ms, next := nsperfTable(lines, i, ctx); next > i {
		return ms, next
	}
	text := lines[i].text
	if m := percentLineRe.FindStringSubmatch(text); m != nil {
		if v, ok := parseNumber(strings.TrimSuffix(m[2], ".")); ok {
			r.addStated(stated{change: round(sign(m[1]) * v / 100), line: lines[i].n, better: judgedRe.MatchString(m[1])})
		}
		return nil, i + 1
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
	hasPercent := strings.Contains(text, "%")
	if !hasPercent && !strings.Contains(text, "times") && !strings.Contains(text, "x ") {
		if directionRe.MatchString(text) && len(par) <= 3 {
			r.Describes = append(r.Describes, text)
		}
		return
	}
	if ms := perFamilyRe.FindAllStringSubmatchIndex(text, -1); len(ms) > 0 {
		for _, m := range ms {
			v, _ := strconv.ParseFloat(text[m[2]:m[3]], 64)
			r.addStated(stated{change: round(v / 100), family: text[m[4]:m[5]], line: lineOf(m[2])})
		}
		return
	}
	for _, l := range par {
		// one change on the line: a second percent in parentheses, signed or not ("0.84 GB/s(-23.6%)
		// 1.21 GB/s(10.0% )"), makes each a cell's change against a third figure
		if ms := parenChangeRe.FindAllStringSubmatch(l.text, -1); len(ms) == 1 && len(anyParenPercentRe.FindAllString(l.text, -1)) == 1 {
			v, _ := strconv.ParseFloat(ms[0][1], 64)
			r.addStated(stated{change: round(v / 100), line: l.n, onLine: true, whole: !strings.Contains(ms[0][1], ".")})
		}
	}
	for _, m := range proseRe.FindAllStringSubmatchIndex(text, -1) {
		if fromOrToRe.MatchString(text[m[3]:m[4]]) {
			continue // "increased from 8.54% to 76.35%": a reading, not the change
		}
		v, _ := strconv.ParseFloat(text[m[4]:m[5]], 64)
		r.addStated(stated{change: round(sign(text[m[2]:m[3]]) * v / 100), line: lineOf(m[4]), better: judgedRe.MatchString(text[m[2]:m[3]]), subject: statedSubject(text, m[2])})
		return
	}
	if m := timesRe.FindStringSubmatchIndex(text); m != nil {
		v, _ := strconv.ParseFloat(text[m[2]:m[3]], 64)
		r.addStated(stated{change: v - 1, line: lineOf(m[2]), better: judgedRe.MatchString(text[m[4]:m[5]]), times: v})
		return
	}
	if directionRe.MatchString(text) && !strings.ContainsAny(text, "%") && len(par) <= 3 {
		r.Describes = append(r.Describes, text)
	}
}

func sign(word string) float64 {
	w := strings.ToLower(word)
	if strings.HasPrefix(w, "decrease") || strings.HasPrefix(w, "reduc") || w == "lower" || strings.HasPrefix(w, "drop") || w == "slower" || strings.HasPrefix(w, "regress") || strings.HasSuffix(w, "down") ||
		strings.HasPrefix(w, "fall") || w == "fell" || strings.HasPrefix(w, "shr") || strings.HasPrefix(w, "dip") {
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
	case "packets":
		return "packet_rate"
	case "percent":
		return "share"
	case "cycles":
		return "cycles"
	}
	return "throughput"
}

// toPairRe is a change the prose gives as two figures: "from 512Mbps to 730Mbps", "(210k to
// 265k txns)", "from ~3.1 Gbit/s (stock) to ~3.9 Gbit/s" (the first state named in
// parentheses). The unit may be on either side or both; a range of percentages ("from 2.5%
// to 90.4%", "by 10 to 40 %") is not a comparison.
//
// Each figure may be qualified ("from avg 812ns to avg 455ns", "from about 1.9 to roughly 2.3
// Mpps", "from an average of 2.2 Mpps"), and "to" be "down to" or "up to". Without "from", a
// verb of change may stand between the first figure and "to" ("3.40Mpps increases to 3.71Mpps",
// "41 us drops to 37 us").
//
// The first figure may be followed by its state in words ("from 36 Gbit/s before this patch to
// 44 Gbit/s"), and the unit may be events counted per second ("from 18.2k to 19.9k
// transactions per second"). A thousands or millions suffix is a capital K or M, or a small
// k: "20 ms" is milliseconds, not "20 m" of seconds.
var toPairRe = regexp.MustCompile(`(?i)(^|[\s(])(?:from\s+)?(?:(?:avg|average|mean|median|about|around|roughly|approx(?:\.|imately)?|nearly|almost|just|only|an?\s+(?:average|mean|median)\s+of)\s+)?~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s?((?-i:[kKM])?)\s?([A-Za-z][A-Za-z/^0-9]*|%)?(?:\s+\([^()]{1,40}\)|\s+(?:before|without|w/o)(?:\s+[A-Za-z-]+){0,3}|\s+(?:increase[sd]?|rises|rose|grows|grew|goes|went|climbs|climbed|jumps|jumped|improves|improved|drops|dropped|falls|fell|decrease[sd]?|shrinks|shrank))?\s+(?:(?:down|up)\s+)?to\s+(?:(?:avg|average|mean|median|about|around|roughly|approx(?:\.|imately)?|nearly|almost|just|only|an?\s+(?:average|mean|median)\s+of)\s+)?~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s?((?-i:[kKM])?)\s?([A-Za-z][A-Za-z/^0-9]*(?:\s+per\s+sec(?:ond)?\b)?|%)`)

// baseLeadRe is a sentence or clause led by the state before the change ("Without this fix,
// ...", "before the patch ...").
var baseLeadRe = regexp.MustCompile(`(?i)(?:^|[,;:]\s*)(?:but\s+|and\s+)?(?:without|before|w/o)\s+(?:this|the|that)\s+(?:fix|patch|change|series|commit)\b`)

// baseBehaviour: the sentence that leads to a "from X to Y" (lead, the text before it) is led
// by the state before the change ("Without this fix the throughput drops from 9.4 to 7.1
// Gbit/s when a second flow starts"): the figures are how the base behaves, the bug, not the
// two states.
func baseBehaviour(lead string) bool {
	sentence := lead[strings.LastIndex(lead, ". ")+1:]
	return baseLeadRe.MatchString(strings.TrimSpace(sentence))
}

// fixedFigureRe is the figure of the state after the change in a clause led by it ("With the
// fix it stays at 9.3 Gbit/s", "with it, 9.3 Gbit/s").
var fixedFigureRe = regexp.MustCompile(`(?i)(?:^|[\s,;(])(?:with|after)\s+(?:it|(?:this|the|that)\s+(?:fix|patch|change|series|commit))\b[^.;\d]{0,60}?(~?\d+(?:\.\d+)?\s?(?:%|[A-Za-z][A-Za-z/]*))`)

// baseThenFixed reads a "from X to Y" of the base's behaviour (baseBehaviour) with the
// clause after it that gives the fixed state's figure: Y, where the base ends up, against
// that figure ("Without this fix ... drops from 9.4 to 7.1 Gbit/s when a second flow starts.
// With the fix it stays at 9.3 Gbit/s"). Without such a clause it is no pair.
func (r *Report) baseThenFixed(text string, m []int, lineOf func(int) int) bool {
	next := text[m[1]:]
	if end := strings.Index(next, ". "); end >= 0 {
		if second := strings.Index(next[end+2:], ". "); second >= 0 {
			next = next[:end+2+second]
		}
	}
	f := fixedFigureRe.FindStringSubmatchIndex(next)
	if f == nil {
		return false
	}
	va, ua, ok := parseValue(strings.TrimPrefix(next[f[2]:f[3]], "~"))
	unitName := text[m[14]:m[15]]
	vb, okb := parseNumber(text[m[10]:m[11]])
	ub, oku := lookupUnit(eventsPerSecond(unitName))
	if !ok || !okb || !oku || ua.norm != ub.norm {
		return false
	}
	vb *= scaleSuffix[text[m[12]:m[13]]] + boolf(m[12] == m[13])
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb * ub.factor), line: lineOf(m[10])}
	ra := rb
	ra.value, ra.line = round(va), lineOf(m[1]+f[2]) // parseValue gives it in the unit's norm
	r.addPair([2]reading{rb, ra})
	return true
}

// namedFromToRe is a change the prose gives as two bare figures after the name of what they
// measure, where that name gives the unit ("TCP_RR from 33k to 36k", "PPS went from 1.2M to
// 1.5M"): a request/response test counts transactions per second, a unit word is its unit.
// The second figure ends its clause, or a change in parentheses follows it ("from 48213 to
// 51027 (+5.8%)"): a unit after it is toPairRe's.
var namedFromToRe = regexp.MustCompile(`(?i)(?:^|[\s(,;])([A-Za-z][\w/-]*(?:\s+per\s+sec(?:ond)?)?)\s+(?:(?:went|goes|improved|improves|increased|increases|rose|rise|rises|grew|grows|climbed|climbs|jumped|jumps|dropped|drops|decreased|decreases|fell|falls|moved|changed|regressed)\s+)?from\s+~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)((?-i:[kKM])?)\s+to\s+~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)((?-i:[kKM])?)(?:\s*[,;)]|\s+\([^()\d]{0,20}[-+]?\d|\s*\.(?:\s|$)|\s+(?:and|with|on|in|for|when|while|after|before)\b|\s*$)`)

// namedFromTo reads namedFromToRe's match when its name gives a unit.
func (r *Report) namedFromTo(text string, m []int, lineOf func(int) int) bool {
	name := text[m[2]:m[3]]
	u, ok := labelUnit(name)
	if strings.Contains(strings.ToLower(name), " per ") {
		// "requests per second rose from 1.82M to 2.05M": the rate the words spell
		u, ok = lookupUnit(strings.ToLower(strings.Join(strings.Fields(name), " ")))
	}
	if !ok || u.kind == "percent" || ofSetting(text, m[0]) || rangeBeforeRe.MatchString(text[:m[0]]) {
		return false
	}
	b, okb := parseNumber(text[m[4]:m[5]])
	a, oka := parseNumber(text[m[8]:m[9]])
	if !okb || !oka {
		return false
	}
	b *= scaleSuffix[text[m[6]:m[7]]] + boolf(m[6] == m[7])
	a *= scaleSuffix[text[m[10]:m[11]]] + boolf(m[10] == m[11])
	rb := reading{metric: metricOf(u), unit: u.norm, value: round(b * u.factor), line: lineOf(m[4])}
	ra := rb
	ra.value, ra.line = round(a*u.factor), lineOf(m[8])
	r.addPair([2]reading{rb, ra})
	return true
}

// changeFromToRe is a change of a count the prose gives without a unit: "Number of
// generated ACK per second shrinks from 240,000 to 40,000". The verb before "from" says it
// is a change of one quantity (its subject), not a range ("from 1 to 16 flows").
var changeFromToRe = regexp.MustCompile(`(?i)^(?:[-*]\s+)?(?:the\s+)?((?:number|count|rate|amount) of [^.;:]{3,60}?)\s+(?:shrinks|shrank|grows|grew|increases|increased|decreases|decreased|drops|dropped|goes|went|rises|rose|falls|fell|improves|improved|reduces|reduced|changes|changed)\s+from\s+~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s+to\s+~?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\b`)

// proseRanges reads "from X to Y" in each paragraph (a sentence may run over lines).
// maxProseLines bounds the text the prose layouts read at once: a paragraph of sentences is a
// few dozen lines. A block of more is a table or a dump (rowsOfFigures), which the prose
// layouts skip, or a mail without empty lines, read a window of this many lines at a time:
// each layout's pattern costs time with the text's length.
const maxProseLines = maxAlignedRows

// rowsOfFigures: most lines of a block carry two figures or more, as a table's rows and a
// dump's lines do and sentences seldom do.
func rowsOfFigures(block []line) bool {
	rows := 0
	for _, l := range block {
		if len(digitRunRe.FindAllStringIndex(l.text, 3)) >= 2 {
			rows++
		}
	}
	return 2*rows > len(block)
}

// alignedRow: a line of a table aligned by spaces, two figures with their units or more, each
// after a gap of two spaces or more ("ice, v6.12   18.4 Mpps   4.1 Mpps"): no sentence, and a
// paragraph's sentences end at it (its rows joined into one text read as prose had paired one
// row's last figure with the next row's first).
func alignedRow(text string) bool {
	gaps := 0
	for _, f := range alignedCellRe.FindAllString(strings.TrimSpace(text), -1) {
		if len(readFigures(f).measured()) == 1 {
			gaps++
		}
	}
	return gaps >= 2
}

// alignedCellRe is a cell of a row aligned by spaces: what follows a gap of two or more.
var alignedCellRe = regexp.MustCompile(`\s{2,}\S+(?:\s\S+)?`)

// digitRunRe is a run of digits: a figure or part of one.
var digitRunRe = regexp.MustCompile(`\d+`)

func (r *Report) proseRanges(lines []line) {
	// A tool's output read by its grammar ends a paragraph as an empty line does: its figures
	// are the tool's, not a sentence's.
	prose := func(k int) bool {
		return strings.TrimSpace(lines[k].text) != "" && !r.toolLines[lines[k].n] && !alignedRow(lines[k].text)
	}
	for start := 0; start < len(lines); {
		end := start
		for end < len(lines) && prose(end) {
			end++
		}
		if end == start {
			start++
			continue
		}
		if end-start > maxProseLines {
			if rowsOfFigures(lines[start:end]) {
				start = end // a table or a dump, read by their own readers
				continue
			}
			// A mail without empty lines: its sentences read a window at a time.
			end = start + maxProseLines
		}
		par := lines[start:end]
		texts := make([]string, len(par))
		for i, l := range par {
			texts[i] = strings.TrimSpace(l.text)
		}
		text := strings.Join(texts, " ")
		lineOf := func(offset int) int {
			for i, t := range texts {
				if offset <= len(t) {
					return par[i].n
				}
				offset -= len(t) + 1
			}
			return par[len(par)-1].n
		}
		for _, l := range proseLayouts {
			if !layoutOff[l.name] {
				r.readProse(l, text, lineOf)
			}
		}
		for _, l := range par {
			r.countChange(l)
		}
		start = end
	}
}

// rangeBeforeRe: the words before a from-to make it a range ("takes between 3 ms to 8
// ms", "anywhere from 5 to 9 us"): one state's spread, not two states.
var rangeBeforeRe = regexp.MustCompile(`(?i)\b(?:between|anywhere|somewhere|ranges?|ranging|varies|varying|vary)\s*(?:from\s*)?$`)

// subjectNounRe names what a sentence's "from X to Y" is of: a setting of the code or the
// test (a timer, a threshold, a ring size: what a patch changes) or a measured quantity.
// The noun nearest before "from" decides.
var subjectNounRe = regexp.MustCompile(`(?i)\b(?:(timers?|thresholds?|timeouts?|intervals?|limits?|budgets?|quotas?|weights?|sizes?|depths?|defaults?|parameters?|settings?|periods?|ring|rings|mtu)|(throughput|latency|latencies|rate|rates|bandwidth|pps|rtt|time|transactions?|usage|utili[sz]ation|speed|performance|goodput|cpu))\b`)

// ofSetting: the sentence before offset names a setting nearest (the patch's "lower the
// timer from 300us to 100us"), not a measurement.
//
// A setting given its own value ("with an MTU of 1500", "ring size 512") is a condition of
// the test, not what the from-to changes.
func ofSetting(text string, offset int) bool {
	start := strings.LastIndex(text[:offset], ". ") + 1
	sentence := text[start:offset]
	var nouns [][]int
	for _, n := range subjectNounRe.FindAllStringSubmatchIndex(sentence, -1) {
		if !verbBeforeObjectRe.MatchString(sentence[n[1]:]) {
			nouns = append(nouns, n)
		}
	}
	if len(nouns) == 0 {
		return false
	}
	last := nouns[len(nouns)-1]
	if last[2] < 0 {
		return false
	}
	return !settingValueRe.MatchString(sentence[last[1]:])
}

// verbBeforeObjectRe: the word before it is a verb, not the noun a from-to is of, where an
// article or a pronoun follows it ("Pinning the irq to one core", "limits the queue").
var verbBeforeObjectRe = regexp.MustCompile(`(?i)^\s+(?:a|an|the|up|this|that|these|those|our|its|each|every)\b`)

// settingValueRe is a setting's own value right after its name: " of 1500", " = 512", " 64".
var settingValueRe = regexp.MustCompile(`^\s*(?:of|=|is|at)?\s*\d`)

func (r *Report) toPair(text string, m []int, lineOf func(int) int) bool {
	if ofSetting(text, m[0]) || rangeBeforeRe.MatchString(text[:m[0]]) || inRespectively(text, m[2]) {
		return false
	}
	if baseBehaviour(text[:m[0]]) {
		return r.baseThenFixed(text, m, lineOf)
	}
	g := func(k int) string {
		if m[2*k] < 0 {
			return ""
		}
		return text[m[2*k]:m[2*k+1]]
	}
	if _, scale := scaleSuffix[g(7)]; scale && g(6) == "" {
		m[12], m[13], m[14], m[15] = m[14], m[15], -1, -1 // "to 40.4k.": the k is a scale, not a unit
	}
	if _, scale := scaleSuffix[g(4)]; scale && g(3) == "" {
		m[6], m[7], m[8], m[9] = m[8], m[9], -1, -1
	}
	ub, okb := lookupUnit(g(4))
	ua, oka := lookupUnit(eventsPerSecond(g(7)))
	if g(4) == "" && g(7) == "" {
		// "The TCP_CRR rate went from 42.1k to 40.4k": the words before name the count
		if name := proseRateUnit(text[:m[0]]); name != "" {
			ua, oka = lookupUnit(name)
		}
	}
	if g(4) != "" && !okb {
		return false
	}
	if !oka {
		return false
	}
	if !okb {
		ub = ua // "from 512 to 588 Mbps": the unit written once, its scale with it
		if g(3) == "" {
			m[6], m[7] = m[12], m[13]
		}
	}
	if ub.norm != ua.norm || ua.kind == "percent" && !ofShare(text, m[0]) {
		return false
	}
	// "18,688": thousands apart by commas; a number of 400 digits is read as far as a float
	// goes, for settle to say it is past a number's range
	b, _ := strconv.ParseFloat(strings.ReplaceAll(g(2), ",", ""), 64)
	a, _ := strconv.ParseFloat(strings.ReplaceAll(g(5), ",", ""), 64)
	b *= scaleSuffix[g(3)] + boolf(g(3) == "")
	a *= scaleSuffix[g(6)] + boolf(g(6) == "")
	if ub.kind == "packets" && (bareRateRe.MatchString(g(4)) || bareRateRe.MatchString(g(7))) {
		// "the request rate rises from 1.82M/s to 2.05M/s": a rate of what the words before
		// count, requests or transactions, not packets
		lead := text[:m[0]]
		if proseRateUnit(lead[max(strings.LastIndex(lead, ". "), strings.LastIndex(lead, ";"))+1:]) == "trans/s" {
			ub.kind, ub.norm = "trans", "trans/s"
		}
	}
	n := lineOf(m[4])
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(b * ub.factor), line: n}
	if event := eventRateMetric(text[:m[0]], g(4)+" "+g(7)); ub.kind == "packets" && event != "" {
		rb.metric, rb.unit = event, "/s" // counted events, shown as such ("120k/s"), not packets
	}
	ra := rb
	ra.value, ra.line = round(a*ua.factor), lineOf(m[10])
	r.addPair([2]reading{rb, ra})
	return true
}

// perUnitMeasureRe names a count per unit of work before bare figures: "dTLB-load-misses per
// packet", "cycles per packet", "instructions per request".
var perUnitMeasureRe = regexp.MustCompile(`(?i)\b((?:cycles|instructions|insns|misses|[\w-]+-misses|loads|stores|branches|ns|nsec|usec|us|interrupts|irqs|syscalls|calls|copies|allocations|locks|atomics|faults)\s+per\s+(?:packet|pkt|byte|request|op|operation|transaction|call|flow|skb|frame|segment|message|lookup))\b`)

// perUnitMeasure is the last count per unit of work the words name, "" for none.
func perUnitMeasure(words string) string {
	ms := perUnitMeasureRe.FindAllStringSubmatch(words, -1)
	if ms == nil {
		return ""
	}
	return ms[len(ms)-1][1]
}

// perUnitFromToRe is "from X to Y" of two bare figures, each maybe with a note in
// parentheses after it ("from 0.8 (base) to 0.3 (patched)"): group 1 the first, 2 the second.
var perUnitFromToRe = regexp.MustCompile(`(?i)\bfrom\s+~?(\d[\d,]*(?:\.\d+)?)(?:\s+\([^()]{1,40}\))?\s+to\s+~?(\d[\d,]*(?:\.\d+)?)(?:\s+\([^()]{1,40}\))?(?:[\s.,;:]|$)`)

// perUnitFromTo reads a perUnitFromToRe match where the words of its sentence before it name a
// count per unit of work ("dTLB-load-misses per packet fell from 0.8 to 0.3"): the count's two
// figures, without a unit.
func (r *Report) perUnitFromTo(text string, m []int, lineOf func(int) int) bool {
	per := perUnitMeasure(text[sentenceStartBefore(text, m[0]):m[0]])
	b, okb := parseNumber(strings.ReplaceAll(text[m[2]:m[3]], ",", ""))
	a, oka := parseNumber(strings.ReplaceAll(text[m[4]:m[5]], ",", ""))
	if per == "" || !okb || !oka {
		return false
	}
	// a count of events per unit of work, as perf's counters are counts
	rb := reading{metric: metricName(per), unit: "count", value: round(b), line: lineOf(m[2]), named: true}
	ra := rb
	ra.value, ra.line = round(a), lineOf(m[4])
	r.addPair([2]reading{rb, ra})
	return true
}

// Words that name what bare figures count per second, where the figures carry no unit:
// transactions (an RR test's, a server's requests), packets.
var (
	transWordsRe  = regexp.MustCompile(`\b(?:[A-Z]+_C?RR|C?RR|[Tt]ransactions?|trans/s|TPS|[Rr]equests?|RPS|QPS)\b`)
	packetWordsRe = regexp.MustCompile(`(?i)\b(?:pps|packets? per second|packet rate|forwarding rate)\b`)
)

// proseRateUnit is the unit of the bare figures after text, when its words name one count
// per second (transWordsRe, packetWordsRe): "trans/s" or "pps"; "" otherwise.
func proseRateUnit(text string) string {
	trans, packets := transWordsRe.MatchString(text), packetWordsRe.MatchString(text)
	switch {
	case trans && !packets:
		return "trans/s"
	case packets && !trans:
		return "pps"
	}
	return ""
}

// bareRateRe is a rate that names no thing it counts: "/s", "k/s", "M/sec".
var bareRateRe = regexp.MustCompile(`^(?i:[kmg])?/s(?:ec)?$`)

// eventNounRe names events that are no packets, counted per second: IPIs, interrupts, context
// switches, wakeups, system calls, faults, cache misses.
var eventNounRe = regexp.MustCompile(`(?i)\b(IPIs?|interrupts?|IRQs?|softirqs?|context[- ]switch(?:es)?|wake-?ups?|syscalls?|system calls?|page faults?|faults?|cache[- ]misses|misses)\b`)

// eventRateMetric is the metric of a rate written with no thing counted ("from 120k/s to 35k/s")
// or counting events, when what the clause before it counts is events that are no packets
// ("The number of IPIs sent went from 120k/s"): "ipis_rate", not a packet rate. "" otherwise.
func eventRateMetric(lead, units string) string {
	bare, event := false, ""
	for _, u := range strings.Fields(units) {
		bare = bare || bareRateRe.MatchString(u)
		if w, _, ok := strings.Cut(u, "/"); ok && eventNounRe.MatchString(w) {
			event = w
		}
	}
	if event == "" && bare {
		clause := lead[max(strings.LastIndex(lead, ". "), strings.LastIndex(lead, ";"))+1:]
		if ms := eventNounRe.FindAllString(clause, -1); ms != nil {
			event = ms[len(ms)-1]
		}
	}
	if event == "" {
		return ""
	}
	return strings.Join(strings.FieldsFunc(strings.ToLower(event), func(r rune) bool { return r == ' ' || r == '-' }), "_") + "_rate"
}

// shareNounRe names a measured share, whose "from X% to Y%" is two readings, not a change
// stated twice: CPU utilisation, usage, load, loss, idle time.
var shareNounRe = regexp.MustCompile(`(?i)\b(?:cpu|utili[sz]ation|usage|load|loss|lost|drops?|dropped|idle|busy|occupancy|share|softirq|sys|usr|cycles|overhead)\b[^.;]{0,100}$`)

// ofShare: the words just before offset, in its sentence, name a measured share.
func ofShare(text string, offset int) bool {
	return shareNounRe.MatchString(text[max(0, offset-80):offset])
}

// eventsPerSecond writes "transactions per second" as the unit "transactions/s".
func eventsPerSecond(u string) string {
	if f := strings.Fields(u); len(f) == 3 && strings.EqualFold(f[1], "per") {
		return f[0] + "/s"
	}
	return u
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// countChange reads "Number of X shrinks from A to B" on a line: a claim about a count,
// named by its subject.
func (r *Report) countChange(l line) {
	m := changeFromToRe.FindStringSubmatch(strings.TrimSpace(l.text))
	if m == nil {
		return
	}
	b, ok1 := parseNumber(m[2])
	a, ok2 := parseNumber(m[3])
	if !ok1 || !ok2 {
		return
	}
	rb := reading{metric: metricName(m[1]), value: round(b), line: l.n, named: true}
	ra := rb
	ra.value = round(a)
	r.addPair([2]reading{rb, ra})
}

// valueFirstRe is a sentence that gives each figure before the name of its state: "5.12Mpps
// before, 5.61Mpps after", "11.2 Gbit/s without the patch and 12.9 Gbit/s with it", "180Mbps
// without this patch, and it reaches 310Mbps with this patch" (a verb of the second clause),
// "23 Gbps without XDP but ~19 with it" (the unit given once: sharedUnit), "48.2 seconds on
// 6.12 and 12.9 seconds with this fix" (a version among the state's words).
var valueFirstRe = regexp.MustCompile(`(?i)(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*|%))\s+([A-Za-z][\w/+-]*(?:\s(?:[A-Za-z./][\w./+-]*|v?\d+\.\d+(?:\.\d+)*(?:-[\w.+-]+)?)){0,5}?)\s*(?:,|;|\band\b|\bbut\b|\bvs\.?|\bversus\b|\bagainst\b)\s*(?:and\s+|while\s+|but\s+)?(?:(?:it|we|this|that)\s+)?(?:[a-z]+\s+)?(?:at\s+|about\s+|around\s+|to\s+|in\s+)?(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?(?:[A-Za-z][A-Za-z/]*|%))?)\s+([A-Za-z][\w/+-]*(?:\s[A-Za-z][\w/+-]*){0,3})`)

// stateLedRe is two clauses, each led by the name of its state and ending in its figure:
// "Before this patch the stream reached 2.9 Gbit/s; after it, 3.4 Gbit/s", "Without the patch
// we get 11 Gbit/s, with it 13 Gbit/s", "Before: 2.9 Gbit/s. After: 3.4 Gbit/s", "Prior to this
// patch: ~2.1Mpps. With this patch: ~2.6Mpps." (prior to is before; "applying it brings it to
// 171k" is with it). Between a
// state's word and its figure no other figure, and no sentence's end; after the first figure
// the words of what it counts or where it was measured ("9.5% of the flows timed out at 10k
// connections"), though no more figures of its unit (sameUnitFigure). A figure may be a
// share ("12% of the datagrams were dropped; after it, 0.3%"). A figure may stand in
// parentheses ("with (5.9 Mpps) and without it (6.1 Mpps)"), and one of the two may leave its
// unit to the other's (sharedUnit).
// The clauses may also stand apart as cells of a row, a wide gap between them ("stream  before:
// 2.9 Gbit/s  after: 3.4 Gbit/s").
var stateLedRe = regexp.MustCompile(`(?i)(?:^|[^\w/-])(before|prior\s+to|after|without|with|w/o|w/|previously|now|applying)([^.;:\d(]{0,80}?)[:\s,]\s*\(?(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*|\s?%)?)\)?([^.;]{0,100}?)(?:[;,.]|\band\b|\bbut\b|\bwhile\b|\bwhereas\b|\bwhilst\b|\bwhere\b|\t|[ \t]{2,})\s*(?:and\s+|but\s+|while\s+|whereas\s+|whilst\s+)?(?:(?:it|we|this|that|they|the\s+\w+)\s+)?(before|prior\s+to|after|without|with|w/o|w/|previously|now|applying)([^.;:\d(]{0,80}?)[:\s,]\s*\(?(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*|\s?%)?)`)

// stateColonRe is a line's two figures, each after its state's label and a colon, the two
// apart by a space or a comma: "tcp_rr before: 41203 trans/s after: 42877 trans/s", "Old:
// 3.2Mpps, new: 4.1Mpps", "v6.6: 10.1 Gbps, v6.6+series: 11.9 Gbps", "before=9.41Gbps
// after=9.87Gbps" (a tool's key=value). A label is a few words
// (a version's digits among them); sidesOf decides which state each names.
var stateColonRe = regexp.MustCompile(`(?i)(?:^|[\s(,;])([A-Za-z][^:=,;()]{0,40}?)\s*[:=]\s*(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*)?)(?:\s*\([^()]{0,30}\))?\)?\s*[,;]?\s+([A-Za-z][^:=,;()]{0,40}?)\s*[:=]\s*(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*)?)`)

// nameCountRe is a count of a thing in a name: "4 threads", "16 queues".
var nameCountRe = regexp.MustCompile(`(?i)(?:^|[^\d.,])(\d+)\s+([a-z]{3,})\b`)

// countsDiffer: two names count one thing differently ("with 4 threads", "with 8 threads");
// a figure with its unit ("9.4 Gbit/s") is no count of a thing.
func countsDiffer(a, b string) bool {
	counts := func(s string) map[string]string {
		out := map[string]string{}
		for _, m := range nameCountRe.FindAllStringSubmatch(s, -1) {
			if _, unit := lookupUnit(m[2]); !unit {
				out[strings.ToLower(m[2])] = m[1]
			}
		}
		return out
	}
	ca := counts(a)
	for noun, n := range counts(b) {
		if m, ok := ca[noun]; ok && m != n {
			return true
		}
	}
	return false
}

// bareOrdinalRe is a number as an ordinal is written: a small whole number, no unit.
var bareOrdinalRe = regexp.MustCompile(`^\d{1,3}$`)

// ordinalLeadRe is a name that ends where a number says which one: "with patch", "after
// commit", "step" (then a bare "1", "3"): the number is part of the name, no figure.
var ordinalLeadRe = regexp.MustCompile(`(?i)(?:\bpatch(?:es)?|\bcommit|\bstep|\bround|\brun|\biteration|\bversion|\brev|#)\s*$`)

// stateNamedRe is a line's two figures, each right after its state's name without a colon,
// the two apart by a comma, "and", "while", "where" or "vs": "baseline 28.1 Gbits/sec, with the patch
// 31.9 Gbits/sec", "vanilla 812 kpps vs patched 955 kpps", "6.11 gives 8.4 Mpps, 6.11 with
// the patch gives 9.1 Mpps". A name is a few words that start with a letter or a version
// (digits with a dot); the groups are stateColonRe's.
var stateNamedRe = regexp.MustCompile(`(?i)(?:^|[\s(,;])((?:[A-Za-z]|\d+\.\d+[\w.-]*\s)(?:[^:,;().]|\.\S){0,30}?)\s+(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*)?)\)?(?:\s+[a-z](?:[^.;:,\d]|[A-Za-z]\d){0,40}?)?\s*(?:[,;]|\band\b|\bwhile\b|\bwhere(?:as)?\b|\bvs\.?|\bversus\b)\s*((?:[A-Za-z]|\d+\.\d+[\w.-]*\s)(?:[^:,;().]|\.\S){0,30}?)\s+(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*)?)`)

// stateColon reads a stateColonRe match within one line, its labels naming opposite states;
// labels on lines of their own ("Before: 2.9 Gbit/s" above "After: 3.4 Gbit/s") are the
// labelled lines' reader's. A label with a colon is a name its author gave, so one named by
// a patch's word decides the other (sidesOf's loose rule).
func (r *Report) stateColon(text string, m []int, lineOf func(int) int) bool {
	return r.twoStates(text, m, lineOf, true)
}

// stateNamed reads a stateNamedRe match: both names must say their state ("on four queues"
// after "before the patch ... 10 Gbps" is a condition, not the state after). A sentence may
// wrap between its two figures.
func (r *Report) stateNamed(text string, m []int, lineOf func(int) int) bool {
	return r.twoStates(text, m, lineOf, false)
}

// twoStates reads the two labelled figures of a stateColonRe or stateNamedRe match; loose
// is sidesOf's, and labels with colons must share a line.
func (r *Report) twoStates(text string, m []int, lineOf func(int) int, loose bool) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	if loose && lineOf(m[4]) != lineOf(m[8]) || !loose && (plusOfAThing(g(1)) || plusOfAThing(g(3))) {
		// "a lockdep + kmemleak build runs for 80 s; a plain build ... 9 s": in a sentence a
		// plus between two words adds one thing to another, not the patch to a tree
		return false
	}
	for k, name := range []string{g(1), g(3)} {
		ordinal := !loose && ordinalLeadRe.MatchString(name) && bareOrdinalRe.MatchString(g(2*k+2))
		if len(readFigures(name).measured()) > 0 || ordinal {
			// "to 9.4 Gbit/s with patch 1 and to 10.2 Gbit/s": a name holds no measured
			// figure, and the number after "patch" is which patch, no figure
			return false
		}
	}
	s1, _ := sidesOf(g(1), g(3), loose)
	if s1 == "" {
		return false
	}
	if a, strongA, _ := stateOf(g(1)); !loose && a != "" {
		if b, strongB, _ := stateOf(g(3)); b != "" && strongA != strongB {
			// "the suite now runs for 80 s; a plain build is done in 9 s": one side named
			// by the change's words, the other by a setting's: two different comparisons
			return false
		}
	}
	vb, ub, va, ua, ok := sharedUnit(g(2), g(4), false)
	if !ok || ub.norm != ua.norm {
		return false
	}
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[4]), state: g(1)}
	ra := reading{metric: metricOf(ua), unit: ua.norm, value: round(va), line: lineOf(m[8]), state: g(3)}
	if s1 == "after" {
		rb, ra = ra, rb
	}
	if versionOf(rb.state) > 0 && patchBefore.FindStringIndex(rb.state) == nil && !strings.Contains(strings.ToLower(rb.state), "without") {
		return false // "with v3" against "with v2 of this patch": two versions of the change, no base
	}
	if fixed, ok := fixAfterRegression(text, m[1], ub.norm, g(1), g(3), lineOf); ok {
		// the two states are the trees around the regression this message fixes
		r.addPair([2]reading{ra, fixed})
		return true
	}
	if later, ok := laterVersion(text[m[1]:], versionOf(ra.state), ua.norm); ok {
		ra.value, ra.state = later.value, later.state // "..., with v2: X, with v3: Y": the last version
	}
	r.addPair([2]reading{rb, ra})
	return true
}

// plusOfAThing: a state's words hold a plus between words (plusAfter) that adds no patch, no
// series, no version and no patch's number ("lockdep + kmemleak").
func plusOfAThing(words string) bool {
	return plusAfter.MatchString(words) && !plusPatchRe.MatchString(words)
}

// plusPatchRe is a plus that adds the change: "+ this patch", "+series", "+v2", "+ p1-2", "+1-5".
var plusPatchRe = regexp.MustCompile(`(?i)\+\s*(?:this|th[ea]\s+(?:patch|series|fix|changes?)|my|our|v\d|patch|series|fix|changes?|commits?|p?\d)`)

// versionRe is a version of a patch or series in a state's name: "v3", "with v2 of this patch";
// not a kernel's ("v6.9", "v6.9+this").
var versionRe = regexp.MustCompile(`(?i)\bv(\d{1,2})(?:$|[^\w.+])`)

// versionOf is the version a state's name gives, 0 for none.
func versionOf(state string) int {
	m := versionRe.FindStringSubmatch(state)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// laterVersion is, in the rest of a sentence after a pair, the figure of unit norm labelled
// by the latest version of the change past version: what the pair's state after is
// superseded by.
func laterVersion(rest string, version int, norm string) (reading, bool) {
	if version == 0 {
		return reading{}, false
	}
	if end := strings.Index(rest, ". "); end >= 0 {
		rest = rest[:end]
	}
	var best reading
	for _, m := range labelledFigureRe.FindAllStringSubmatch(rest, -1) {
		v, u, ok := parseValue(strings.TrimPrefix(m[2], "~"))
		if n := versionOf(m[1]); ok && u.norm == norm && n > version {
			version, best = n, reading{value: round(v), state: strings.TrimSpace(m[1])}
		}
	}
	return best, best.state != ""
}

// labelledFigureRe is a name and its figure after a colon or equals sign ("with v3: 9.87
// Gbit/s").
var labelledFigureRe = regexp.MustCompile(`([A-Za-z][^:=,;()]{0,40}?)\s*[:=]\s*(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*)?)`)

// downFromRe is a figure and then the one it replaced: "costs 212 ns per packet, down from
// 247 ns", "forwards 3.9 Mpps (up from 3.4 Mpps)", "5.1 Mpps SYN instead of 3.6 Mpps", "9.8
// Mpps (was 9.2 Mpps)", "9.12 GB/s with this patch, up from 8.31 GB/s" (up to four words
// between). The new figure comes first; "to" after the old one would make it a range.
var downFromRe = regexp.MustCompile(`(?i)(~?\d+(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*|%))(?:\s+per\s+[a-z]+)?(?:\s+[A-Za-z]+){0,4}\s*[,;(]?\s*(?:(?:down|up|increased|decreased|improved|reduced|dropped|rose|fell)\s+from|instead\s+of|(?:it\s+)?was)\s+(~?\d+(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*|%)?)(?:\s+per\s+[a-z]+)?(?:[\s).,;]|$)`)

// toFromRe is the new figure after "to" and the old after "from", in that order: "latency
// dropped to 21 us from 25 us". downFrom reads it.
var toFromRe = regexp.MustCompile(`(?i)\bto\s+(~?\d+(?:\.\d+)?\s?[A-Za-z][A-Za-z/]*)\s+from\s+(~?\d+(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*)?)(?:[\s).,;]|$)`)

// thenNowRe is a figure and, after a comma or "and is", "now" and the figure that replaced
// it: "took 12.3s, now it takes 8.1s", "Previously we got ~700 Mbit/s, now ~940 Mbit/s", "was
// 290 Mbit/s and is now 940 Mbit/s".
var thenNowRe = regexp.MustCompile(`(?i)(~?\d+(?:\.\d+)?\s?[A-Za-z][A-Za-z/]*)[^.;\d]{0,20}?(?:[,;]\s*(?:and\s+|but\s+)?|\s(?:and|but)\s+(?:(?:it|this|that|they)\s+)?(?:is|are|has\s+been|have\s+been)\s+)now\b[^.;\d]{0,30}?(~?\d+(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*)?)`)

// nowConditionRe is a condition named after "now": what follows is another setting's figure.
var nowConditionRe = regexp.MustCompile(`(?i)\bnow\b.*\b(?:with|using|for|on|in|when)\b`)

// thenNow reads a thenNowRe match: the first figure is the state before.
func (r *Report) thenNow(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	if nowConditionRe.MatchString(text[m[3]:m[4]]) {
		return false // "10 Gbps with one queue, now with four 18 Gbps": a setting that changed
	}
	vb, ub, va, ua, ok := sharedUnit(strings.TrimPrefix(g(1), "~"), strings.TrimPrefix(g(2), "~"), false)
	if !ok || ub.norm != ua.norm || ub.kind == "percent" {
		return false
	}
	r.addPair([2]reading{{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[2])},
		{metric: metricOf(ua), unit: ua.norm, value: round(va), line: lineOf(m[4])}})
	return true
}

// downFrom reads a downFromRe match: the second figure is the state before.
func (r *Report) downFrom(text string, m []int, lineOf func(int) int) bool {
	// a figure wrapped before its unit ("4.91" / "Mpps.") is one figure
	g := func(k int) string { return strings.Join(strings.Fields(text[m[2*k]:m[2*k+1]]), " ") }
	if rest := strings.TrimSpace(text[m[1]:]); strings.HasPrefix(strings.ToLower(rest), "to ") || ofSetting(text, m[0]) {
		return false
	}
	va, ua, ok1 := parseValue(strings.TrimPrefix(g(1), "~"))
	old := strings.TrimPrefix(g(2), "~")
	vb, ub, ok2 := parseValue(old)
	if !ok2 && ok1 {
		if n, ok := parseNumber(old); ok { // "down from 247": the unit of the new figure
			vb, ub, ok2 = n*ua.factor, ua, true
		}
	}
	if !ok1 || !ok2 || ub.norm != ua.norm || ua.kind == "percent" && !shareNamedBefore(text, m[2]) {
		return false
	}
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[4])}
	ra := reading{metric: metricOf(ua), unit: ua.norm, value: round(va), line: lineOf(m[2])}
	r.addPair([2]reading{rb, ra})
	return true
}

// shareNamedBefore: the words of the sentence before offset (since its start or a colon) name
// a share ("softirq CPU on the rx core: 38% (was 52%)"), so percentages there are readings of
// it, not changes stated.
func shareNamedBefore(text string, offset int) bool {
	return shareNounRe.MatchString(text[startAfterMarks(text, offset, ".;!?\n"):offset])
}

// insteadOfFirstRe is a sentence that opens with the figure replaced, then gives the one that
// replaced it: "Instead of mostly firing at 16ms, the timer now mostly fires at 8ms", "Rather
// than 3.1 Mpps, a queue now forwards 3.6 Mpps". A condition may follow the figure replaced,
// led by a preposition, with a figure of its own and wrapped onto the next line ("... at 16ms
// on a 20 ms path, ...", "... at 240 ms after the last send, ..."): it is no side of the pair.
// The sentence may open after a colon ("... a lost request: instead of ...").
var insteadOfFirstRe = regexp.MustCompile(`(?i)(?:^|[.;:]\s+|\n)(?:instead\s+of|rather\s+than)\s+(?:[a-z]+\s+){0,4}?(~?\d+(?:\.\d+)?\s?[A-Za-z][A-Za-z/]*)(?:\s+(?:in|on|over|with|at|for|under|across|through|behind|after|before|since|from|of|per|when|while|during|between|until|past)\s+[^.;,]{1,60}?)?\s*,\s*([^.;\d]{0,100}?)(~?\d+(?:\.\d+)?\s?[A-Za-z][A-Za-z/]*)`)

// insteadOfFirst reads an insteadOfFirstRe match: the first figure is the before.
func (r *Report) insteadOfFirst(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	vb, ub, ok1 := parseValue(strings.TrimPrefix(g(1), "~"))
	va, ua, ok2 := parseValue(strings.TrimPrefix(g(3), "~"))
	if !ok1 || !ok2 || ub.norm != ua.norm || ua.kind == "percent" {
		return false
	}
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[2])}
	ra := reading{metric: metricOf(ua), unit: ua.norm, value: round(va), line: lineOf(m[6])}
	r.addPair([2]reading{rb, ra})
	return true
}

// comparedRe is a figure compared with the one it is measured against: "reaches 21.7 Gbit/s
// compared to 18.9 Gbit/s on the old kernel", "142 ns, as against 171 ns before". The words
// before the first figure, between the two and after the second may name the states; the
// figure compared against is the reference when they do not ("X versus Y" names no reference
// and is left to the labelled readers).
var comparedRe = regexp.MustCompile(`(?i)(~?\d+(?:\.\d+)?\s?(?:(?-i:[kKM])\s)?[A-Za-z][A-Za-z/]*(?:\s+per\s+sec(?:ond)?\b)?)(?:\s+per\s+[a-z]+)?([^.;:\d]{0,60}?)\s*\b(?:compared\s+(?:to|with)|as\s+(?:against|opposed\s+to)|relative\s+to)\s+(?:the\s+)?(?:(?:about|approximately|around|roughly|nearly|almost|some)\s+)?(?:(?:baseline|base|previous|old|original|unpatched|vanilla|stock|mainline|upstream)(?:'s)?\s+)?(~?\d+(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*)?)([^.;:(,\d\n]{0,60})`)

// compared reads a comparedRe match.
func (r *Report) compared(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	if ofSetting(text, m[0]) {
		return false
	}
	clause := text[:m[2]]
	if k := strings.LastIndexAny(clause, ".;:\n"); k >= 0 {
		clause = clause[k+1:]
	}
	if words := strings.Fields(clause); len(words) > 6 {
		clause = strings.Join(words[len(words)-6:], " ")
	}
	lead, _, _ := stateOf(clause)
	between, _, _ := stateOf(strings.Trim(g(2), " ,("))
	trailing, _, _ := stateOf(g(4))
	first := lead
	if first == "" {
		first = between
	}
	switch {
	case first != "" && trailing != "" && first == trailing:
		return false // two figures of one state: a comparison of something else
	case first == "" && trailing != "":
		first = opposite(trailing)
	case first == "":
		first = "after" // the figure compared against is the reference
	}
	v1, u1, v2, u2, ok := sharedUnit(strings.TrimPrefix(g(1), "~"), strings.TrimPrefix(g(3), "~"), true)
	if !ok || u1.norm != u2.norm || u1.kind == "percent" {
		return false
	}
	r.addInOrder(proseReading(v1, u1, lineOf(m[2]), ""), proseReading(v2, u2, lineOf(m[6]), ""), first)
	return true
}

// parenStatesRe is two figures each followed by its state in parentheses: "3.62 Gbps (old) /
// 4.05 Gbps (new)", "41.0 (base) vs 44.2 (patched)".
var parenStatesRe = regexp.MustCompile(`(?i)(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*)?)\s*\(([^()\d]{1,30})\)\s*(?:/|,|;|\bvs\.?|\bversus\b|\band\b|->|→)\s*(~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?(?:[A-Za-z][A-Za-z/]*)?)\s*\(([^()\d]{1,30})\)`)

// parenStates reads a parenStatesRe match: the words in parentheses must name the two states.
func (r *Report) parenStates(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	s1, s2 := parenState(g(2)), parenState(g(4))
	if s1 == "" || s2 == "" || s1 == s2 {
		return false
	}
	v1, u1, ok1 := parseValue(strings.TrimPrefix(g(1), "~"))
	v2, u2, ok2 := parseValue(strings.TrimPrefix(g(3), "~"))
	if !ok1 && !ok2 {
		// "rx pps: 1,234,567 (before) vs 1,456,789 (after)": bare figures, the unit the last
		// word of their label.
		u, ok := labelUnitBefore(text, m[2])
		if !ok {
			u, ok = unitAfterPair(text[m[1]:]) // "9.41 (base), 9.87 (patch) Gbps"
		}
		if ok {
			n1, okn1 := scaledNumber(strings.TrimPrefix(g(1), "~"))
			n2, okn2 := scaledNumber(strings.TrimPrefix(g(3), "~"))
			v1, u1, ok1, v2, u2, ok2 = n1*u.factor, u, okn1, n2*u.factor, u, okn2
		}
	}
	if !ok1 || !ok2 || u1.norm != u2.norm || u1.kind == "percent" {
		return false
	}
	r.addInOrder(proseReading(v1, u1, lineOf(m[2]), g(2)), proseReading(v2, u2, lineOf(m[6]), g(4)), s1)
	return true
}

// parenState is the state a figure's parentheses name: a state's words, or the patch's noun
// alone ("9.87 (patch)", "(series)"), which beside a figure can only be the state with it.
func parenState(words string) string {
	if side, _, _ := stateOf(words); side != "" {
		return side
	}
	switch strings.ToLower(strings.TrimSpace(words)) {
	case "patch", "series", "patchset", "fix", "change":
		return "after"
	}
	return ""
}

// scaledNumber reads a number, with a scale glued on or not ("112k", "1,234,567").
func scaledNumber(s string) (float64, bool) {
	if v, ok := parseNumber(s); ok {
		return v, true
	}
	if len(s) < 2 {
		return 0, false
	}
	f, scaled := scaleSuffix[s[len(s)-1:]]
	v, ok := parseNumber(s[:len(s)-1])
	return v * f, scaled && ok
}

// unitAfterPairRe is a unit written once right after a pair's last parenthesis.
var unitAfterPairRe = regexp.MustCompile(`^\s*([A-Za-zµ][A-Za-zµ/]*)(?:[\s.,;:)]|$)`)

// unitAfterPair is the unit that opens rest, the text after a pair of bare figures.
func unitAfterPair(rest string) (unit, bool) {
	m := unitAfterPairRe.FindStringSubmatch(rest)
	if m == nil {
		return unit{}, false
	}
	u, ok := lookupUnit(m[1])
	return u, ok && u.norm != ""
}

// labelUnitBefore is the unit a label right before offset ends in: "rx pps:" or "tput
// (Gbps):" before its figures.
func labelUnitBefore(text string, offset int) (unit, bool) {
	words := strings.Fields(text[max(0, offset-40):offset])
	if len(words) == 0 || !strings.HasSuffix(words[len(words)-1], ":") {
		return unit{}, false
	}
	last := strings.TrimSuffix(words[len(words)-1], ":")
	if inner, ok := strings.CutPrefix(last, "("); ok {
		if inner, ok = strings.CutSuffix(inner, ")"); !ok {
			return unit{}, false
		}
		last = inner
	}
	return lookupUnit(last)
}

// stateLed reads a stateLedRe match, and says whether it was a pair: the two states' words
// must be a contrasting pair and the figures of one unit.
func (r *Report) stateLed(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	// "Prior to this patch: ~2.1Mpps. With this patch: ~2.6Mpps.": prior to is before
	priorTo := func(w string) string {
		if strings.HasPrefix(w, "prior") {
			return "before"
		}
		if w == "applying" { // "applying it brings it to 171k trans/s"
			return "with"
		}
		return w
	}
	w1, w2 := priorTo(strings.ToLower(g(1))), priorTo(strings.ToLower(g(5)))
	if countsDiffer(g(2)+" "+g(3), g(6)+" "+g(7)) {
		return false // "with 4 threads ..., with 8 threads ...": a count swept, no two states
	}
	firstAfter := w1 == "after" || w1 == "with" || w1 == "w/"
	if !contrasting(w1, w2) && !crossContrast(w1, g(2), w2, g(6)) {
		patched, ok := withPatchClause(w1, g(2), w2, g(6))
		if ok {
			firstAfter = patched == 0
		} else if s1, s2, ok := opposedClauses(w1+" "+g(2), w2+" "+g(6)); ok {
			// "with this change ... 23.1 Gbit/s where it previously ... 19.8 Gbit/s": each
			// clause's words name its side, one of them the patch
			firstAfter = s1 == "after" && s2 == "before"
		} else {
			return false
		}
	}
	first, second := perSecondAfter(g(3), g(4)), perSecondAfter(g(7), text[m[15]:])
	vb, ub, va, ua, ok := sharedUnit(first, second, false)
	if !ok {
		// "152000 trans/s; applying it brings it to 171k.": the second figure's scale written,
		// its unit left to the first's, when the two are of one size (not "with 64k buffers")
		vb, ub, va, ua, ok = sharedUnit(first, second, true)
		ok = ok && va > vb/4 && va < vb*4
	}
	if !ok || ub.norm != ua.norm || sameUnitFigure(g(4), ub.norm) || continuesContrast(text[:m[0]], w1, g(2)) {
		return false
	}
	rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[6]), state: g(1) + " " + g(2)}
	ra := reading{metric: metricOf(ua), unit: ua.norm, value: round(va), line: lineOf(m[14]), state: g(5) + " " + g(6)}
	if firstAfter {
		rb, ra = ra, rb
	}
	if fixed, ok := fixAfterRegression(text, m[1], ub.norm, w1+" "+g(2), w2+" "+g(6), lineOf); ok {
		// "Before the regression 9.4 Gbit/s, after it 8.1 Gbit/s, and with this patch 9.3
		// Gbit/s": the two clauses are the trees around another change; the fix is
		// compared with the tree as it is now, the one after that change.
		r.addPair([2]reading{ra, fixed})
		return true
	}
	r.addPair([2]reading{rb, ra})
	return true
}

// fixAfterRegression reads, after two clauses that name the trees before and after another
// change (the first's words name it: "before the regression", "before commit 1a2b3c4d"; the
// second's refer to it: "after it"), a third clause that names this message's change and its
// figure of unit norm: the fixed state, to be compared with the tree after the other change.
func fixAfterRegression(text string, end int, norm, words1, words2 string, lineOf func(int) int) (reading, bool) {
	lead := func(s string) string {
		if w := strings.ToLower(firstWord(s)); w != "prior" {
			return w
		}
		return "before"
	}
	if !(lead(words1) == "before" && lead(words2) == "after" || lead(words1) == "after" && lead(words2) == "before") {
		return reading{}, false
	}
	if !otherChangeWordsRe.MatchString(words1+" "+words2) || namesThisChangeRe.MatchString(words1+" "+words2) {
		return reading{}, false
	}
	return fixClauseAfter(text, end, norm, lineOf)
}

// fixClauseRe is a third clause after two figures that names this message's change and gives
// its figure: ", and with this patch 9.3 Gbit/s", "; this fix brings it back to 9.3 Gbit/s".
var fixClauseRe = regexp.MustCompile(`(?i)^\s*[,;]?\s*(?:and\s+|but\s+|while\s+)?((?:with|after|applying|\+)?\s*[^.;:\d(]{0,60}?)[:\s,]\s*\(?(~?\d+(?:\.\d+)?(?:\s?[A-Za-z][A-Za-z/]*|\s?%)?)`)

// theFixRe is "the fix" or "the patch": after two clauses about another change, the
// message's own.
var theFixRe = regexp.MustCompile(`(?i)\bthe\s+(?:fix|patch|series)\b`)

// fixClauseAfter reads a clause naming this change right after offset, its figure of unit
// norm: the fixed state's reading.
func fixClauseAfter(text string, offset int, norm string, lineOf func(int) int) (reading, bool) {
	m := fixClauseRe.FindStringSubmatchIndex(text[offset:])
	if m == nil {
		return reading{}, false
	}
	words := text[offset+m[2] : offset+m[3]]
	if !namesThisChangeRe.MatchString(words) && !theFixRe.MatchString(words) {
		return reading{}, false
	}
	v, u, ok := parseValue(strings.TrimPrefix(text[offset+m[4]:offset+m[5]], "~"))
	if !ok || u.norm != norm {
		return reading{}, false
	}
	return reading{metric: metricOf(u), unit: u.norm, value: round(v), line: lineOf(offset + m[4]), state: strings.TrimSpace(words)}, true
}

// perSecondAfterRe is "per second" after a figure, maybe after its count word, maybe wrapped
// onto the next line (perSecondUnits reads it within a line): " transactions per\nsecond".
var perSecondAfterRe = regexp.MustCompile(`(?i)^\s*(?:([a-z]+)\s+)?per\s+sec(?:ond)?\b`)

// perSecondAfter is a figure and the count word after it ("318k", "transactions per second") as
// the rate it is ("318000 transactions/s"); the figure as it is otherwise.
func perSecondAfter(figure, after string) string {
	m := perSecondAfterRe.FindStringSubmatch(after)
	f := strings.Fields(figure)
	if m == nil || len(f) == 0 {
		return figure
	}
	number, word := f[0], m[1]
	if len(f) > 1 {
		word = f[len(f)-1]
	}
	v, ok := scaledNumber(number)
	if u, known := lookupUnit(word + "/s"); !ok || !known || u.norm == "" || len(f) > 1 && m[1] != "" {
		return figure
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + word + "/s"
}

// opposedClauses: two clauses' words name opposite sides, at least one of them by the patch's
// words (not a setting's): their sides.
func opposedClauses(a, b string) (sa, sb string, ok bool) {
	sa, strongA, _ := stateOf(a)
	sb, strongB, _ := stateOf(b)
	return sa, sb, sa != "" && sb != "" && sa != sb && (strongA || strongB)
}

// sameUnitFigure: text holds a figure of unit norm, as a clause's words after its figure do
// when they are more of its state's figures ("before: 2.9 Gbit/s 3.1 Gbit/s, after: ..."),
// not the conditions it was measured at ("9.5% of them at 10k messages per second").
func sameUnitFigure(text, norm string) bool {
	for _, f := range strings.Fields(text) {
		if _, u, ok := parseValue(strings.Trim(f, "(),~")); ok && u.norm == norm {
			return true
		}
	}
	return false
}

// continuesContrast: a clause of the state after the change that names it by a pronoun
// ("with it 0.4%") where its sentence before it already names the state before ("Without the
// fix ... 9.5%, with it 0.4%"): it ends that comparison and starts no other.
func continuesContrast(before, word, rest string) bool {
	if word != "with" && word != "after" && word != "w/" {
		return false
	}
	if r := strings.ToLower(strings.TrimSpace(rest)); r != "it" && !strings.HasPrefix(r, "it ") && !strings.HasPrefix(r, "it,") {
		return false
	}
	sentence := before[strings.LastIndex(before, ". ")+1:]
	return beforeWordRe.MatchString(sentence)
}

// beforeWordRe is a word that names the state before a change.
var beforeWordRe = regexp.MustCompile(`(?i)\b(?:before|without)\b|\bw/o\b`)

// withPatchClause: two clauses both led by "with", one naming the patch ("with this patch")
// and the other only a setting ("with GRO HW enabled we get 36.5 Gbps, and with this patch
// 38.9 Gbps"): the setting is the condition both were measured in, so the clause without the
// patch is the baseline. patched is the index (0 or 1) of the clause that names the patch.
func withPatchClause(w1, rest1, w2, rest2 string) (patched int, ok bool) {
	isWith := func(w string) bool { return w == "with" || w == "w/" }
	if !isWith(w1) || !isWith(w2) {
		return 0, false
	}
	names := func(w, rest string) bool {
		side, strong, _ := stateOf(w + " " + rest)
		return side == "after" && strong
	}
	p1, p2 := names(w1, rest1), names(w2, rest2)
	switch {
	case p1 && !p2:
		return 0, true
	case p2 && !p1:
		return 1, true
	}
	return 0, false
}

// sharedUnit reads the two figures of a sentence that compares them, where the author gave
// the unit once: "21.5 ... ~23.1Gbps", "~23.1Gbps ... ~19". A figure is a number with its
// unit, or a number alone; with secondWord the second may be followed by a word that is no
// unit (the first of its state's words: "~19 with it"). Both without a unit is no pair
// (nothing says what they are).
func sharedUnit(first, second string, secondWord bool) (v1 float64, u1 unit, v2 float64, u2 unit, ok bool) {
	read := func(s string, word bool) (float64, unit, bool, bool) {
		s = strings.TrimPrefix(strings.TrimSpace(s), "~")
		if v, u, ok := parseValue(s); ok {
			return v, u, true, true
		}
		number, rest, _ := strings.Cut(s, " ")
		v, ok := parseNumber(number)
		if !ok && word {
			// "2.08M" after "1950000 trans/s before,": the second figure's scale written, its
			// unit not (a first figure so is a count of something: "800k routes").
			v, ok = scaledNumber(number)
		}
		return v, unit{}, false, ok && (rest == "" || word)
	}
	v1, u1, has1, ok1 := read(first, false)
	v2, u2, has2, ok2 := read(second, secondWord)
	switch {
	case !ok1 || !ok2 || !has1 && !has2:
		return 0, unit{}, 0, unit{}, false
	case !has1:
		v1, u1 = v1*u2.factor, u2
	case !has2:
		v2, u2 = v2*u1.factor, u1
	}
	return v1, u1, v2, u2, true
}

// patchNounLeadRe is a clause that starts by naming the change: "this patch", "the series".
var patchNounLeadRe = regexp.MustCompile(`^` + patchNoun + `\b`)

// crossContrast: "before this change ...; with it, ..." and "without the patch ...; after
// it, ...": a before word and an after word of the other pair, where the "with" or "after"
// clause names the change ("it", "this patch", "the series").
// itLeadRe is a clause's words that open with "it", the patch the other clause named ("with
// it, the flood reaches ...", "after it 3.4 Gbit/s").
var itLeadRe = regexp.MustCompile(`^it\b`)

func crossContrast(w1, rest1, w2, rest2 string) bool {
	beforeWords := map[string]bool{"before": true, "without": true, "w/o": true}
	afterWords := map[string]bool{"after": true, "with": true, "w/": true}
	names := func(rest string) bool {
		rest = strings.ToLower(strings.TrimSpace(rest))
		return itLeadRe.MatchString(rest) || patchNounLeadRe.MatchString(rest)
	}
	switch {
	case beforeWords[w1] && afterWords[w2]:
		return names(rest2) && names(rest1)
	case afterWords[w1] && beforeWords[w2]:
		return names(rest1) && names(rest2)
	}
	return false
}

// clauseLeadWords start the words of a state after its figure: "~19.6 with it", "11 without".
var clauseLeadWords = map[string]bool{"with": true, "w/": true, "without": true, "w/o": true, "before": true, "after": true, "prior": true, "using": true, "on": true}

// sentenceInsideRe is the end of a sentence followed by the start of another.
var sentenceInsideRe = regexp.MustCompile(`[.!?]\s+\p{Lu}`)

func (r *Report) valueFirst(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	vb, ub, va, ua, ok := sharedUnit(g(1), g(3), true)
	if !ok || ub.norm != ua.norm || ub.kind == "percent" && !shareNamedBefore(text, m[2]) || sentenceInsideRe.MatchString(g(2)) {
		// The first state's words end a sentence and start another ("1.71 Mpps and
		// another 1.80 Mpps. After it, 2.35 Mpps"): they are no state's name.
		return false
	}
	second := g(4)
	if end := lineEndWithin(m[8], m[9], lineOf); end < m[9] {
		// The state's words end with their line: the words after the line break start the
		// next line ("... 24.9 Gbit/s after" over "UDP: 1.2 Mpps before, ...").
		second = strings.TrimSpace(text[m[8]:end])
	} else if strings.HasPrefix(strings.TrimSpace(text[m[9]:]), ":") {
		// "vanilla, 1 queue: 2.91 Mpps / patched, 1 queue: 3.30 Mpps": the figure after the
		// separator and its words are the next line's label, not a reading of its own.
		return false
	}
	_, _, unitGiven := parseValue(strings.TrimPrefix(g(3), "~"))
	if !unitGiven {
		// "~19 with it": the word after the bare figure starts its state's words
		if _, word, ok := strings.Cut(g(3), " "); ok {
			second = word + " " + second
		}
	}
	sb, strongB, _ := stateOf(g(2))
	sa, strongA, _ := stateOf(second)
	first := func(s string) string { f := strings.Fields(strings.ToLower(s)); return f[0] }
	opposite := map[string]string{"before": "after", "after": "before"}
	switch {
	case !unitGiven && (sb == "" || sa == "") && !clauseLeadWords[first(second)]:
		// "2s intervals, 4 more runs after a reboot": a bare count with a noun after
		// it is no figure of the other state, unless its words lead with a state's ("~19.6
		// with it") or both figures' words name their states
	case sb == "" && sa != "" && strongA && !stateNamed(g(2)):
		// "420 kpps with the multi-flow script and 250 kpps without the patch": only one
		// figure's words name the patch; the other figure is the other state.
		sb = opposite[sa]
	case sa == "" && sb != "" && strongB && !stateNamed(second):
		sa = opposite[sb]
	case sb != "" && sa == "" && contrasting(first(g(2)), first(second)):
		sa = opposite[sb]
	case sa != "" && sb == "" && contrasting(first(second), first(g(2))):
		sb = opposite[sa]
	case sb == "before" && sa == "" && withWords[first(second)]:
		// "152 Gbit/s on normal loopback and 312 Gbit/s with the fast path": what the
		// before's words call the usual, the other figure has something with it.
		sa = "after"
	case sa == "before" && sb == "" && withWords[first(g(2))]:
		sb = "after"
	}
	if sb == "" || sa == "" || sb == sa {
		return false
	}
	r.addInOrder(proseReading(vb, ub, lineOf(m[2]), g(2)), proseReading(va, ua, lineOf(m[6]), second), sb)
	return true
}

// lineEndWithin is the offset in [from, to) of a paragraph's text where a line after from's
// starts, or to when the span is on one line.
func lineEndWithin(from, to int, lineOf func(int) int) int {
	for k := from; k < to; k++ {
		if lineOf(k) != lineOf(from) {
			return k
		}
	}
	return to
}

// withWords lead the name of a state that has something the other lacks.
var withWords = map[string]bool{"with": true, "w/": true, "using": true}

// proseReading is a figure a sentence gives, with the words that name its state.
func proseReading(v float64, u unit, line int, state string) reading {
	return reading{metric: metricOf(u), unit: u.norm, value: round(v), line: line, state: state}
}

// addInOrder pairs two readings of a sentence, the first of which names firstSide.
func (r *Report) addInOrder(first, second reading, firstSide string) {
	if firstSide == "after" {
		first, second = second, first
	}
	r.addPair([2]reading{first, second})
}
