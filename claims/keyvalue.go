package claims

import (
	"regexp"
	"slices"
	"strings"
)

// Lines of key=value pairs as a test harness prints them, each state's figure under a key of
// its own that names the state ("test=fwd64 masks=16 base_mpps=4.02 patched_mpps=6.77",
// "percpu_kb_base=512 percpu_kb_patched=1024"): two keys that differ in one word, that word a
// state's, are the measurement of the rest of the key in the two states; the other pairs of
// the line ("test=fwd64", "masks=16") say the test.

// keyValueLineRe is a line of key=value pairs and nothing else.
var keyValueLineRe = regexp.MustCompile(`^\s*(?:[A-Za-z][\w-]*=[^\s=]+\s+){1,11}[A-Za-z][\w-]*=[^\s=]+\s*$`)

// keyValueStateClaims reads each such line no claim took.
func (r *Report) keyValueStateClaims(lines []line) {
	used := r.claimedLines()
	for _, l := range lines {
		if used[l.n] || !keyValueLineRe.MatchString(l.text) {
			continue
		}
		r.keyValuePairs(l)
	}
}

// keyValuePairs pairs the keys of one line that name the two states of one measurement.
func (r *Report) keyValuePairs(l line) {
	type kv struct {
		words []string
		value string
	}
	var all []kv
	for _, f := range strings.Fields(l.text) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		all = append(all, kv{strings.FieldsFunc(strings.ToLower(k), func(r rune) bool { return r == '_' || r == '-' }), v})
	}
	paired := map[int]bool{}
	type found struct {
		stem          []string
		before, after string
	}
	var pairs []found
	for a := range all {
		for b := a + 1; b < len(all); b++ {
			at, ok := stateWordApart(all[a].words, all[b].words)
			if !ok || paired[a] || paired[b] {
				continue
			}
			sa, _, _ := stateOf(all[a].words[at])
			sb, _, _ := stateOf(all[b].words[at])
			if sa == "" || sb == "" || sa == sb {
				continue
			}
			p := found{stem: slices.Delete(slices.Clone(all[a].words), at, at+1), before: all[a].value, after: all[b].value}
			if sa == "after" {
				p.before, p.after = p.after, p.before
			}
			pairs, paired[a], paired[b] = append(pairs, p), true, true
		}
	}
	conds := map[string]string{}
	for k, x := range all {
		if !paired[k] {
			conds[strings.Join(x.words, "_")] = x.value // the test: "test=fwd64", "masks=16"
		}
	}
	for _, p := range pairs {
		name := strings.Join(p.stem, " ")
		vb, ub, okB := keyFigure(p.before, p.stem)
		va, ua, okA := keyFigure(p.after, p.stem)
		if !okB || !okA || ub.norm != ua.norm {
			continue
		}
		metric := metricName(name)
		if ub.norm != "" {
			metric = metricOf(ub)
		}
		rb := reading{metric: metric, unit: ub.norm, value: round(vb), line: l.n, state: "before", conds: copyConds(conds)}
		rb.conds["measure"] = name
		ra := rb
		ra.value, ra.state = round(va), "after"
		r.addPair([2]reading{rb, ra})
	}
}

// stateWordApart: two keys of as many words differ in exactly one, which is not their only
// word ("base_mpps" and "patched_mpps" at 0); its index.
func stateWordApart(a, b []string) (int, bool) {
	if len(a) != len(b) || len(a) < 2 {
		return 0, false
	}
	at := -1
	for k := range a {
		if a[k] != b[k] {
			if at >= 0 {
				return 0, false
			}
			at = k
		}
	}
	return at, at >= 0
}

// keyFigure is a key's value in the unit the key's last word names ("mpps", "gbps", "us";
// none for "cycles_per_pkt" or "kb", which count).
func keyFigure(value string, stem []string) (float64, unit, bool) {
	v, ok := parseNumber(strings.ReplaceAll(strings.TrimPrefix(value, "~"), ",", ""))
	if !ok {
		return 0, unit{}, false
	}
	if u, ok := lookupUnit(stem[len(stem)-1]); ok && u.norm != "" && !sizeUnits[strings.ToLower(stem[len(stem)-1])] {
		return v * u.factor, u, true
	}
	return v, unit{}, true
}
