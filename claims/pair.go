package claims

import (
	"math"
	"slices"
	"sort"
)

// pair makes claims of the measurements: a before and an after of one tool, metric and
// conditions, in either order. Where the text names no states, the first is before and the
// next after (a toggle between them, or the order of "standard, then enabled"). A side left without its
// other is unparsed. Stated changes attach to the claims of their family, or to the only
// claim of a metric.
func (r *Report) pair(ms []measurement, lines []line) {
	type key struct{ tool, metric, quantity, conds string }
	open := map[key]*measurement{}
	var order []key
	for i := range ms {
		m := &ms[i]
		k := key{m.tool, m.metric, m.quantity, conditionKey(m.conditions)}
		prev := open[k]
		if prev == nil {
			open[k] = m
			order = append(order, k)
			continue
		}
		// The first is before unless the words say otherwise: an after printed first
		// (a heading with the series above one without it) pairs with the before that follows.
		before, after := prev, m
		if prev.state == "after" && m.state != "after" || m.state == "before" && prev.state != "before" {
			before, after = m, prev
		}
		r.addClaims(newClaim(before, after))
		delete(open, k)
	}
	for _, k := range order {
		if m := open[k]; m != nil && m.state == "after" {
			r.addUnparsed(Unparsed{Lines: m.lines, Reason: "an after without its before"})
		} else if m != nil {
			r.addUnparsed(Unparsed{Lines: m.lines, Reason: "a " + m.metric + " measurement without a second to compare it with"})
		}
	}
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

// attachStated gives each stated change to its claim: the claims of its family, else the
// one throughput or rate claim of the text. A stated change no claim takes is said in
// Describes.
func (r *Report) attachStated() {
	for _, s := range r.stated {
		var targets []int
		for i, c := range r.Claims {
			if s.family != "" && c.Conditions["family"] == s.family {
				targets = append(targets, i)
			}
		}
		if s.family == "" && len(r.Claims) == 1 {
			targets = []int{0}
		}
		for _, i := range targets {
			c := &r.Claims[i]
			v := s.change
			c.Stated = &v
			// Agreement to what the text wrote: half a point, or half a percent of a large
			// change (6,144 % against 6,144.6 %).
			c.Mismatch = !c.FromZero && math.Abs(v-c.Change) > math.Max(0.005, 0.005*math.Abs(v))
			c.Lines = append(c.Lines, s.line)
			sort.Ints(c.Lines)
			c.Lines = slices.Compact(c.Lines)
		}
	}
}
