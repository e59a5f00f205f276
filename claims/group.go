package claims

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/nsperf/nsperf/patches"
)

// side is the readings of one state of one key: consecutive lines (a run series) or one.
type sideRun struct {
	side, state string
	values      []float64
	lines       []int
	lastIdx     int
	// summary is the author's central figure of the runs, where printed (reading.summary).
	summary    float64
	summarized bool
}

// center is a side's figure: the average its author printed after the runs, else their
// median.
func (s *sideRun) center() float64 {
	if s.summarized {
		return s.summary
	}
	return median(s.values)
}

// pairReadings makes claims of the generic readings: per key, the states it was read in.
// A state read twice apart is ambiguous and the key gives nothing; a before and an after
// pair (the first before with the last after: a baseline and the final state); a before
// and states no word decides pair with the first of them; two states no word decides pair
// only where one label negates the other. Figures equal on both sides, or zero on both,
// are no comparison the text makes.
func (r *Report) pairReadings(rs []reading, lines []line) {
	var order []string
	groups := map[string][]reading{}
	rs = byPlaceWhereFiguresDiffer(mergeTypos(implicitBaselines(rs)))
	for _, x := range rs {
		if _, ok := groups[x.key]; !ok {
			order = append(order, x.key)
		}
		groups[x.key] = append(groups[x.key], x)
	}
	var segments [][]reading
	for _, k := range order {
		segments = append(segments, rounds(groups[k], lines)...)
	}
	for _, seg := range segments {
		runs, ok := sideRuns(seg, lines)
		if !ok {
			continue
		}
		if r.pairGroups(seg[0], runs, lines) {
			continue
		}
		if b, others, ok := againstBaseline(runs, lines); ok {
			for _, a := range others {
				r.addReadingClaim(seg[0], b, a)
			}
			continue
		}
		b, a, ok := r.decideSides(runs, lines)
		if !ok && len(runs) == 2 && runs[0].side == runs[1].side && runs[0].side != "?" {
			// Two states one word places on the same side ("with 256 descriptors", "with
			// 2048 descriptors"): the word names a setting of each, not the change; the rest
			// of the message says which is the baseline, as for states no word places.
			undecided := []*sideRun{{side: "?", state: runs[0].state, values: runs[0].values}, {side: "?", state: runs[1].state, values: runs[1].values}}
			if ub, _, uok := r.evidenceSides(undecided, lines); uok {
				b, a, ok = runs[0], runs[1], true
				if ub == undecided[1] {
					b, a = runs[1], runs[0]
				}
			}
		}
		if !ok && len(runs) == 2 && runs[0].side == "?" && runs[1].side == "?" {
			r.addUnparsed(Unparsed{Lines: append(append([]int{}, runs[0].lines...), runs[1].lines...), Reason: fmt.Sprintf(
				"two states, %q and %q, and nothing that says which is the baseline (no state word; neither the Subject, the diff nor a stated change names one): not paired",
				runs[0].state, runs[1].state)})
		}
		if !ok {
			continue
		}
		r.addReadingClaim(seg[0], b, a)
	}
}

// keyFigureRe is a figure inside a reading's key (its label's, its condition's).
var keyFigureRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// byPlaceWhereFiguresDiffer re-keys the readings whose labels hold figures that differ between
// the two states' headings, as the lines of a program that prints what it did with its result
// do ("1200 iterations in 10.002 s: 8335 usec / iteration" under one, "4010 iterations in
// 10.001 s: 2494 usec / iteration" under the other): a key read under one state only, whose
// form with its figures masked has as many lines under each state, pairs by its place among
// them, the k-th line before with the k-th after, as measurements listed in the same order
// under each heading do. Keys read under both states keep theirs.
func byPlaceWhereFiguresDiffer(rs []reading) []reading {
	sides := map[string]map[string]bool{}
	for _, x := range rs {
		if sides[x.key] == nil {
			sides[x.key] = map[string]bool{}
		}
		sides[x.key][x.side] = true
	}
	lone := func(x reading) bool {
		return len(sides[x.key]) == 1 && (x.side == "before" || x.side == "after") && keyFigureRe.MatchString(x.key)
	}
	type place struct{ masked, side string }
	lines := map[place][]int{}
	for _, x := range rs {
		if p := (place{keyFigureRe.ReplaceAllString(x.key, "#"), x.side}); lone(x) && !slices.Contains(lines[p], x.line) {
			lines[p] = append(lines[p], x.line)
		}
	}
	out := slices.Clone(rs)
	for i, x := range out {
		if !lone(x) {
			continue
		}
		masked := keyFigureRe.ReplaceAllString(x.key, "#")
		before, after := lines[place{masked, "before"}], lines[place{masked, "after"}]
		if len(before) == 0 || len(before) != len(after) {
			continue
		}
		out[i].key = fmt.Sprintf("%s|place %d", masked, slices.Index(lines[place{masked, x.side}], x.line))
	}
	return out
}

// rounds cuts a key's readings where its states come round again, each round apart from
// the last by an empty line ("base: 8.1 / base with X: 8.9", then, under another sentence,
// "base: 410 / base with X: 455"): the same states measured again in another test, each round
// a comparison of its own. Readings whose states do not come round are one round.
func rounds(rs []reading, lines []line) [][]reading {
	if _, ok := sideRuns(rs, lines); ok || len(rs) < 4 {
		return [][]reading{rs}
	}
	var out [][]reading
	start := 0
	for k := 1; k < len(rs); k++ {
		if rs[k].state == rs[0].state && rs[k-1].state != rs[0].state && blankBetween(lines, rs[k-1].idx, rs[k].idx) {
			out = append(out, rs[start:k])
			start = k
		}
	}
	out = append(out, rs[start:])
	for _, seg := range out {
		if len(seg) < 2 || seg[0].state != rs[0].state {
			return [][]reading{rs}
		}
		if _, ok := sideRuns(seg, lines); !ok {
			return [][]reading{rs}
		}
	}
	return out
}

// blankBetween: an empty line stands between lines[a] and lines[b].
func blankBetween(lines []line, a, b int) bool {
	for k := a + 1; k < b && k < len(lines); k++ {
		if strings.TrimSpace(lines[k].text) == "" {
			return true
		}
	}
	return false
}

