// Package claims reads the benchmark claims in a commit message, a patch mail or a merge
// message: the measurements it shows (netperf's classic blocks and -O rows, tables with a
// header row, "Before/After: N unit" lines), their before and after values normalised, the
// conditions and toggles around them, and the changes the prose states. It never invents a
// claim: a block it cannot read whole is listed as unparsed, with its lines. Pure.
package claims

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/scenarios"
)

// Claim is one before/after comparison the text makes.
type Claim struct {
	Tool    string `json:"tool,omitempty"`    // netperf, iperf3, or "" for prose and tables
	Command string `json:"command,omitempty"` // as written
	// Options are the command's options that say what it measured: test, duration, sizes
	// (-r), selectors (-O).
	Options map[string]string `json:"options,omitempty"`
	// Metric is the metric of nsperf's tools the claim is about (throughput,
	// transaction_rate, min_latency, local_cpu_util: names the tools declare), "" where nsperf
	// measures nothing of the kind; Quantity then says what the text measures (packet_rate,
	// TcpInSegs, instructions_per_packet, share).
	Metric   string `json:"metric"`
	Quantity string `json:"quantity,omitempty"`
	Unit     string `json:"unit"` // normalised: bit/s, trans/s, pps, us
	// Conditions split the claims: mtu, family, offloads, flows.
	Conditions map[string]string `json:"conditions,omitempty"`
	Before     Values            `json:"before"`
	After      Values            `json:"after"`
	// Change is the change the numbers give: after's median over before's, less 1. FromZero:
	// before is 0, so there is no ratio (Change is 0); the direction is after's sign.
	Change   float64 `json:"change"`
	FromZero bool    `json:"from_zero,omitempty"`
	// Stated is the change the text states for this claim, where it states one; Mismatch
	// says the numbers do not give it (more than half a point apart).
	Stated   *float64 `json:"stated,omitempty"`
	Mismatch bool     `json:"mismatch,omitempty"`
	// Lines are the input's lines the claim came from.
	Lines []int `json:"lines"`
}

// Values are one side's figures, with their median; CV where the text states one.
type Values struct {
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	// Printed: Median is the runs' average as the author printed it beside them, not their
	// median (the text's own figure for the side).
	Printed bool     `json:"printed,omitempty"`
	CV      *float64 `json:"cv,omitempty"`
	Label   string   `json:"label,omitempty"` // how the text names the side: "BIG TCP off"
}

// Toggle is a command the text shows that changes what a scenario's state can set.
type Toggle struct {
	Command string `json:"command"`
	Device  string `json:"device,omitempty"`
	// Settings are what the command sets, by the setting kind that read it (devices, offloads,
	// sysctls, qdiscs: scenarios.ToggleReader), then the kind's names.
	Settings map[string]map[string]string `json:"settings,omitempty"`
	Line     int                          `json:"line"`
	measured bool                         // scenarios.SettingToggle.Measured
}

// Unparsed is a block that looks like a measurement but is not whole.
type Unparsed struct {
	Lines  []int  `json:"lines"`
	Reason string `json:"reason"`
}

// Report is what one input claims.
type Report struct {
	Input   string   `json:"input"`
	Claims  []Claim  `json:"claims"`
	Toggles []Toggle `json:"toggles,omitempty"`
	Setup   []string `json:"setup,omitempty"` // "same-host test", "two hosts", "NIC enp10s0f0np0"
	// OtherTools are benchmark programs the message names that nsperf does not drive
	// (pktgen, xdp-bench, neper): what its figures were measured with, where nsperf cannot.
	OtherTools []string   `json:"other_tools,omitempty"`
	Unparsed   []Unparsed `json:"unparsed,omitempty"`
	// Describes is what a message without numbers says of the effect, its own words.
	Describes []string `json:"describes,omitempty"`
	// Quoted counts the lines of quoted replies ("> "), which are someone else's words and
	// are not read for claims.
	Quoted int `json:"quoted,omitempty"`
	// Summary says in one sentence why there are no claims, where there are none: "no
	// numbers", "figures only in a quoted reply", "numbers of one state only".
	Summary string `json:"summary,omitempty"`
	// DiffProblems say why a diff of the input could not be read; its message's claims are
	// read all the same.
	DiffProblems []string `json:"diff_problems,omitempty"`

	stated []stated
	// change is what the message's patch says besides its prose: its Subject, the lines its
	// diff adds and removes (evidence of which state is the patch's).
	change patchText
	// dropped counts the claims and the unread blocks past the bounds (MaxClaims,
	// maxUnparsed), said at the end.
	droppedClaims, droppedUnparsed, droppedFigures int
	// What the reader saw, for the summary: figures of a result outside quotes and inside
	// them, and readings of each side.
	sawFigures, quotedFigures bool
	// toolLines are the lines a tool's grammar read (by number): output, not prose.
	toolLines map[int]bool
	readings  map[string]bool // readingKey of the claims kept
	// tables are blocks that look like tables (a header without figures over rows of
	// figures) that no table reader took: said as unread when no claim comes from them.
	tables [][]int
	sides  map[string]bool
	// blockHeader is the header row of the last table read under a state's heading: the
	// other state's table may give its rows without it.
	blockHeader []string
}

