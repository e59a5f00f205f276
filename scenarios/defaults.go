package scenarios

import (
	"fmt"
)

// applyDefaults fills what the scenario leaves out; a value written in the file, even 0, stays
// and is validated.
func (s *Scenario) applyDefaults() {
	if !s.written("runs") {
		s.Runs = DefaultRuns
	}
	if s.Runs == AutoRuns && s.written("runs=auto") {
		s.SetAuto(s.MaxRuns)
	}
	if !s.written("order") {
		s.Order = DefaultOrder
	}
	for i := range s.Expect {
		e := &s.Expect[i]
		if e.Metric == "" && e.Workload != "" {
			e.Metric = MetricThroughput
		}
		// A change of two states' scenario is the second state's: named here, so that a run
		// whose states differ (an A/A run) finds the expectation not applicable to it.
		if e.State == "" && (e.Change != nil || e.Significant != nil) && len(s.States) == 2 {
			e.State = s.States[1].Name
		}
	}
	if o := s.Topology.OVS; o != nil && !s.written("topology.ovs.datapath") {
		o.Datapath = DatapathAuto
	}
	for i, l := range s.Topology.Links {
		if names, specs := l.kinds(); len(specs) == 1 {
			path := fmt.Sprintf("topology.links[%d].%s.", i, names[0])
			specs[0].setDefaults(func(key string) bool { return s.written(path + key) })
		}
	}
	for i, w := range s.Workloads {
		if names, specs := w.tools(); len(specs) == 1 {
			path := fmt.Sprintf("workloads[%d].%s.", i, names[0])
			specs[0].setDefaults(func(key string) bool { return s.written(path + key) })
		}
	}
}
