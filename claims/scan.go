package claims

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/nsperf/nsperf/results"
)

var (
	// netperfBannerRe starts netperf's classic output: "MIGRATED TCP STREAM TEST from ...",
	// "TCP STREAM TEST to hostb" (netperf 2.2), or where the banner was left out the first
	// header row (TCP_STREAM's, UDP_STREAM's).
	netperfBannerRe = regexp.MustCompile(`^\s*(?:MIGRATED\s.*|.*\bTEST (?:from|to) .*|Recv\s+Send\s+Send\s*.*|Socket\s+Message\s+Elapsed\s+Messages\b.*|Local\s+/\s*Remote\s*|Socket\s+Size\s+Request\s+Resp\.\s.*)$`)
	// separatorRe is a rule line: "- - - -", "------", "+----+".
	separatorRe = regexp.MustCompile(`^\s*[-=+_|* ]{3,}\s*$`)
	// titleEndRe: a title line ends in a word, a parenthesis or a comma, not a sentence's stop.
	titleEndRe = regexp.MustCompile(`[\w)\],+>]$`)
)

// toolOutput is the first tool layout (toolLayouts) that reads the output starting at
// lines[i].
func toolOutput(lines []line, i int, ctx context) ([]measurement, int, string) {
	for _, l := range toolLayouts {
		if layoutOff[l.name] {
			continue
		}
		if m, next, why := l.read(lines, i, ctx); next > i {
			return m, next, why
		}
	}
	return nil, i, ""
}

// read reads one message's lines: tool output the tools' own readers know (netperf's
// blocks and -O rows, iperf3's summaries, nsperf's tables) and, for everything else, the
// generic reader: headings and labels name states and blocks, lines give readings, tables
// and arrows give claims of their own.
func (r *Report) read(lines []line) {
	ms, all := r.scan(lines)
	rs := twoLineStates(dropProfiles(all, lines), lines)
	r.Setup = setupWords(lines)
	r.OtherTools = toolsNamed(lines)
	r.paragraphChanges(lines)
	r.pair(ms, lines)
	r.pairReadings(rs, lines)
	r.proseRanges(lines)
	r.columnOrderClaims(lines)
	r.keyValueStateClaims(lines)
	r.headingFigureClaims(lines)
	if len(r.Claims) == 0 && len(rs) < len(all) {
		// Profiles are all the message compares: their functions' shares are its result.
		r.pairReadings(twoLineStates(all, lines), lines)
	}
	r.headingUnits(lines)
	r.transferTimes(lines)
	r.handshakeWindows(lines)
	r.timerWaits(lines)
	r.latencyStats(lines)
	r.settle()
	r.commandTools(lines)
	r.labelConditions(lines)
	r.runSeries(lines)
	r.unreadTables()
	sortClaims(r.Claims)
	r.attachStated()
	if r.droppedClaims > 0 || r.droppedUnparsed > 0 || r.droppedFigures > 0 {
		r.Unparsed = append(r.Unparsed, Unparsed{Lines: []int{}, Reason: fmt.Sprintf(
			"the input goes on past what a report keeps (%d claims, %d figures, %d blocks not read): %d more claims or table rows, %d more figures and %d more blocks are left out; a commit message's benchmark has far fewer",
			MaxClaims, maxFigures, maxUnparsed, r.droppedClaims, r.droppedFigures, r.droppedUnparsed)})
	}
}

// scan goes through the lines once: tools' outputs by their grammars, commands, headings and
// titles into the context, and every other line to the generic reader. It returns the tools'
// measurements and the generic readings, to be paired.
func (r *Report) scan(lines []line) (ms []measurement, rs []reading) {
	ctx := context{conditions: map[string]string{}}
	ctx.decide = func(a, b string) (aBefore, ok bool) {
		runs := []*sideRun{{side: "?", state: a}, {side: "?", state: b}}
		before, _, ok := r.evidenceSides(runs, lines)
		return ok && before == runs[0], ok
	}
	ctx.subjectNames = func(names []string) int { return namedByChange(names, r.change.subject, lines) }
	ctx.definedSides = definedSides(lines)
	repeated := headingCounts(lines)
	ctx.devices = len(toggledDevices(lines)) > 1
	skipTo := -1
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if ctx.blk.then != "" && ctx.blk.thenAt == l.n {
			// the second of the two figures a heading named in order
			ctx.blk.side, ctx.blk.state, ctx.blk.then, ctx.blk.thenAt = ctx.blk.then, ctx.blk.thenState, "", 0
		}
		if m, next, why := toolOutput(lines, i, ctx); next > i {
			if why != "" {
				r.addUnparsed(Unparsed{Lines: spanLines(lines, i, next), Reason: why})
			}
			if r.toolLines == nil {
				r.toolLines = map[int]bool{}
			}
			for k := i; k < next; k++ {
				r.toolLines[lines[k].n] = true
			}
			ms = keep(r, ms, ctx.mark(m))
			ctx.named = ctx.named && len(m) == 0
			i = next - 1
			continue
		}
		if next, ok := r.netperfBlock(lines, i, &ctx, &ms); ok {
			i = next - 1
			continue
		}
		switch {
		case strings.TrimSpace(l.text) == "" || separatorRe.MatchString(l.text) && !strings.Contains(l.text, "|"):
			if ctx.blk.then != "" && ctx.blk.armed {
				// the second of the paragraphs a heading named in order
				ctx.blk.side, ctx.blk.state, ctx.blk.then, ctx.blk.armed = ctx.blk.then, ctx.blk.thenState, "", false
			}
		case unameRe.MatchString(l.text):
			if side := releaseSide(unameRe.FindStringSubmatch(l.text)[1]); side != "" {
				ctx.blk.side, ctx.blk.state = side, unameRe.FindStringSubmatch(l.text)[1]
			}
		case isCommand(l.text):
			for i+1 < len(lines) && (strings.HasSuffix(strings.TrimSpace(lines[i].text), "\\") || optionLineRe.MatchString(lines[i+1].text)) {
				// a command wrapped over lines: "netperf -t TCP_RR \\" / "  -- -O ...", or
				// without the backslash, its options indented on the next line
				lines[i+1].text = strings.TrimSuffix(strings.TrimSpace(lines[i].text), "\\") + " " + strings.TrimSpace(lines[i+1].text)
				i++
			}
			r.command(&ctx, lines, i)
		case verdictLineRe.MatchString(l.text):
			// A selftest's case ("  net,port   28s   [ OK ]"): the lines under it are its
			// results, keyed by its name.
			name, _, _ := strings.Cut(strings.TrimSpace(l.text), "  ")
			ctx.blk.cond = labelKey(name)
		case perfStatBannerRe.MatchString(l.text):
			// perf stat's banner over its counters: no heading of a state or a condition
		case perfElapsedRe.MatchString(l.text) && perfWindowAbove(lines, i):
			// the length of the window perf stat counted a CPU or the system for (a sleep's, a
			// ^C's): how long it looked, not how long anything took
		case r.structure(lines, i, &ctx, repeated):
		default:
			read := len(rs)
			i = r.generic(lines, i, ctx, &ms, &rs, &skipTo)
			ctx.blk.armed = ctx.blk.armed || len(rs) > read
			if side, state, ok := stateLine(lines, i); ok {
				// "Pre-patch: l2fwd: 14.1 Mpps" over perf stat's counters: the lines below
				// without a state of their own are of this one.
				ctx.blk.side, ctx.blk.state = side, state
			}
		}
	}
	return ms, rs
}

