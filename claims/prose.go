package claims

import (
	"regexp"
	"strings"
)

var (
	// currentRe marks a sentence that says what is in place: "the driver currently uses
	// the slow clock", "the ring size is set to 256 by default".
	currentRe = regexp.MustCompile(`(?i)\b(currently|by default|the default|today|at the moment|existing|right now)\b`)
	// changeToRe marks what a change moves to: "switch the MAC clock to the PLL",
	// "changing the setting to RING=512".
	changeToRe = regexp.MustCompile(`(?i)\b(?:switch(?:es|ed|ing)?|chang(?:e|es|ed|ing)|mov(?:e|es|ed|ing)|convert(?:s|ed|ing)?)\b[^.]{0,60}?\bto\b([^.]{0,60})`)
	wordRe     = regexp.MustCompile(`[A-Za-z0-9_]+`)
)

// proseSides decides two states no word names by what the prose says of them: the state
// whose own words (those the other's name lacks) the text calls current is before, the one
// it says the change moves to is after.
func proseSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	if len(runs) != 2 || runs[0].side != "?" || runs[1].side != "?" {
		return nil, nil, false
	}
	a, b := ownWords(runs[0].state, runs[1].state), ownWords(runs[1].state, runs[0].state)
	if len(a) == 0 || len(b) == 0 {
		return nil, nil, false
	}
	var current, target map[string]bool = map[string]bool{}, map[string]bool{}
	for _, s := range sentences(lines) {
		if currentRe.MatchString(s) {
			for _, w := range wordRe.FindAllString(strings.ToLower(s), -1) {
				current[w] = true
			}
		}
		for _, m := range changeToRe.FindAllStringSubmatch(s, -1) {
			to, _, _ := strings.Cut(strings.ToLower(m[1]), " from ") // "to X from Y": Y is what it was
			for _, w := range wordRe.FindAllString(to, -1) {
				target[w] = true
			}
		}
	}
	score := func(own []string, set map[string]bool) bool {
		for _, w := range own {
			if set[w] {
				return true
			}
		}
		return false
	}
	// Moving to a state counts for it being after, being current for it being before.
	lean := func(own []string) int { return boolInt(score(own, target)) - boolInt(score(own, current)) }
	switch la, lb := lean(a), lean(b); {
	case la < lb:
		return runs[0], runs[1], true
	case lb < la:
		return runs[1], runs[0], true
	}
	return nil, nil, false
}

// ownWords are the words of a state's name its other lacks, lower case.
func ownWords(name, other string) []string {
	o := map[string]bool{}
	for _, w := range wordRe.FindAllString(strings.ToLower(other), -1) {
		o[w] = true
	}
	var out []string
	for _, w := range wordRe.FindAllString(strings.ToLower(name), -1) {
		if !o[w] {
			out = append(out, w)
		}
	}
	return out
}

// sentences are the message's paragraphs split at full stops.
func sentences(lines []line) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Split(strings.Join(cur, " "), ". ")...)
			cur = nil
		}
	}
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if t == "" {
			flush()
			continue
		}
		cur = append(cur, t)
	}
	flush()
	return out
}

// mergeTypos gives a label that differs from an earlier one of the same block by a typo
// ("Rx throuhput" beside "Rx throughput") the earlier one's key. Two labels that one state
// has both ("TCP_RR" and "TCP_CRR" under one heading) are two measurements, not a typo.
func mergeTypos(rs []reading) []reading {
	seen := map[string][]string{}          // key without its label -> label keys seen
	states := map[string]map[string]bool{} // frame|label -> the states that have it
	for _, r := range rs {
		if parts := strings.SplitN(r.key, "|", 5); len(parts) == 5 && parts[2] != "" {
			at := parts[0] + "|" + parts[1] + "|" + parts[3] + "|" + parts[4] + "|" + parts[2]
			if states[at] == nil {
				states[at] = map[string]bool{}
			}
			states[at][r.side+"|"+r.state] = true
		}
	}
	together := func(frame, a, b string) bool {
		for st := range states[frame+"|"+a] {
			if states[frame+"|"+b][st] {
				return true
			}
		}
		return false
	}
	for k := range rs {
		parts := strings.SplitN(rs[k].key, "|", 5)
		if len(parts) != 5 || parts[2] == "" {
			continue
		}
		frame := parts[0] + "|" + parts[1] + "|" + parts[3] + "|" + parts[4]
		known := seen[frame]
		if len(known) > maxTypoLabels {
			continue // a long list of labels: no guessing at typos in it
		}
		found := false
		for _, prev := range known {
			if prev == parts[2] {
				found = true
				break
			}
			if typo(prev, parts[2]) && !together(frame, prev, parts[2]) {
				parts[2] = prev
				rs[k].key = strings.Join(parts, "|")
				found = true
				break
			}
		}
		if !found {
			seen[frame] = append(known, parts[2])
		}
	}
	return rs
}

// maxTypoLabels bounds the labels of one block compared for typos.
const maxTypoLabels = 64

// typo: two labels whose words are the same but one long word, misspelt by a letter or
// two ("rx throuhput"); "tx" against "rx" is another label, not a typo.
func typo(a, b string) bool {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) != len(wb) {
		return false
	}
	diff := 0
	for k := range wa {
		if wa[k] == wb[k] {
			continue
		}
		diff++
		// A misspelt word keeps its start; names that differ there are two names
		// ("tcp_rr" and "udp_rr").
		if diff > 1 || len(wa[k]) < 6 || len(wb[k]) < 6 || wa[k][:2] != wb[k][:2] || editDistance(wa[k], wb[k]) > 2 {
			return false
		}
		// Words that differ in their digits are two names ("p99.99" and "p99.999"), not a typo.
		if digitsRe.ReplaceAllString(wa[k], "#") == digitsRe.ReplaceAllString(wb[k], "#") {
			return false
		}
	}
	return diff == 1
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	if len(a) > 80 || len(b) > 80 {
		return 99
	}
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
