package claims

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
)

// A TCP connection's first receive window, the one the last ACK of its handshake announces
// ("the window in the third ACK goes from 65536 to 175232 bytes", a table of rwnd before and
// after under a heading about the handshake), is what nsperf captures as
// results.HandshakeWindow: a level of the client's connection, in bytes. Any other window (a
// congestion window, a window of time, a receive window mid-transfer) is not: the words of
// a handshake must be on the claim's lines or in the few above them.
var (
	// windowWordRe is a word of a receive window: "window", "rwnd", "rcv_wnd", "rwin", "win".
	windowWordRe = regexp.MustCompile(`(?i)\bwindows?\b|\br(?:cv|ecv)?_?w(?:nd|in)\b|\bwin\b`)
	// handshakeWordRe is a word of a connection's start: the handshake, the SYNs, its last
	// ACK, the initial window and the route attribute that sets it.
	handshakeWordRe = regexp.MustCompile(`(?i)handshake|\b3whs\b|\bsyn(?:[-/ ]?ack)?s?\b|\b(?:third|3rd|final|last) ack\b|\binitrwnd\b|\binit_?rcv_?wnd\b|\b(?:initial|first|announced|advertised) (?:receive |rcv |recv )?window\b`)
	// otherWindowRe is a window that is not the receiver's: the congestion window, a span of
	// time or of packets.
	otherWindowRe = regexp.MustCompile(`(?i)\bcwnd\b|congestion window|snd_?cwnd|window of \d+(?:\.\d+)? ?(?:ms|s|sec|seconds|minutes|packets|segments)\b`)
	// windowPairRe is a change of a window's size in prose: "from 65536 to 175232 bytes", "64K
	// -> 171K", "65536 bytes → 175232 bytes"; a size's multiple is binary, as windows are
	// counted (64K is 65536 bytes).
	windowPairRe = regexp.MustCompile(`(?i)(?:^|[\s(])(?:from\s+)?(\d{1,3}(?:,\d{3})+|\d+)\s?(k|ki?b|m|mi?b|bytes?|b)?\s*(?:to|->|→|=>)\s*(\d{1,3}(?:,\d{3})+|\d+)\s?(k|ki?b|m|mi?b|bytes?|b)?\b`)
)

// windowContext is how many lines above a claim's first the words of its handshake may be: a
// heading over a table, the sentence that introduces the figures.
const windowContext = 6

// minWindow is the least window a handshake announces, in bytes: a figure below it under
// these words is a count of something else (segments, a scale factor).
const minWindow = 512

// handshakeWindows reads the windows of handshakes: claims without a unit whose lines, or the
// few above, name a window and the handshake become claims of results.HandshakeWindow, and a
// sentence that names both and gives a change of sizes is one.
func (r *Report) handshakeWindows(lines []line) {
	for k := range r.Claims {
		c := &r.Claims[k]
		if c.Unit != "" || len(c.Lines) == 0 || min(c.Before.Median, c.After.Median) < minWindow {
			continue
		}
		if !namesHandshakeWindow(lines, slices.Min(c.Lines), slices.Max(c.Lines)) {
			continue
		}
		c.Metric, c.Quantity, c.Unit = "", results.HandshakeWindow, "bytes"
		binarySizes(c, lines)
	}
	for _, l := range lines {
		text := l.text
		if len(text) > maxLine || !windowWordRe.MatchString(text) || otherWindowRe.MatchString(text) ||
			slices.ContainsFunc(r.Claims, func(c Claim) bool { return slices.Contains(c.Lines, l.n) }) {
			continue
		}
		if !namesHandshakeWindow(lines, l.n, l.n) {
			continue
		}
		m := windowPairRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		before, okB := windowBytes(m[1], cmp.Or(m[2], m[4]))
		after, okA := windowBytes(m[3], cmp.Or(m[4], m[2]))
		if !okB || !okA || min(before, after) < minWindow || before == after {
			continue
		}
		r.addClaims(Claim{Metric: "", Quantity: results.HandshakeWindow, Unit: "bytes", Lines: []int{l.n},
			Before: Values{Values: []float64{before}, Median: before}, After: Values{Values: []float64{after}, Median: after},
			Change: math.Round((after/before-1)*1e4) / 1e4})
	}
}

// binarySizes reads again, as binary multiples, the figures of a claim on one line that the
// line writes as sizes with a multiple ("62K -> 140K", which a reader of rates took for
// thousands): a window of 64K is 65536 bytes.
func binarySizes(c *Claim, lines []line) {
	if len(c.Lines) != 1 || len(c.Before.Values) != 1 || len(c.After.Values) != 1 {
		return
	}
	at := slices.IndexFunc(lines, func(l line) bool { return l.n == c.Lines[0] })
	if at < 0 {
		return
	}
	m := windowPairRe.FindStringSubmatch(lines[at].text)
	if m == nil {
		return
	}
	decimal := func(figure, unit string) float64 {
		v, _ := strconv.ParseFloat(strings.ReplaceAll(figure, ",", ""), 64)
		return v * map[string]float64{"k": 1e3, "m": 1e6}[strings.ToLower(unit)]
	}
	if decimal(m[1], cmp.Or(m[2], m[4])) != c.Before.Median || decimal(m[3], cmp.Or(m[4], m[2])) != c.After.Median {
		return // not the figures the claim holds, or no multiple
	}
	before, okB := windowBytes(m[1], cmp.Or(m[2], m[4]))
	after, okA := windowBytes(m[3], cmp.Or(m[4], m[2]))
	if !okB || !okA {
		return
	}
	c.Before.Values, c.Before.Median = []float64{before}, before
	c.After.Values, c.After.Median = []float64{after}, after
}

// namesHandshakeWindow reports whether the lines first to last, with the few above them, name
// a receive window and a handshake, and no other kind of window on the figures' own lines.
func namesHandshakeWindow(lines []line, first, last int) bool {
	window, handshake := false, false
	for _, l := range lines {
		if l.n < first-windowContext || l.n > last || len(l.text) > maxLine {
			continue
		}
		if l.n >= first && otherWindowRe.MatchString(l.text) {
			return false
		}
		window = window || windowWordRe.MatchString(l.text) && !otherWindowRe.MatchString(l.text)
		handshake = handshake || handshakeWordRe.MatchString(l.text)
	}
	return window && handshake
}

// windowBytes reads a window's size with its unit, in bytes ("64K" is 65536).
func windowBytes(figure, unit string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(figure, ",", ""), 64)
	if err != nil {
		return 0, false
	}
	switch strings.ToLower(unit) {
	case "", "b", "byte", "bytes":
		return v, true
	case "k", "kb", "kib":
		return v * 1024, true
	case "m", "mb", "mib":
		return v * 1024 * 1024, true
	}
	return 0, false
}
