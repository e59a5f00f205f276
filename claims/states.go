package claims

import (
	"regexp"
	"strings"
)

// The states a text compares are named in many ways. Words that name the tree or the patch
// ("before", "baseline", "net-next", "vanilla"; "after", "patched", "this change") decide
// over words that name a setting ("disabled", "off", "skb-mode"; "enabled", "on", "native"):
// in "net main, LRO enabled" the state is net-next and GRO enabled is a condition.
// patchNoun is what names the patch after "with" or "without" ("with this patch", "w/o the
// series", "with patch", Gerrit's "with this CL"); without a patch noun, "without" names a
// setting ("without GRO").
// A range of the series' patches after "with" is a state of the patch too ("with 1-3"): a
// later step than "with patch 1" in a table of steps.
// treeNoun is what a tree's or a patch's word may name after it, part of the state's name:
// "stock kernel", "patched build", "net-next tree" (what is left of the label besides them
// names the test: "plain listener, stock kernel" against "plain listener, this series").
const treeNoun = `(?:\s+(?:kernels?|trees?|builds?))?`

const patchNoun = `(?:(?:this|the|my|these|that|our)\s+)?(?:patch|patches|fix|change|changes|series|patchset|commit|CL|changelist)`

var (
	patchBefore = regexp.MustCompile(`(?i)(?:^|[^\w-])((?:before|pre-?patch(?:ed)?|prior|baseline|base(?:\s+(?:kernel|tree))?|unpatched|un-patched|vanilla|stock|orig(?:in(?:al)?)?|reference|HEAD(?:~\d{1,3}|\^{1,3})|(?:before|pre)-(?:fix|patch|change|series)|old|prev|previous|previously|(?:without|w/o)\s+` + patchNoun + `|w/o|net-next|bpf-next|master|upstream|mainline|clean|unmodified|unchanged|current)` + treeNoun + `)(?:$|[^\w-])`)
	patchAfter  = regexp.MustCompile(`(?i)(?:^|[^\w-])((?:after|post-?patch(?:ed)?|patch(?:es)?\s*#?\d{1,3}(?:\s*[-/]\s*\d{1,3})?|(?:whole|full|entire|complete)\s+(?:series|patchset|patch\s?set)|all\s+(?:the\s+)?patches|patched|new|now|applied|modified|candidate|(?:after|post)-(?:fix|patch|change|series)|(?:with|w/)\s*` + patchNoun + `|this\s+(?:patch|change|series|patchset|fix)|patch(?:es)?\s+applied|(?:with|w/)\s*\d{1,2}\s*[-–]\s*\d{1,2})` + treeNoun + `)(?:$|[^\w-])`)
	// A label with "+ something" is its base with something added: "net-next + page
	// recycling", "stock driver + batching".
	// The base before the plus is a name, not a size ("64k+ messages" is no state); a plus
	// written without spaces adds a patch by its noun, "this", a version of the series or the
	// patches' numbers after a name ("net-next+patch", "6.8-rc1+series", "base+this",
	// "mainline+v2", "base+1-5"; "l3+4", a hash policy, is no state).
	plusAfter     = regexp.MustCompile(`(?i)(?:^|[\s(])[A-Za-z][\w.-]*\s*\+\s+\S|\s\+\s*[A-Za-z]|^\s*\+\s*\w|[A-Za-z]\+\d{1,3}(?:-\d{1,3})?\b|[\w.-]\+(?:this\b|v\d+\b|(?:this\s+)?(?:patch(?:es|set)?|series|fix|changes?|commits?)\b)`)
	settingBefore = regexp.MustCompile(`(?i)(?:^|[^\w-])(disabled|disable|without|plain|normal|regular|default|skb-mode|skb|generic|xdp_skb|non-[\w-]+|no\s+\w+)(?:$|[^\w-])`)
	settingAfter  = regexp.MustCompile(`(?i)(?:^|[^\w-])(enabled|enable|native-mode|native|drv|xdp_drv)(?:$|[^\w-])`)
	// "on" and "off" name a setting only as its last word ("MPWQE off", "BIG TCP on"), not
	// as a preposition ("On a 16-core host", "GSO on geneve enabled").
	onOffRe      = regexp.MustCompile(`(?i)(?:^|\s)(on|off)\s*(?:$|[,)(])`)
	literalState = regexp.MustCompile(`(?i)(?:^|[^\w-])((?:before|after|without)(?:\s+(?:(?:this|the|my|these)\s+\w+|patch(?:es)?|fix|changes?|series|patchset|commit))?)(?:$|[^\w-])`)
	// A commit id has a letter among its hex digits; eight digits alone are a count.
	commitIDRe       = regexp.MustCompile(`^[0-9a-f]*[a-f][0-9a-f]*$`)
	parenRe          = regexp.MustCompile(`\([^()]*\)`)
	perDenominatorRe = regexp.MustCompile(`(?i)\bper\s+[\w-]+`)
	withLeadRe       = regexp.MustCompile(`(?i)^(?:with|w/)\s`)
)