// sideRuns groups a key's readings by state, in order; false when a state comes back
// after another line of the key. Runs of one state stand on one line, on consecutive lines,
// or each after its own command ("$ ./super_netperf ..." repeated before every run).
func sideRuns(rs []reading, lines []line) ([]*sideRun, bool) {
	var runs []*sideRun
	next := func(last, idx int) bool {
		if last+1 == idx || last == idx { // the next line, or the same one: runs in a row
			return true
		}
		// Between two runs only their commands, and empty lines where a command stands
		// between them too ("$ ./super_netperf ..." / "201344" / "" / "$ ./super_netperf ...").
		command := false
		for k := last + 1; k < idx && k < len(lines); k++ {
			switch {
			case isCommand(lines[k].text):
				command = true
			case strings.TrimSpace(lines[k].text) != "":
				return false
			}
		}
		return idx > last && (command || idx == last+1)
	}
	for _, x := range rs {
		if n := len(runs); n > 0 && runs[n-1].state == x.state && runs[n-1].side == x.side && next(runs[n-1].lastIdx, x.idx) {
			cur := runs[n-1]
			cur.values, cur.lines, cur.lastIdx = append(cur.values, x.value), append(cur.lines, x.line), x.idx
			continue
		}
		for _, prev := range runs {
			if prev.state == x.state && prev.side == x.side {
				return nil, false
			}
		}
		runs = append(runs, &sideRun{side: x.side, state: x.state, values: []float64{x.value}, lines: []int{x.line}, lastIdx: x.idx,
			summary: x.summary, summarized: x.summarized})
	}
	return runs, true
}

// decideSides picks the before and the after of a key's states: by their words (chooseSides),
// else by what the prose around them says (proseSides), else by the rest of the message
// (evidenceSides).
func (r *Report) decideSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	if before, after, ok = anotherChangesSides(runs); ok {
		// the trees around a regression and the fix: stronger than what the Subject names
		return before, after, ok
	}
	if before, after, ok = r.subjectSides(runs, lines); ok {
		return before, after, ok
	}
	if len(runs) == 2 {
		// Two labels: the one scorer of two names first ("6.12" and "6.12+", "ref" and
		// "patch", "mainline" and "mainline+v2").
		switch a, _ := sidesOf(runs[0].state, runs[1].state, true); a {
		case "before":
			return runs[0], runs[1], true
		case "after":
			return runs[1], runs[0], true
		}
	}
	if before, after, ok = chooseSides(runs); ok {
		return before, after, ok
	}
	if before, after, ok = proseSides(runs, lines); ok {
		return before, after, ok
	}
	return r.evidenceSides(runs, lines)
}

// pairGroups pairs a key's states where they are the same two states on several setups
// (stateGroups, then factorGroups): each group's two decided as any two states are; of
// factorGroups' partitions, the first whose every group is decided is taken.
func (r *Report) pairGroups(first reading, runs []*sideRun, lines []line) bool {
	if groups, conds, ok := stateGroups(runs); ok {
		// Grouped by their names' words: each group decided or not on its own.
		for k, g := range groups {
			b, a, ok := r.decideSides(g, lines)
			if ok {
				x := first
				x.conds = copyConds(first.conds)
				x.conds["group"] = conds[k]
				r.addReadingClaim(x, b, a)
			}
		}
		return true
	}
	for _, p := range factorGroups(runs) {
		type pair struct{ b, a *sideRun }
		var pairs []pair
		for _, g := range p.groups {
			b, a, ok := r.decideSides(g, lines)
			if !ok {
				break
			}
			pairs = append(pairs, pair{b, a})
		}
		if len(pairs) != len(p.groups) {
			continue
		}
		for k, pr := range pairs {
			x := first
			x.conds = copyConds(first.conds)
			x.conds["group"] = p.conds[k]
			r.addReadingClaim(x, pr.b, pr.a)
		}
		return true
	}
	return false
}

// partition is a key's states cut into groups of two, each group named by its condition.
type partition struct {
	groups [][]*sideRun
	conds  []string
}

// factorGroups are the ways to read four or more states whose names differ in two or more
// words, one of them taking two values ("gro_cells, 1 flow", "napi_gro_frags, 1 flow", the
// same with 8 flows): for each such word, the states grouped by their other differing words,
// each group the word's two values; the state word is the one whose groups the rest of the
// message decides (pairGroups tries each).
func factorGroups(runs []*sideRun) []partition {
	if len(runs) < 4 || len(runs)%2 != 0 {
		return nil
	}
	words := make([][]string, len(runs))
	for k, r := range runs {
		words[k] = strings.Fields(r.state)
		if len(words[k]) != len(words[0]) {
			return nil
		}
	}
	var differ []int
	for p := range words[0] {
		for k := range words {
			if !strings.EqualFold(words[k][p], words[0][p]) {
				differ = append(differ, p)
				break
			}
		}
	}
	if len(differ) < 2 {
		return nil
	}
	var out []partition
	for _, p := range differ {
		values := map[string]bool{}
		for k := range words {
			values[strings.ToLower(words[k][p])] = true
		}
		if len(values) != 2 {
			continue
		}
		index := map[string]int{}
		var part partition
		for k, r := range runs {
			var rest []string
			for _, q := range differ {
				if q != p {
					rest = append(rest, words[k][q])
				}
			}
			key := strings.ToLower(strings.Join(rest, " "))
			g, seen := index[key]
			if !seen {
				g = len(part.groups)
				index[key] = g
				part.groups = append(part.groups, nil)
				part.conds = append(part.conds, strings.Trim(strings.Join(rest, " "), "[](),"))
			}
			part.groups[g] = append(part.groups[g], r)
		}
		ok := len(part.groups) >= 2
		for _, g := range part.groups {
			ok = ok && len(g) == 2 && !strings.EqualFold(strings.Fields(g[0].state)[p], strings.Fields(g[1].state)[p])
		}
		if ok {
			out = append(out, part)
		}
	}
	return out
}

// statedPercentRe is a change a line states beside its figure, in parentheses, maybe a space
// after its sign and a note after it: "(+36.5%)", "(- 6.9 %)", "(+2.1%, p=0.06 vs base)".
var statedPercentRe = regexp.MustCompile(`\(\s*([-+−]?)\s?(\d+(?:\.\d+)?)\s?%(?:\s*\)|[,;]\s*[^()]*\))`)

// statedPercent is the change a statedPercentRe match states, in percent.
func statedPercent(m []string) (float64, bool) {
	return parseNumber(strings.TrimPrefix(strings.ReplaceAll(m[1], "−", "-"), "+") + m[2])
}