// MaxClaims bounds the claims of one input, and maxUnparsed what it lists as not read: a
// commit message's benchmark has tens, a thread a few hundred. A larger input (a 32 MiB table)
// is read to its end in memory that does not grow with its claims, and says what it left out.
const (
	MaxClaims   = 10000
	maxUnparsed = 1000
	maxFigures  = 4 * MaxClaims // the figures claims are paired from: a tool's blocks, a line's readings
)

// ansiRe is a terminal's colour (SGR) sequence, what a tool's coloured output pasted keeps; any
// other escape stays in the text, shown escaped.
var ansiRe = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// figureSpreadRe is a spread written after a figure: "55,885.56 +- 1,782.51 req/s",
// "18.2 ± 0.3 us", "4.1 +/- 0.2%".
var figureSpreadRe = regexp.MustCompile(`(\d)\s*(?:±|\+/-|\+-)\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?`)

// betterNoteRe is a note of which way is better: "(higher is better)", "[lower is better]",
// ", less is better". It says how to read the figures, and names no condition of them.
var betterNoteRe = regexp.MustCompile(`(?i)\s*(?:[(\[]\s*(?:higher|lower|more|less|bigger|smaller)\s+is\s+better\s*[)\]]|,\s*(?:higher|lower|more|less|bigger|smaller)\s+is\s+better\b)`)

// dropBetterNote takes betterNoteRe's notes out of a line (`sed -E 's/ *\((higher|lower) is
// better\)//'`).
func dropBetterNote(l string) string {
	if !strings.Contains(strings.ToLower(l), "is better") {
		return l
	}
	return betterNoteRe.ReplaceAllString(l, "")
}

// dropSpread takes a figure's spread out of a line, so that the unit after it is the figure's
// and the spread is never read as a figure of its own (`sed -E 's/([0-9]) *(±|\+-) *[0-9.,]+//'`).
func dropSpread(l string) string {
	return figureSpreadRe.ReplaceAllString(l, "$1")
}

// scaledFigureRe is a number with a scale glued on and its rate's unit after a space:
// "780k pps", "2.1M pkt/s", "96K req/s". One space: a wider gap is a table's, between a
// column's figure and a column of units ("1.61M   pps").
var scaledFigureRe = regexp.MustCompile(`\b(\d+(?:\.\d+)?)([kKM]) ([A-Za-z][A-Za-z/]*)`)

// scaledFigures writes the scale of scaledFigureRe's figures into their numbers ("780000
// pps"), for every reader to see one number and its unit; a size ("64k bytes") stays.
func scaledFigures(l string) string {
	if !strings.ContainsAny(l, "kKM") {
		return l
	}
	return scaledFigureRe.ReplaceAllStringFunc(l, func(s string) string {
		m := scaledFigureRe.FindStringSubmatch(s)
		u, ok := lookupUnit(m[3])
		n, okn := parseNumber(m[1])
		if !ok || !okn || u.kind == "time" || u.kind == "percent" {
			return s
		}
		return strconv.FormatFloat(n*scaleSuffix[m[2]], 'f', -1, 64) + " " + m[3]
	})
}

// perSecondRe is a figure's unit, a count written out per second: "152k transactions per
// second", "3.1M packets per sec". A label before its figure ("Requests per second:", as ab
// prints it) and a tool's own "bits/sec" stay for their grammars.
var perSecondRe = regexp.MustCompile(`(?i)(\d[kmg]?\s*)([a-z]+)\s+per\s+sec(?:ond)?\b`)

