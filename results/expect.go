package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// ExpectationResult is one expectation checked against one case.
type ExpectationResult struct {
	Expectation string `json:"expectation"` // as written, e.g. "tcp6 throughput on: change >= +10%, significant"
	Workload    string `json:"workload,omitempty"`
	Metric      string `json:"metric,omitempty"`
	State       string `json:"state,omitempty"`
	Pass        bool   `json:"pass"`
	Measured    string `json:"measured"`
	// NotApplicable says why the expectation was not checked: it names a state this run did
	// not measure (an A/A run measures the baseline twice, not the scenario's other states).
	// Such an expectation neither holds nor fails.
	NotApplicable string `json:"not_applicable,omitempty"`
}

// Failed reports whether the expectation was checked and did not hold.
func (e ExpectationResult) Failed() bool { return !e.Pass && e.NotApplicable == "" }

// Verdict is PASS, FAIL or N/A, as the table prints it.
func (e ExpectationResult) Verdict() string {
	switch {
	case e.NotApplicable != "":
		return "N/A"
	case e.Pass:
		return "PASS"
	}
	return "FAIL"
}

// Evaluate checks a case against the scenario's expectations.
func Evaluate(c Case, exps []scenarios.Expectation) []ExpectationResult {
	var out []ExpectationResult
	for _, e := range exps {
		out = append(out, evaluate(c, e))
	}
	return out
}

func evaluate(c Case, e scenarios.Expectation) ExpectationResult {
	r := check(c, e)
	if e.State != "" && !slices.ContainsFunc(c.States, func(st StateRecord) bool { return st.Name == e.State }) {
		r.Pass, r.Measured = false, "nothing"
		r.NotApplicable = fmt.Sprintf("this run did not measure state %s; it measured %s", e.State, stateNames(c))
	}
	return r
}

func stateNames(c Case) string {
	var names []string
	for _, st := range c.States {
		names = append(names, st.Name)
	}
	return strings.Join(names, " and ")
}

func check(c Case, e scenarios.Expectation) ExpectationResult {
	metric := e.Metric
	if metric == "" {
		metric = Throughput
	}
	states := statesFor(c, e.State)
	switch {
	case e.Value != nil && e.Evidence != "":
		return evaluateEvidence(c, e, states)
	case e.Value != nil:
		r := ExpectationResult{Expectation: fmt.Sprintf("%s %s %s", e.Device, e.Attr, e.Value.Text), State: e.State, Pass: true}
		var seen []string
		for _, st := range c.States {
			if !states[st.Name] || st.Devices == nil {
				continue
			}
			v, ok := st.Devices[e.Device][e.Attr]
			seen = append(seen, fmt.Sprintf("%d in %s", v, st.Name))
			if !ok || !e.Value.Holds(float64(v)) {
				r.Pass = false
			}
		}
		if len(seen) == 0 {
			r.Pass, seen = false, []string{"no state applied"}
		}
		r.Measured = strings.Join(seen, ", ")
		return r
	case e.CV != nil:
		r := ExpectationResult{Expectation: fmt.Sprintf("%s %s cv %s", e.Workload, metric, e.CV.Text), Workload: e.Workload, Metric: metric, State: e.State, Pass: true}
		var seen []string
		for _, s := range c.Summaries {
			if s.Workload == e.Workload && s.Metric == metric && states[s.State] && s.Stats.N > 0 {
				seen = append(seen, fmt.Sprintf("%s %s", s.State, formatCV(s.Stats)))
				if s.Stats.N < 2 || !e.CV.Holds(s.Stats.CV) {
					r.Pass = false
				}
			}
		}
		if len(seen) == 0 {
			r.Pass, seen = false, []string{"no measurement"}
		}
		r.Measured = strings.Join(seen, ", ")
		return r
	}
	state := e.State
	if state == "" && len(c.States) == 2 {
		state = c.States[1].Name
	}
	desc := []string{}
	if e.Change != nil {
		desc = append(desc, "change "+e.Change.Text)
	}
	if e.Significant != nil {
		desc = append(desc, map[bool]string{true: "significant", false: "not significant"}[*e.Significant])
	}
	r := ExpectationResult{Expectation: fmt.Sprintf("%s %s %s: %s", e.Workload, metric, state, strings.Join(desc, ", ")),
		Workload: e.Workload, Metric: metric, State: state, Measured: "no measurement"}
	for _, s := range c.Summaries {
		if s.Workload != e.Workload || s.Metric != metric || s.State != state || s.Comparison == nil {
			continue
		}
		cmp := *s.Comparison
		r.Measured = FormatComparison(cmp) + " vs " + cmp.Baseline
		significant := cmp.Verdict == Improved || cmp.Verdict == Regressed
		r.Pass = (e.Change == nil || cmp.ChangeHolds(*e.Change)) && (e.Significant == nil || *e.Significant == significant)
	}
	for _, st := range c.States {
		if st.Name == state && st.Unavailable != "" {
			r.Measured = "state unavailable: " + st.Unavailable
		}
	}
	return r
}

