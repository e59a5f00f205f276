package runner

import (
	"io"

	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// ConcurrentWarning is the result's warning of a run measured while another held the
// measuring lock (--concurrent); where is "machine" or "host".
func ConcurrentWarning(busy, where string) string {
	return "measured while another nsperf run was measuring on this " + where + " (" + busy + "; --concurrent): both runs' figures may be skewed"
}

// build builds a case's topology under run id id, or under a fresh one when id is "".
func build(m machine.Machine, s *scenarios.Scenario, id plan.RunID, kept bool, progress io.Writer) (machine.Network, error) {
	return machine.BuildAs(id, m.NewRunID, func(id plan.RunID) (machine.Network, error) { return m.Build(s, id, kept, progress) })
}