// netperfBlock reads netperf's output at lines[i] that depends on the command above it: -O/-o
// output (its banner and header rows skipped, the value rows read as the command's), or a
// classic block. next is past what it took; ok is false where no netperf banner starts.
func (r *Report) netperfBlock(lines []line, i int, ctx *context, ms *[]measurement) (next int, ok bool) {
	if layoutOff[netperfClassicLayout] || !netperfBannerRe.MatchString(lines[i].text) {
		return i, false
	}
	if selectorRe.MatchString(ctx.command) {
		j := i + 1
		for j < len(lines) && j < i+8 && !isSelectorRow(lines[j].text, ctx.command) {
			j++
		}
		return j, true
	}
	m, next, why := netperfClassic(lines, i, *ctx)
	if why != "" {
		r.addUnparsed(Unparsed{Lines: spanLines(lines, i, next), Reason: why})
	} else {
		*ms = keep(r, *ms, ctx.mark(m))
		ctx.named = ctx.named && len(m) == 0
	}
	return next, true
}

// structure takes a line that shapes the text, a heading, a setup's line or a title, into the
// context; false for any other line.
func (r *Report) structure(lines []line, i int, ctx *context, repeated map[string][]int) bool {
	l := lines[i]
	sentence := stateSentence(lines, i)
	switch {
	case headingRe.MatchString(l.text):
		h := headingRe.FindStringSubmatch(l.text)[1]
		if whole, ok := wrappedSentence(lines, i); ok && inOrder(whole) {
			h = whole // "..., 20 s, before and after the" over "patch:": the sentence is the heading
		} else if !inOrder(h) {
			if phrase := sentenceState(lines, i); phrase != "" {
				h = phrase // the end of a sentence that names its state further up
			}
		}
		ctx.section++
		ctx.enterPath(wrappedHeading(lines, i, headingRe.FindStringSubmatch(l.text)[1]))
		ctx.heading(h)
		ctx.blk = enterHeading(ctx.blk, h, lines, i, repeated)
	case sentence != "":
		h := sentence
		ctx.section++
		ctx.enterPath(l.text, h)
		ctx.heading(h)
		ctx.blk = enterHeading(ctx.blk, h, lines, i, repeated)
	case isSetupLine(lines, i) && !tableHeader(lines, i, *ctx):
		ctx.section++
		ctx.blk.cond = labelKey(labelMatch(l.text)[1])
		ctx.blk.roundSide, ctx.blk.side, ctx.blk.state = "", "", ""
	case isTitle(lines, i) && !tableHeader(lines, i, *ctx):
		ctx.section++
		title := titleName(lines, i) // "[ nft + bpf ]", "<patched>": the name inside
		if title == "" {
			title = strings.TrimSpace(numberedRe.ReplaceAllString(strings.TrimRight(l.text, ","), ""))
		}
		ctx.enterPath(l.text, title)
		ctx.blk = enterHeading(ctx.blk, title, lines, i, repeated)
	default:
		return false
	}
	return true
}

// twoLineStates gives one key to a paragraph of two labelled figures, one line a state before
// and the other a state after (in either order), of one unit ("old per-buffer refill, 1 queue:
// 7.84 Mpps" over "with this series: 9.12 Mpps"): the labels' other words name the states, not
// two things measured.
func twoLineStates(rs []reading, lines []line) []reading {
	byLine := map[int][]int{}
	for k, x := range rs {
		byLine[x.idx] = append(byLine[x.idx], k)
	}
	blank := func(j int) bool { return j < 0 || j >= len(lines) || strings.TrimSpace(lines[j].text) == "" }
	for j, ks := range byLine {
		next := byLine[j+1]
		if len(ks) != 1 || len(next) != 1 || !blank(j-1) && len(byLine[j-1]) > 0 || !blank(j+2) && len(byLine[j+2]) > 0 {
			continue
		}
		b, a := &rs[ks[0]], &rs[next[0]]
		if b.key == a.key || b.unit != a.unit || b.unit == "" || !(b.side == "before" && a.side == "after" || b.side == "after" && a.side == "before") {
			continue
		}
		if _, strongB, _ := stateOf(labelOf(lines[j].text)); !strongB {
			continue
		}
		if _, strongA, _ := stateOf(labelOf(lines[j+1].text)); !strongA {
			continue
		}
		a.key = b.key
	}
	return rs
}

// labelOf is a line's label ("after this patch" of "after this patch: 5 Gbps").
func labelOf(text string) string {
	label, _ := lineLabel(text)
	return label
}

// sentenceLeadRe is a clause that opens with a state of the patch: "Before this patch on the
// test board", "After applying the series", "Without the fix".
var sentenceLeadRe = regexp.MustCompile(`(?i)^(?:before|after|without|with|w/o|w/)\s`)

// stateSentence is the state a sentence of its own names for the output under it, as a
// heading would ("Without the patch, on the reference board, a drop test gives these rates."
// over a prompt and its tool's lines): a one-line paragraph ending in a stop whose next line
// is a command or measured figures, and whose first clause opens with a state of the patch
// (the clause is returned), or that names one state of its patch anywhere (sentenceSide; the
// sentence is returned). "" for any other line.
func stateSentence(lines []line, i int) string {
	t := strings.TrimSpace(lines[i].text)
	if len(t) > 100 || !strings.HasSuffix(t, ".") || i > 0 && strings.TrimSpace(lines[i-1].text) != "" || i+1 >= len(lines) {
		return ""
	}
	if next := lines[i+1].text; !isCommand(next) && len(readFigures(next).measured()) == 0 {
		return ""
	}
	clause, _, _ := strings.Cut(strings.TrimSuffix(t, "."), ",")
	if side, strong, _ := stateOf(clause); sentenceLeadRe.MatchString(clause) && side != "" && strong {
		return clause
	}
	if sentenceSide(t) != "" {
		return strings.TrimSuffix(t, ".") // "Here is what I measured before this patch was applied."
	}
	return ""
}

// sentenceStateRe is a phrase that names the patch's state inside a sentence: "before this
// patch", "after the change", "without this series", "with the fix applied".
var sentenceStateRe = regexp.MustCompile(`(?i)\b(?:before|after|without|with)\s+(?:this|the)\s+(?:patch|change|series|patchset|fix|commit)\b`)

// wrappedSentence is the whole sentence a heading line ends, when that line is a sentence's
// last words wrapped from the line above: it starts with a small letter, and the line above is
// a line of prose cut at the mail's width (50 characters or more, ending in neither a stop nor
// a colon). Where the sentence names both states in order, what the line says alone ("patch:")
// is not what it names.
func wrappedSentence(lines []line, i int) (string, bool) {
	own := strings.TrimSpace(lines[i].text)
	if i == 0 || own == "" || !unicode.IsLower(rune(own[0])) {
		return "", false
	}
	above := strings.TrimSpace(lines[i-1].text)
	if len(above) < 50 || strings.ContainsAny(above[len(above)-1:], ".:;!?") || headingRe.MatchString(lines[i-1].text) {
		return "", false
	}
	return above + " " + headingRe.FindStringSubmatch(lines[i].text)[1], true
}

