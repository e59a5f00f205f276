package claims

import (
	"regexp"
	"slices"
	"strings"
)

// Figures given for several things at once and matched by their order ("TCP_RR and TCP_CRR
// improve from 31.2k and 12.1k to 34.0k and 13.3k trans/s respectively", "for 1, 4 and 8 flows
// ... from 9.1, 30.2 and 36.4 to 9.8, 33.0 and 39.0 Gbit/s, respectively"): the k-th figure
// after "from" and the k-th after "to" are one thing's two states, the k-th name of the list
// before them (where it has as many) that thing.

// listFigure is a figure of such a list: a number with a glued scale and a unit or none.
const listFigure = `~?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?-i:[kKMG])?(?:\s?(?:[A-Za-z][A-Za-z/]*|%))?`

// figureList is two to four listFigures apart by commas or "and".
const figureList = `(` + listFigure + `(?:\s*,\s*` + listFigure + `){0,2}\s*,?\s+and\s+` + listFigure + `)`

// respectivelyRe is "from LIST to LIST ... respectively".
var respectivelyRe = regexp.MustCompile(`(?i)\bfrom\s+` + figureList + `\s+to\s+` + figureList + `([^.;]{0,40}?)\brespectively\b`)

// listSepRe parts a list's items: commas and "and".
var listSepRe = regexp.MustCompile(`\s*,\s*(?:and\s+)?|\s+and\s+`)

// namesListAtRe is a list of two to four names at the start of the text, to its clause's
// end: "TCP_RR and TCP_CRR falls", "64 KB, 256 KB and 1 MB socket buffers" (an item may carry
// a unit of size).
var namesListAtRe = regexp.MustCompile(`(?i)^(` + listItem + `(?:\s*,\s*` + listItem + `){0,2}\s*,?\s+and\s+` + listItem + `)\b[^,;]*$`)

// listItem is a name in a list: one word, or a number and its unit of size.
const listItem = `[\w/.+-]+(?:\s[KMG]?i?B)?`

// inRespectively: offset lies inside lists of figures matched by their order, whose "and 71
// us to 31 us" is no pair of its own.
func inRespectively(text string, offset int) bool {
	for _, m := range respectivelyRe.FindAllStringIndex(text, -1) {
		if offset >= m[0] && offset < m[1] {
			return true
		}
	}
	return false
}

// respectively reads a respectivelyRe match: each list's items pair by their order, both lists
// as long, every figure of one unit (a bare figure takes the unit written in its list or the
// other's).
func (r *Report) respectively(text string, m []int, lineOf func(int) int) bool {
	befores := listSepRe.Split(strings.TrimSpace(text[m[2]:m[3]]), -1)
	afters := listSepRe.Split(strings.TrimSpace(text[m[4]:m[5]]), -1)
	if len(befores) != len(afters) || len(befores) < 2 || ofSetting(text, m[0]) {
		return false
	}
	tail := strings.TrimSpace(text[m[6]:m[7]])
	unitWord := ""
	for _, f := range append(append(slices.Clone(befores), afters...), tail) {
		if _, u, ok := splitFigure(f); ok && u != "" {
			unitWord = u
		}
	}
	names := itemNames(text[:m[0]], len(befores))
	var pairs [][2]reading
	for k := range befores {
		vb, ub, okb := listValue(befores[k], unitWord)
		va, ua, oka := listValue(afters[k], unitWord)
		if !okb || !oka || ub.norm != ua.norm || ub.kind == "percent" {
			return false
		}
		rb := reading{metric: metricOf(ub), unit: ub.norm, value: round(vb), line: lineOf(m[2]), conds: map[string]string{"item": names[k]}}
		ra := rb
		ra.value, ra.line = round(va), lineOf(m[4])
		pairs = append(pairs, [2]reading{rb, ra})
	}
	for _, p := range pairs {
		r.addPair(p)
	}
	return true
}

// splitFigure parts a list item into its number (with a glued scale) and its unit word.
func splitFigure(item string) (number, unitWord string, ok bool) {
	item = strings.TrimPrefix(strings.TrimSpace(item), "~")
	i := strings.IndexFunc(item, func(r rune) bool { return r != ',' && r != '.' && (r < '0' || r > '9') })
	if i <= 0 {
		return item, "", i < 0 && item != ""
	}
	number, rest := item[:i], item[i:]
	if len(rest) > 0 && strings.ContainsRune("kKMG", rune(rest[0])) && (len(rest) == 1 || rest[1] == ' ') {
		number, rest = number+rest[:1], rest[1:]
	}
	return number, strings.TrimSpace(rest), true
}

// listValue is a list item's value in its unit's norm: its own unit word or unitWord.
func listValue(item, unitWord string) (float64, unit, bool) {
	number, word, ok := splitFigure(item)
	if !ok {
		return 0, unit{}, false
	}
	if word == "" {
		word = unitWord
	}
	u, ok := lookupUnit(word)
	if !ok {
		return 0, unit{}, false
	}
	v, ok := scaledNumber(number)
	return v * u.factor, u, ok
}

// itemNames are the names of a list of n things in the clause before the figures, or their
// ordinals where it has no such list.
func itemNames(lead string, n int) []string {
	clause := lead[max(strings.LastIndex(lead, ". "), strings.LastIndex(lead, ";"), strings.LastIndex(strings.ToLower(lead), "respectively"))+1:]
	words := strings.Fields(clause)
	var best []string
	for k := len(words) - 1; k >= 0; k-- {
		// the list nearest the figures, from its first word ("64 KB, ...", not "KB, ...")
		m := namesListAtRe.FindStringSubmatch(strings.Join(words[k:], " "))
		if m == nil && best != nil {
			break
		}
		if m != nil {
			if names := listSepRe.Split(strings.TrimSpace(m[1]), -1); len(names) == n {
				best = names
			}
		}
	}
	if best != nil {
		return best
	}
	names := make([]string, n)
	for k := range names {
		names[k] = "#" + string(rune('1'+k))
	}
	return names
}