// againstBaseline reads a baseline and two or more other states, each on its own line with
// the change against the baseline stated beside its figure ("2. variant A, skip always:
// 4.10 Mpps (+19.9%)"): the author measured each against the baseline, so each is a comparison of
// its own, not a step towards a final state. Every stated change must agree with the figures.
func againstBaseline(runs []*sideRun, lines []line) (base *sideRun, others []*sideRun, ok bool) {
	if len(runs) < 3 {
		return nil, nil, false
	}
	for _, s := range runs {
		if s.side == "before" {
			if base != nil {
				return nil, nil, false
			}
			base = s
		}
	}
	if base == nil || len(base.values) != 1 || base.values[0] == 0 {
		return nil, nil, false
	}
	for _, s := range runs {
		if s == base {
			continue
		}
		if len(s.values) != 1 || s.lastIdx >= len(lines) {
			return nil, nil, false
		}
		m := statedPercentRe.FindStringSubmatch(lines[s.lastIdx].text)
		if m == nil {
			return nil, nil, false
		}
		stated, okv := statedPercent(m)
		if !okv || math.Abs((s.values[0]/base.values[0]-1)*100-stated) > 0.6 {
			return nil, nil, false
		}
		others = append(others, s)
	}
	return base, others, true
}

// stateWords are the words of a state's name that say the change is there or not; what a
// name has left without them is what the state was measured on.
var stateWords = map[string]bool{"with": true, "without": true, "w/": true, "w/o": true, "no": true, "non": true, "not": true}

// stateGroups splits a key's states, four or more, whose names say the same two states on
// different setups ("without gro_frags, x86 host", "with gro_frags, x86
// host", then the same on the arm64 board): grouped by what a name has left once its state words
// are taken out, each group two states, one comparison; conds name each group by the words
// its names do not share with the others' ("x86 host").
func stateGroups(runs []*sideRun) (groups [][]*sideRun, conds []string, ok bool) {
	if len(runs) < 4 || len(runs)%2 != 0 {
		return nil, nil, false
	}
	rest := func(state string) []string {
		if side, _, r := stateOf(state); side != "" {
			state = r
		}
		var out []string
		for _, w := range strings.Fields(state) {
			if !stateWords[strings.ToLower(w)] {
				out = append(out, w)
			}
		}
		return out
	}
	index := map[string]int{}
	var rests [][]string
	for _, r := range runs {
		words := rest(r.state)
		key := strings.ToLower(strings.Join(words, " "))
		if key == "" {
			return nil, nil, false
		}
		k, seen := index[key]
		if !seen {
			k = len(groups)
			index[key] = k
			groups = append(groups, nil)
			rests = append(rests, words)
		}
		groups[k] = append(groups[k], r)
	}
	if !pairsOfTwo(groups) {
		// One author's names of a setup differ by a word from one state to the other ("TX
		// without X" over "TX path with X"): a name whose words are all in one other name,
		// and in no third, is of that one's setup.
		groups, rests = subsetGroups(runs, rest)
	}
	if !pairsOfTwo(groups) {
		return nil, nil, false
	}
	// The words every group's name has ("implementation", "on") are not its condition.
	common := map[string]int{}
	for _, words := range rests {
		seen := map[string]bool{}
		for _, w := range words {
			if lw := strings.ToLower(w); !seen[lw] {
				seen[lw] = true
				common[lw]++
			}
		}
	}
	for _, words := range rests {
		var own []string
		for _, w := range words {
			if common[strings.ToLower(w)] < len(rests) {
				own = append(own, w)
			}
		}
		if len(own) == 0 {
			return nil, nil, false
		}
		conds = append(conds, strings.Join(own, " "))
	}
	return groups, conds, true
}

// pairsOfTwo: two or more groups, each of two states.
func pairsOfTwo(groups [][]*sideRun) bool {
	if len(groups) < 2 {
		return false
	}
	for _, g := range groups {
		if len(g) != 2 {
			return false
		}
	}
	return true
}

// subsetGroups pairs each state with the one other state whose setup words contain its own or
// are contained in them (case aside); rests are each group's longer name. nil where some state
// has no such partner or more than one.
func subsetGroups(runs []*sideRun, rest func(string) []string) (groups [][]*sideRun, rests [][]string) {
	words := make([]map[string]bool, len(runs))
	names := make([][]string, len(runs))
	for k, r := range runs {
		names[k] = rest(r.state)
		words[k] = map[string]bool{}
		for _, w := range names[k] {
			words[k][strings.ToLower(w)] = true
		}
	}
	within := func(a, b map[string]bool) bool {
		for w := range a {
			if !b[w] {
				return false
			}
		}
		return true
	}
	partner := make([]int, len(runs))
	for k := range runs {
		partner[k] = -1
		for o := range runs {
			if o == k || !(within(words[k], words[o]) || within(words[o], words[k])) {
				continue
			}
			if partner[k] >= 0 {
				return nil, nil
			}
			partner[k] = o
		}
		if partner[k] < 0 {
			return nil, nil
		}
	}
	for k, o := range partner {
		if partner[o] != k {
			return nil, nil
		}
		if k < o {
			long := names[k]
			if len(names[o]) > len(long) {
				long = names[o]
			}
			groups, rests = append(groups, []*sideRun{runs[k], runs[o]}), append(rests, long)
		}
	}
	return groups, rests
}

// chooseSides picks the before and the after of a key's states.
func chooseSides(runs []*sideRun) (before, after *sideRun, ok bool) {
	if before, after, ok = anotherChangesSides(runs); ok {
		return before, after, ok
	}
	var bs, as, us []*sideRun
	for _, s := range runs {
		switch s.side {
		case "before":
			bs = append(bs, s)
		case "after":
			as = append(as, s)
		default:
			us = append(us, s)
		}
	}
	switch {
	case len(bs) >= 1 && len(as) >= 1:
		return bs[0], as[len(as)-1], true
	case len(bs) == 1 && len(us) >= 1 && len(as) == 0:
		// Three or more states, one the baseline: the baseline against the last of the
		// others, the final state ("net-next", "+ patches 1-2", "+ whole series").
		return bs[0], us[len(us)-1], true
	case len(as) == 1 && len(us) == 1 && len(bs) == 0:
		return us[0], as[0], true
	case len(as) >= 2 && len(us) == 1 && len(bs) == 0 && runs[0] == us[0]:
		// A state no word names, then steps that each say they add the change ("with patch
		// 3", "with patch 5"): the first is the baseline, against the final step.
		return us[0], as[len(as)-1], true
	case len(bs) == 0 && len(runs) >= 3 && plusBase(runs) != nil:
		// A tree and the same tree with steps added ("6.12-rc4", "6.12-rc4+p1-2",
		// "6.12-rc4+series"): the tree against the last step, or the one step a word names.
		base := plusBase(runs)
		last := runs[len(runs)-1]
		if len(as) == 1 {
			last = as[0]
		}
		return base, last, last != base
	case len(us) == 2 && len(bs) == 0 && len(as) == 0:
		sa, sb := sideOfPair(us[0].state, us[1].state)
		switch {
		case sa == "before":
			return us[0], us[1], true
		case sb == "before":
			return us[1], us[0], true
		}
	}
	return nil, nil, false
}