// sentenceState is the state phrase of the sentence whose end is the heading at lines[i] ("...,
// before this patch, attaching a program makes the ping" / "lose packets, as shown below:",
// or on the heading's line alone: "perf stat of the receiver, before the change:"): the one
// phrase that names a state in the sentence's lines from the paragraph's start, where the
// heading as a name says none. "" otherwise.
func sentenceState(lines []line, i int) string {
	if side, _, _ := stateOf(headingRe.FindStringSubmatch(lines[i].text)[1]); side != "" {
		return ""
	}
	start := i
	for start > 0 && i-start < 4 && strings.TrimSpace(lines[start-1].text) != "" && !strings.HasSuffix(strings.TrimSpace(lines[start-1].text), ".") {
		start--
	}
	var text []string
	for k := start; k <= i; k++ {
		text = append(text, strings.TrimSpace(lines[k].text))
	}
	phrases := sentenceStateRe.FindAllString(strings.Join(text, " "), -1)
	if len(phrases) != 1 {
		return ""
	}
	return phrases[0]
}

// allZero: every figure of a side is 0.
func allZero(v Values) bool {
	return v.Median == 0 && !slices.ContainsFunc(v.Values, func(x float64) bool { return x != 0 })
}

// mark gives measurements read at the current line their section.
func (c context) mark(ms []measurement) []measurement {
	for k := range ms {
		ms[k].section = c.section
		if ms[k].heading == "" {
			ms[k].heading = c.pathText()
		}
		ms[k].toggled = c.toggled
	}
	return ms
}

// settle gives every claim its metric as the tools declare it, marks a change from 0 (no
// ratio), and moves a claim with a figure its unit cannot have (a negative rate or time) to
// what was not read: such a figure is a typo or a difference, never a measurement to
// reproduce.
func (r *Report) settle() {
	kept := r.Claims[:0]
	for _, c := range r.Claims {
		if allZero(c.Before) && allZero(c.After) {
			continue // nothing on either side (iperf3's 0% loss twice): no comparison the text makes
		}
		if why := cmp.Or(unnumbered(c), impossible(c)); why != "" {
			r.addUnparsed(Unparsed{Lines: c.Lines, Reason: why})
			continue
		}
		c = declare(c)
		c.FromZero = c.Before.Median == 0 && c.After.Median != 0
		if c.FromZero {
			c.Change = 0
		}
		kept = append(kept, c)
	}
	r.Claims = kept
	r.dropReadNotes()
}

// dropReadNotes takes back the notes of lines "not read" that a claim reads after all: one
// reader gave up on the lines (two labels that name no state, "TCP:" and "UDP:") and another
// paired their figures (each line's "21.3 Gbit/s before, 24.9 Gbit/s after").
func (r *Report) dropReadNotes() {
	read := map[int]bool{}
	for _, c := range r.Claims {
		for _, n := range c.Lines {
			read[n] = true
		}
	}
	kept := r.Unparsed[:0]
	for _, u := range r.Unparsed {
		if len(u.Lines) > 0 && !slices.ContainsFunc(u.Lines, func(n int) bool { return !read[n] }) {
			continue
		}
		kept = append(kept, u)
	}
	r.Unparsed = kept
}

// unnumbered says why a claim has a figure, or a change between its figures, that is no
// number (past float64's range, or NaN), or "": the table would print it as "+Inf%", and JSON
// has no Inf to encode it with.
func unnumbered(c Claim) string {
	figures := append(append([]float64{c.Before.Median, c.After.Median}, c.Before.Values...), c.After.Values...)
	for _, cv := range []*float64{c.Before.CV, c.After.CV} {
		if cv != nil {
			figures = append(figures, *cv)
		}
	}
	for _, v := range figures {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "a figure too large for a number (past 1.8e308): not a measurement to compare"
		}
	}
	if !results.FinitePercent(c.Change) {
		return "figures too far apart for their change to be a number (a percentage past 1.8e308): not a measurement to compare"
	}
	return ""
}

// nonNegative are the normalised units whose figures are never below 0: rates and times.
var nonNegative = map[string]bool{"bit/s": true, "pps": true, "trans/s": true, "us": true}

// impossible says why a claim's figures cannot be what its unit measures, or "".
func impossible(c Claim) string {
	if !nonNegative[c.Unit] {
		return ""
	}
	for _, v := range append(append([]float64{}, c.Before.Values...), c.After.Values...) {
		if v < 0 {
			what := c.Metric
			if what == "" {
				what = c.Quantity
			}
			return fmt.Sprintf("a %s of %s: a figure in %s is never negative (a difference, not a measurement?)", what, human(v, c.Unit), c.Unit)
		}
	}
	return ""
}

// command takes a shell line: a toggle is recorded (what follows is measured with it); any
// other command names the block its output is in.
func (r *Report) command(ctx *context, lines []line, i int) {
	l := lines[i]
	ctx.command, ctx.cmdLine = commandText(l.text), l.n
	if m := promptNameRe.FindStringSubmatch(strings.TrimSpace(l.text)); m != nil {
		// the prompt names the kernel the command ran on: the lines below are of that
		// state, whatever a line above said
		side, _, _ := stateOf(m[1])
		ctx.blk.side, ctx.blk.state = cmp.Or(side, "?"), m[1]
	}
	if t, ok := toggle(ctx.command, l.n); ok {
		r.Toggles = append(r.Toggles, t)
		if t.measured && !ctx.named {
			// What follows a device's toggle is measured with it, unless a heading named the
			// state of the block the toggle sets up ("Before:" above the limit it sets); a
			// toggle that turns its setting off ("xdp off", "gro off") sets up the baseline.
			ctx.state, ctx.toggled = "after", l.n
			if turnsOff(t) {
				ctx.state = "before"
			}
			if ctx.devices && t.Device != "" {
				ctx.conditions = copyConds(ctx.conditions)
				ctx.conditions["device"] = t.Device
			}
		} // a sysctl or a qdisc is as often the setup of both sides: the labels decide
		if name, value, ok := oneSetting(t); ok && !ctx.named && (ctx.blk.side == "" || ctx.blk.side == "?") {
			// The lines below, until a heading, are of the setting's value: a state for the
			// rest of the message to decide ("sysctl x=0" over one block, "x=1" over the next)
			ctx.blk.side, ctx.blk.state = "?", name+"="+value
		}
		return
	}
	if strings.Contains(ctx.command, "ethtool -k") && offloadsOff(lines[i+1:]) {
		ctx.conditions = map[string]string{"offloads": "off"}
	}
	if isToggleCommand(ctx.command) {
		return
	}
	ctx.blk.cond = strings.Join(strings.Fields(ctx.command), " ")
}

// oneSetting is the setting a toggle sets and its value, where it sets one.
func oneSetting(t Toggle) (name, value string, ok bool) {
	n := 0
	for _, values := range t.Settings {
		for k, v := range values {
			name, value = k, v
			n++
		}
	}
	return name, value, n == 1
}

