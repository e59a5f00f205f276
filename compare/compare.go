// Package compare sets stored results of different runs side by side: the same states on two
// kernels, or a state of one run against another state of another. It pairs what the results
// have in common and hands the pairs to the statistics of package results, so that a
// comparison across runs is decided exactly as one within a run. Everything here is pure.
package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// Side is one result taking part: the first is the base, each other one is compared with it.
type Side struct {
	Name   string // short name in column headers: A, B, C, ...
	Source string // where it came from: a file, or a run of the history
	Result *results.Result
}

// StatePair names a state of the base and the state of each other result compared with it.
type StatePair struct{ Base, New string }

// Options tune a comparison.
type Options struct {
	Policy results.Policy
	// Pairs are the states to compare; nil pairs every state the results share, by name.
	Pairs []StatePair
	// Force compares even when the scenarios differ in what is measured.
	Force bool
	// Expect replaces the base scenario's expectations (--expect FILE); nil keeps them.
	Expect []scenarios.Expectation
	// Metrics limits the comparison to these metrics; nil compares every metric.
	Metrics []string
}

// Report is a comparison: who takes part, how their circumstances differ, and the merged
// result whose states are the paired states of every side (off@A, off@B, ...).
type Report struct {
	Sides        []Side          `json:"-"`
	Header       []string        `json:"sides"`                   // one line per side
	Environment  []string        `json:"environment"`             // how the machines and runs differ
	Warnings     []string        `json:"warnings,omitempty"`      // differing method, unpaired items
	ScenarioDiff string          `json:"scenario_diff,omitempty"` // unified diff of the scenario texts
	Result       *results.Result `json:"result"`
	Pairs        []StatePair     `json:"pairs"`
	metrics      []string        // compared metrics; nil: all
}

// IncomparableError says why two results cannot be compared (exit 2). A difference in what
// they measure is Forceable: --force compares anyway; a state that is not there is not.
type IncomparableError struct {
	Difference string
	Forceable  bool
}

func (e *IncomparableError) Error() string {
	if !e.Forceable {
		return "the results cannot be compared: " + e.Difference
	}
	return "the results measure different things: " + e.Difference + " (--force compares them anyway)"
}

// NothingComparedError says that the results have no comparison with figures on both sides
// (exit 2): a CI gate must not pass on nothing. The report is returned with it.
type NothingComparedError struct{ Why string }

func (e *NothingComparedError) Error() string { return "nothing was compared: " + e.Why }

// SideName names the i-th side as spreadsheets name columns: A to Z, then AA, AB, ...
func SideName(i int) string {
	name := ""
	for i++; i > 0; i = (i - 1) / 26 {
		name = string(rune('A'+(i-1)%26)) + name
	}
	return name
}

// StateName is the name a side's state is shown by in the merged result: off@A. It is never
// read back: the merged states, samples and summaries carry results.SideOf.
func StateName(state, side string) string { return state + "@" + side }

// New compares sides[1:] each with sides[0].
func New(sides []Side, opt Options) (*Report, error) {
	if len(sides) < 2 {
		return nil, errors.New("compare needs a base and at least one result to compare with it")
	}
	for i := range sides {
		if sides[i].Name == "" {
			sides[i].Name = SideName(i)
		}
	}
	rep := &Report{Sides: sides}
	for i := range sides {
		rep.Header = append(rep.Header, describe(sides[i]))
		for _, line := range sides[i].Result.Reproduction.Lines() { // claimed beside measured by that run
			rep.Header = append(rep.Header, sides[i].Name+": "+strings.TrimSpace(line))
		}
	}
	base := sides[0].Result
	pairs := opt.Pairs
	var capabilities []results.Capability
	if pairs == nil {
		pairs, capabilities = defaultPairs(sides)
		if len(pairs) == 0 {
			return nil, &IncomparableError{Difference: "no state name is in every result; name the states to compare with --state BASE:NEW"}
		}
	}
	for _, p := range pairs {
		if !hasState(base, p.Base) {
			return nil, &IncomparableError{Difference: fmt.Sprintf("%s has no state %q (it has: %s)", sides[0].Name, p.Base, strings.Join(stateNames(base), ", "))}
		}
		for _, s := range sides[1:] {
			if !hasState(s.Result, p.New) {
				return nil, &IncomparableError{Difference: fmt.Sprintf("%s has no state %q (it has: %s)", s.Name, p.New, strings.Join(stateNames(s.Result), ", "))}
			}
		}
	}
	rep.Pairs = pairs
	rep.Environment = environmentDiff(sides)
	var err error
	if rep.ScenarioDiff, rep.Warnings, err = checkComparable(sides, pairs, opt.Pairs != nil); err != nil && !opt.Force {
		return rep, err
	} else if err != nil {
		rep.Warnings = append(rep.Warnings, "compared with --force although "+strings.TrimSuffix(err.Error(), " (--force compares them anyway)"))
	}
	exps := opt.Expect
	if exps == nil {
		if s, perr := scenarios.Parse(base.Scenario.File, []byte(base.Scenario.Text), scenarios.Options{}); perr == nil {
			exps = s.Expect
		}
	}
	rep.metrics = opt.Metrics
	rep.Result = rep.merge(pairs, opt.Policy, exps)
	rep.Result.Capabilities = capabilities
	if why := nothingCompared(rep.Result, sides, opt.Metrics); why != "" {
		return rep, &NothingComparedError{Why: why}
	}
	return rep, nil
}