// parentNamed: state is a commit's id alone and another state names its parent ("1a2b3c4d^",
// "1a2b3c4d~1"), the tree before that commit.
func parentNamed(state string, runs []*sideRun) bool {
	id := strings.ToLower(strings.TrimSpace(state))
	if len(id) < 7 || len(id) > 40 || !commitIDRe.MatchString(id) {
		return false
	}
	for _, o := range runs {
		other := strings.ToLower(strings.TrimSpace(o.state))
		if strings.HasPrefix(other, id+"^") || strings.HasPrefix(other, id+"~1") {
			return true
		}
	}
	return false
}

// plusBase is the one state every other state is, with "+" and what it adds after it; nil for
// none.
func plusBase(runs []*sideRun) *sideRun {
	for _, b := range runs {
		base := strings.ToLower(strings.TrimSpace(b.state))
		all := base != ""
		for _, o := range runs {
			if o == b {
				continue
			}
			rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(o.state)), base)
			all = all && ok && strings.HasPrefix(strings.TrimSpace(rest), "+")
		}
		if all {
			return b
		}
	}
	return nil
}

// Another change's states: "before"/"after" followed by something that is not this message's
// change ("after 0123abcd", "after the regression", "before commit X"), as a fix for a
// regression names the tree before it broke and after, then "with this fix".
var (
	anotherChangeRe = regexp.MustCompile(`(?i)^\s*(before|after|pre|post)[\s-]+(\S.*?)\s*:?\s*$`)
	thisChangeRe    = regexp.MustCompile(`(?i)^(?:it|this|` + patchNoun + `)\b`)
	// otherChangeWordsRe names a change other than the message's own: the regression a fix
	// repairs, the commit that caused it.
	otherChangeWordsRe = regexp.MustCompile(`(?i)\b(?:regression|regressed|offending|culprit|breakage|bad\s+commit|commit\s+[0-9a-f]{7,40})\b`)
	itRe               = regexp.MustCompile(`(?i)^it\b`)
	// namesThisChangeRe is a state that names this message's change.
	namesThisChangeRe = regexp.MustCompile(`(?i)\b(?:(?:this|my|our)\s+(?:patch|patches|fix|change|series|patchset|commit)|patched|fixed)\b|\+\s*(?:this|the\s+fix|fix\b)`)
)

// anotherChangesSides decides three or more states of which two are the trees before and
// after another change (the regression a fix repairs) and one names this change: the
// baseline is the tree after the other change, as it is now, against this change's state;
// the tree before the other change is an extra the claim does not compare.
func anotherChangesSides(runs []*sideRun) (before, after *sideRun, ok bool) {
	if len(runs) < 3 {
		return nil, nil, false
	}
	// "before the regression ..., after it ...": once a state names the other change, "it"
	// in another state's words is that change, not this message's
	itIsOther := false
	for _, s := range runs {
		if m := anotherChangeRe.FindStringSubmatch(s.state); m != nil && otherChangeWordsRe.MatchString(m[2]) && !namesThisChangeRe.MatchString(m[2]) {
			itIsOther = true
		}
	}
	var current, fixed *sideRun
	for _, s := range runs {
		m := anotherChangeRe.FindStringSubmatch(s.state)
		if m == nil && parentNamed(s.state, runs) {
			// "1a2b3c4d" beside "1a2b3c4d^": the tree with that commit, after it
			m = []string{s.state, "after", s.state}
		}
		switch {
		case m != nil && (!thisChangeRe.MatchString(m[2]) || commitOnly(m[2]) || itIsOther && itRe.MatchString(m[2])):
			if w := strings.ToLower(m[1]); w == "after" || w == "post" {
				if current != nil {
					return nil, nil, false
				}
				current = s
			}
		case namesThisChangeRe.MatchString(s.state):
			if fixed != nil {
				return nil, nil, false
			}
			fixed = s
		}
	}
	return current, fixed, current != nil && fixed != nil
}

// keyLabelPart is the label part of a reading's key (cond|kind|label|shape|place).
func keyLabelPart(key string) string {
	if parts := strings.SplitN(key, "|", 5); len(parts) == 5 {
		return strings.TrimSpace(parts[2])
	}
	return ""
}

// percentileNameRe is the name of a distribution's percentile: "p75", "p99.9", "P50".
var percentileNameRe = regexp.MustCompile(`(?i)^p\d{1,2}(?:\.\d+)?$|^p100$`)

func (r *Report) addReadingClaim(first reading, b, a *sideRun) {
	mb, ma := b.center(), a.center()
	// The same figure on both sides is a setting both states share ("MTU 1500" under each
	// heading), except in a table of results or a tool's counters (perf stat's), where a row
	// that did not move is a result, and for a rate of packets or operations, which no
	// setting is written in (a link's speed is: "a 100Gbit NIC" under each heading).
	// A percentile of a distribution ("75.000%  1.13ms", "p99: 48 us") is a result too: no
	// setting is written as one.
	result := strings.Contains(first.key, "|tbl|") || strings.Contains(first.key, "|p|") || first.unit == "trans/s" || first.unit == "pps" ||
		percentileNameRe.MatchString(keyLabelPart(first.key))
	if mb == ma && !result || mb == 0 && ma == 0 || math.IsNaN(mb) || math.IsNaN(ma) || math.IsInf(mb, 0) || math.IsInf(ma, 0) {
		return
	}
	metric := first.metric
	if metric == "" {
		metric = "value"
	}
	quantity := ""
	if spec, ok := declared()[metric]; first.named && !(ok && first.unit != "" && (spec.Unit == "" || spec.Unit == first.unit)) {
		// a figure a name gives ("throughput=91.2 Gbps"): a metric where a tool declares
		// that name in that unit, else what the text measures
		metric, quantity = "", metric
	}
	c := Claim{Metric: metric, Quantity: quantity, Unit: first.unit, Conditions: first.conds,
		Before: Values{Values: b.values, Median: round(mb), Printed: b.summarized, Label: sideLabel(b.state)},
		After:  Values{Values: a.values, Median: round(ma), Printed: a.summarized, Label: sideLabel(a.state)}}
	if mb != 0 {
		c.Change = math.Round((ma/mb-1)*1e4) / 1e4
	}
	c.Lines = append(append([]int{}, b.lines...), a.lines...)
	sort.Ints(c.Lines)
	c.Lines = slices.Compact(c.Lines)
	r.addClaims(c)
}