// contrastPairs are the words that name two states by their contrast, the before's first: a
// name with one of them beside the same name with the other ("without X" / "with X", "w/o X" /
// "w/ X", "no X" / "with X"). TestContrastPairs holds each pair to pairing.
var contrastPairs = [][2]string{{"without", "with"}, {"w/o", "w/"}, {"before", "after"}, {"no", "with"}, {"previously", "now"}}

// contrasting: a and b are the two words of a contrast pair, in either order ("with it"
// after "without the patch": the first word of each side's name).
func contrasting(a, b string) bool {
	for _, c := range contrastPairs {
		if strings.EqualFold(a, c[0]) && strings.EqualFold(b, c[1]) || strings.EqualFold(a, c[1]) && strings.EqualFold(b, c[0]) {
			return true
		}
	}
	return false
}

// patchOrdinalRe is how much of a series a state has: "patch 2", "patches 1-3", "patch 4/8",
// "#5": the rest of a label after its state's words, which names the state, not what is measured.
var patchOrdinalRe = regexp.MustCompile(`(?i)^(?:(?:patch(?:es)?|commit)\s*)?#?\d{1,3}(?:\s*[-/]\s*\d{1,3})?(?:\s+(?:only|applied))?$`)

// fillerRe is what is left of a label when its state's words are taken out and nothing of a
// measurement remains: "with the" of "with the whole series", "kernel" of "baseline kernel"
// (what the state is of: the kernel, its tree, its build), "it" of "after it" (the change a
// state before named).
var fillerRe = regexp.MustCompile(`(?i)^[\s+,:-]*(?:(?:with|w/|and|the|this|these|my|our|a|an|of|all|applied|only|kernels?|trees?|builds?|code|it|them)[\s+,:-]*)*$`)

// nounBeforeRe is a noun phrase with its article just before a word: "the commit" in "the
// commit before it".
var nounBeforeRe = regexp.MustCompile(`(?i)\b(?:the|a|an|one|that)\s+[a-z][\w-]*\s+$`)

// prepositionOut is re's first match in l (its submatch indexes), nil where there is none or
// where the word is "before" or "after" between two things ("the commit before it"): a
// preposition, no state.
func prepositionOut(l string, re *regexp.Regexp) []int {
	m := re.FindStringSubmatchIndex(l)
	if m == nil {
		return nil
	}
	word := strings.ToLower(l[m[2]:m[3]])
	if (strings.HasPrefix(word, "before") || strings.HasPrefix(word, "after")) && nounBeforeRe.MatchString(l[:m[2]]) {
		return nil
	}
	return m
}

// stateOf names the side a label names: "before", "after" or "" (neither, or both), whether
// it was a patch word (strong) rather than a setting, and the label with the state's words
// taken out (what else it says: a metric, a condition).
func stateOf(label string) (side string, strong bool, rest string) {
	side, strong, rest = stateOfWords(label)
	if side != "" && (patchOrdinalRe.MatchString(strings.TrimSpace(rest)) || fillerRe.MatchString(rest) || releaseOnly(rest) || commitOnly(rest)) {
		rest = ""
	}
	return side, strong, rest
}