// perSecondUnits writes perSecondRe's units as the rate every reader knows ("transactions/s"),
// where that is a unit; other words before "per second" stay.
func perSecondUnits(l string) string {
	if !strings.Contains(strings.ToLower(l), " per sec") {
		return l
	}
	return perSecondRe.ReplaceAllStringFunc(l, func(s string) string {
		m := perSecondRe.FindStringSubmatch(s)
		if u, ok := lookupUnit(m[2] + "/s"); !ok || u.norm == "" {
			return s
		}
		return m[1] + m[2] + "/s"
	})
}

// scientificFigureRe is a number in scientific notation followed by its unit, as tools that
// print with %e or %g write it ("2.39e+09 bits/sec", "1.5E6 pps", "4.2e-05 s").
var scientificFigureRe = regexp.MustCompile(`\b(\d+(?:\.\d+)?)[eE]([+-]?\d{1,2}) ?([A-Za-z][A-Za-z/]*)`)

// scientificFigures writes scientificFigureRe's figures as plain numbers ("2390000000
// bits/sec"), as scaledFigures does a scale, when what follows is a unit; a bare one (a JSON
// value, a table cell) stays.
func scientificFigures(l string) string {
	if !strings.ContainsAny(l, "eE") {
		return l
	}
	return scientificFigureRe.ReplaceAllStringFunc(l, func(s string) string {
		m := scientificFigureRe.FindStringSubmatch(s)
		if _, ok := lookupUnit(m[3]); !ok {
			return s
		}
		v, err := strconv.ParseFloat(m[1]+"e"+m[2], 64)
		if err != nil {
			return s
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + " " + m[3]
	})
}

// dotLeaderRe is a run of dots that leads the eye from a label to its figure, as in a table of
// contents: "old kernel ...... 12.4 Gbps", "Throughput.........: 9.1", "rx . . . . 3.2 Mpps".
var dotLeaderRe = regexp.MustCompile(`([A-Za-z)\]%])\s*(?:\.\s?){3,}:?\s*([~+-]?\d)`)

// dotLeaders writes a label's dot leader as the colon every reader knows ("old kernel: 12.4
// Gbps").
func dotLeaders(l string) string {
	if !strings.Contains(l, "..") && !strings.Contains(l, ". .") {
		return l
	}
	return dotLeaderRe.ReplaceAllString(l, "${1}: ${2}")
}

// durationRe is a time written in minutes and seconds, or hours and minutes, as one word:
// "3m12s", "2m47.5s", "1h05m", "1h2m30s".
var durationRe = regexp.MustCompile(`\b(?:(\d{1,3})h)?(\d{1,3})m(?:(\d{1,3}(?:\.\d+)?)s)?\b`)

// durationFigures writes durationRe's times as seconds ("192 s"), a number and a unit every
// reader knows; the shell's own `time` lines stay for timeP, a lone "5m" or "30s" as it is.
func durationFigures(l string) string {
	if !strings.ContainsAny(l, "hm") || shellTimeRe.MatchString(l) {
		return l
	}
	return durationRe.ReplaceAllStringFunc(l, func(w string) string {
		m := durationRe.FindStringSubmatch(w)
		if m == nil || boolf(m[1] != "")+boolf(m[3] != "") == 0 { // "5m" alone: no time of this form
			return w
		}
		h, _ := strconv.ParseFloat(cmp.Or(m[1], "0"), 64)
		mi, _ := strconv.ParseFloat(cmp.Or(m[2], "0"), 64)
		sec, _ := strconv.ParseFloat(cmp.Or(m[3], "0"), 64)
		return strconv.FormatFloat(h*3600+mi*60+sec, 'f', -1, 64) + " s"
	})
}

var microRe = strings.NewReplacer("\u00b5", "u", "\u03bc", "u")

// maxLine bounds the line every reader looks at: a message's lines are a screen wide and an
// unwrapped paragraph is a few thousand bytes; each reader's patterns cost time with a line's
// length, so a longer line (a dump pasted whole) is said and left out.
const maxLine = 8192

// addClaims keeps claims up to MaxClaims and counts the rest. A claim the same as one kept
// (its lines, what it measures, its conditions and both sides' figures) is one reading
// found by two layouts ("x: before 1, after 2" is a labelled line and two state-led
// clauses), not a second pair.
func (r *Report) addClaims(cs ...Claim) {
	if r.readings == nil {
		r.readings = map[string]bool{}
	}
	var fresh []Claim // not DeleteFunc: the caller's slice stays as it was
	for _, c := range cs {
		if k := readingKey(c); !r.readings[k] {
			r.readings[k] = true
			fresh = append(fresh, c)
		}
	}
	cs = fresh
	room := max(MaxClaims-len(r.Claims), 0)
	if len(cs) > room {
		r.droppedClaims += len(cs) - room
		cs = cs[:room]
	}
	r.Claims = append(r.Claims, cs...)
}

// readingKey is what makes two claims one pair read from the same lines: the lines, what is
// measured, its conditions and both sides' figures.
func readingKey(c Claim) string {
	return fmt.Sprint(c.Lines, c.Metric, "|", c.Quantity, "|", c.Unit, "|", conditionKey(c.Conditions), "|", c.Before.Values, c.After.Values)
}

// keep appends figures to list up to maxFigures and counts the rest.
func keep[T any](r *Report, list, figures []T) []T {
	room := max(maxFigures-len(list), 0)
	if len(figures) > room {
		r.droppedFigures += len(figures) - room
		figures = figures[:room]
	}
	return append(list, figures...)
}

// addUnparsed keeps a block not read, up to maxUnparsed, and counts the rest.
func (r *Report) addUnparsed(u Unparsed) {
	for _, had := range r.Unparsed {
		if had.Reason == u.Reason && slices.Equal(had.Lines, u.Lines) {
			return // the same lines given up on for the same reason (a table's two columns)
		}
	}
	if len(r.Unparsed) >= maxUnparsed {
		r.droppedUnparsed++
		return
	}
	r.Unparsed = append(r.Unparsed, u)
}

// line is one line of a message with its line in the input.
type line struct {
	n    int
	text string
}

// Read reads the claims of an input: an mbox, a patch, a commit message or `git show`
// output (patches.Read takes all of them).
func Read(input string, data []byte) (*Report, error) {
	series, err := patches.ReadMessages(input, data)
	if err != nil {
		return nil, err
	}
	r := &Report{Input: input, Claims: []Claim{}}
	for _, p := range series {
		if p.DiffError != "" {
			r.DiffProblems = append(r.DiffProblems, p.DiffError)
		}
		var lines []line
		ktap := false // inside a kselftest's TAP output, whose diagnostics are "# " lines
		for i, l := range strings.Split(p.Message, "\n") {
			l, ktap = ktapDiagnostic(l, ktap)
			if strings.HasPrefix(strings.TrimSpace(l), ">") && !strings.HasPrefix(l, ">From ") {
				r.Quoted++
				if len(l) < maxReadLine && len(readFigures(l).measured()) > 0 {
					r.quotedFigures = true
				}
				continue
			}
			if len(l) > maxLine {
				r.addUnparsed(Unparsed{Lines: []int{p.MessageLine + i}, Reason: fmt.Sprintf(
					"a line of %d bytes, longer than any line of a message is read (%d): a dump, not read", len(l), maxLine)})
				l = ""
			}
			// A terminal's colours pasted with the text (sockperf prints them to a file too)
			// are no part of it: `sed 's/\x1b\[[0-9;]*m//g'`.
			l = ansiRe.ReplaceAllString(l, "")
			// A no-break space (a mail archive's) is a space to every reader here.
			// The micro sign and the Greek mu (authors type either) are the u of us and usec to
			// every reader here.
			l = microRe.Replace(strings.ReplaceAll(l, "\u00a0", " "))
			text := durationFigures(scientificFigures(scaledFigures(perSecondUnits(arrowSpreads(dropSpread(dropBetterNote(decimalComma(bannerHeading(dotLeaders(markdownBold(strings.TrimRight(pastePrefix(l), " \t"))))))))))))
			if n := len(lines); n > 0 {
				if timed := timeP(text, lines[n-1].text); timed != text {
					if !strings.HasPrefix(strings.TrimSpace(timed), timeLineRe(text).FindStringSubmatch(text)[2]) {
						lines[n-1].text = "" // the name went into the line it names
					}
					text = timed
				}
			}
			lines = append(lines, line{p.MessageLine + i, text})
		}
		ruledHeadings(lines)
		csvTables(lines)
		pipeRows(lines)
		r.change = changeOf(p)
		r.read(lines)
	}
	r.Claims = collapseEchoes(r.Claims)
	r.Summary = r.summary()
	return r, nil
}

// collapseEchoes keeps one claim of those that give the same figures twice: a tool that
// prints one result in two forms (sockperf's "avg-latency=5.8" and "Latency is 5.8 usec"), a
// figure a sentence repeats without its unit. Two claims echo each other when both sides'
// figures are the same, they change, their conditions are the same and one has a unit the
// other lacks; the one with the unit stays. The same figures twice with one unit are two
// pairs (two tests that gave the same result).
func collapseEchoes(cs []Claim) []Claim {
	out := cs[:0:0]
	for _, c := range cs {
		echo := -1
		for k, o := range out {
			if c.Before.Median != c.After.Median && slices.Equal(c.Before.Values, o.Before.Values) && slices.Equal(c.After.Values, o.After.Values) &&
				maps.Equal(c.Conditions, o.Conditions) && c.Unit != o.Unit && (c.Unit == "" || o.Unit == "") {
				echo = k
				break
			}
		}
		switch {
		case echo < 0:
			out = append(out, c)
		case out[echo].Unit == "" && c.Unit != "":
			out[echo] = c
		}
	}
	return out
}

// summary is the one true sentence for a report without claims.
func (r *Report) summary() string {
	switch {
	case len(r.Claims) > 0:
		return ""
	case len(r.sides) == 1:
		return "numbers of one state only: nothing in the text to compare them with"
	case r.sawFigures || len(r.tables) > 0:
		return "figures, but none of one measurement before and after a change"
	case r.quotedFigures:
		return "figures only in a quoted reply (lines starting with '>'): someone else's results"
	}
	return "no numbers"
}

// measurement is one side of a claim as found, before pairing.
type measurement struct {
	tool, command string
	options       map[string]string
	metric, unit  string
	quantity      string // what it measures where no tool's metric is (Claim.Quantity)
	values        []float64
	cv            *float64
	state         string // before, after, "" (by order)
	label         string
	conditions    map[string]string
	lines         []int
	// section counts the headings and titles above the measurement: two of one state in
	// one section are runs of a series, not two states.
	section int
	// heading is the text of the headings in effect above the measurement (context.pathText).
	heading string
	// toggled is the line of the toggle that set up the measurement's state (0: none): two
	// runs with a toggle between them are two setups, not runs of one series.
	toggled int
}

// context is what the text has said up to a line: the state a heading set, the conditions
// headings and shown settings set, the last command.
type context struct {
	state string
	// section counts the headings and titles read so far (measurement.section).
	section int
	// named: a heading named the state, and no measurement was read under it yet.
	named bool
	// stateHeading is the heading that named the state.
	stateHeading string
	// path is the headings in effect, outermost first (a bullet's heading under a banner's,
	// an indented one under both).
	path []pathHeading
	// toggled is the line of the last toggle that set the state; devices, whether the
	// message's toggles set up more than one device (each device's runs are then compared
	// among themselves).
	toggled    int
	devices    bool
	conditions map[string]string
	command    string
	cmdLine    int
	blk        block // what the generic reader keys its readings by
	// decide says which of two state names no word places is the baseline, from what the
	// rest of the message says of them (Report.evidenceSides); nil where nothing can.
	decide func(a, b string) (aBefore, ok bool)
	// subjectNames is the one of names the Subject names by words the others lack ("epoll
	// busypoll" under "net: add busy polling to epoll"), -1 where not exactly one; nil where
	// nothing can say.
	subjectNames func(names []string) int
	// definedSides are the sides the text gives state names in a sentence of its own ("'Flow
	// cache' is 'net-next'"), by labelKey (definedSides).
	definedSides map[string]string
}

var (
	// A heading is a line that ends in a colon ("Before:", "- with the series:", "net
	// main, LRO enabled:"), or that has only a parenthesis after it ("Baseline: (ring
	// of 256 ...)").
	headingRe = regexp.MustCompile(`^\s*(?:[-*•]\s+)?([^#$>\s][^:]{0,80}):\s*(?:\(.*\)\s*)?$`)
	mtuRe     = regexp.MustCompile(`(?i)\b(standard|\d+k?)\s+MTU\b`)
	nicRe     = regexp.MustCompile(`\b(enp\d+\w*|eth\d+|ens\d+\w*|eno\d+\w*)\b`) // systemd's names and ethN: a digit follows ("ensuring" is no device)
)

func spanLines(lines []line, from, to int) []int {
	var out []int
	for i := from; i < to && i < len(lines); i++ {
		out = append(out, lines[i].n)
	}
	return out
}

// isCommand: a shell line the text shows ("# netperf ...", "$ ip link ...", "for i in ...;
// do ./netperf ...", "ip link set ...", "ethtool -K ...").
func isCommand(s string) bool {
	t := commandText(s)
	if !promptRe.MatchString(strings.TrimSpace(s)) && (strings.HasSuffix(t, ":") || proseWordRe.MatchString(t)) {
		return false // "netperf TCP_RR with the ring set to 512:" is a heading
	}
	if _, after, ok := strings.Cut(t, ": "); ok && !promptRe.MatchString(strings.TrimSpace(s)) && arrowRe.MatchString(after) {
		return false // "iperf3 -c H -P 8: 37.2 Gbits/sec -> 41.9 Gbits/sec": a command labels a result
	}
	if w, rest, ok := strings.Cut(t, " "); ok && commandWrappers[w] && promptRe.MatchString(strings.TrimSpace(s)) && rest != "" {
		// "# time nft -f set.nft", "$ sudo ./bench": a program run under a prompt, timed or
		// as root, whatever the program is.
		return true
	}
	for _, p := range []string{"netperf ", "./netperf ", "iperf3 ", "ip link set ", "ethtool ", "for i in ", "for f in ", "sockperf ", "xdp-bench ", "super_netperf ",
		"./super_netperf ", "nstat ", "nstat -n", "perf ", "iperf ", "ping ", "neper ", "tcp_rr ", "tcp_stream ", "udp_rr ", "modprobe ", "echo ", "sysctl ", "tc ", "ip net", "./", "uname"} {
		if strings.HasPrefix(t, p) {
			// A program's name that labels a result ("tcp_stream   9.41 Gbit/s", "netperf
			// 8.1 Gbit/s") is no command: a command's arguments are options and addresses,
			// not figures with units.
			return commandOptionRe.MatchString(t) || len(readFigures(t).measured()) == 0
		}
	}
	return false
}

// commandOptionRe is an option on a command line ("-t TCP_RR", "--bidir", "-P 4"), not an
// arrow between two figures ("5.41 Mpps -> 6.02 Mpps").
var commandOptionRe = regexp.MustCompile(`\s--?[A-Za-z]`)

func commandText(s string) string {
	t := strings.TrimSpace(s)
	if m := promptRe.FindStringIndex(t); m != nil {
		t = t[m[1]:]
	}
	return strings.TrimSpace(t)
}

// commandWrappers run the program after them: the shell's time, sudo, CPU and NUMA placement.
var commandWrappers = map[string]bool{"time": true, "sudo": true, "taskset": true, "numactl": true, "chrt": true, "nice": true, "timeout": true, "env": true}

// proseWordRe: words of a sentence, not of a command line.
var proseWordRe = regexp.MustCompile(`\s(with|the|and|is|are|of|was|were|this|that)\s`)

// promptRe is a shell's prompt before a command: "$ ", "# ", "~# ", "root@host:~# ", "$xdp",
// and bash's bracketed default ("[user@host dir]# ").
var promptRe = regexp.MustCompile(`^(?:\[[\w@.-]+ [^\]\s]{1,60}\][#$]\s*|[\w@:~./-]*(?:\s\([^()\s]{1,60}\)\s?)?[#$]\s*|ftp>\s*)`)

// promptNameRe is a prompt that names what the shell runs on in parentheses, as authors set
// it to the kernel they booted ("lab:~ (6.12-rc4+series) $ "): group 1 the name.
var promptNameRe = regexp.MustCompile(`^[\w@:~./-]*\s\(([^()\s]{1,60})\)\s?[#$]\s`)

// offloadsOff: an `ethtool -k` listing whose tunnel offloads read off.
func offloadsOff(rest []line) bool {
	n := 0
	for _, l := range rest {
		k, v, ok := strings.Cut(strings.TrimSpace(l.text), ": ")
		if !ok || strings.Contains(k, " ") {
			break
		}
		if v == "off" {
			n++
		}
	}
	return n > 0
}

// toggle reads a command as a setting kind's toggle, asking each kind that reads commands
// (scenarios.ToggleReader): `ip link set dev eth0 gso_max_size 185000`, `ethtool -K eth0 tso
// off`, `sysctl -w ...`, `tc qdisc replace dev eth0 root fq`.
func toggle(cmd string, n int) (Toggle, bool) {
	cmd = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd), "sudo "))
	for _, kind := range scenarios.SettingKinds() {
		if r, ok := kind.(scenarios.ToggleReader); ok {
			if st, ok := r.ReadToggle(cmd); ok {
				return Toggle{Command: cmd, Device: st.Device, Settings: map[string]map[string]string{kind.Key(): st.Values}, Line: n, measured: st.Measured}, true
			}
		}
	}
	return Toggle{}, false
}

