// Package topo builds a scenario's topology in network namespaces by carrying out the steps
// of package topo/plan through netlink, ethtool ioctls and libovsdb; it applies and reads back
// states, and tears it all down again.
package topo

import (
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// RunID names one run (see plan.RunID).
type RunID = plan.RunID

// NewRunID returns a random run id; ParseRunID checks one given by a user.
var (
	NewRunID   = plan.NewRunID
	ParseRunID = plan.ParseRunID
)

// PlanFacts are what a plan needs to know of this machine: the OVS datapath auto stands for, and
// where state files live.
func PlanFacts() plan.Facts {
	return plan.Facts{Datapath: ovs.DetectDatapath(), StateDir: runstate.Dir}
}

// NewPlan plans one case of a scenario on this machine.
func NewPlan(s *scenarios.Scenario, id RunID) *plan.Plan { return plan.New(s, id, PlanFacts()) }
