package claims

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// pair makes claims of the measurements: a before and an after of one tool, metric and
// conditions, in either order. Where the text names no states, the first is before and the
// next after (a toggle between them, or the order of "standard, then enabled"). A side left without its
// other is unparsed. Stated changes attach to the claims of their family, or to the only
// claim of a metric.
func (r *Report) pair(ms []measurement, lines []line) {
	r.sawFigures = r.sawFigures || len(ms) > 0 // a tool's results are figures, paired or not
	ms, between := headingFactors(ms)
	for _, lines := range between {
		r.addUnparsed(Unparsed{Lines: lines, Reason: betweenReason})
	}
	series, order := seriesOf(ms)
	for _, k := range order {
		list := series[k]
		if befores, afters, ok := statedInTurn(list); ok {
			// The same measurements under each state's heading, in the same order: the k-th
			// before with the k-th after, never two of one state.
			for n := range befores {
				r.addClaims(newClaim(befores[n], afters[n]))
			}
			continue
		}
		if len(list) == 2 && r.undecidedHeadings(list, lines) {
			continue
		}
		for len(list) >= 2 {
			// The first is before unless the words say otherwise: an after printed first
			// (a heading with the series above one without it) pairs with the before that follows.
			before, after := list[0], list[1]
			if before.state != "" && before.state == after.state {
				// Two of one state. With one of the other state further on, the first is the
				// baseline of that one and the rest of its state are further measurements of
				// the baseline ("Without X:", "Without X (Y enabled):", "With X:"). Without
				// one, they are alternatives under one state, not its before and after
				// (flent's runs titled by the setting each compares).
				k := 2
				for k < len(list) && list[k].state == before.state {
					k++
				}
				if k == len(list) {
					r.addUnparsed(Unparsed{Lines: linesOf(list), Reason: fmt.Sprintf("%d %s measurements of one state (%s) and none of the other: alternatives, not a before and an after",
						len(list), before.metric, before.state)})
					break
				}
				r.addUnparsed(Unparsed{Lines: linesOf(list[1:k]), Reason: fmt.Sprintf("a further %s measurement of the state %s, after its first: another baseline, not paired",
					before.metric, before.state)})
				list = append([]*measurement{list[0]}, list[k:]...)
				continue
			}
			if before.state == "after" && after.state != "after" || after.state == "before" && before.state != "before" {
				before, after = after, before
			}
			r.addClaims(newClaim(before, after))
			list = list[2:]
		}
		if len(list) == 1 && list[0].state == "after" {
			r.addUnparsed(Unparsed{Lines: list[0].lines, Reason: "an after without its before"})
		} else if len(list) == 1 {
			r.addUnparsed(Unparsed{Lines: list[0].lines, Reason: "a " + list[0].metric + " measurement without a second to compare it with"})
		}
	}
}

// undecidedHeadings: two measurements no word placed, each under headings of its own that
// name no state in a few words ("host A (mlx5):", "host B (ice):"): the headings name what
// differs, and print order is no evidence of a baseline. The rest of the message decides, as for two states no
// word places (evidenceSides: the Subject, the diff, the prose's words before a name, a stated
// change), and the pair is made so; else it is left unpaired with the reason, and true is
// returned (list handled).
func (r *Report) undecidedHeadings(list []*measurement, lines []line) bool {
	a, b := list[0], list[1]
	if a.state != "" || b.state != "" || a.heading == "" || b.heading == "" || a.heading == b.heading || a.toggled != 0 || b.toggled != 0 {
		return false
	}
	na, nb := differingHeading(a.heading, b.heading)
	for _, n := range []string{na, nb} {
		if side, _, _ := stateOf(n); side != "" || len(strings.Fields(n)) > maxSetupNameWords {
			// A state word the heading reader did not take, or a sentence over the output
			// ("... much lower than normal"): the order decides as before.
			return false
		}
	}
	runs := []*sideRun{{side: "?", state: na, values: a.values}, {side: "?", state: nb, values: b.values}}
	before, _, ok := r.evidenceSides(runs, lines)
	if !ok {
		r.addUnparsed(Unparsed{Lines: append(append([]int{}, a.lines...), b.lines...), Reason: fmt.Sprintf(
			"two %s measurements under headings that name no state, %q and %q, and nothing that says which is the baseline: not paired", a.metric, na, nb)})
		return true
	}
	if before == runs[1] {
		a, b = b, a
	}
	r.addClaims(newClaim(a, b))
	return true
}

// maxSetupNameWords is the most words a heading's name of a setup has ("host B, ice").
const maxSetupNameWords = 5

// differingHeading are the parts of two headings that differ (measurementParts), each joined.
func differingHeading(h1, h2 string) (string, string) {
	p1, p2 := measurementParts(h1), measurementParts(h2)
	if len(p1) != len(p2) {
		return h1, h2
	}
	var d1, d2 []string
	for k := range p1 {
		if p1[k] != p2[k] {
			d1, d2 = append(d1, p1[k]), append(d2, p2[k])
		}
	}
	return strings.Join(d1, ", "), strings.Join(d2, ", ")
}

// measurementKey is what a measurement is of: two of one key are its sides or its runs.
type measurementKey struct{ tool, test, metric, quantity, conds, command string }