var setupRes = map[string]*regexp.Regexp{
	"same-host test": regexp.MustCompile(`(?i)same[- ]host`),
	"two hosts":      regexp.MustCompile(`(?im)(\bboth hosts|\btwo hosts|(?:^|\s)-H\s)`),
	"a 100Gbit NIC":  regexp.MustCompile(`(?i)100\s?Gbit NIC`),
	"mlx5":           regexp.MustCompile(`(?i)\bmlx5\b`),
	"liquidio":       regexp.MustCompile(`(?i)\bliquidio\b`),
	"namespaces":     regexp.MustCompile(`(?i)network namespace`),
}

// setupWords are what the text says of the machines: what a reproduction here lacks.
func setupWords(lines []line) []string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	text := b.String() // one pass of each pattern over the text, not one per line
	var out []string
	for word, re := range setupRes {
		if re.MatchString(text) {
			out = append(out, word)
		}
	}
	if m := nicRe.FindString(text); m != "" {
		out = append(out, "device "+m)
	}
	sort.Strings(out)
	return out
}

// median of values.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// round keeps 10 significant digits: what the text wrote, scaled, without float noise.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 9-math.Floor(math.Log10(math.Abs(v))))
	if r := math.Round(v*p) / p; !math.IsNaN(r) && !math.IsInf(r, 0) {
		return r
	}
	return v // at float64's ends the scale (below 1e-299) or the rounded figure (near 1.8e308) overflows
}