// releaseOnly: what is left of a label is the release of the tree it names ("stock 6.12",
// "baseline v6.13-rc2+"), part of the state's name, no condition of a measurement.
func releaseOnly(rest string) bool {
	_, ok := kernelVersion(strings.TrimSuffix(strings.TrimSpace(rest), "+"))
	return ok
}

// commitOnly: what is left of a label is a commit, by its id ("before 1a2b3c4d", "after commit
// 1a2b3c4d"): the tree the state is, no condition of a measurement.
func commitOnly(rest string) bool {
	r := strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(rest), ":()")))
	r = strings.TrimSpace(strings.TrimPrefix(r, "commit"))
	return len(r) >= 7 && len(r) <= 40 && commitIDRe.MatchString(r)
}

// parenSideRe is a label that ends with one or two words in parentheses ("linear walk
// (current)", "broken (current)"): group 1 the words before, group 2 those inside.
var parenSideRe = regexp.MustCompile(`^([^()]+?)\s*\(\s*([A-Za-z][\w-]*(?:\s[A-Za-z][\w-]*)?)\s*\)\s*:?$`)

// patchNounAloneRe is a label that is only the noun of what the message brings: "patch",
// "series", "fix" (the other state being the base).
var patchNounAloneRe = regexp.MustCompile(`(?i)^(?:the\s+)?(?:patch|patches|patchset|series|fix|fixed)\s*:?$`)

func stateOfWords(label string) (side string, strong bool, rest string) {
	l := strings.TrimSpace(label)
	if len(strings.Fields(parenRe.ReplaceAllString(l, ""))) > 8 {
		// A sentence, not the name of a state: only a patch's or a tree's word names its
		// state ("The numbers I got on the unpatched kernel were"), and only where the
		// sentence names no other; it says nothing else of a measurement.
		if side := sentenceSide(l); side != "" {
			return side, true, ""
		}
		return "", false, l
	}
	if len(l) >= 8 && len(l) <= 40 && commitIDRe.MatchString(strings.ToLower(l)) {
		return "before", true, "" // a bare commit id is the tree measured before
	}
	if patchNounAloneRe.MatchString(l) {
		return "after", true, "" // "patch:" under "base:": the tree with the patch
	}
	if m := parenSideRe.FindStringSubmatch(l); m != nil {
		// "linear walk (current)" against "hashed rules (patch)": the side in parentheses, by
		// a patch's or a tree's word, after what the state does (no condition of a
		// measurement), where the words before name none
		outside, _, _ := stateOfWords(m[1])
		if side, strong, _ := stateOfWords(m[2]); side != "" && strong && outside == "" {
			return side, true, ""
		}
	}
	b, a := prepositionOut(l, patchBefore), prepositionOut(l, patchAfter)
	plus := plusAfter.MatchString(l)
	lit := prepositionOut(l, literalState)
	switch {
	case lit != nil && !literalState.MatchString(l[lit[1]:]):
		// "Before the series is merged": the words before and after say it all.
		side := strings.ToLower(strings.Fields(l[lit[2]:lit[3]])[0])
		if side == "without" {
			side = "before"
		}
		return side, true, strip(strip(strip(l, literalState), patchBefore), patchAfter)
	case plus:
		base, _, _ := strings.Cut(l, "+")
		return "after", true, strip(parenRe.ReplaceAllString(base, " "), patchBefore)
	case a != nil && b == nil:
		return "after", true, strip(l, patchAfter)
	case b != nil && a == nil:
		return "before", true, strip(l, patchBefore)
	case a != nil && b != nil:
		return "", true, l
	}
	settings := l
	if outside := strings.TrimSpace(parenRe.ReplaceAllString(l, " ")); withLeadRe.MatchString(outside) {
		// "With batching (GRO disabled)": the label's state is what "with" names, against
		// a "without" elsewhere; the setting in parentheses is a condition of it.
		settings = outside
	}
	// "segments per skb": what follows "per" is a denominator, never a state.
	settings = perDenominatorRe.ReplaceAllString(settings, " ")
	sb, sa := settingBefore.FindStringIndex(settings), settingAfter.FindStringIndex(settings)
	switch {
	case sb != nil && sa == nil:
		return "before", false, strip(l, settingBefore)
	case sa != nil && sb == nil:
		return "after", false, strip(l, settingAfter)
	case sa == nil && sb == nil:
		if m := onOffRe.FindStringSubmatch(l); m != nil {
			if strings.EqualFold(m[1], "off") {
				return "before", false, strip(l, onOffRe)
			}
			return "after", false, strip(l, onOffRe)
		}
	}
	return "", false, l
}