// seriesOf groups the measurements by what they are of, in the order of their first, the
// runs of one state under one heading joined into one series.
func seriesOf(ms []measurement) (map[measurementKey][]*measurement, []measurementKey) {
	// The tool's test is what is measured: a TCP_STREAM is never the other side of a
	// UDP_STREAM, however the two follow each other.
	byCommand := commandsTell(ms)
	series := map[measurementKey][]*measurement{}
	var order []measurementKey
	for i := range ms {
		m := &ms[i]
		k := measurementKey{m.tool, strings.ToUpper(m.options["test"]), m.metric, m.quantity, conditionKey(m.conditions), ""}
		if byCommand[k.tool+"|"+k.metric+"|"+k.conds] {
			k.command = strings.Join(strings.Fields(m.command), " ")
		}
		list := series[k]
		if len(list) == 0 {
			order = append(order, k)
		}
		if n := len(list); n > 0 && list[n-1].state == m.state && (m.state == "before" || m.state == "after") && list[n-1].section == m.section && list[n-1].label == m.label && list[n-1].toggled == m.toggled {
			// A command run again under one state's heading ("Before:" over three runs, each
			// with its command): the runs of one series.
			joined := *list[n-1]
			joined.values = append(append([]float64{}, joined.values...), m.values...)
			joined.lines = append(append([]int{}, joined.lines...), m.lines...)
			list[n-1] = &joined
			continue
		}
		series[k] = append(list, m)
	}
	return series, order
}

// linesOf are the lines of the measurements.
func linesOf(list []*measurement) []int {
	var lines []int
	for _, m := range list {
		lines = append(lines, m.lines...)
	}
	return lines
}

// statedInTurn splits series that every state names, as many before as after, two or more
// of each: the runs of several settings under a "Before:" heading, then under "After:".
func statedInTurn(list []*measurement) (befores, afters []*measurement, ok bool) {
	for _, m := range list {
		switch m.state {
		case "before":
			befores = append(befores, m)
		case "after":
			afters = append(afters, m)
		default:
			return nil, nil, false
		}
	}
	return befores, afters, len(befores) >= 2 && len(befores) == len(afters)
}

// commandsTell says, by tool, metric and conditions, where one state shows two or more
// different commands (netperf pinned to two CPUs under "Before:", then the same two under
// "After:"): the command is then what a measurement is of, and the same command in the other
// state is its other side. A state with one command leaves pairing to the order.
func commandsTell(ms []measurement) map[string]bool {
	commands := map[string]map[string]bool{} // key|state -> commands
	out := map[string]bool{}
	for _, m := range ms {
		if m.command == "" {
			continue
		}
		k := m.tool + "|" + m.metric + "|" + conditionKey(m.conditions)
		ks := k + "|" + m.state + "|" + strconv.Itoa(m.section)
		if commands[ks] == nil {
			commands[ks] = map[string]bool{}
		}
		commands[ks][strings.Join(strings.Fields(m.command), " ")] = true
		if len(commands[ks]) > 1 && m.state != "" {
			out[k] = true
		}
	}
	return out
}

// sortClaims orders claims by their first line.
func sortClaims(cs []Claim) {
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].Lines[0] < cs[b].Lines[0] })
}

func newClaim(before, after *measurement) Claim {
	c := Claim{Tool: before.tool, Command: before.command, Options: before.options, Metric: before.metric, Quantity: before.quantity, Unit: before.unit,
		Conditions: before.conditions, Before: values(before), After: values(after)}
	if len(c.Conditions) == 0 {
		c.Conditions = nil
	}
	if c.Before.Median != 0 {
		c.Change = math.Round((c.After.Median/c.Before.Median-1)*1e4) / 1e4
	}
	c.Lines = append(append([]int{}, before.lines...), after.lines...)
	sort.Ints(c.Lines)
	c.Lines = slices.Compact(c.Lines)
	return c
}

func values(m *measurement) Values {
	return Values{Values: m.values, Median: round(median(m.values)), CV: m.cv, Label: m.label}
}

// claimKind is the kind of figure a claim's unit measures, as metricOf names it ("" for a
// unit not known).
func claimKind(c Claim) string {
	if u, ok := lookupUnit(c.Unit); ok {
		return metricOf(u)
	}
	return ""
}

// attachStated gives each stated change to its claim: the claims of its family, else the
// one throughput or rate claim of the text, unless the change's sentence names another kind
// of figure ("throughput improved by 6%" is not the change of a CPU share). A stated change
// no claim takes is said in Describes.
func (r *Report) attachStated() {
	for _, s := range r.stated {
		var targets []int
		for i, c := range r.Claims {
			if s.family != "" && c.Conditions["family"] == s.family {
				targets = append(targets, i)
			}
		}
		if s.family == "" && len(r.Claims) == 1 && (s.subject == "" || s.subject == claimKind(r.Claims[0])) {
			targets = []int{0}
		}
		if s.onLine && len(targets) == 0 {
			for i, c := range r.Claims {
				if slices.Contains(c.Lines, s.line) {
					targets = append(targets, i)
				}
			}
			if len(targets) != 1 {
				targets = nil // a line of several claims: whose change it is is not said
			}
		}
		for _, i := range targets {
			c := &r.Claims[i]
			v := s.forClaim(*c)
			c.Stated = &v
			// Agreement to what the text wrote: half a point, or half a percent of a large
			// change (6,144 % against 6,144.6 %).
			tolerance := math.Max(0.005, 0.005*math.Abs(v))
			if s.whole {
				tolerance = math.Max(tolerance, 0.01)
			}
			c.Mismatch = !c.FromZero && math.Abs(v-c.Change) > tolerance
			c.Lines = append(c.Lines, s.line)
			sort.Ints(c.Lines)
			c.Lines = slices.Compact(c.Lines)
		}
	}
}