func statesFor(c Case, state string) map[string]bool {
	out := map[string]bool{}
	for _, st := range c.States {
		if state == "" || st.Name == state {
			out[st.Name] = true
		}
	}
	return out
}

// Failures are why a result fails CI (exit 1): expectations that did not hold, and
// significant regressions of metrics no expectation covers.
func (r *Result) Failures() []string {
	var out []string
	for i, k := range r.Kernels {
		for _, f := range k.Failures() {
			out = append(out, fmt.Sprintf("kernel %c (%s): %s", 'A'+i, k.Label, f))
		}
	}
	for _, c := range r.Cases {
		prefix := ""
		if c.Label != "" {
			prefix = "[" + c.Label + "] "
		}
		covered := map[string]bool{}
		for _, e := range c.Expectations {
			covered[e.Workload+"/"+e.Metric+"/"+e.State] = true
			if e.Workload != "" && e.State == "" { // a cv expectation over every state
				for _, st := range c.States {
					covered[e.Workload+"/"+e.Metric+"/"+st.Name] = true
				}
			}
			if e.Failed() {
				out = append(out, expectationFailure(prefix, e))
			}
		}
		for _, s := range c.Summaries {
			if s.Comparison != nil && s.Comparison.Verdict == Regressed && s.Comparison.Gated && !covered[s.Workload+"/"+s.Metric+"/"+s.State] {
				out = append(out, fmt.Sprintf("%s%s %s regressed in %s vs %s: %s", prefix, s.Workload, s.Metric, s.State, s.Comparison.Baseline, FormatComparison(*s.Comparison)))
			}
		}
	}
	return out
}

// Notes are significant regressions of metrics that are not gated: listed for a reader, never
// a reason to fail.
func (r *Result) Notes() []string {
	var out []string
	for _, c := range r.Cases {
		prefix := ""
		if c.Label != "" {
			prefix = "[" + c.Label + "] "
		}
		for _, s := range c.Summaries {
			if s.Comparison != nil && s.Comparison.Verdict == Regressed && !s.Comparison.Gated {
				out = append(out, fmt.Sprintf("%s%s %s regressed in %s vs %s (not gated: information only): %s", prefix, s.Workload, s.Metric, s.State, s.Comparison.Baseline, FormatComparison(*s.Comparison)))
			}
		}
	}
	return out
}

// evaluateEvidence checks a figure of a device's counters, the mean over each named state's
// samples (every state when none is named), e.g. that packets above 64 KiB left the device.
func evaluateEvidence(c Case, e scenarios.Expectation, states map[string]bool) ExpectationResult {
	r := ExpectationResult{Expectation: fmt.Sprintf("%s %s %s", e.Device, e.Evidence, e.Value.Text), State: e.State, Pass: true}
	var seen []string
	for _, st := range c.States {
		if !states[st.Name] || st.Unavailable != "" {
			continue
		}
		v, ok := evidenceValue(c, st.Name, e.Device, e.Evidence)
		if !ok {
			r.Pass = false
			if measured(c, st.Name) {
				seen = append(seen, "not counted in "+st.Name)
			} else {
				seen = append(seen, "not measured in "+st.Name)
			}
			continue
		}
		seen = append(seen, fmt.Sprintf("%s in %s", formatCount(v), st.Name))
		if !e.Value.Holds(v) {
			r.Pass = false
		}
	}
	if len(seen) == 0 {
		r.Pass, seen = false, []string{"no state measured"}
	}
	r.Measured = strings.Join(seen, ", ")
	return r
}

// measured reports whether a state has a valid sample.
func measured(c Case, state string) bool {
	for _, s := range c.Samples {
		if s.State == state && s.Error == "" && s.Invalid == "" {
			return true
		}
	}
	return false
}

// ExpectationFailures are the expectations that did not hold, without the regressions that
// Failures adds: what a run says of itself when another result judges its changes (a bisect
// step, whose verdict is its comparison with the known-good kernel).
func (r *Result) ExpectationFailures() []string {
	var out []string
	for _, c := range r.Cases {
		prefix := ""
		if c.Label != "" {
			prefix = "[" + c.Label + "] "
		}
		for _, e := range c.Expectations {
			if e.Failed() {
				out = append(out, expectationFailure(prefix, e))
			}
		}
	}
	return out
}

func expectationFailure(prefix string, e ExpectationResult) string {
	return fmt.Sprintf("%sexpectation failed: %s (measured: %s)", prefix, e.Expectation, e.Measured)
}
