package results

import (
	"fmt"
	"strings"
)

// Reproduction is a run made to reproduce the claims of a commit message or patch (nsperf
// reproduce): the source's identity, and each claim beside what was measured for it.
type Reproduction struct {
	Source   string       `json:"source"` // the file as given
	SHA256   string       `json:"sha256"`
	Scenario string       `json:"scenario"`
	Why      string       `json:"why"` // why this scenario
	Claims   []ClaimCheck `json:"claims"`
}

// What a claim's reproduction found; a comparison that decides nothing makes the claim
// Undecided (the comparison verdict of that name), with the reason.
const (
	Reproduced      = "reproduced"       // same direction, decided, beyond the minimum change
	Contradicted    = "contradicted"     // decided the other way, or equivalent
	NotReproducible = "not reproducible" // here: with what it would need
	// NotExercised: the patch's functions were counted in every kernel and none ran, so
	// what was measured is not the patch's effect, whichever way it went.
	NotExercised = "not exercised"
)

// ClaimCheck is one claim beside its measurement.
type ClaimCheck struct {
	Claim      int               `json:"claim"` // 1-based, in the order nsperf claims lists them
	Metric     string            `json:"metric"`
	Conditions map[string]string `json:"conditions,omitempty"`
	Lines      []int             `json:"lines"`
	// Claimed are the message's figures: before and after (medians) in Unit, its change
	// computed, and the change it states where it states one.
	ClaimedBefore float64  `json:"claimed_before"`
	ClaimedAfter  float64  `json:"claimed_after"`
	ClaimedChange float64  `json:"claimed_change"`
	StatedChange  *float64 `json:"stated_change,omitempty"`
	Unit          string   `json:"unit"`
	// The comparison that stands for it: case (label), workload, state against baseline.
	Case     string      `json:"case,omitempty"`
	Workload string      `json:"workload,omitempty"`
	State    string      `json:"state,omitempty"`
	Baseline string      `json:"baseline,omitempty"`
	Measured *Comparison `json:"measured,omitempty"`
	Outcome  string      `json:"outcome"`
	Reason   string      `json:"reason,omitempty"`
}

// Line says in one line what a claim claimed and what was measured for it, for the table,
// compare's header and the HTML report: `claim 1 (lines 28-38) transaction_rate: claimed
// +48.1% (stated +45.0%); measured +51.0% [+40.1%, +60.2%] (rr6 on vs off): reproduced`.
func (ch ClaimCheck) Line() string {
	claimed := fmt.Sprintf("claimed %+.1f%%", 100*ch.ClaimedChange)
	if ch.StatedChange != nil {
		claimed += fmt.Sprintf(" (stated %+.1f%%)", 100**ch.StatedChange)
	}
	measured := "measured nothing that stands for it"
	if m := ch.Measured; m != nil {
		where := ch.State + " vs " + ch.Baseline
		if ch.Workload != "" {
			where = ch.Workload + " " + where
		}
		if ch.Case != "" {
			where = "[" + ch.Case + "] " + where
		}
		measured = fmt.Sprintf("measured %s (%s)", FormatChangeCI(*m), Printable(where))
	}
	out := fmt.Sprintf("claim %d (lines %s) %s: %s; %s: %s", ch.Claim, LineRanges(ch.Lines), Printable(ch.Metric), claimed, measured, ch.Outcome)
	if ch.Reason != "" {
		out += " (" + Printable(ch.Reason) + ")"
	}
	return out
}

// Lines are the claims' lines, after a heading naming the source.
func (rp *Reproduction) Lines() []string {
	if rp == nil {
		return nil
	}
	out := []string{fmt.Sprintf("claimed by %s (sha256 %.12s), measured with %s:", Printable(rp.Source), rp.SHA256, Printable(rp.Scenario))}
	for _, ch := range rp.Claims {
		out = append(out, "  "+ch.Line())
	}
	return out
}

// Summary counts the claims by outcome: "2 claims: 2 reproduced".
func (rp *Reproduction) Summary() string {
	if rp == nil || len(rp.Claims) == 0 {
		return ""
	}
	count := map[string]int{}
	var order []string
	for _, ch := range rp.Claims {
		if count[ch.Outcome] == 0 {
			order = append(order, ch.Outcome)
		}
		count[ch.Outcome]++
	}
	var parts []string
	for _, o := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
	}
	noun := "claims"
	if len(rp.Claims) == 1 {
		noun = "claim"
	}
	return fmt.Sprintf("%d %s: %s", len(rp.Claims), noun, strings.Join(parts, ", "))
}

// LineRanges writes 28,29,30,42 as "28-30,42".
func LineRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] <= ns[j]+1 {
			j++
		}
		if ns[j] > ns[i] {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		} else {
			parts = append(parts, fmt.Sprint(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// PerKernel are an A/B result's kernels as results of their own (compare's sides, the
// history's runs); kernel B, against which the claims were measured, carries the
// reproduction. A copy of B is made for that: r is not changed.
func (r *Result) PerKernel() []*Result {
	out := append([]*Result{}, r.Kernels...)
	if n := len(out); n > 0 && r.Reproduction != nil && out[n-1].Reproduction == nil {
		b := *out[n-1]
		b.Reproduction = r.Reproduction
		out[n-1] = &b
	}
	return out
}
