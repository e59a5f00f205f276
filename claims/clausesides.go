package claims

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A sentence of two clauses, one figure each, where each clause names its side somewhere in
// its words rather than at its start: "the stream ran at X prior to this change and at Y with
// it", "currently the thread forwards X; with the lookup skipped it forwards Y", "the current
// code needs X, whereas the new one needs Y". The readers of fixed shapes (stateLed,
// valueFirst) take the state's words only where they lead or follow the figure; this one is
// the fallback for what they leave: it reads a sentence no other layout took a pair from.

// clauseFigure is a figure with its unit (grouped thousands allowed: "1,402,377 trans/s").
const clauseFigure = `~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[A-Za-zµ][A-Za-zµ/]*|%)`

// clauseSidesRe is two figures in one sentence, apart by a clause's separator: group 1 the
// first figure, 2 the words after it, 3 the separator, 4 the words before the second figure,
// 5 the second figure (its unit may be left to the first's). Neither clause holds another
// number, nor a sentence's end.
var clauseSidesRe = regexp.MustCompile(`(?i)(` + clauseFigure + `)([^.;!?\d]{0,80}?)\s*(;|,|\band\b|\bbut\b|\bwhile\b|\bwhereas\b|\bwhere\b)([^.;!?\d]{0,100}?)(` + clauseFigure + `|~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)`)

// profileShareRe is a sentence about a profile's share of a function ("shows up at 2.1% in
// perf top"): its percentages are readings, not changes stated.
var profileShareRe = regexp.MustCompile(`(?i)\bperf\s+(?:top|report|record)\b|\bprofile\b|\bof\s+(?:the\s+)?(?:cycles|CPU)\b`)

func profileShare(sentence string) bool { return profileShareRe.MatchString(sentence) }

// The words of a clause that name its side. They are the words of prose, not of a label
// (stateOf's): "new" or "old" in a sentence name a thing ("new connections"), not a tree.
var (
	clauseBeforeRe = regexp.MustCompile(`(?i)\b(?:(?:prior\s+to|before|without)(?:\s+(?:applying\s+)?` + patchNoun + `|\s+(?:it|this|that)\b)|prior\s+to|before|w/o|currently|current\s+(?:code|kernel|tree|driver|implementation|version)|today|at\s+present|used\s+to|previously|baseline|unpatched|un-patched|vanilla|stock|mainline|upstream|net-next|bpf-next|original(?:ly)?)\b`)
	clauseAfterRe  = regexp.MustCompile(`(?i)\b(?:after|with\s+(?:it|this|that|these|my|our)\b|with\s+the\s+(?:patch|patches|fix|change|changes|series|patchset|commit)|w/\s*(?:it|the|this)|applying|now|patched|this\s+(?:patch|change|series|fix|patchset|commit))\b`)
	// clauseWithLeadRe is a clause that opens with what it adds ("with the lookup skipped,
	// ..."), past the joining words: the other state, against a clause naming the base.
	clauseWithLeadRe = regexp.MustCompile(`(?i)^(?:(?:and|but|while|whereas|whilst)\s+)?(?:with|w/|using)\s`)
)

// clauseSide is the side a clause's words name: "before", "after" or "" (neither, or both),
// and the words that named it.
func clauseSide(words string) (side, named string) {
	// A side's words may hold the other's ("prior to this change"): each counts only when the
	// words left without it name no other side.
	without := func(loc []int) string { return words[:loc[0]] + " " + words[loc[1]:] }
	b, a := clauseBeforeRe.FindStringIndex(words), clauseAfterRe.FindStringIndex(words)
	onlyB := b != nil && !clauseAfterRe.MatchString(without(b))
	onlyA := a != nil && !clauseBeforeRe.MatchString(without(a))
	switch {
	case onlyB && !onlyA:
		return "before", words[b[0]:b[1]]
	case onlyA && !onlyB:
		return "after", words[a[0]:a[1]]
	}
	return "", ""
}

// sentenceStartBefore is the offset in text where the sentence holding offset starts: after the
// last ". ", "; ", ": ", "! " or "? " before it (at most 160 bytes back).
func sentenceStartBefore(text string, offset int) int { return startAfterMarks(text, offset, ".;:!?") }

// startAfterMarks is the offset after the last of marks followed by a space before offset (at
// most 160 bytes back).
func startAfterMarks(text string, offset int, marks string) int {
	from := max(0, offset-160)
	start := from
	for k := from; k+1 < offset; k++ {
		if strings.ContainsRune(marks, rune(text[k])) && text[k+1] == ' ' {
			start = k + 2
		}
	}
	return start
}

// sentenceEndAfter is the offset in text where the sentence holding offset ends: at the next
// ". ", ";", "(" or the text's end (at most 100 bytes on).
func sentenceEndAfter(text string, offset int) int {
	to := min(len(text), offset+100)
	for k := offset; k < to; k++ {
		switch text[k] {
		case ';', '(':
			return k
		case '.':
			if k+1 == len(text) || text[k+1] == ' ' {
				return k
			}
		}
	}
	return to
}