func (r *Report) addPair(p [2]reading) {
	b := &sideRun{state: p[0].state, values: []float64{p[0].value}, lines: []int{p[0].line}}
	a := &sideRun{state: p[1].state, values: []float64{p[1].value}, lines: []int{p[1].line}}
	if p[0].value == p[1].value {
		// "6.3 s -> 6.3 s" is a comparison the text makes: no change.
		c := Claim{Metric: cmp.Or(p[0].metric, "value"), Unit: p[0].unit, Conditions: p[0].conds, Before: Values{Values: b.values, Median: b.values[0]},
			After: Values{Values: a.values, Median: a.values[0]}, Lines: []int{p[0].line}}
		r.addClaims(c)
		return
	}
	r.addReadingClaim(p[0], b, a)
}

// sideLabel is how the text names a side, where it says more than "before" or "after".
func sideLabel(state string) string {
	if m := literalState.FindStringSubmatchIndex(state); m != nil && strings.TrimSpace(state[:m[2]]) == "" && strings.TrimSpace(state[m[1]:]) == "" {
		return ""
	}
	return state
}

// A Subject that turns something on, or off.
var (
	enablingRe  = regexp.MustCompile(`(?i)\b(?:enable[sd]?|add(?:s|ed)?|use[sd]?|turn(?:s|ed)? on|switch(?:es|ed)? to|default(?:s)? to|set(?:s)? by default)\b`)
	disablingRe = regexp.MustCompile(`(?i)\b(?:disable[sd]?|remove[sd]?|drop(?:s|ped)?|turn(?:s|ed)? off|revert(?:s|ed)?|avoid(?:s|ed)?|stop(?:s|ped)? using)\b`)
	// settingStateRe is a state named as a setting's value: "busy_poll=50", "gro_flush_timeout
	// 0", "rx-usecs: 8".
	settingStateRe = regexp.MustCompile(`^\s*([A-Za-z][\w.-]*)\s*(?:=|:|\s)\s*([\w.-]+)\s*$`)
)

// settingVerbSides orders two states that are one setting at zero and not ("busy_poll=0"
// and "busy_poll=50" under "enable busy polling by default"): the setting's zero is the state
// the Subject's verb turns it on from, or off to.
func (r *Report) settingVerbSides(runs []*sideRun) (before, after *sideRun, ok bool) {
	zeroFirst, ok := settingOffOn(runs[0].state, runs[1].state)
	if !ok {
		return nil, nil, false
	}
	on, off := enablingRe.MatchString(r.change.subject), disablingRe.MatchString(r.change.subject)
	if !on && !off && (booleanSetting(runs[0].state, runs[1].state) || r.bringsSetting(settingStateRe.FindStringSubmatch(runs[0].state)[1])) {
		// no verb: a setting switched off and on is a contrast, its off the baseline, as is
		// one the patch adds
		on = true
	}
	switch {
	case on && !off && zeroFirst, off && !on && !zeroFirst:
		return runs[0], runs[1], true
	case on && !off, off && !on:
		return runs[1], runs[0], true
	}
	return nil, nil, false
}

// bringsSetting: the patch adds the setting that two states show at zero and not, so that
// switched on it is the patch's: its diff adds lines with the setting's name, and removes none
// (net.core.rx_batch_defer: "rx_batch_defer").
func (r *Report) bringsSetting(name string) bool {
	leaf := name[strings.LastIndexAny(name, "./")+1:]
	return len(leaf) >= 4 && strings.Contains(r.change.added, leaf) && !strings.Contains(r.change.removed, leaf)
}

// booleanSetting: a setting's two values are its off and its on ("=0" and "=1", "off" and
// "on"), a contrast as "without" and "with" are, not two of its values ("busy_poll=50").
func booleanSetting(a, b string) bool {
	value := func(s string) string { return strings.ToLower(settingStateRe.FindStringSubmatch(s)[2]) }
	pair := value(a) + "/" + value(b)
	switch pair {
	case "0/1", "1/0", "off/on", "on/off", "false/true", "true/false", "no/yes", "yes/no", "disabled/enabled", "enabled/disabled":
		return true
	}
	return false
}

// settingOffOn says whether two states are one setting at two values, one of them its zero
// ("0", "off", "none", "disabled") and the other not; zeroFirst: the first is the zero.
// Verbs of a Subject that move a setting's value: up ("increase the default initial receive
// window") or down.
var (
	raisingRe  = regexp.MustCompile(`(?i)\b(?:increase[sd]?|raise[sd]?|bump(?:s|ed)?|grow(?:s|n)?|enlarge[sd]?|double[sd]?|extend(?:s|ed)?)\b`)
	loweringRe = regexp.MustCompile(`(?i)\b(?:decrease[sd]?|reduce[sd]?|lower(?:s|ed)?|shrink(?:s)?|shrunk|halve[sd]?|cut(?:s)?|limit(?:s|ed)?)\b`)
)

// settingSides orders two states that are one setting at two values: at zero and not
// (settingVerbSides), or at two numbers (settingValueSides).
func (r *Report) settingSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	if before, after, ok = r.settingVerbSides(runs); ok {
		return before, after, ok
	}
	return r.settingValueSides(runs, lines)
}

// settingValueSides orders two states that are one setting at two numbers ("rcvwnd 10" and
// "rcvwnd 64"): by a sentence of the message that says the change takes it "from 10 to 64",
// else by the Subject's verb (raising: the smaller number is the baseline; lowering: the
// larger).
func (r *Report) settingValueSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	ma, mb := settingStateRe.FindStringSubmatch(runs[0].state), settingStateRe.FindStringSubmatch(runs[1].state)
	if ma == nil || mb == nil || !strings.EqualFold(ma[1], mb[1]) {
		return nil, nil, false
	}
	va, okA := parseNumber(ma[2])
	vb, okB := parseNumber(mb[2])
	if !okA || !okB || va == vb {
		return nil, nil, false
	}
	fromTo := func(from, to string) *regexp.Regexp {
		return regexp.MustCompile(`(?i)\bfrom\s+` + regexp.QuoteMeta(from) + `\s+(?:\w+\s+)?to\s+` + regexp.QuoteMeta(to) + `\b`)
	}
	forward, backward := fromTo(ma[2], mb[2]), fromTo(mb[2], ma[2])
	for _, l := range lines {
		switch {
		case forward.MatchString(l.text):
			return runs[0], runs[1], true
		case backward.MatchString(l.text):
			return runs[1], runs[0], true
		}
	}
	up, down := raisingRe.MatchString(r.change.subject), loweringRe.MatchString(r.change.subject)
	if up == down {
		return nil, nil, false
	}
	if (va < vb) == up {
		return runs[0], runs[1], true
	}
	return runs[1], runs[0], true
}

func settingOffOn(a, b string) (zeroFirst, ok bool) {
	ma, mb := settingStateRe.FindStringSubmatch(a), settingStateRe.FindStringSubmatch(b)
	if ma == nil || mb == nil || !strings.EqualFold(ma[1], mb[1]) {
		return false, false
	}
	zero := func(v string) bool {
		switch strings.ToLower(v) {
		case "0", "off", "none", "disabled", "no", "false":
			return true
		}
		return false
	}
	za, zb := zero(ma[2]), zero(mb[2])
	return za, za != zb
}