// toggledDevices are the devices the message's toggles set up, each once.
func toggledDevices(lines []line) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines {
		if !isCommand(l.text) {
			continue
		}
		if t, ok := toggle(commandText(l.text), l.n); ok && t.measured && t.Device != "" {
			out[t.Device] = true
		}
	}
	return out
}

// turnsOff: every setting the toggle sets, it sets off ("ip link set dev eth0 xdp off",
// "ethtool -K eth0 gro off").
func turnsOff(t Toggle) bool {
	n := 0
	for _, values := range t.Settings {
		for _, v := range values {
			switch strings.ToLower(v) {
			case "off", "none", "disable", "disabled":
				n++
			default:
				return false
			}
		}
	}
	return n > 0
}

// isToggleCommand: a command that changes a setting rather than measuring (its output is
// not a block of its own): echo into /proc or /sys, sysctl -w, modprobe, tc qdisc.
func isToggleCommand(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return true
	}
	switch f[0] {
	case "echo", "sysctl", "modprobe", "tc", "ip", "ethtool", "uname":
		return true
	}
	return false
}

// heading takes what a heading line says for the tools' readers: a state, a condition, or
// both. Words that name the tree or the patch decide over words that name a setting; a
// setting beside them ("net main, LRO enabled") is a condition.
func (c *context) heading(h string) {
	side, strong, _ := stateOf(h)
	if m := mtuRe.FindStringSubmatch(h); m != nil {
		c.conditions = map[string]string{"mtu": strings.ToLower(m[1])}
	} else if side != "" {
		if _, off := c.conditions["offloads"]; !off {
			c.conditions = map[string]string{}
		}
		if s := settingPart(h); strong && s != "" {
			c.conditions = map[string]string{"setting": s}
		}
	}
	if side == "" && c.stateHeading != "" {
		// "With X:" after "Without X:": no state word of its own, the contrast with the
		// heading that named the state says it.
		if a, b := sidesOf(c.stateHeading, h, false); a != "" && b != "" && a != b {
			side = b
		}
	}
	if side != "" {
		c.state, c.named, c.stateHeading = side, true, h
	}
}

// settingPart is the part of a heading, between commas, that names a setting and no state
// of the patch: "LRO enabled" in "net main, LRO enabled".
func settingPart(h string) string {
	if len(strings.Fields(parenRe.ReplaceAllString(h, ""))) > 8 {
		return "" // a sentence that names its state: its clauses are no settings
	}
	for _, part := range strings.Split(h, ",") {
		if patchBefore.MatchString(part) || patchAfter.MatchString(part) || literalState.MatchString(part) || plusAfter.MatchString(part) {
			continue
		}
		if side, _, _ := stateOf(part); side != "" {
			return strings.Join(strings.Fields(part), " ")
		}
	}
	return ""
}

// statesInOrderRe is a heading that names both states in the order of what follows:
// "before and after the patch", "without and with the series", "w/o vs w/".
var statesInOrderRe = regexp.MustCompile(`(?i)(?:^|[^\w/])(before|after|without|with|w/o|w/)\s*(?:and|&|/|vs\.?|versus|then)\s*(before|after|without|with|w/o|w/)(?:$|[^\w/])`)

// bareFigurePair is the number of the second line of the paragraph that starts at lines[k]
// (after one blank line) where that paragraph is two lines, each one figure with its unit and
// nothing else ("  9.1 Gbit/s" over "  9.5 Gbit/s"); 0 otherwise.
func bareFigurePair(lines []line, k int) int {
	if k < len(lines) && strings.TrimSpace(lines[k].text) == "" {
		k++
	}
	if k+1 >= len(lines) || k+2 < len(lines) && strings.TrimSpace(lines[k+2].text) != "" {
		return 0
	}
	for _, l := range lines[k : k+2] {
		sh := readFigures(l.text)
		if len(sh.figures) != 1 || len(sh.measured()) != 1 || strings.Trim(strings.ReplaceAll(sh.shape, "#", ""), " ") != sh.figures[0].unit.norm {
			return 0
		}
	}
	return lines[k+1].n
}

// statesInOrder reads statesInOrderRe's two words, a contrasting pair.
func statesInOrder(h string) (first, second string, ok bool) {
	m := statesInOrderRe.FindStringSubmatch(h)
	if m == nil || !contrasting(m[1], m[2]) {
		return "", "", false
	}
	return strings.ToLower(m[1]), strings.ToLower(m[2]), true
}

// inOrder: h names both states in order (statesInOrder).
func inOrder(h string) bool {
	_, _, ok := statesInOrder(h)
	return ok
}

// enterHeading is the block a heading starts. A heading that names a state sets it (and a
// setting beside it the block); one that names none is a condition when its text comes back
// (a sub-heading of each state) or when the figures below it name their states themselves,
// and otherwise a state no word decides ("unpached:", "Multi buffer (MTU 9000):").
func enterHeading(cur block, h string, lines []line, i int, repeated map[string][]int) block {
	if first, second, ok := statesInOrder(h); ok && !statesFollow(lines, i) {
		// "before and after the patch:" over a paragraph of each, in that order
		cur.side, cur.state, cur.then, cur.thenState, cur.armed = contrastSide(first), first, contrastSide(second), second, false
		cur.thenAt = bareFigurePair(lines, i+1)
		return cur
	}
	side, strong, _ := stateOf(h)
	if side != "" && !strong && strings.Contains(h, ",") && statesFollow(lines, i) {
		// "Larger packets, no page cross, 1024 bytes": a setting among the words of a
		// condition, over lines that name their states themselves.
		side = ""
	}
	if side == "" && !(subHeading(lines, i, h, repeated) || statesFollow(lines, i)) {
		side = "?"
	}
	if side == "" {
		cur.cond = labelKey(h)
		if !subHeading(lines, i, h, repeated) {
			// A section whose lines name their states themselves: no state of an earlier
			// heading (a "The idea, roughly:" over a code block far above "Results:") is theirs.
			cur.side, cur.state = "", ""
		}
		return cur
	}
	if cur.roundSide == "" || side == cur.roundSide || side == "before" {
		cur.roundSide, cur.roundCond = side, cur.cond
	} else {
		cur.cond = cur.roundCond
	}
	cur.side, cur.state = side, h
	if s := settingPart(h); strong && s != "" {
		cur.cond = labelKey(s)
	}
	return cur
}

// optionLineRe is a line of a command's options wrapped under it: indented, starting with an
// option ("    -r 64,64 -O THROUGHPUT").
var optionLineRe = regexp.MustCompile(`^\s+--?[A-Za-z]`)

// stateLine: lines[i] is a state's label, named by a patch word, with one figure, and the
// next line is a tool's output without a label (perf stat's banner or one of its counters):
// the line heads that output.
func stateLine(lines []line, i int) (side, state string, ok bool) {
	if i+1 >= len(lines) {
		return "", "", false
	}
	label, rest := lineLabel(lines[i].text)
	side, strong, _ := stateOf(label)
	if side == "" || !strong || len(readFigures(rest).figures) != 1 {
		return "", "", false
	}
	next := lines[i+1].text
	if l, _ := lineLabel(next); !perfStatBannerRe.MatchString(next) && (l != "" || !perfStatRe.MatchString(next)) {
		return "", "", false
	}
	return side, label, true
}