// sentencePatchRe is how a sentence names the state of the patch it is about: "the
// unpatched kernel", "before this patch was applied", "a kernel that does not have the fix",
// "with the series", "once the fix is in".
// Only the patch's own words count in a sentence: a tree's or a time's ("current", "new",
// "now") are too common in prose to name a state there.
var sentencePatchRe = regexp.MustCompile(`(?i)\b(?:(un-?patched)|patched|(before|without|w/o|(?:does|do|did)\s+not\s+(?:have|include|carry|contain)|(?:doesn't|don't|didn't|lacks?)(?:\s+(?:have|include|carry|contain))?)\s+(?:(?:this|the|my|our|these)\s+)?` + patchNounWords + `|(?:after|with|w/)\s+(?:(?:this|the|my|our|these)\s+)?` + patchNounWords + `|(before|without|w/o)\s+it|(?:after|with|w/)\s+it|(?:once|when)\s+(?:the|this|my)\s+` + patchNounWords + `\s+(?:is|was)\s+(?:in|applied))\b`)

// bothSidesRe is a sentence's two states named together: "before and after the patch",
// "with and without the series", "without/with it".
var bothSidesRe = regexp.MustCompile(`(?i)\b(?:before|without|w/o|with|w/|after)\s*(?:and|or|/|&|vs\.?)\s*(?:after|with|w/|before|without|w/o)\b`)

// patchNounWords are the nouns of a patch in a sentence.
const patchNounWords = `(?:patch|patches|series|patchset|fix|change|commit|CL|changelist)`

// sentenceSide is the side a sentence names by its patch's words, "" where it names none or
// both.
func sentenceSide(l string) string {
	if bothSidesRe.MatchString(l) {
		return "" // "before and after the patch": both, in an order
	}
	sides := map[string]bool{}
	for _, m := range sentencePatchRe.FindAllStringSubmatch(l, -1) {
		if m[1] != "" || m[2] != "" || m[3] != "" {
			sides["before"] = true
		} else {
			sides["after"] = true
		}
	}
	if len(sides) != 1 {
		return ""
	}
	for side := range sides {
		return side
	}
	return ""
}

// strip takes the words re matches (its first group) out of s, until none is left
// ("bpf-next master": the two words share the space between them).
func strip(s string, re *regexp.Regexp) string {
	for k := 0; k < 8; k++ {
		t := strip1(s, re)
		if t == s {
			break
		}
		s = t
	}
	return s
}

func strip1(s string, re *regexp.Regexp) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		if len(m) < 4 || m[2] < 0 {
			continue
		}
		b.WriteString(s[last:m[2]])
		b.WriteString(" ")
		last = m[3]
	}
	b.WriteString(s[last:])
	return strings.Join(strings.Fields(b.String()), " ")
}

// labelKey is a label reduced to what it says besides its state: lower case, parentheses,
// punctuation at its ends and spare spaces gone.
func labelKey(s string) string {
	s = parenRe.ReplaceAllString(strings.ToLower(s), " ")
	s, _, _ = strings.Cut(s, "(")
	s = strings.Trim(strings.Join(strings.Fields(s), " "), " :,-=*")
	return s
}

// sideOfPair decides two states that words do not: a label that is the other with "non-",
// "no " or "un" before it is the state without the feature.
func sideOfPair(a, b string) (aSide, bSide string) {
	la, lb := strings.ToLower(labelKey(a)), strings.ToLower(labelKey(b))
	if la == "" || lb == "" {
		return "", ""
	}
	for _, neg := range []string{"non-", "non ", "no ", "un", "not "} {
		if la == neg+lb {
			return "before", "after"
		}
		if lb == neg+la {
			return "after", "before"
		}
	}
	return "", ""
}