// evidenceSides decides two states no word names by what else the message says of them: the
// Subject and the diff's added lines name the own words of the state after (the removed lines
// the before's), and a change the text states agrees with one order of the two only. Each
// is a vote; print order is none. Without a majority it abstains. One
// setting at zero and not, under a Subject that turns it on or off, is decided by the verb.
func (r *Report) evidenceSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	if len(runs) != 2 || runs[0].side != "?" || runs[1].side != "?" {
		return nil, nil, false
	}
	// Two releases of the kernel and nothing else: the older is the baseline ("v6.6: 46.3
	// Gbit/s, v6.7: 37.0 Gbit/s" reports what the newer one changed).
	if a, ok := kernelVersion(runs[0].state); ok {
		if b, ok := kernelVersion(runs[1].state); ok && a != b {
			if versionLess(a, b) {
				return runs[0], runs[1], true
			}
			return runs[1], runs[0], true
		}
	}
	if before, after, ok := r.settingSides(runs, lines); ok {
		return before, after, true
	}
	// In the Subject and the diff only names count (napi_build_skb, per-cpu, xdp2): an
	// English word there ("offload") says what the patch is about, not which state it is.
	first, second := identifiers(runs[0].state, runs[1].state), identifiers(runs[1].state, runs[0].state)
	if (len(telling(ownWords(runs[0].state, runs[1].state))) == 0 || len(telling(ownWords(runs[1].state, runs[0].state))) == 0) && len(first)+len(second) == 0 {
		// States that are not both named by words of their own, and no name of code's
		// tells them apart (the "hw-gro" of one heading against the "gro" of the other does).
		return nil, nil, false
	}
	subject, added, removed := r.change.subject, r.change.added, r.change.removed
	vote := 0 // above 0: the first printed is before
	namedIn := func(words []string, text string) bool {
		for _, w := range words {
			// A name is whole where a hyphen joins words: "hw-gro" does not name "gro".
			if regexp.MustCompile(`(?i)(?:^|[^\w-])` + regexp.QuoteMeta(w) + `(?:$|[^\w-])`).MatchString(text) {
				return true
			}
		}
		return false
	}
	for k, text := range []string{subject, added} {
		sense := 1
		if k == 0 && subjectUndoRe.MatchString(subject) {
			sense = -1 // "drop the per-cpu cache": the state it names is the one before
		}
		switch a, b := namedIn(first, text), namedIn(second, text); {
		case b && !a:
			vote += sense
		case a && !b:
			vote -= sense
		}
	}

	if a, b := namedIn(first, removed), namedIn(second, removed); a && !b {
		vote++
	} else if b && !a {
		vote--
	}
	// A sentence that says what the patch changes from and to ("use RCU instead of the
	// spinlock", "replace the list with an rbtree"), in the Subject or the text: the state
	// named by what it changes to is after. Plain words count here: the sentence's grammar
	// says which side each is on.
	own0, own1 := telling(ownWords(runs[0].state, runs[1].state)), telling(ownWords(runs[1].state, runs[0].state))
	for _, text := range append([]string{subject}, sentences(lines)...) {
		from, to, ok := changeDirection(text)
		if !ok {
			continue
		}
		switch {
		case namedIn(own0, from) && namedIn(own1, to) && !namedIn(own0, to) && !namedIn(own1, from):
			vote++
		case namedIn(own1, from) && namedIn(own0, to) && !namedIn(own1, to) && !namedIn(own0, from):
			vote--
		}
	}
	vote += subjectPhraseVote(runs[0].state, runs[1].state, subject)
	vote += subjectVerbVote(own0, own1, subject)
	vote += cueVote(runs[0].state, runs[1].state, sentences(lines))
	vote += r.statedVote(median(runs[0].values), median(runs[1].values))
	switch {
	case vote > 0:
		return runs[0], runs[1], true
	case vote < 0:
		return runs[1], runs[0], true
	}
	return nil, nil, false
}

// subjectUndoRe is a Subject that takes something away or turns it off: a state it names
// is then the one before, not the one the patch brings.
var subjectUndoRe = regexp.MustCompile(`(?i)\b(?:revert|remov|drop|stop|avoid|disabl|don't|do not|no longer|without|get rid|kill)`)

// subjectPhraseVote is what a phrase of one state's own in the Subject says of two states
// (subjectPhrase): above 0 where name0 is the one before (the Subject names name1, what the
// patch brings, or takes name0 away: subjectUndoRe), below where name1 is.
func subjectPhraseVote(name0, name1, subject string) int {
	sense := 1
	if subjectUndoRe.MatchString(subject) {
		sense = -1
	}
	switch p0, p1 := subjectPhrase(name0, name1, subject), subjectPhrase(name1, name0, subject); {
	case p1 && !p0:
		return sense
	case p0 && !p1:
		return -sense
	}
	return 0
}

// subjectAdoptRe and subjectDropRe are a Subject's verb of what the patch brings in ("use
// rcu for ...", "switch the hash to siphash", "enable GRO by default") or takes away ("drop
// the spinlock", "stop using kmalloc"), with the word right after it (an article passed).
var (
	subjectAdoptRe = regexp.MustCompile(`(?i)\b(?:use|uses|using|prefer|adopt|enable|introduce|switch(?:es)?\s+(?:\S+\s+){0,5}?to|convert(?:s)?\s+(?:\S+\s+){0,5}?to|move(?:s)?\s+(?:\S+\s+){0,5}?to)\s+(?:an?\s+|the\s+)?([\w-]+)`)
	subjectDropRe  = regexp.MustCompile(`(?i)\b(?:drop|remove|avoid|disable|stop\s+using|get\s+rid\s+of)\s+(?:an?\s+|the\s+)?([\w-]+)`)
)

// subjectVerbVote is what a Subject's verb says of two states whose own words are own0 and
// own1: the one whose word the patch brings in is after, the one whose word it takes away is
// before (above 0: the first is before). One word is evidence here, where the verb says
// which side it is on; elsewhere in a Subject it only says what the patch is about.
func subjectVerbVote(own0, own1 []string, subject string) int {
	vote := 0
	for _, v := range []struct {
		re    *regexp.Regexp
		sense int
	}{{subjectAdoptRe, 1}, {subjectDropRe, -1}} {
		for _, m := range v.re.FindAllStringSubmatch(subject, -1) {
			w := strings.ToLower(m[1])
			switch in0, in1 := slices.Contains(own0, w), slices.Contains(own1, w); {
			case in1 && !in0:
				vote += v.sense
			case in0 && !in1:
				vote -= v.sense
			}
		}
	}
	return vote
}