// perfElapsedRe is perf stat's last line, the time its count ran: "10.001873116 seconds time
// elapsed".
var perfElapsedRe = regexp.MustCompile(`^\s*\d+(?:\.\d+)?\s+seconds\s+time\s+elapsed\s*$`)

// perfWindowBannerRe is perf stat's banner when it counted CPUs or the whole system (-C, -a),
// not a command it ran: "Performance counter stats for 'CPU(s) 3':", "... for 'system wide':".
var perfWindowBannerRe = regexp.MustCompile(`^\s*Performance\s+counter\s+stats\s+for\s+'(?:CPU\(s\)|system\s+wide)`)

// perfWindowAbove: the perf stat banner over lines[i] (within its block's lines) is a window's
// (perfWindowBannerRe).
func perfWindowAbove(lines []line, i int) bool {
	for k := i - 1; k >= 0 && k >= i-40; k-- {
		if perfStatBannerRe.MatchString(lines[k].text) {
			return perfWindowBannerRe.MatchString(lines[k].text)
		}
	}
	return false
}

// perfStatBannerRe is the line perf stat prints over its counters.
var perfStatBannerRe = regexp.MustCompile(`^\s*Performance\s+counter\s+stats\s+for\b`)

// variantPair: the paragraph at lines[j] is two labelled figures of one unit whose labels name
// no state and come nowhere else in the message ("global pool: 8.10 Gbit/s" / "per-cpu pool:
// 9.07 Gbit/s"): two variants compared, the labels their states, not readings of a state the
// heading above names.
func variantPair(lines []line, j int) bool {
	var labels, shapes []string
	for k := j; k < len(lines) && strings.TrimSpace(lines[k].text) != ""; k++ {
		label, rest := listLabel(lines, k)
		sh := readFigures(rest)
		ms := sh.measured()
		if label == "" || len(ms) != 1 || len(sh.figures) != 1 {
			return false // a series of runs is readings of a state, not a variant's figure
		}
		labels, shapes = append(labels, labelKey(label)), append(shapes, ms[0].unit.norm)
	}
	if len(labels) != 2 || labels[0] == labels[1] || shapes[0] != shapes[1] {
		return false
	}
	for k := range lines {
		if k == j || k == j+1 {
			continue
		}
		if label, _ := lineLabel(lines[k].text); label != "" && slices.Contains(labels, labelKey(label)) {
			return false
		}
	}
	return true
}

// statesFollow: the first figures or heading after line i name their state themselves.
func statesFollow(lines []line, i int) bool {
	for j := i + 1; j < len(lines) && j < i+15; j++ {
		t := lines[j].text
		if strings.TrimSpace(t) == "" || isCommand(t) || separatorRe.MatchString(t) {
			continue
		}
		if m := headingRe.FindStringSubmatch(t); m != nil {
			if side, _, _ := stateOf(m[1]); side != "" {
				return true
			}
			continue // a heading of a condition ("64 byte frames:"): the states may be named below it
		}
		if title := titleName(lines, j); title != "" {
			if side, _, _ := stateOf(title); side != "" {
				return true
			}
			continue
		}
		if label, rest := listLabel(lines, j); label != "" && len(readFigures(rest).figures) > 0 {
			// The list's labels name their states where one of them does ("reference:"
			// over "with patch 3:") or they differ as variants of one name.
			siblings := siblingLabels(lines, j)
			for _, sib := range siblings {
				if side, _, _ := stateOf(sib); side != "" || releaseSide(sib) != "" {
					return true // a state's name, or a release that names one ("6.13.0-rc2+")
				}
				if _, _, ok := labelVariant(siblings, sib, ""); ok {
					return true
				}
			}
			return variantPair(lines, j)
		}
		if len(readFigures(t).figures) > 0 {
			return false
		}
	}
	return false
}

// isTitle: a short line without figures, after an empty line, that a block of figures or
// commands follows ("Turning off pacing gives the same picture",
// "2) Base (4f1c2b7a90de)", "  With the PLL clock @ 200MHz,").
// outdented: lines[i] starts left of the line above it and the line below starts right of
// it: a section's name in a structure shown by indentation alone, the section before it
// ending without an empty line.
func outdented(lines []line, i int) bool {
	if i == 0 || i+1 >= len(lines) || strings.TrimSpace(lines[i+1].text) == "" {
		return false
	}
	return indent(lines[i].text) < indent(lines[i-1].text) && indent(lines[i+1].text) > indent(lines[i].text)
}

// betweenSameLabels: lines[i] stands between two blocks of the same labelled lines, no empty
// line around it ("base: 8.0 Gbps" / "patched: 7.6 Gbps" / "TCP, one stream" / "base: 6.5
// Gbps"): the next block's title, as after an empty line.
func betweenSameLabels(lines []line, i int) bool {
	if i+1 >= len(lines) {
		return false
	}
	next := labelRe.FindStringSubmatch(lines[i+1].text)
	if next == nil || len(readFigures(next[2]).measured()) == 0 {
		return false
	}
	for k := i - 1; k >= 0 && i-k <= 6 && strings.TrimSpace(lines[k].text) != ""; k-- {
		if m := labelRe.FindStringSubmatch(lines[k].text); m != nil && strings.EqualFold(strings.TrimSpace(m[1]), strings.TrimSpace(next[1])) {
			return true
		}
	}
	return false
}

func isTitle(lines []line, i int) bool {
	t := strings.TrimSpace(lines[i].text)
	if len(t) > 80 || !titleEndRe.MatchString(t) || (i > 0 && strings.TrimSpace(lines[i-1].text) != "" && !underTitle(lines, i) && !outdented(lines, i) && !betweenSameLabels(lines, i)) || len(readFigures(numberedRe.ReplaceAllString(t, "")).figures) > 0 && !countsOfThings(numberedRe.ReplaceAllString(t, "")) {
		return false
	}
	if strings.HasPrefix(t, "[") && !bracketedTitleRe.MatchString(t) || strings.Contains(t, "|") || labelRe.MatchString(t) && !numberedRe.MatchString(t) {
		return false
	}
	if i+1 < len(lines) && underlineRe.MatchString(lines[i+1].text) && len(splitRow(t)) == 1 {
		return true // a heading underlined, as in reStructuredText and Markdown's setext
	}
	if cells := splitRow(t); len(cells) >= 2 && i+1 < len(lines) {
		below := splitRow(lines[i+1].text)
		if len(below) == len(cells) || len(below) == len(cells)+1 && len(readFigures(lines[i+1].text).measured()) == len(cells) {
			return false // a table's header row, with its corner cell or without it
		}
	}
	if i+1 < len(lines) && nameAbove(lines, i+1) != "" {
		return false // the name of the figure indented under it
	}
	if c := alignedColumns(lines, i); c != nil {
		if _, next, _ := splitTable(lines, i, context{}, c.split); next > i {
			return false // the header row of a table of states aligned with single spaces
		}
	}
	for j := i + 1; j < len(lines) && j < i+5; j++ {
		n := lines[j].text
		switch {
		case strings.TrimSpace(n) == "" || separatorRe.MatchString(n):
			continue
		case j == i+1 && i >= 2 && len(readFigures(lines[i-2].text).measured()) > 0 && wrappedTitle(lines, j):
			// a title of two lines between blocks of figures: "With the reordering of a
			// later patch, applied" over "on top (the third build)"
			continue
		case len(splitCellsRe.Split(strings.TrimSpace(n), -1)) >= 3 && len(readFigures(n).figures) == 0:
			continue // a table's header row
		case isCommand(n):
			return true
		default:
			sh := readFigures(n)
			// A state's name over rows of bare figures (the unit said above) is a title too.
			return len(sh.measured()) > 0 || bareTotalRe.MatchString(n) || counterRe.MatchString(n) || len(sh.figures) > 0 && stateNamed(t)
		}
	}
	return false
}