// describe is a side's line in the header.
func describe(s Side) string {
	r := s.Result
	parts := []string{fmt.Sprintf("%s = %s: run %s", s.Name, s.Source, r.RunID)}
	if r.Label != "" {
		parts = append(parts, "label "+r.Label)
	}
	parts = append(parts, "kernel "+orUnknown(r.Environment.KernelRelease))
	if p := r.Build.Patch(); p != "" {
		parts = append(parts, "built "+p)
	}
	parts = append(parts, "scenario "+r.Scenario.Name, r.Start.Format("2006-01-02 15:04"))
	if !r.Complete {
		parts = append(parts, "INCOMPLETE")
	}
	return strings.Join(parts, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// commonStates pairs every state of the base that each other result has too, in the base's
// order.
func commonStates(sides []Side) []StatePair {
	var out []StatePair
	for _, name := range stateNames(sides[0].Result) {
		all := true
		for _, s := range sides[1:] {
			all = all && hasState(s.Result, name)
		}
		if all {
			out = append(out, StatePair{Base: name, New: name})
		}
	}
	return out
}

func stateNames(r *results.Result) []string {
	var out []string
	for _, c := range r.Cases {
		for _, st := range c.States {
			if !slices.Contains(out, st.Name) {
				out = append(out, st.Name)
			}
		}
	}
	return out
}

func hasState(r *results.Result, name string) bool { return slices.Contains(stateNames(r), name) }

// merge builds the result the renderers print: per case of the base that every side has,
// the base's paired states and each side's, every side's state compared with the base's, the
// statistics computed by results.Summarize as for a run.
func (rep *Report) merge(pairs []StatePair, policy results.Policy, exps []scenarios.Expectation) *results.Result {
	base := rep.Sides[0].Result
	var ids []string
	complete := true
	for _, s := range rep.Sides {
		ids = append(ids, s.Result.RunID)
		complete = complete && s.Result.Complete
	}
	if policy.Alpha == 0 {
		policy.Alpha = base.Settings.Policy.Alpha
	}
	if policy.CVLimit == 0 {
		policy.CVLimit = base.Settings.Policy.CVLimit
	}
	if policy.MinChange == 0 {
		policy.MinChange = base.Settings.Policy.MinChange
	}
	m := &results.Result{
		Schema:   results.Schema,
		RunID:    strings.Join(ids, " vs "),
		Scenario: base.Scenario,
		Start:    base.Start,
		End:      rep.Sides[len(rep.Sides)-1].Result.End,
		Complete: complete,
		Settings: results.Settings{Runs: base.Settings.Runs, Order: base.Settings.Order, Policy: policy, Gates: base.Settings.Gates},
	}
	for _, bc := range base.Cases {
		cases := []results.Case{bc}
		for _, s := range rep.Sides[1:] {
			c, ok := caseOf(s.Result, bc.Label)
			if !ok {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("case %q is not in %s: left out", bc.Label, s.Name))
				break
			}
			cases = append(cases, c)
		}
		if len(cases) < len(rep.Sides) {
			continue
		}
		m.Cases = append(m.Cases, rep.mergeCase(cases, pairs, policy))
	}
	// The gated comparisons of all cases are one family, as in a run.
	m.DecideFamily()
	for i := range m.Cases {
		m.Cases[i].Expectations = results.Evaluate(m.Cases[i], rep.expectations(exps, pairs))
	}
	return m
}

func caseOf(r *results.Result, label string) (results.Case, bool) {
	for _, c := range r.Cases {
		if c.Label == label {
			return c, true
		}
	}
	return results.Case{}, false
}

// mergeCase makes one case of the paired states of every side.
func (rep *Report) mergeCase(cases []results.Case, pairs []StatePair, policy results.Policy) results.Case {
	out := results.Case{Matrix: cases[0].Matrix, Label: cases[0].Label, BigPackets: cases[0].BigPackets}
	workloads := commonWorkloads(cases)
	add := func(c results.Case, state, side, compareTo string) {
		name := StateName(state, side)
		for _, st := range out.States {
			if st.Name == name {
				return // a base state paired with several states of the others
			}
		}
		at := results.SideOf{Side: side, Of: state}
		rec := results.StateRecord{Name: name, SideOf: at, CompareTo: compareTo}
		for _, st := range c.States {
			if st.Name == state {
				rec.Unavailable = st.Unavailable
				rec.SetReadBack(st)
			}
		}
		out.States = append(out.States, rec)
		for _, s := range c.Samples {
			if s.State == state && slices.Contains(workloads, s.Workload) {
				s.State, s.SideOf = name, at
				if rep.metrics != nil {
					s.Metrics = slices.DeleteFunc(slices.Clone(s.Metrics), func(m results.Metric) bool { return !slices.Contains(rep.metrics, m.Name) })
				}
				out.Samples = append(out.Samples, s)
			}
		}
	}
	baseName := rep.Sides[0].Name
	for _, p := range pairs {
		add(cases[0], p.Base, baseName, "")
	}
	for i, s := range rep.Sides[1:] {
		for _, p := range pairs {
			add(cases[i+1], p.New, s.Name, StateName(p.Base, baseName))
		}
	}
	out.Summaries = results.Summarize(out.Samples, out.States, workloads, policy)
	results.Explain(&out, policy)
	for i := range out.Summaries {
		// Rounds of different runs are not paired: per-round ratios mean nothing here.
		if c := out.Summaries[i].Comparison; c != nil {
			c.Paired = nil
		}
	}
	return out
}

// nothingCompared says why a merged result holds no comparison with figures on both sides,
// "" when it holds one. A state the base lacks (a capability) still leaves its baseline.
func nothingCompared(m *results.Result, sides []Side, metrics []string) string {
	for _, c := range m.Cases {
		for _, s := range c.Summaries {
			if s.Comparison != nil && s.Comparison.NBase > 0 && s.Comparison.NState > 0 {
				return ""
			}
		}
	}
	measured := func(r *results.Result) (samples int, names []string) {
		for _, c := range r.Cases {
			for _, smp := range c.Samples {
				if smp.Error != "" || smp.Invalid != "" {
					continue
				}
				samples++
				for _, mt := range smp.Metrics {
					if !slices.Contains(names, mt.Name) {
						names = append(names, mt.Name)
					}
				}
			}
		}
		return samples, names
	}
	for _, s := range sides {
		if n, _ := measured(s.Result); n == 0 {
			return fmt.Sprintf("%s (%s) has no successful sample", s.Name, s.Source)
		}
	}
	if len(metrics) > 0 {
		_, names := measured(sides[0].Result)
		return fmt.Sprintf("no metric %s in %s (it has: %s)", strings.Join(metrics, ", "), sides[0].Name, strings.Join(names, ", "))
	}
	if len(m.Cases) == 0 {
		return "no matrix case is in every result"
	}
	return "no workload is measured in every result's paired states"
}

// commonWorkloads are the workloads every case measured, in the base's order.
func commonWorkloads(cases []results.Case) []string {
	var out []string
	for _, s := range cases[0].Samples {
		if slices.Contains(out, s.Workload) {
			continue
		}
		all := true
		for _, c := range cases[1:] {
			all = all && slices.ContainsFunc(c.Samples, func(x results.Sample) bool { return x.Workload == s.Workload })
		}
		if all {
			out = append(out, s.Workload)
		}
	}
	return out
}

// expectations turns the scenario's expectations, written for the states of one run, into
// expectations on the merged states: a change expected of a state is expected of each other
// side's paired state against the base; a cv or value expectation holds for the state on
// every side.
func (rep *Report) expectations(exps []scenarios.Expectation, pairs []StatePair) []scenarios.Expectation {
	var out []scenarios.Expectation
	for _, e := range exps {
		if e.Change == nil && e.Significant == nil {
			if e.State == "" {
				out = append(out, e)
				continue
			}
			for i, s := range rep.Sides {
				for _, p := range pairs {
					if (i == 0 && p.Base == e.State) || (i > 0 && p.New == e.State) {
						q := e
						q.State = StateName(e.State, s.Name)
						out = append(out, q)
					}
				}
			}
			continue
		}
		for _, s := range rep.Sides[1:] {
			for _, p := range pairs {
				if e.State == "" || e.State == p.New {
					q := e
					q.State = StateName(p.New, s.Name)
					out = append(out, q)
				}
			}
		}
	}
	return out
}

// SidesOf are the sides a stored result takes part in a comparison as: itself, or an A/B
// run of two kernels as its kernels, each named after the file and its side.
func SidesOf(r *results.Result, source string) []Side {
	if len(r.Kernels) == 0 {
		return []Side{{Source: source, Result: r}}
	}
	var sides []Side
	for i, k := range r.PerKernel() {
		sides = append(sides, Side{Source: fmt.Sprintf("%s, kernel %c", source, 'A'+i), Result: k})
	}
	return sides
}
