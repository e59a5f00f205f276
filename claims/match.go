package claims

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
)

// Facts are what matching needs to know of the scenario a result ran: each workload's address
// family (IPv4, IPv6) and tool, and the states that turn offloads off.
type Facts struct {
	Families    map[string]string
	Tools       map[string]string // workload -> its tool
	OffloadsOff map[string]bool
	// Ends are each workload's namespaces: "server" and "client" -> the namespace.
	Ends map[string]map[string]string
}

// nsperfMetric is the name nsperf gives a claim's metric: a request/response test's
// transactions per second are its throughput.
func nsperfMetric(m string) string {
	if m == "transaction_rate" {
		return results.Throughput
	}
	return m
}

// Match sets each claim beside the comparison of r that stands for it: the same metric, a
// workload of the claim's family, a case of its MTU, states of its offloads, then a workload
// of the claim's tool, a state against another state (on@B against off@A in an A/B of
// kernels) before a state against itself. Each gets an outcome: reproduced (same direction, decided), contradicted (decided
// the other way, or equivalent), or undecided with the reason.
func Match(rep *Report, r *results.Result, facts Facts) []results.ClaimCheck {
	var out []results.ClaimCheck
	for i, c := range rep.Claims {
		check := results.ClaimCheck{Claim: i + 1, Metric: c.Metric, Conditions: c.Conditions, Lines: c.Lines, ClaimedBefore: c.Before.Median,
			ClaimedAfter: c.After.Median, ClaimedChange: c.Change, StatedChange: c.Stated, Unit: c.Unit}
		toggled := len(rep.Toggles) > 0 || c.Before.Label != "" && c.After.Label != ""
		if ref, ok := counterOf(c); ok {
			out = append(out, counterCheck(check, c, ref, r, facts, toggled))
			continue
		}
		if c.Metric == "" {
			check.Outcome = results.NotReproducible
			check.Reason = "nsperf measures no " + c.Quantity + ": a claim it cannot set a measurement beside"
			out = append(out, check)
			continue
		}
		cs, s, why := pick(c, r, facts, toggled)
		if s == nil {
			check.Outcome, check.Reason = results.Undecided, why
			out = append(out, check)
			continue
		}
		check.Case, check.Workload, check.State, check.Baseline, check.Measured = cs.Label, s.Workload, s.State, s.Comparison.Baseline, s.Comparison
		check.Outcome, check.Reason = outcome(c, *s.Comparison)
		out = append(out, check)
	}
	return out
}

// pick finds the comparison for a claim, or says why there is none.
// toggled says the claim compares two settings (the message shows a toggle, or names its
// sides): a comparison across states stands for it; else (a kernel change alone) the same
// state on both kernels does.
func pick(c Claim, r *results.Result, facts Facts, toggled bool) (results.Case, *results.Summary, string) {
	metric := nsperfMetric(c.Metric)
	var best *results.Summary
	var bestCase results.Case
	bestScore := -1
	for _, cs := range r.Cases {
		if !caseFits(cs, c.Conditions) {
			continue
		}
		for k := range cs.Summaries {
			s := &cs.Summaries[k]
			if s.Comparison == nil || s.Metric != metric {
				continue
			}
			if c.Unit != "" && s.Unit != "" && c.Unit != s.Unit {
				continue // a bit/s claim is not met by a transaction rate
			}
			if fam := c.Conditions["family"]; fam != "" && facts.Families[s.Workload] != fam {
				continue
			}
			state, base := s.OwnState(s.State), s.Comparison.BaselineSide.OwnState(s.Comparison.Baseline)
			stateOff, baseOff := facts.OffloadsOff[state], facts.OffloadsOff[base]
			// A claim of offloads off (or on) is met by states of its kind only. A claim that
			// names none is not met inside a regime of offloads off, but may be by a toggle of
			// an offload (gro off -> on), after any comparison that toggles none.
			if _, named := c.Conditions["offloads"]; named || (stateOff && baseOff) {
				if off := c.Conditions["offloads"] == "off"; off != stateOff || off != baseOff {
					continue
				}
			}
			score := 0
			if stateOff != baseOff {
				score--
			}
			if c.Tool != "" && facts.Tools[s.Workload] == c.Tool {
				score += 4 // the claim's own tool
			}
			if (state != base) == toggled {
				score += 2 // a toggle's effect for a toggle's claim; a state against itself for a kernel's
			}
			if s.Side == "B" && s.Comparison.BaselineSide.Side == "A" {
				score++ // the patched kernel against the base
			}
			if score > bestScore {
				best, bestCase, bestScore = s, cs, score
			}
		}
	}
	if best == nil {
		return results.Case{}, nil, fmt.Sprintf("the run has no comparison of %s for %s", metric, conds(c.Conditions))
	}
	return bestCase, best, ""
}