// titleName is the name of a title in brackets ("[ patched ]") or underlined at lines[j], or "".
func titleName(lines []line, j int) string {
	t := strings.TrimSpace(lines[j].text)
	if m := bracketedTitleRe.FindStringSubmatch(t); m != nil {
		return strings.TrimSpace(m[1] + m[2])
	}
	if j+1 < len(lines) && underlineRe.MatchString(lines[j+1].text) && len(splitRow(t)) == 1 && len(readFigures(t).figures) == 0 {
		return t
	}
	return ""
}

// bracketedTitleRe is a title in brackets, alone on its line: "[ baseline ]", "<with the
// series>" (not a tool's tag over figures, "[SUM]  0.00-10.00 sec ...").
var bracketedTitleRe = regexp.MustCompile(`^(?:\[([^\[\]\d][^\[\]]{0,60})\]|<([^<>\d][^<>]{0,60})>)$`)

// underlineRe is a line of = or - under a heading.
var underlineRe = regexp.MustCompile(`^\s*(?:={3,}|-{3,})\s*$`)

// numberedRe is a list's number before a title: "2) ", "2 - " (not "2. ", a decimal's look).
var numberedRe = regexp.MustCompile(`^\s*\d+(?:\)|\s+-)\s`)

// countsOfThings: every number of a title counts the word after it ("tests with 512 Rx
// buffers", "64 byte packets, 8 queues"): a setting the title names, not a figure measured.
func countsOfThings(t string) bool {
	if strings.Contains(strings.TrimSpace(t), "  ") {
		return false // fields aligned apart: a tool's banner or a table's row, no title
	}
	toks := strings.Fields(t)
	for k, tok := range toks {
		if _, ok := parseNumber(strings.Trim(tok, "(),")); !ok {
			continue
		}
		if k+1 >= len(toks) || !unicode.IsLetter([]rune(toks[k+1])[0]) {
			return false
		}
		if f := readFigures(tok + " " + toks[k+1]); len(f.measured()) > 0 {
			return false // "512 Mpps": a measurement
		}
	}
	return len(readFigures(t).measured()) == 0
}

// headingCounts finds each heading's lines in the message.
func headingCounts(lines []line) map[string][]int {
	out := map[string][]int{}
	for i, l := range lines {
		if m := headingRe.FindStringSubmatch(l.text); m != nil {
			out[labelKey(m[1])] = append(out[labelKey(m[1])], i)
		}
	}
	return out
}

// subHeading: a heading that comes back after a heading that names a state (before, after)
// is a sub-heading of each state ("Performance counter stats for ...:" under "Without
// the series:" and "With the series:"), not a state of its own.
func subHeading(lines []line, i int, h string, repeated map[string][]int) bool {
	at := repeated[labelKey(h)]
	if len(at) < 2 {
		return false
	}
	lo, hi := at[0], at[len(at)-1]
	for j := lo + 1; j < hi; j++ {
		if m := headingRe.FindStringSubmatch(lines[j].text); m != nil {
			if side, _, _ := stateOf(m[1]); side == "before" || side == "after" {
				return true
			}
		}
	}
	return false
}

// toolTable: at lines[i] a header row of a tool's table (vmstat, perf lock, mpstat: three
// or more words apart, no figures) with rows of figures below; the index after its rows,
// which are side readings of a run and not claims, or i.
func toolTable(lines []line, i int) int {
	t := strings.TrimSpace(lines[i].text)
	cells := splitCellsRe.Split(t, -1)
	if len(cells) < 3 || len(readFigures(t).figures) > 0 || strings.HasPrefix(t, "[") || strings.HasSuffix(t, ":") || arrowRe.MatchString(t) {
		return i // an arrow between figures ("IPIs/s  182k  =>  41k") compares them: no header
	}
	j := i + 1
	for j < len(lines) && strings.TrimSpace(lines[j].text) == "" {
		j++
	}
	rows := 0
	for ; j < len(lines) && strings.TrimSpace(lines[j].text) != ""; j++ {
		if len(readFigures(lines[j].text).figures) < 2 {
			break
		}
		rows++
	}
	if rows == 0 {
		return i
	}
	return j
}

// dropProfiles keeps a perf profile line only where it is its state's only one (the
// function a message picked); a whole profile is a side reading (read reads the profiles
// whole where nothing else gives a claim: then their functions are the result).
func dropProfiles(rs []reading, lines []line) []reading {
	isProfile := func(r reading) bool { return profileRe.MatchString(lines[r.idx].text) }
	perState := map[string]int{}
	for _, r := range rs {
		if isProfile(r) {
			perState[r.state+"|"+blockOf(r.key)]++
		}
	}
	var out []reading
	for _, r := range rs {
		if isProfile(r) && perState[r.state+"|"+blockOf(r.key)] > 1 {
			continue
		}
		out = append(out, r)
	}
	return out
}

func blockOf(key string) string {
	b, _, _ := strings.Cut(key, "|")
	return b
}

// underTitle: line i is indented under a short line without figures ("Results in switch
// mode" / "  With the fast clock @ 400MHz").
// wrappedTitle: lines[j] ends a paragraph of two lines that names what the figures under it
// are of, wrapped at the mail's width: words and no figure, no stop at its end, a blank line
// after it.
func wrappedTitle(lines []line, j int) bool {
	t := strings.TrimSpace(lines[j].text)
	return t != "" && len(t) <= 80 && titleEndRe.MatchString(t) && len(readFigures(t).figures) == 0 && !strings.HasSuffix(strings.TrimSpace(lines[j-1].text), ".") &&
		j+1 < len(lines) && strings.TrimSpace(lines[j+1].text) == ""
}

func underTitle(lines []line, i int) bool {
	prev, cur := lines[i-1].text, lines[i].text
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
	p := strings.TrimSpace(prev)
	return indent(cur) > indent(prev) && len(p) <= 80 && len(readFigures(p).figures) == 0 && !strings.HasSuffix(p, ".") &&
		(i < 2 || strings.TrimSpace(lines[i-2].text) == "")
}

// setupRe names a test setup: "Test setup 1", "Setup 2", "Case 3", "Config B".
var setupRe = regexp.MustCompile(`(?i)^(?:test\s+)?(?:setup|case|config(?:uration)?|scenario|topology)\s*\w{0,3}$`)