// maxStatePhraseWords is the most words a state's name has for subjectPhrase.
const maxStatePhraseWords = 6

// subjectPhrase: the Subject names the state called name by a phrase of its label, two to four
// of its words in a row, one of them a telling word the other state's label lacks ("queue lock"
// of "single queue lock" against "per-ring locks", in "take a single tx-queue lock
// in the xmit path"); hyphens, underscores and slashes count as spaces. One English word of a state is
// no evidence in a Subject (it says what the patch is about), a phrase of it is.
func subjectPhrase(name, other, subject string) bool {
	if subject == "" {
		return false
	}
	norm := func(s string) []string {
		return wordRe.FindAllString(strings.Map(func(r rune) rune {
			if r == '-' || r == '_' || r == '/' {
				return ' '
			}
			return unicode.ToLower(r)
		}, s), -1)
	}
	words := norm(name)
	if len(words) > maxStatePhraseWords || len(norm(other)) > maxStatePhraseWords {
		return false // a line of text, not a state's name
	}
	subj := " " + strings.Join(norm(subject), " ") + " "
	own := map[string]bool{}
	for _, w := range telling(ownWords(name, other)) {
		own[w] = true
	}
	for n := 2; n <= 4; n++ {
		for k := 0; k+n <= len(words); k++ {
			phrase := words[k : k+n]
			hasOwn := false
			for _, w := range phrase {
				hasOwn = hasOwn || own[w]
			}
			if hasOwn && strings.Contains(subj, " "+strings.Join(phrase, " ")+" ") {
				return true
			}
		}
	}
	return false
}

var (
	// beforeCueRe and afterCueRe end in a word the prose puts before a state's name to say
	// which it is: "keep the list", "the current list walk", "the existing linear scan";
	// "tried the bitmap version", "the new hash table", "switching to the xarray".
	beforeCueRe = regexp.MustCompile(`(?i)\b(?:current(?:ly)?|existing|old|keep(?:ing)?|kept|today'?s|stock|original|unpatched)\s+(?:the\s+|a\s+|an\s+|with\s+)?$`)
	afterCueRe  = regexp.MustCompile(`(?i)\b(?:new|tried|try(?:ing)?|proposed|switch(?:ing|ed)?\s+to|mov(?:e|ing|ed)\s+to|introduc(?:e|es|ed|ing))\s+(?:the\s+|a\s+|an\s+)?$`)
)

// maxCueName is the most words of a state's name cueVote looks for in the prose.
const maxCueName = 3

// cueVote is what the prose says of two states by the words it puts just before their names
// (beforeCueRe, afterCueRe): above 0 where name0 is the one before, below where name1 is;
// 0 where the prose says nothing of them, or says both of one.
func cueVote(name0, name1 string, texts []string) int {
	clean := func(name string) string {
		// "bitmap (Mpps)": the name without what a header adds after it in parentheses.
		n := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), ":"))
		if k := strings.LastIndex(n, " ("); k > 0 && strings.HasSuffix(n, ")") {
			n = strings.TrimSpace(n[:k])
		}
		// A byte that is no UTF-8 (a message in another charset, read raw) becomes U+FFFD,
		// which the regexp matches such a byte with: its pattern must be valid UTF-8.
		n = strings.ToValidUTF8(n, "\uFFFD")
		if len(n) < 2 || len(strings.Fields(n)) > maxCueName || !strings.ContainsFunc(n, unicode.IsLetter) || strings.HasPrefix(n, "(") {
			return ""
		}
		return n
	}
	n0, n1 := clean(name0), clean(name1)
	if n0 == "" || n1 == "" {
		return 0 // one is no name: a header cut in the wrong place
	}
	count := func(n string) (before, after int) {
		re := regexp.MustCompile(`(?i)(?:^|[^\w-])` + regexp.QuoteMeta(n) + `(?:$|[^\w-])`)
		for _, t := range texts {
			for _, m := range re.FindAllStringIndex(t, -1) {
				prefix := t[max(0, m[0]-40):m[0]] + " " // the words just before the name
				if beforeCueRe.MatchString(prefix) {
					before++
				}
				if afterCueRe.MatchString(prefix) {
					after++
				}
			}
		}
		return before, after
	}
	b0, a0 := count(n0)
	b1, a1 := count(n1)
	switch {
	case (b0 > 0 || a1 > 0) && a0 == 0 && b1 == 0:
		return 1
	case (b1 > 0 || a0 > 0) && a1 == 0 && b0 == 0:
		return -1
	}
	return 0
}

// statedVote is what the message's stated changes say of two states' order, their medians
// m0 and m1: above 0 where a change stated agrees with m0 as the baseline only, below where
// it agrees with m1 as the baseline only.
func (r *Report) statedVote(m0, m1 float64) int {
	vote := 0
	for _, st := range r.stated {
		if st.family != "" || m0 == 0 || m1 == 0 {
			continue
		}
		agrees := func(change float64) bool {
			return math.Abs(change-st.change) <= math.Max(0.01, 0.1*math.Abs(st.change))
		}
		switch forward, backward := agrees(m1/m0-1), agrees(m0/m1-1); {
		case forward && !backward:
			vote++
		case backward && !forward:
			vote--
		}
	}
	return vote
}

// kernelVersionRe is a state named by a kernel release alone: "v6.7", "6.8-rc3", "Linux
// 6.6.12", "kernel 6.9".
var kernelVersionRe = regexp.MustCompile(`(?i)^(?:linux\s+|kernel\s+)?v?(\d{1,2})\.(\d{1,2})(?:\.(\d{1,3}))?(?:-rc(\d{1,2}))?$`)

// kernelVersion reads a state's name as a release: major, minor, patch, and rc (0 for a
// release, which comes after its rcs).
func kernelVersion(name string) ([4]int, bool) {
	m := kernelVersionRe.FindStringSubmatch(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), ":")))
	if m == nil {
		return [4]int{}, false
	}
	var v [4]int
	for k := range v {
		v[k], _ = strconv.Atoi(m[k+1])
	}
	if m[4] == "" {
		v[3] = 1000 // a release after every one of its rcs
	}
	return v, true
}

func versionLess(a, b [4]int) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

