package scenarios

import (
	"fmt"

	"github.com/nsperf/nsperf/internal/mwu"
)

// GatedComparisons is how many gated comparisons a run of the scenario decides as one family
// (Holm): every compared state, of every workload's gates, in every case.
func (s *Scenario) GatedComparisons() int {
	n := 0
	for _, c := range s.Expand() {
		compared := len(c.Scenario.States) - 1
		for _, w := range c.Scenario.Workloads {
			n += compared * len(w.Gates())
		}
	}
	return n
}

// Gates are each workload's gated metrics, over every case: what decides a run.
func (s *Scenario) Gates() map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			out[w.Name] = w.Gates()
		}
	}
	return out
}

// StoredGates are the gates of a scenario text stored in a result, nil when the text no longer
// validates: a result's own say about its gates is never taken over its scenario's.
func StoredGates(file string, text []byte) map[string][]string {
	s, err := Parse(file, text, Options{})
	if err != nil {
		return nil
	}
	return s.Gates()
}

// Undecidable says, when the scenario's runs per state cannot decide any gated comparison at
// its alpha whatever they measure, why and how many runs would; "" when they can. The runs of
// an adaptive scenario are its maximum; its looks spend less than alpha each, so it may need
// more than this says.
func (s *Scenario) Undecidable() string {
	alpha := s.Alpha
	if alpha <= 0 {
		alpha = 0.05
	}
	family := s.GatedComparisons()
	if family == 0 || mwu.MinP(s.Runs, s.Runs)*float64(family) <= alpha {
		return ""
	}
	return fmt.Sprintf("%d runs per state cannot decide any gated comparison: they give p >= %.3f, above alpha %g / %d gated comparisons; use at least %d",
		s.Runs, mwu.MinP(s.Runs, s.Runs), alpha, family, mwu.RunsToDecide(alpha, family))
}
