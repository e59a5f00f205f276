package scenarios

import (
	"time"
)

// Expand returns the concrete scenarios to measure, one per matrix combination in order; a
// scenario without a matrix is its own one case. The cases of a matrix are scenarios of their
// own: changing the scenario after loading changes none of them (Overrides.Apply changes
// all).
func (s *Scenario) Expand() []Case {
	if len(s.cases) == 0 {
		return []Case{{Scenario: s}}
	}
	return s.cases
}

// TotalRuns is the number of tool runs the scenario makes, over all its cases.
func (s *Scenario) TotalRuns() int {
	n := 0
	for _, c := range s.concrete() {
		n += c.Runs * len(c.States) * len(c.Workloads)
	}
	return n
}

// EstimatedDuration is the measuring time (without set-up) a run takes, over all its cases.
func (s *Scenario) EstimatedDuration() time.Duration {
	var total time.Duration
	for _, c := range s.concrete() {
		var per time.Duration
		for _, w := range c.Workloads {
			per += w.Length()
		}
		total += per * time.Duration(c.Runs*len(c.States))
	}
	return total
}

// EstimateIsLimit reports whether EstimatedDuration is an upper bound: some workload's runs
// end when their work is done (LengthIsLimit).
func (s *Scenario) EstimateIsLimit() bool {
	for _, c := range s.concrete() {
		for _, w := range c.Workloads {
			if w.LengthIsLimit() {
				return true
			}
		}
	}
	return false
}

// concrete returns the scenarios of the cases, each once.
func (s *Scenario) concrete() []*Scenario {
	var out []*Scenario
	for _, c := range s.Expand() {
		out = append(out, c.Scenario)
	}
	return out
}
