package results

import (
	"bytes"
	"strings"
	"testing"
)

func testReproduction() *Reproduction {
	stated := 0.45
	return &Reproduction{Source: "big-tcp-merge.txt", SHA256: "0123456789abcdef", Scenario: "big-tcp-rr", Claims: []ClaimCheck{
		{Claim: 1, Metric: "transaction_rate", Lines: []int{28, 29, 30, 43}, ClaimedChange: 0.481, StatedChange: &stated, Workload: "rr6", State: "on", Baseline: "off",
			Measured: &Comparison{Change: 0.51, ChangeLo: 0.40, ChangeHi: 0.62}, Outcome: Reproduced},
		{Claim: 2, Metric: "p99_latency", Lines: []int{31}, ClaimedChange: -0.2, Outcome: Undecided, Reason: "no comparison of p99_latency"},
	}}
}

// TestReproductionLines: each claim's line sets the claimed change (and the stated one)
// beside the measured change with its interval and the comparison, then the outcome; the
// table of a reproduced run ends with them.
func TestReproductionLines(t *testing.T) {
	rp := testReproduction()
	lines := rp.Lines()
	want := []string{
		"claimed by big-tcp-merge.txt (sha256 0123456789ab), measured with big-tcp-rr:",
		"  claim 1 (lines 28-30,43) transaction_rate: claimed +48.1% (stated +45.0%); measured +51.0% [+40.0%, +62.0%] (rr6 on vs off): reproduced",
		"  claim 2 (lines 31) p99_latency: claimed -20.0%; measured nothing that stands for it: undecided (no comparison of p99_latency)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := rp.Summary(); got != "2 claims: 1 reproduced, 1 undecided" {
		t.Errorf("summary %q", got)
	}
	r := &Result{Schema: Schema, RunID: "nsp0001", Scenario: ScenarioInfo{Name: "big-tcp-rr"}, Complete: true, Reproduction: rp}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), want[1]) {
		t.Errorf("the table lacks the claim:\n%s", b.String())
	}
	var none *Reproduction
	if none.Lines() != nil || none.Summary() != "" {
		t.Error("a run without a reproduction says something of claims")
	}
}

// TestPerKernel: an A/B's kernel B carries the reproduction as a copy; the A/B is unchanged.
func TestPerKernel(t *testing.T) {
	a, b := &Result{RunID: "a"}, &Result{RunID: "b"}
	ab := &Result{Kernels: []*Result{a, b}, Reproduction: testReproduction()}
	ks := ab.PerKernel()
	if len(ks) != 2 || ks[0].Reproduction != nil || ks[1].Reproduction != ab.Reproduction || b.Reproduction != nil || ks[1].RunID != "b" {
		t.Errorf("per kernel: %+v %+v; b %+v", ks[0], ks[1], b)
	}
}