// isSetupLine: "Test setup 2: arm64 board with a 2.5G NIC ---> x64 host" at the start of a paragraph:
// what follows is measured on that setup, a block of its own.
func isSetupLine(lines []line, i int) bool {
	if i > 0 && strings.TrimSpace(lines[i-1].text) != "" {
		return false
	}
	m := labelMatch(lines[i].text)
	return m != nil && setupRe.MatchString(strings.TrimSpace(m[1])) && len(readFigures(m[2]).measured()) == 0
}

// saw notes what a line showed, for the summary of a text without claims.
func (r *Report) saw(text string, got []reading) {
	if len(text) < maxReadLine && len(readFigures(text).measured()) > 0 || len(got) > 0 {
		r.sawFigures = true // figures with a unit, or readings of bare ones (a run's total)
	}
	for _, g := range got {
		if r.sides == nil {
			r.sides = map[string]bool{}
		}
		name := g.side
		if name == "?" {
			name = strings.TrimSpace(g.state)
		}
		r.sides[name] = true
	}
}

// generic reads what starts at lines[i] when nothing above took it: netperf -O rows and
// nsperf's tables (measurements), a table of states (claims), a tool's table (skipped), else
// the line's readings and arrows. It returns the index of the last line it took.
func (r *Report) generic(lines []line, i int, ctx context, ms *[]measurement, rs *[]reading, skipTo *int) int {
	if got, next := r.other(lines, i, ctx); next > i {
		*ms = keep(r, *ms, ctx.mark(got))
		return next - 1
	}
	// Under a heading that names no state word ("Results:"), a pipe table is first a table
	// of its own states ("| size | old_path | new_path |"); under a state's heading, its figures
	// are that state's.
	if ctx.blk.side == "?" {
		if claims, next, skipped := stateTable(lines, i, ctx); next > i {
			r.addClaims(claims...)
			r.droppedClaims += skipped
			return next - 1
		}
	}
	if got, next := r.pipeBlockTable(lines, i, ctx.blk); next > i {
		r.saw(lines[i+1].text, got)
		*rs = keep(r, *rs, got)
		return next - 1
	}
	if claims, next, skipped := stateTable(lines, i, ctx); next > i {
		r.addClaims(claims...)
		r.droppedClaims += skipped
		return next - 1
	} else if rows := tableLike(lines, i); rows != nil && len(r.tables) < maxUnparsed {
		r.tables = append(r.tables, rows)
	}
	if got, next := r.stateBlockTable(lines, i, ctx.blk); next > i {
		r.saw(lines[i+1].text, got)
		*rs = keep(r, *rs, got)
		return next - 1
	}
	if got, next := r.stateHeadedTable(lines, i, ctx.blk); next > i {
		r.saw(lines[i+1].text, got)
		*rs = keep(r, *rs, got)
		return next - 1
	}
	if next := toolTable(lines, i); next > i {
		*skipTo = next
	}
	if i < *skipTo {
		return i
	}
	got, pairs := lineReadings(lines, i, ctx.blk)
	r.saw(lines[i].text, got)
	*rs = keep(r, *rs, got)
	for _, p := range pairs {
		r.addPair(p)
	}
	return i
}

// runLabelRe is a row's label that numbers a run: a run's column name ("run 4", "#3") or,
// at a row's start, a bare ordinal ("1.", "2)").
var runLabelRe = regexp.MustCompile(runColumnRe.String() + `|^\d{1,3}[.)]?$`)

// pipeBlockTable reads a table with pipes under a state's heading or title ("iperf3 runs with 256
// descriptors" over "| streams | goodput | rx_missed |" and rows "| 1 | 9.12Gbps | 48,210 |",
// rules of dashes between): the first column names each row (a case), each other
// column is a measurement of the block's state, a figure with its unit or a count. The other
// state's table pairs with it by column and row name; which state is the baseline, when no
// word of the headings says, is the rest of the message's to say. next is past the table.
func (r *Report) pipeBlockTable(lines []line, i int, b block) ([]reading, int) {
	if b.side == "" || b.state == "" || !strings.Contains(lines[i].text, "|") || len(readFigures(lines[i].text).figures) > 0 {
		return nil, i
	}
	header := splitRow(lines[i].text)
	if len(header) < 2 || slices.ContainsFunc(header, stateNamed) {
		return nil, i // a table of its own states: stateTable's
	}
	var out []reading
	j := i + 1
	for ; j < len(lines) && j-i <= maxAlignedRows; j++ {
		t := lines[j].text
		if separatorRe.MatchString(t) {
			continue
		}
		cells := splitRow(t)
		if !strings.Contains(t, "|") || len(cells) != len(header) {
			break
		}
		if stateNamed(cells[0]) {
			return nil, i
		}
		var row []reading
		for k, cell := range cells[1:] {
			f, ok := cellValue(cell)
			if !ok {
				return nil, i
			}
			column := header[k+1]
			x := reading{key: b.cond + "|tbl|" + labelKey(column) + "|" + labelKey(cells[0]), metric: metricOf(f.unit), unit: f.unit.norm,
				value: round(f.value), side: b.side, state: b.state, line: lines[j].n, idx: j, conds: map[string]string{"column": column, "row": cells[0]}}
			if f.bare {
				x.metric, x.named = strings.TrimSpace(column), true // a count the column names
			}
			row = append(row, x)
		}
		out = append(out, row...)
	}
	if len(out) == 0 {
		return nil, i
	}
	return out, j
}

// stateBlockTable reads a table under a state's heading ("Before this series:" over
// "   alloc_free   recycle" and rows "1.   24.5 ns   41.0 ns"): each column is a measurement
// of the block's state, each row a run of it (numbered rows) or a case (named rows). The
// other state's table may repeat the header or not; the readings pair by column and row
// name. next is past the table; nothing where the block names no state or the lines are
// no such table.
func (r *Report) stateBlockTable(lines []line, i int, b block) ([]reading, int) {
	if b.side == "" || i+1 >= len(lines) {
		return nil, i
	}
	// A row is its label (a run's number, a case's name) and its figures with units, in the
	// columns' order, however many spaces apart.
	row := func(k int) (label string, figs []figure, ok bool) {
		t := strings.TrimSpace(lines[k].text)
		if arrowRe.MatchString(t) {
			return "", nil, false // two figures compared: both states on one line, no state's row
		}
		f := strings.Fields(t)
		run := len(f) > 1 && runLabelRe.MatchString(f[0])
		if run {
			t = strings.TrimSpace(strings.TrimPrefix(t, f[0]))
		}
		sh := readFigures(t)
		figs = sh.measured()
		if len(figs) == 0 || len(figs) != len(sh.figures) {
			return "", nil, false
		}
		if run {
			return "", figs, true
		}
		if cells := splitRow(t); len(cells) == len(figs)+1 {
			return cells[0], figs, true
		}
		return "", nil, false
	}
	header := splitRow(lines[i].text)
	j := i + 1
	_, first, ok := row(min(i+1, len(lines)-1))
	switch {
	case len(readFigures(lines[i].text).figures) == 0 && !strings.HasSuffix(strings.TrimSpace(lines[i].text), ":") && !arrowRe.MatchString(lines[i].text) && ok:
		if len(header) != len(first) {
			header = strings.Fields(lines[i].text) // names a single space apart
		}
		if len(header) < 2 || len(header) != len(first) {
			return nil, i
		}
	case len(r.blockHeader) >= 2 && (i == 0 || strings.TrimSpace(lines[i-1].text) == "" || headingRe.MatchString(lines[i-1].text)):
		// the other state's table without its header row: the columns the first one named
		if _, figs, ok := row(i); !ok || len(figs) != len(r.blockHeader) {
			return nil, i
		}
		header, j = r.blockHeader, i
	default:
		return nil, i
	}
	var out []reading
	for ; j < len(lines) && j-i <= maxAlignedRows; j++ {
		name, figs, ok := row(j)
		if !ok || len(figs) != len(header) {
			break
		}
		for k, f := range figs {
			conds := map[string]string{"column": header[k]}
			if name != "" {
				conds["row"] = name
			}
			out = append(out, reading{key: b.cond + "|tbl|" + labelKey(header[k]) + "|" + labelKey(name), metric: metricOf(f.unit), unit: f.unit.norm,
				value: round(f.value), side: b.side, state: b.state, line: lines[j].n, idx: j, conds: conds})
		}
	}
	if len(out) == 0 {
		return nil, i
	}
	r.blockHeader = header
	return out, j
}

