package results

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