func conditionKey(c map[string]string) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s;", k, c[k])
	}
	return b.String()
}

// pastePrefix takes off the "| " a mail puts before pasted output (a line that starts with
// a bar but has no other bar is not a table's row).
// bannerRe is a heading between runs of dashes, equals signs, stars or hashes: "=== rx rate
// ===", " --- old allocator on the arm64 board ----", "*** patched ***", "== 100 flows ==" (a
// count and its word; an address is a tool's banner: ping's "--- 10.0.0.2 ping statistics ---").
var bannerRe = regexp.MustCompile(`^\s*([-=*#~])[-=*#~]+\s*((?:[A-Za-z(]|\d+\s+[A-Za-z])[^=*#~]*?[\w)])\s*[-=*#~]{2,}\s*$`)

// bannerHeading writes a banner's heading as every other heading is written ("rx rate:"),
// so that one reader of headings takes both.
func bannerHeading(l string) string {
	if m := bannerRe.FindStringSubmatch(l); m != nil && !strings.Contains(m[2], ":") {
		return m[2] + ":"
	}
	return l
}

// ruleLineRe is a line of one character repeated, drawn over and under a heading.
var ruleLineRe = regexp.MustCompile(`^\s*(?:-{4,}|={4,}|\*{4,}|#{4,}|~{4,})\s*$`)

