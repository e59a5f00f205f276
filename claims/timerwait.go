package claims

import (
	"regexp"
	"slices"

	"github.com/nsperf/nsperf/results"
)

// A time the text gives for a retransmission's timer to fire ("the loss probe now mostly fires
// at 42 ms", "TLP timeout: 240 ms -> 42 ms", "the RTO fired after 1.2 s, now after 300 ms") is
// what a retransmission waits for it: results.RetransmitWait, in µs, which a run records where
// packets are lost past the client's device (scenarios.Scenario.CanRecord); not a
// latency. A timer that retransmits nothing (a delayed ACK's, keepalive, a zero window's
// probe) is not one.
var (
	// timerFiresRe is a timer firing, or the timers that retransmit named.
	timerFiresRe = regexp.MustCompile(`(?i)\bfir(?:e|es|ed|ing)\b|\bexpir(?:e|es|ed|ing|y)\b|\btime[sd]? out\b|\bTLP\b|\bPTO\b|\bRTO\b|loss probes?\b|probe time|retransmi(?:t|ssion)s? time`)
	// otherTimerRe is a timer that does not retransmit data.
	otherTimerRe = regexp.MustCompile(`(?i)delayed.?ack|\bdelack\b|keep.?alive|zero.?window|\bpersist|\bato\b`)
)

// timerContext is how many lines above a claim's first the words of its timer may be: the
// heading or the sentence that introduces the figures.
const timerContext = 4

// timerWaits gives the time claims whose lines, or the few above them, speak of a
// retransmission's timer firing, and whose own lines speak of no latency and of no other
// timer, the metric of a retransmission's wait.
func (r *Report) timerWaits(lines []line) {
	for k := range r.Claims {
		c := &r.Claims[k]
		if c.Unit != "us" || (c.Metric != "latency" && c.Quantity != "latency") || len(c.Lines) == 0 {
			continue
		}
		first, last := slices.Min(c.Lines), slices.Max(c.Lines)
		timer, other := false, false
		for _, l := range lines {
			if l.n < first-timerContext || l.n > last || l.n < first && otherClaimsLine(r.Claims, k, l.n) {
				continue // beyond the claim and the words above it, or another claim's row
			}
			if l.n >= first {
				// A latency or a timer that retransmits nothing is what the figures' own lines
				// speak of; the sentences above may explain either.
				other = other || latencyWordRe.MatchString(figuresSentence(l.text)) || otherTimerRe.MatchString(l.text)
			}
			timer = timer || timerFiresRe.MatchString(l.text)
		}
		if timer && !other {
			c.Metric, c.Quantity = "", results.RetransmitWait
		}
	}
}