// sidesOf decides the states two labels name, the one scorer of a comparison of two: each
// label's own words first (stateOf); then a contrast of their first words ("w/o" against
// "w/"); then one label the other with something added ("v6.6" against "v6.6+series", or
// the same first word: "6.11 gives" against "6.11 with the patch gives") or
// taken away ("non-GRO" against "GRO", sideOfPair); then one label named by a patch's word
// against one named by nothing, as the labelled lines' grouping does ("baseline" against
// "with batching"), where loose (names an author gave as labels, not words of a sentence).
// Two of one side, or nothing to go on, is no decision: "", "".
func sidesOf(a, b string, loose bool) (aSide, bSide string) {
	sa, strongA, _ := stateOf(a)
	sb, strongB, _ := stateOf(b)
	sa, strongA = wholeLabel(a, sa, strongA)
	sb, strongB = wholeLabel(b, sb, strongB)
	fa, fb := firstWord(a), firstWord(b)
	ka, kb := labelKey(a), labelKey(b)
	switch {
	case sa != "" && sb != "" && sa != sb:
		return sa, sb
	case ka != "" && sa != "after" && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(kb, ka)), "+") && kb != ka:
		return "before", "after" // "6.12-rc1" and "6.12-rc1+", "base" and "base+1-5"
	case kb != "" && sb != "after" && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(ka, kb)), "+") && ka != kb:
		return "after", "before"
	case contrasting(fa, fb):
		return contrastSide(fa), contrastSide(fb)
	case sb == "after" && sa == "" && ka != "" && (strings.HasPrefix(kb, ka) || fa == fb):
		return "before", "after"
	case sa == "after" && sb == "" && kb != "" && (strings.HasPrefix(ka, kb) || fa == fb):
		return "after", "before"
	}
	if x, y := sideOfPair(a, b); x != "" {
		return x, y
	}
	switch {
	case !loose:
	case sa != "" && sb == "" && strongA:
		return sa, opposite(sa)
	case sb != "" && sa == "" && strongB:
		return opposite(sb), sb
	}
	return "", ""
}

func opposite(side string) string {
	if side == "before" {
		return "after"
	}
	return "before"
}

func firstWord(s string) string {
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], ":,;()")
}

// wholeLabel is the side of a label that is one short word of a state, as table headers
// write them ("ref", "pre", "post", "patch"): words too short or too common to look for
// inside longer labels.
func wholeLabel(label, side string, strong bool) (string, bool) {
	if side != "" {
		return side, strong
	}
	switch strings.ToLower(strings.Trim(strings.TrimSpace(label), ":")) {
	case "ref", "reference", "pre":
		return "before", true
	case "patch", "patches", "post", "fix", "series":
		return "after", true
	}
	return side, strong
}

// definitionRe is a sentence that says what a quoted name stands for: "'global' is
// 'net-next'", "\"patched\" means net-next with this series".
var definitionRe = regexp.MustCompile(`['"‘“]([^'"‘’“”]{1,40})['"’”]\s+(?:is|means|stands\s+for|refers\s+to)\s+([^.;,]{1,80})`)

// definedSides are the sides sentences of the text give quoted names by what they say each
// stands for, where that is a short name of one side by a tree's or a patch's words: labelKey
// of the name to "before" or "after". A definition that names both, or neither, or describes
// more than a name, gives nothing.
func definedSides(lines []line) map[string]string {
	out := map[string]string{}
	for _, s := range sentences(lines) {
		for _, m := range definitionRe.FindAllStringSubmatch(s, -1) {
			def := strings.Trim(strings.TrimSpace(m[2]), `'"‘’“”`)
			if len(strings.Fields(def)) > 4 {
				continue // a description ("an earlier version of the cache that still takes the lock"), no tree's name
			}
			if side, strong, _ := stateOf(def); side != "" && strong {
				out[labelKey(m[1])] = side
			}
		}
	}
	return out
}