// ruledHeadings writes a heading between two rules ("=====" / "Baseline (net-next)" /
// "=====") as every other heading is written ("Baseline (net-next):"). A line of columns
// between rules (several spaces or a bar between its words) is a table's header, not a
// heading, and stays.
func ruledHeadings(lines []line) {
	for k := 1; k+1 < len(lines); k++ {
		t := strings.TrimSpace(lines[k].text)
		if !ruleLineRe.MatchString(lines[k-1].text) || !ruleLineRe.MatchString(lines[k+1].text) || t == "" || len(t) > 80 ||
			strings.HasSuffix(t, ":") || strings.ContainsAny(t, "|\t") || strings.Contains(t, "  ") || !strings.ContainsFunc(t, unicode.IsLetter) {
			continue
		}
		lines[k].text = t + ":"
	}
}

// timePRe is a line of `time -p`'s report: "real 61.20", "user 3.11", "sys 57.40" (seconds,
// though it prints no unit: the figure is kept as printed).
var timePRe = regexp.MustCompile(`^(\s*)(real|user|sys)\s+(\d+\.\d+)\s*$`)

// timeLineRe is the one of timePRe and shellTimeRe that matches l (timePRe where none does).
func timeLineRe(l string) *regexp.Regexp {
	if shellTimeRe.MatchString(l) {
		return shellTimeRe
	}
	return timePRe
}

