package claims

import (
	"regexp"
	"slices"
	"strings"
)

// figure is one number of a line with the unit it was written in.
type figure struct {
	value float64 // normalised
	unit  unit    // unit{} for a bare number
	bare  bool
	raw   string
}

var (
	// minutesSecondsRe is a duration as the shell's time prints it: "1m55.993s", "0m0.42s".
	minutesSecondsRe = regexp.MustCompile(`^(\d{1,4})m(\d{1,2}(?:\.\d+)?)s$`)
	// gluedRe is a number with its unit glued on: 5.90Mpps, ~41Gbps, 29.3s, 0.17±0.02.
	gluedRe = regexp.MustCompile(`^~?([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(±[\d.]+)?([A-Za-zµ%/^][A-Za-z0-9µ%/^,_-]*)?$`)
	// sizeUnits are amounts, not rates: what a run moved, a buffer, a clock. They describe a
	// run; they are not its result.
	sizeUnits = map[string]bool{"bytes": true, "byte": true, "kbytes": true, "mbytes": true, "gbytes": true, "kb": true, "mb": true, "gb": true,
		"kib": true, "mib": true, "gib": true, "b": true, "k": true, "mhz": true, "ghz": true, "khz": true, "hz": true, "kbyte": true, "mbyte": true}
	// relativeWords after a percentage make it a change or a ratio, not a measured share.
	relativeWords = map[string]bool{"pps": true, "calls": true, "throughput": true, "bandwidth": true, "of": true, "compared": true, "better": true,
		"worse": true, "faster": true, "slower": true, "improvement": true, "more": true, "less": true, "higher": true, "lower": true, "increase": true,
		"decrease": true, "drop": true, "gain": true, "reduction": true, "regression": true}
	// levelWords after a percentage make it the level of a statistic, not a reading: "95% CI",
	// "99.0% ci=[...]" (sockperf), "99% percentile", "90% confidence".
	levelWords = map[string]bool{"ci": true, "confidence": true, "percentile": true, "quantile": true, "interval": true}
	digitsRe   = regexp.MustCompile(`\d+`)
	// perSecondWords are the words "N events per ..." ends a rate with.
	perSecondWords = map[string]bool{"second": true, "sec": true, "s": true}
	// scaleSuffix is a k or M written on a bare number: 370k.
	scaleSuffix = map[string]float64{"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
)

// shape is a line with its numbers taken out and its units reduced to their kind: what a
// line measures, the same in the before and after of a message ("summary # pps # pps").
type shaped struct {
	figures []figure
	shape   string
}

// unitAfter is the unit written in the tokens after a number at toks[i], and how many
// tokens it takes: "141843.97 requests per second" (as "requests/s", three), "8.68 Gbps"
// (one), a size ("64 bytes", one), or none.
func unitAfter(toks []string, i int) (string, int) {
	if i+3 < len(toks) && strings.EqualFold(toks[i+2], "per") && perSecondWords[strings.ToLower(strings.TrimRight(toks[i+3], ".,;:)"))] {
		// the events' name over a second, as "requests/s"
		u := strings.ToLower(toks[i+1]) + "/s"
		if _, ok := lookupUnit(u); ok {
			return u, 3
		}
	}
	if i+1 < len(toks) {
		next := strings.TrimRight(strings.TrimLeft(toks[i+1], "(["), ")],;.")
		if _, ok := lookupUnit(next); ok || sizeUnits[strings.ToLower(next)] {
			return next, 1
		}
		// A unit with the counter it was read from: "71 cycles(tsc)", "12 ns(clock)".
		if base, _, ok := strings.Cut(toks[i+1], "("); ok && base != "" {
			if _, known := lookupUnit(base); known {
				return base, 1
			}
		}
		// A scale apart from what it scales: "24.5 M ops/s", "3.1 K pkt/s" (the bpf
		// selftests' bench prints rates so).
		if _, scale := scaleSuffix[toks[i+1]]; scale && i+2 < len(toks) {
			joined := toks[i+1] + strings.TrimRight(toks[i+2], "),;.")
			if u, ok := lookupUnit(joined); ok && u.kind != "time" && u.kind != "percent" {
				return joined, 2
			}
		}
	}
	return "", 0
}

// assignmentRe is a figure a tool prints after its name and an equals sign: fio's
// "IOPS=1204k,", "BW=4703MiB/s"; ss's "rtt:0.05/0.02" is not one (a colon joins two figures).
var assignmentRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*=)(\d[\d.,]*)([A-Za-z%/][\w/%]*)?([,;]?)$`)

// assignedUnit is the unit a "NAME=" token before toks[k] names ("IOPS="), where it names one.
func assignedUnit(toks []string, k int) (unit, bool) {
	if k == 0 || !strings.HasSuffix(toks[k-1], "=") {
		return unit{}, false
	}
	return lookupUnit(strings.TrimSuffix(toks[k-1], "="))
}

// assignedFigure is the figure n (with unitText after it) where a "NAME=" before it names
// its unit ("IOPS=1204k": a scale glued to the figure is its multiple).
func assignedFigure(toks []string, numberAt int, n float64, unitText, raw string) (figure, bool) {
	u, ok := assignedUnit(toks, numberAt)
	if !ok {
		return figure{}, false
	}
	f, scaled := scaleSuffix[unitText]
	if unitText != "" && !scaled {
		return figure{}, false
	}
	if !scaled {
		f = 1
	}
	return figure{value: n * f * u.factor, unit: u, raw: raw}, true
}

// splitAssignments cuts each "NAME=figure" token in two, the name (with its "=") and the
// figure, so that the figure is read as any other: where its unit is glued to it
// ("BW=4703MiB/s") or the name is one ("IOPS=1204k"). A bare figure after a name
// ("SentMessages=89107", "RunTime=1.000 sec") is a tool's record of its run, left whole.
func splitAssignments(toks []string) []string {
	var out []string
	for _, t := range toks {
		m := assignmentRe.FindStringSubmatch(t)
		if m == nil {
			out = append(out, t)
			continue
		}
		_, nameUnit := lookupUnit(strings.TrimSuffix(m[1], "="))
		_, scaled := scaleSuffix[m[3]]
		_, glued := lookupUnit(m[3])
		if nameUnit && (m[3] == "" || scaled) || m[3] != "" && glued {
			out = append(out, m[1], m[2]+m[3]+m[4])
			continue
		}
		out = append(out, t)
	}
	return out
}

// readFigures splits a line into its figures and its shape. A number followed by a unit
// (or with one glued on) is a figure; a number followed by a size (bytes, MHz) is part of
// the shape; other numbers are bare figures.
func readFigures(s string) shaped {
	toks := splitAssignments(strings.Fields(s))
	var out shaped
	var shape []string
	for i := 0; i < len(toks); i++ {
		t := strings.Trim(toks[i], "([{,;")
		t = strings.TrimRight(t, ")]},;.")
		if t == "~" || strings.EqualFold(t, "up") && i+1 < len(toks) && strings.EqualFold(toks[i+1], "to") {
			if t != "~" {
				i++
			}
			continue
		}
		if mm := minutesSecondsRe.FindStringSubmatch(t); mm != nil {
			// the shell's time: "1m55.993s" is 115.993 s
			mins, _ := parseNumber(mm[1])
			secs, _ := parseNumber(mm[2])
			u, _ := lookupUnit("s")
			out.figures = append(out.figures, figure{value: (mins*60 + secs) * u.factor, unit: u, raw: toks[i]})
			shape = append(shape, "#"+u.norm)
			continue
		}
		m := gluedRe.FindStringSubmatch(t)
		if m == nil {
			shape = append(shape, digitsRe.ReplaceAllString(strings.ToLower(toks[i]), "#"))
			continue
		}
		n, ok := parseNumber(m[1])
		if !ok {
			shape = append(shape, "#")
			continue
		}
		numberAt := i // i moves on to the unit's token below
		unitText := m[3]
		if unitText == "" {
			var used int
			unitText, used = unitAfter(toks, i)
			i += used
		}
		if fig, ok := assignedFigure(toks, numberAt, n, unitText, toks[i]); ok {
			out.figures = append(out.figures, fig)
			shape = append(shape, "#"+fig.unit.norm)
			continue
		}
		switch {
		case unitText == "":
			out.figures = append(out.figures, figure{value: n, bare: true, raw: toks[i]})
			shape = append(shape, "#")
		case sizeUnits[strings.ToLower(unitText)]:
			shape = append(shape, "#size")
		default:
			if f, ok := scaleSuffix[unitText]; ok {
				out.figures = append(out.figures, figure{value: n * f, bare: true, raw: toks[i]})
				shape = append(shape, "#")
				continue
			}
			u, ok := lookupUnit(unitText)
			if ok && u.kind == "percent" && i+1 < len(toks) {
				next := strings.ToLower(strings.Trim(toks[i+1], ".,;:()"))
				next, _, _ = strings.Cut(next, "=")
				if relativeWords[next] || levelWords[next] {
					ok = false // "88% pps", "40% of line rate": a change; "99% ci": a level; not a reading
				}
			}
			if !ok {
				shape = append(shape, "#"+strings.ToLower(unitText))
				continue
			}
			if offeredLoad(toks, numberAt) {
				shape = append(shape, "#load") // "packets are sent ... at ~40 Mpps": the load given
				continue
			}
			out.figures = append(out.figures, figure{value: n * u.factor, unit: u, raw: toks[i]})
			shape = append(shape, "#"+u.norm)
		}
	}
	out.shape = strings.Join(shape, " ")
	return out
}

// rateWordRe is a word of a label that names a rate per unit of time: "Packets/second:",
// "requests per sec", "msgs/s".
var rateWordRe = regexp.MustCompile(`(?i)^(?:[\w-]*/(?:s|sec|second)|per|second|sec|rate):?$`)

// kiloCountRe is a count written with a thousands suffix and nothing else: "~412k".
var kiloCountRe = regexp.MustCompile(`^~?(\d+(?:\.\d+)?)[kK]$`)

// rateCount is the figure of a label that names a rate and a value with a thousands suffix
// ("Packets/second: ~412k"): a thousand of the rate's events, where alone a "k" is
// kilobytes of a size ("64k").
func rateCount(label, value string) (figure, bool) {
	v := strings.TrimSpace(value)
	if loc := trailingNoteRe.FindStringIndex(v); loc != nil && statNoteRe.MatchString(v[loc[0]:]) {
		v = strings.TrimSpace(v[:loc[0]]) // "~537k (~1.3x more)": the note of a change
	}
	m := kiloCountRe.FindStringSubmatch(v)
	if m == nil || !slices.ContainsFunc(strings.Fields(label), rateWordRe.MatchString) {
		return figure{}, false
	}
	n, ok := parseNumber(m[1])
	return figure{value: n * 1e3, bare: true, raw: m[0]}, ok
}

// offerVerbs send traffic at a rate the tester chose: a figure "at" a rate after one of them
// is the load offered ("64B UDP packets are sent to the NIC at ~40 Mpps", "generated at line
// rate"), a setting of the test, not its result.
var offerVerbs = map[string]bool{"sent": true, "send": true, "sending": true, "sends": true, "generated": true, "generating": true, "offered": true,
	"offering": true, "injected": true, "injecting": true, "blasted": true, "blasting": true, "pumped": true, "pumping": true, "fed": true}

// approxWords stand between "at" and a rate the tester gave roughly.
var approxWords = map[string]bool{"about": true, "around": true, "roughly": true, "approximately": true, "approx.": true, "nearly": true, "almost": true}

// offeredLoad: the figure at toks[i] (its unit in the tokens after it) comes right after
// "at", with a verb of sending at most eight words before.
func offeredLoad(toks []string, i int) bool {
	k := i - 1
	for k >= 0 && (toks[k] == "~" || approxWords[strings.ToLower(toks[k])]) {
		k-- // "at ~ 40", "at about 40"
	}
	if k < 0 || strings.ToLower(toks[k]) != "at" {
		return false
	}
	for j := k - 1; j >= 0 && j >= k-8; j-- {
		if offerVerbs[strings.ToLower(strings.Trim(toks[j], ",.;:()"))] {
			return true
		}
	}
	return false
}

// measured are the figures of a line that carry a unit of a measurement (a rate, a time, a
// share), or, where none does, nil.
func (s shaped) measured() []figure {
	var out []figure
	for _, f := range s.figures {
		if !f.bare {
			out = append(out, f)
		}
	}
	return out
}
