package compare

import "github.com/nsperf/nsperf/results"

// Look decides one look of an adaptive run against a stored result (nsperf run --bisect):
// the run's case so far (side B) merged with the same case of base (side A), each state
// against itself there, decided as a look decides: at alpha, the gated comparisons
// Holm-adjusted together. It returns those still undecided.
func Look(base *results.Result, c results.Case, workloads []string, gates map[string][]string, alpha, cvLimit, minChange float64) []string {
	bc, ok := caseOf(base, c.Label)
	if !ok {
		return nil // nothing to compare this case with: nothing to wait for
	}
	cur := &results.Result{Cases: []results.Case{c}}
	rep := &Report{Sides: []Side{{Name: SideName(0), Result: base}, {Name: SideName(1), Result: cur}}}
	merged := rep.mergeCase([]results.Case{bc, c}, commonStates(rep.Sides), results.Policy{Alpha: alpha, CVLimit: cvLimit, MinChange: minChange})
	_, open := results.DecideLook(merged, workloads, gates, alpha, cvLimit, minChange)
	return open
}