// shellTimeRe is a line of the shell's own `time` (bash, zsh without -p): "real\t0m4.218s",
// minutes and seconds, the unit printed.
var shellTimeRe = regexp.MustCompile(`^(\s*)(real|user|sys)\s+(\d+)m(\d+(?:\.\d+)?)s\s*$`)

// timeP writes time -p's line as a label and its figure, with the name of what was timed
// where the line above is that name alone ("Adding addresses" over "real 61.20"): the same
// step timed in each state is one measurement. (user and sys, under real, are side readings
// of it and keep no name.)
func timeP(l, above string) string {
	m := timePRe.FindStringSubmatch(l)
	unit := ""
	if sm := shellTimeRe.FindStringSubmatch(l); m == nil && sm != nil {
		minutes, _ := strconv.ParseFloat(sm[3], 64)
		seconds, _ := strconv.ParseFloat(sm[4], 64)
		m = []string{sm[0], sm[1], sm[2], strconv.FormatFloat(minutes*60+seconds, 'f', -1, 64)}
		unit = " s"
	}
	if m == nil {
		return l
	}
	name := strings.TrimSpace(above)
	if name == "" || len(strings.Fields(name)) > 6 || strings.HasSuffix(name, ":") || timeLineRe(above).MatchString(above) || len(readFigures(name).figures) > 0 || strings.Contains(name, ": ") {
		name = ""
	}
	return strings.TrimSpace(m[1]+name+" "+m[2]) + ": " + m[3] + unit
}