// caseFits: a case whose matrix sets the MTU the claim's condition names (standard: 1500,
// 8k: 8000), or any case where the claim names none or the run has one case.
func caseFits(cs results.Case, conds map[string]string) bool {
	want, ok := conds["mtu"]
	got, has := cs.Matrix["mtu"]
	if !ok || !has {
		return true
	}
	return mtuValue(want) == mtuValue(got)
}

// mtuValue reads an MTU as a claim's condition names it: 1500, "standard", "8k", "9000".
func mtuValue(s string) int {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "standard":
		return 1500
	case strings.HasSuffix(s, "k"):
		n, _ := strconv.Atoi(strings.TrimSuffix(s, "k"))
		return n * 1000
	}
	n, _ := strconv.Atoi(s)
	return n
}

// outcome judges a measured comparison against the claim: the direction the claim shows
// (better or worse for the metric) and nsperf's decision.
func outcome(c Claim, m results.Comparison) (string, string) {
	up := rises(c)
	better := up
	if m.Direction < 0 {
		better = !up
	}
	claimed := "worse"
	if better {
		claimed = "better"
	}
	what := fmt.Sprintf("claimed %s (%s); measured %s: %s", change(c), claimed, results.FormatChangeCI(m), m.Verdict)
	negligible := m.MinChange
	if negligible <= 0 {
		negligible = results.DefaultMinChange
	}
	if !c.FromZero && math.Abs(c.Change) < negligible {
		// A claim of no change worth a verdict (96 -> 96.05 Gbit/s): equivalence (or a
		// significant change too small to matter) reproduces it, a decided change contradicts it.
		what = fmt.Sprintf("claimed %+.1f%% (no change beyond %.4g%%); measured %s: %s", 100*c.Change, 100*negligible, results.FormatChangeCI(m), m.Verdict)
		switch m.Verdict {
		case results.Equivalent, results.Negligible:
			return results.Reproduced, what
		case results.Improved, results.Regressed:
			return results.Contradicted, what
		}
		return results.Undecided, what + "; the claim shows no change"
	}
	switch {
	case m.Verdict == results.Improved && better, m.Verdict == results.Regressed && !better:
		return results.Reproduced, what
	case m.Verdict == results.Improved, m.Verdict == results.Regressed, m.Verdict == results.Equivalent:
		return results.Contradicted, what
	}
	return results.Undecided, what
}

// rises says whether a claim's figure goes up: its change, or for a change from 0 (no
// ratio) after's sign.
func rises(c Claim) bool {
	if c.FromZero {
		return c.After.Median > 0
	}
	return c.Change > 0
}

// counterCheck sets a claim about a count beside the counter's change per second.
func counterCheck(check results.ClaimCheck, c Claim, ref counterRef, r *results.Result, facts Facts, toggled bool) results.ClaimCheck {
	cs, s, m, key, why := pickCounter(c, ref, r, facts, toggled)
	if s == nil {
		check.Outcome, check.Reason = results.Undecided, why
		return check
	}
	check.Metric = key + " per second"
	if ref.tcp {
		check.Metric = key // a level of the connection, as it was
	}
	check.Case, check.Workload, check.State, check.Baseline = cs.Label, s.Workload, s.State, s.Comparison.Baseline
	check.Measured = &m
	check.Outcome, check.Reason = counterOutcome(c, m)
	return check
}

// counterOutcome: a count has no better direction of its own; the claim's direction is what
// is reproduced (fewer ACKs, fewer drops), decided by the counter's own comparison.
func counterOutcome(c Claim, m results.Comparison) (string, string) {
	what := fmt.Sprintf("claimed %s; measured %s p=%.3g", change(c), results.FormatChangeCI(m), m.P)
	decided := m.P <= results.DefaultAlpha && m.Moved() && (!m.HasCI || m.ChangeLo > 0 || m.ChangeHi < 0)
	switch {
	case !decided:
		return results.Undecided, what
	case (m.Change < 0) == !rises(c):
		return results.Reproduced, what
	}
	return results.Contradicted, what
}