// stateHeadedTable reads a table under a state's heading whose header row names its columns
// and their units ("Type  Ops/sec  Avg. Latency  KB/sec" over "Sets  10230.55  1.78  788.21",
// memtier's and many authors' shape), its cells bare figures or empty ("---", "-", "N/A"),
// the first cell of a row its name and the header's first its corner: each figure a reading
// of its column and row, for the same table under the other state's heading.
func (r *Report) stateHeadedTable(lines []line, i int, b block) ([]reading, int) {
	if b.side == "" || i+2 >= len(lines) || len(readFigures(lines[i].text).figures) > 0 || strings.HasSuffix(strings.TrimSpace(lines[i].text), ":") {
		return nil, i
	}
	header := splitRow(strings.TrimSpace(lines[i].text))
	note := ""
	if n := len(header); n > 2 && parenNoteRe.MatchString(header[n-1]) {
		// "min  avg  max  (usec per packet)": the unit of every column, no column; what
		// each figure is of ("per packet") is no part of its unit
		if _, ok := labelUnit(perThingRe.ReplaceAllString(header[n-1], "")); ok {
			note, header = perThingRe.ReplaceAllString(header[n-1], ""), header[:n-1]
		}
	}
	if len(header) < 2 || len(header) > maxTableColumns {
		return nil, i
	}
	j := i + 1
	for j < len(lines) && separatorRe.MatchString(lines[j].text) {
		j++ // a rule under the header
	}
	if j < len(lines) && len(splitRow(strings.TrimSpace(lines[j].text))) == len(header)+1 && indent(lines[i].text) > indent(lines[j].text) {
		// the header indented over the figures, without the corner over the rows' names
		header = append([]string{""}, header...)
	}
	var out []reading
	for start := j; j < len(lines) && j-start <= maxAlignedRows; j++ {
		if separatorRe.MatchString(lines[j].text) {
			continue
		}
		got, ok := headedRow(lines[j], header, note, b)
		if !ok {
			break
		}
		out = append(out, got...)
	}
	if len(out) == 0 || j < i+3 {
		return nil, i
	}
	return out, j
}

// headedRow reads one row of a stateHeadedTable: its name, then a figure or an empty cell
// under each column.
func headedRow(l line, header []string, unitNote string, b block) ([]reading, bool) {
	cells := splitRow(strings.TrimSpace(l.text))
	if len(cells) != len(header) {
		return nil, false
	}
	name := cells[0]
	var out []reading
	for k, c := range cells[1:] {
		if emptyCellRe.MatchString(c) {
			continue
		}
		f, ok := cellValue(c)
		if !ok {
			return nil, false
		}
		f = headerUnit(f, header[k+1], unitNote)
		conds := map[string]string{"column": header[k+1], "row": name}
		metric := metricOf(f.unit)
		if f.unit.norm == "" {
			metric = metricName(header[k+1]) // a figure without a unit is what its column names
		}
		out = append(out, reading{key: b.cond + "|tbl|" + labelKey(header[k+1]) + "|" + labelKey(name), metric: metric, unit: f.unit.norm,
			value: round(f.value), side: b.side, state: b.state, line: l.n, conds: conds})
	}
	return out, len(out) > 0
}

// perThingRe is what a unit is of, after it: " per packet", " per op".
var perThingRe = regexp.MustCompile(`\s+per\s+[a-z]+\b`)

// parenNoteRe is a cell that is only a note in parentheses: "(usec per packet)".
var parenNoteRe = regexp.MustCompile(`^\([^()]{1,40}\)$`)

// emptyCellRe is a table cell that holds no figure: a dash or three, N/A.
var emptyCellRe = regexp.MustCompile(`^(?:-{1,3}|N/A|n/a)$`)

// tableLike: lines[i] is a header row (two or more cells, no figures) over two or more rows of
// two or more figures each; their input lines, or nil.
func tableLike(lines []line, i int) []int {
	if len(splitRow(lines[i].text)) < 2 || len(readFigures(lines[i].text).figures) > 0 || arrowRe.MatchString(lines[i].text) || i > 0 && strings.TrimSpace(lines[i-1].text) != "" {
		return nil
	}
	var rows []int
	for j := i + 1; j < len(lines) && strings.TrimSpace(lines[j].text) != ""; j++ {
		if separatorRe.MatchString(lines[j].text) {
			continue
		}
		if j == i+1 && namesOnly(lines[j].text) {
			rows = append(rows, lines[j].n) // a second header row ("(trans/s)  P50  P99")
			continue
		}
		if len(readFigures(lines[j].text).figures) < 2 {
			return nil
		}
		rows = append(rows, lines[j].n)
	}
	if len(rows) < 2 {
		return nil
	}
	return append([]int{lines[i].n}, rows...)
}

// claimedLines are the lines some claim was read from.
func (r *Report) claimedLines() map[int]bool {
	used := map[int]bool{}
	for _, c := range r.Claims {
		for _, n := range c.Lines {
			used[n] = true
		}
	}
	return used
}

// unreadTables says which blocks that look like tables gave no claim: a table whose states
// could not be told is never dropped without a word.
func (r *Report) unreadTables() {
	used := r.claimedLines()
	for _, t := range r.tables {
		read := false
		for _, n := range t {
			read = read || used[n]
		}
		if !read {
			r.addUnparsed(Unparsed{Lines: t, Reason: "a table whose states could not be told (no column or row names a state before and after the change, or its columns could not be cut): not read"})
		}
	}
}

// tableHeader: a table of states starts at lines[i] ("Setup:   Rate   Transactions" over its
// rows is a header, not the name of a test setup).
func tableHeader(lines []line, i int, ctx context) bool {
	_, next, _ := stateTable(lines, i, ctx)
	return next > i
}