// changeDirectionRes are sentences that name what a change replaces and what it puts in its
// place: "use Y instead of X", "replace X with Y", "convert X to Y", "switch from X to Y",
// "X -> Y" in a Subject. Each gives the from part, then the to part, as submatch names.
var changeDirectionRes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(?:use|using|uses|prefer|with)\s+(?P<to>[^.;,]{1,60}?)\s+(?:instead of|rather than|in place of)\s+(?P<from>[^.;,]{1,60})`),
	regexp.MustCompile(`(?i)\breplac(?:e|es|ed|ing)\s+(?P<from>[^.;,]{1,60}?)\s+(?:with|by)\s+(?P<to>[^.;,]{1,60})`),
	regexp.MustCompile(`(?i)\b(?:convert(?:s|ed|ing)?|switch(?:es|ed|ing)?|migrat(?:e|es|ed|ing)|mov(?:e|es|ed|ing))\s+(?:from\s+)?(?P<from>[^.;,]{1,60}?)\s+to\s+(?P<to>[^.;,]{1,60})`),
}

// changeDirection reads a sentence that names what a change replaces (from) and with what
// (to).
func changeDirection(text string) (from, to string, ok bool) {
	for _, re := range changeDirectionRes {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		return m[re.SubexpIndex("from")], m[re.SubexpIndex("to")], true
	}
	return "", "", false
}

// commonWords are words any text has: a state's own word that is one of them says nothing of
// the Subject or the diff.
var commonWords = map[string]bool{"the": true, "with": true, "without": true, "and": true, "for": true, "from": true, "into": true, "this": true, "that": true,
	"time": true, "first": true, "second": true, "third": true, "any": true, "all": true, "one": true, "two": true, "run": true, "test": true, "mode": true,
	"enable": true, "enabled": true, "disable": true, "disabled": true, "using": true, "used": true, "use": true, "when": true, "then": true, "only": true}

// telling are the words that can tell a state in a Subject or a diff: three letters or more,
// or an identifier (an underscore or a digit in it), and none of commonWords.
func telling(words []string) []string {
	var out []string
	for _, w := range words {
		if !commonWords[w] && (len(w) >= 3 || strings.ContainsAny(w, "_0123456789")) {
			out = append(out, w)
		}
	}
	return out
}

// tokenRe is a name as code and commands write it: words joined by - or _.
var tokenRe = regexp.MustCompile(`[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*`)

// identifiers are the names in a state's label its other lacks that look like code's (an
// underscore, a hyphen or a digit in them), lower case.
func identifiers(name, other string) []string {
	o := map[string]bool{}
	for _, w := range tokenRe.FindAllString(strings.ToLower(other), -1) {
		o[w] = true
	}
	var out []string
	for _, w := range tokenRe.FindAllString(strings.ToLower(name), -1) {
		if !o[w] && len(w) >= 3 && strings.ContainsAny(w, "_-0123456789") {
			out = append(out, w)
		}
	}
	return out
}

// patchText is what a patch says of its change besides its prose.
type patchText struct{ subject, added, removed string }

// changeOf is a patch's Subject and the lines its diff adds and removes.
func changeOf(p patches.Patch) patchText {
	var add, del strings.Builder
	for _, f := range p.Files {
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				switch l.Op {
				case '+':
					add.WriteString(l.Text + "\n")
				case '-':
					del.WriteString(l.Text + "\n")
				}
			}
		}
	}
	return patchText{subject: p.Subject, added: add.String(), removed: del.String()}
}

// namedBySubject is the index of the one of names the Subject names by a word of its own
// (one of its telling words no other name has), -1 where none or several are: of a baseline's
// alternatives, the one the patch is about.
func namedBySubject(names []string, subject string) int {
	found := -1
	for k, n := range names {
		others := strings.Join(slices.Delete(slices.Clone(names), k, k+1), " ")
		for _, w := range telling(ownWords(n, others)) {
			if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`).MatchString(subject) {
				if found >= 0 && found != k {
					return -1
				}
				found = k
				break
			}
		}
	}
	return found
}

// patchStatementRe is a sentence that says what the message's own change does: "this patch
// makes ...", "with the series applied ...", "our change moves ...".
var patchStatementRe = regexp.MustCompile(`(?i)\b(?:this|the|my|our)\s+` + patchNounWords + `\b`)

// namedByChange is the index of the one of names the message's statement of its change
// names: its Subject first (namedBySubject); where that names none, the sentences of the text
// that say what the patch does ("this patch makes the return lockless"), each sentence naming
// one name by a word of its own and no sentence naming another. -1 where that leaves none or
// several: a list of the states in one sentence, or a sentence naming the patch against
// an alternative ("unlike the batched return, this patch ..."), decides nothing.
func namedByChange(names []string, subject string, lines []line) int {
	if k := namedBySubject(names, subject); k >= 0 {
		return k
	}
	found := -1
	for _, s := range sentences(lines) {
		if len(s) > 600 || !patchStatementRe.MatchString(s) {
			continue // a paragraph of rows joined into one, or no statement of the patch
		}
		if k := namedBySubject(names, s); k >= 0 {
			if found >= 0 && found != k {
				return -1
			}
			found = k
		}
	}
	return found
}

// subjectSides: one baseline and two or more states no word places; the after is the one the
// message's statement of its change names (namedByChange), not the last printed.
func (r *Report) subjectSides(runs []*sideRun, lines []line) (before, after *sideRun, ok bool) {
	var others []*sideRun
	var names []string
	for _, s := range runs {
		switch {
		case s.side == "before" && before == nil:
			before = s
		case s.side == "?" || s.side == "":
			others, names = append(others, s), append(names, s.state)
		default:
			return nil, nil, false
		}
	}
	if before == nil || len(others) < 2 {
		return nil, nil, false
	}
	if k := namedByChange(names, r.change.subject, lines); k >= 0 {
		return before, others[k], true
	}
	return nil, nil, false
}

// implicitBaselines: a figure under no state's heading whose label names what is measured
// ("throughput: 10.1 Gbps"), and the same label's figure under one state's heading later or
// earlier ("with patch:" / "throughput: 11.2 Gbps"), are the two sides of one measurement:
// the one no heading names is the other side. Only where that label's figure stands once
// without a state and once with one.
func implicitBaselines(rs []reading) []reading {
	other := map[string]string{"before": "after", "after": "before"}
	out := slices.Clone(rs)
	for k := range out {
		x := &out[k]
		parts := strings.SplitN(x.key, "|", 5)
		if x.side != "?" || len(parts) != 5 || parts[1] != "v" || parts[2] != "" || x.state == "" {
			continue
		}
		parts[2] = labelKey(x.state)
		named := strings.Join(parts, "|")
		var sided []int
		for j, y := range out {
			if j != k && y.key == named {
				sided = append(sided, j)
			}
		}
		if len(sided) != 1 || other[out[sided[0]].side] == "" || slices.ContainsFunc(out, func(y reading) bool {
			return y.side == "?" && y.key == x.key && y.state != x.state
		}) {
			continue // no one state's figure of that name, or a list of variants
		}
		x.key, x.side, x.state = named, other[out[sided[0]].side], ""
	}
	return out
}