// decimalCommaRe is a figure written with a decimal comma before its unit ("35,5 Mpps",
// "1,25 Gbit/s", "12,7 us"): one or two digits after the comma, which a thousands separator
// never has, and a unit of rate, time or share after them.
var decimalCommaRe = regexp.MustCompile(`(^|[^\d.,])(\d{1,4}),(\d{1,2})(\s?(?:[KMGkmg]?(?:pps|bps|Bps|bit/s|bits/s|bits/sec|b/s|B/s)|[KMG]?[Bb]ytes/s(?:ec)?|[um]?s(?:ec)?|ns|%)(?:[^A-Za-z]|$))`)

// decimalComma writes a decimal comma as the point every reader here takes.
func decimalComma(l string) string {
	if !strings.Contains(l, ",") {
		return l
	}
	return decimalCommaRe.ReplaceAllString(l, "${1}${2}.${3}${4}")
}

// ktapDiagnostic takes the "# " off a diagnostic line of a kselftest's KTAP output (from its
// plan "1..N" or "TAP version 14" to the end of the block: "ok 1 name", "not ok 2 name" and
// "# " lines), where the test prints what it measured ("# rx rate: 2.4 Mpps"); outside
// such output a "# " line is a root prompt's command and stays.
func ktapDiagnostic(l string, in bool) (string, bool) {
	t := strings.TrimSpace(l)
	switch {
	case ktapPlanRe.MatchString(t):
		return l, true
	case !in:
		return l, false
	case len(t) > 1 && t[0] == '#' && (t[1] == ' ' || t[1] == '\t'):
		return t[2:], true
	case ktapResultRe.MatchString(t):
		return l, true
	}
	return l, false
}

var (
	ktapPlanRe   = regexp.MustCompile(`^(?:TAP version \d+|1\.\.\d+)$`)
	ktapResultRe = regexp.MustCompile(`^(?:not )?ok \d+\b`)
)

func pastePrefix(l string) string {
	t := strings.TrimLeft(l, " ")
	if strings.HasPrefix(t, "|") && !strings.Contains(t[1:], "|") {
		return strings.TrimPrefix(t[1:], " ")
	}
	return l
}