// clauseSides reads a clauseSidesRe match, and says whether it was a pair: each clause names
// one side (or one names the base and the other opens with what it adds), the two figures
// are of one unit, and no other layout read a pair from these lines.
func (r *Report) clauseSides(text string, m []int, lineOf func(int) int) bool {
	g := func(k int) string { return strings.TrimSpace(text[m[2*k]:m[2*k+1]]) }
	lineB, lineA := lineOf(m[2]), lineOf(m[10])
	for _, c := range r.Claims {
		if slices.Contains(c.Lines, lineB) || slices.Contains(c.Lines, lineA) {
			return false
		}
	}
	// "3,180 connections per second; it now completes 9,870": the first figure's count per
	// second, the second's unit left to it
	vb, ub, va, ua, ok := sharedUnit(perSecondAfter(g(1), g(2)), g(5), false)
	if !ok || ub.norm != ua.norm || ub.norm == "" || ub.kind == "percent" && !profileShare(text[sentenceStartBefore(text, m[2]):m[1]]) {
		return false
	}
	first := text[sentenceStartBefore(text, m[2]):m[2]] + " " + g(2)
	second := g(4) + " " + text[m[11]:sentenceEndAfter(text, m[11])]
	s1, named1 := clauseSide(first)
	s2, named2 := clauseSide(second)
	switch {
	case s1 == "before" && s2 == "" && clauseWithLeadRe.MatchString(g(4)):
		s2, named2 = "after", strings.Fields(g(4))[0]+" ..."
	case s1 == "" && s2 == "before" && statedMagnitude(text[max(0, m[0]-160):m[0]], vb, va):
		// "it reached 31.7 Gbit/s where the unpatched kernel managed 29.1", after "went up by
		// roughly 9%": the clause that names no side is the change's, as the stated change
		// agrees
		s1, named1 = "after", "the change"
	case s1 == "" || s2 == "" || s1 == s2:
		return false
	}
	if fixed, ok := fixAfterRegression(text, m[1], ub.norm, first, second, lineOf); ok {
		// the two clauses are the trees around the regression this message fixes
		regressed := proseReading(va, ua, lineA, named2)
		if s1 == "after" {
			regressed = proseReading(vb, ub, lineB, named1)
		}
		r.addPair([2]reading{regressed, fixed})
		return true
	}
	r.addInOrder(proseReading(vb, ub, lineB, named1), proseReading(va, ua, lineA, named2), s1)
	return true
}

// statedByMagnitudeRe is a change the sentence states by its size: "by roughly 9%", "by ~4%".
var statedByMagnitudeRe = regexp.MustCompile(`(?i)\bby\s+(?:(?:~|about|roughly|around|some|nearly|almost|approximately)\s*)?(\d+(?:\.\d+)?)\s?%`)

// statedMagnitude: the text before two figures states a change by a size that the second
// against the first (after, before) fits, within a quarter of it or 1.5 points.
func statedMagnitude(before string, after, base float64) bool {
	ms := statedByMagnitudeRe.FindAllStringSubmatch(before, -1)
	if len(ms) != 1 || base == 0 {
		return false
	}
	want, err := strconv.ParseFloat(ms[0][1], 64)
	if err != nil {
		return false
	}
	got := math.Abs(after/base-1) * 100
	return math.Abs(got-want) <= max(1.5, want/4)
}

// sentencePairRe is a figure, the end of its sentence, and the first figure of the next one:
// "Before the patch, ... topped out at 1.71 Gbits/sec with ksoftirqd at 100%. After it the
// link is saturated: 2.35 Gbits/sec." Group 1 the first figure, 2 the second.
var sentencePairRe = regexp.MustCompile(`(?i)(` + clauseFigure + `)(?:[^.!?;]|\.\d)*?[.!?]\s+(?:[^.!?;\d]|\.\d)*?(` + clauseFigure + `)`)

// sentencePair reads two sentences in a row, each naming its side by its words and holding
// one figure of the unit they share (others of other units allowed: "with ksoftirqd at
// 100%"): a pair, where no other layout took one from these lines.
func (r *Report) sentencePair(text string, m []int, lineOf func(int) int) bool {
	lineB, lineA := lineOf(m[2]), lineOf(m[4])
	for _, c := range r.Claims {
		if slices.Contains(c.Lines, lineB) || slices.Contains(c.Lines, lineA) {
			return false
		}
	}
	vb, ub, okB := parseValue(strings.TrimPrefix(text[m[2]:m[3]], "~"))
	va, ua, okA := parseValue(strings.TrimPrefix(text[m[4]:m[5]], "~"))
	if !okB || !okA || ub.norm != ua.norm || ub.norm == "" || ub.kind == "percent" {
		return false
	}
	first := text[startAfterMarks(text, m[2], ".!?"):sentenceEndAfter(text, m[3])]
	second := text[startAfterMarks(text, m[4], ".!?"):sentenceEndAfter(text, m[5])]
	if sameUnitFigures(first, ub.norm) != 1 || sameUnitFigures(second, ub.norm) != 1 {
		return false // a sentence of two such figures compares them itself, or lists runs
	}
	s1, named1 := clauseSide(first)
	s2, named2 := clauseSide(second)
	if s1 == "" || s2 == "" || s1 == s2 {
		return false
	}
	r.addInOrder(proseReading(vb, ub, lineB, named1), proseReading(va, ua, lineA, named2), s1)
	return true
}

// sameUnitFigures counts the figures of unit norm in a sentence.
func sameUnitFigures(sentence, norm string) int {
	n := 0
	for _, f := range readFigures(sentence).measured() {
		if f.unit.norm == norm {
			n++
		}
	}
	return n
}
