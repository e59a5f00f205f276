package claims

import (
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// A time the text gives for moving a known amount of data ("a 10 MB download took 3.8 s",
// "copying the 2 GiB image: 41 s before, 35 s after") is what a transfer of a fixed size
// measures (netperf -l -BYTES: scenarios.MetricTransferTime, in seconds), not a latency.
var (
	// transferWordRe is a word of moving data.
	transferWordRe = regexp.MustCompile(`(?i)\b(?:down|up)load(?:s|ed|ing)?\b|\btransfer(?:s|red|ring)?\b|\bfetch(?:es|ed|ing)?\b|\bcop(?:y|ies|ied|ying)\b|\bpull(?:s|ed|ing)?\b|\bpush(?:es|ed|ing)?\b`)
	// dataSizeRe is an amount of data: "10 MB", "2GiB", "64k bytes", "500 megabytes".
	dataSizeRe = regexp.MustCompile(`(?i)\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|[KMGT]?bytes|(?:kilo|mega|giga)bytes)\b`)
)

// latencyWordRe is a word of a latency on a claim's own line: "64 KB transfers, p99 went from
// 2.1 ms to 1.7 ms" is a request's time, not a transfer's.
var latencyWordRe = regexp.MustCompile(`(?i)latenc|\brtt\b|round.?trip|\bp\d{2}|percentile|response time|\bwakeup\b`)

// minTransferTime is the least time, in µs, a transfer of a size named takes in the text's
// figures: below it they are a message's or a request's.
const minTransferTime = 1000

// transferContext is how many lines above a claim's first the words of its transfer may be:
// the sentences that introduce the figures (a heading over them, the paragraph before it).
const transferContext = 8

// transferTimes gives the time claims whose lines, or the few above them, name a transfer of
// a size the metric of a transfer's time, in seconds.
func (r *Report) transferTimes(lines []line) {
	for k := range r.Claims {
		c := &r.Claims[k]
		if c.Unit != "us" || (c.Metric != "latency" && c.Quantity != "latency") || len(c.Lines) == 0 ||
			min(c.Before.Median, c.After.Median) < minTransferTime {
			continue
		}
		first, last := slices.Min(c.Lines), slices.Max(c.Lines)
		transfer, size, latency := false, false, false
		for _, l := range lines {
			if l.n < first-transferContext || l.n > last || l.n < first && otherClaimsLine(r.Claims, k, l.n) {
				continue // beyond the claim and the words above it, or another claim's row
			}
			transfer = transfer || transferWordRe.MatchString(l.text)
			size = size || hasDataSize(l.text)
			latency = latency || l.n >= first && latencyWordRe.MatchString(figuresSentence(l.text))
		}
		if !transfer || !size || latency {
			continue
		}
		c.Metric, c.Quantity, c.Unit = scenarios.MetricTransferTime, "", "s"
		for _, v := range []*Values{&c.Before, &c.After} {
			for i := range v.Values {
				v.Values[i] = round(v.Values[i] / 1e6)
			}
			v.Median = round(v.Median / 1e6)
		}
	}
}

// hasDataSize reports whether text gives an amount of data, not a rate of it ("812 MBytes/s",
// "10 MBps" are rates).
func hasDataSize(text string) bool {
	for _, m := range dataSizeRe.FindAllStringIndex(text, -1) {
		rest := strings.TrimLeft(text[m[1]:], " ")
		if !strings.HasPrefix(rest, "/") && !strings.HasPrefix(strings.ToLower(rest), "ps") && !strings.HasPrefix(strings.ToLower(rest), "per ") {
			return true
		}
	}
	return false
}

// otherClaimsLine reports whether line n is one of a claim's other than claims[self].
func otherClaimsLine(claims []Claim, self, n int) bool {
	for k, c := range claims {
		if k != self && slices.Contains(c.Lines, n) {
			return true
		}
	}
	return false
}

// figuresSentence is a line up to the end of the sentence of its first figure: what a later
// sentence on the line says is of something else.
func figuresSentence(text string) string { return upToAfterFigure(text, ". ") }

// upToAfterFigure is text up to the first of ends after its first figure, all of it where
// there is no figure or no end.
func upToAfterFigure(text string, ends ...string) string {
	d := strings.IndexAny(text, "0123456789")
	if d < 0 {
		return text
	}
	cut := len(text)
	for _, e := range ends {
		if k := strings.Index(text[d:], e); k >= 0 {
			cut = min(cut, d+k)
		}
	}
	return text[:cut]
}
