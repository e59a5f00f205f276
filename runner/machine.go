package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/syscheck"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// Network is what the run loop needs of one built topology. *topo.Live is the real one; the
// loop's tests give it a fake with canned tool output, so that they need no root.
type Network interface {
	RunID() topo.RunID
	// StateCommands are the commands that put the devices into a state, for the result.
	StateCommands(scenarios.State) []string
	// Check returns every problem of the states at once (a *topo.CapabilityError for what
	// the kernel cannot do); CheckState those of one state.
	Check(states []scenarios.State) error
	CheckState(scenarios.State) error
	// Apply puts the devices into a state and returns them as read back.
	Apply(scenarios.State) (map[string]topo.DeviceState, error)
	// Drift lists the devices that differ from how Apply left them.
	Drift(applied map[string]topo.DeviceState) ([]string, error)
	// ClearTimeWait removes sockets left in TIME_WAIT on a port (`ss -K`).
	ClearTimeWait(ns string, port int) (int, error)
	// Start runs argv in a namespace of the topology.
	Start(ctx context.Context, ns string, argv []string) (proc.Process, error)
	// CountBigPackets sets up the counting of packets above 64 KiB on devices ("ns/dev") and
	// says how they are counted, or why not.
	CountBigPackets(devices []string) string
	// Counters reads the kernel's counters of the topology and of the CPUs cpus.
	Counters(cpus []int) results.Counters
	// Warnings are what the topology could not do as the scenario says.
	Warnings() []string
	// Failed delivers the error of a daemon the topology needs (ovs-vswitchd) that died.
	Failed() <-chan error
	// OVS describes the Open vSwitch the topology uses; all "" without OVS.
	OVS() (version, datapath, instance string)
	// Keep leaves the topology up after the run; Teardown removes it.
	Keep()
	Teardown() error
}

// Machine is what a run needs of the host around its topologies: building them, the
// measuring lock, the programs installed and the facts a result records. Host is the real
// one.
type Machine interface {
	// Build builds one case's topology under run id id; kept: it stays up after the run.
	Build(s *scenarios.Scenario, id topo.RunID, kept bool, progress io.Writer) (Network, error)
	NewRunID() topo.RunID
	// LockMeasuring takes the machine's measuring lock, or with concurrent returns at once
	// naming the run that holds it (busy).
	LockMeasuring(ctx context.Context, scenario string, concurrent bool, progress io.Writer) (release func(), busy string, err error)
	// LookPath finds a program as exec.LookPath does.
	LookPath(binary string) (string, error)
	// CPUTimes are the machine's CPU time counters now (/proc/stat).
	CPUTimes() procstat.Snapshot
	// Environment describes the machine, with the tools' versions and how it is tuned for
	// the CPUs the tools are pinned to (nil: every CPU).
	Environment(tools []envinfo.Tool, pinned []int) results.Environment
}

// Host is this machine: topologies in network namespaces, built by package topo.
type Host struct{}

// Build implements Machine.
func (Host) Build(s *scenarios.Scenario, id topo.RunID, kept bool, progress io.Writer) (Network, error) {
	live, err := buildLive(s, id, kept, progress)
	if err != nil {
		return nil, err // a nil *topo.Live is not a nil Network
	}
	return live, nil
}

func buildLive(s *scenarios.Scenario, id topo.RunID, kept bool, progress io.Writer) (*topo.Live, error) {
	p := topo.NewPlan(s, id)
	if dp := p.Datapath(); dp != "" {
		fmt.Fprintf(progress, "building %s as run %s (OVS datapath %s)\n", s.Name, id, dp)
	} else {
		fmt.Fprintf(progress, "building %s as run %s\n", s.Name, id)
	}
	return topo.Build(p, topo.BuildOptions{Kept: kept})
}

// NewRunID implements Machine.
func (Host) NewRunID() topo.RunID { return topo.NewRunID() }

// LockMeasuring implements Machine: one measuring run at a time per machine, guests
// included, since two at once halve each other's figures.
func (Host) LockMeasuring(ctx context.Context, scenario string, concurrent bool, progress io.Writer) (func(), string, error) {
	lock, busy, err := runstate.LockMeasuring(ctx, scenario, concurrent, progress)
	if err != nil {
		return nil, "", err
	}
	return lock.Release, busy, nil
}

// CPUTimes implements Machine.
func (Host) CPUTimes() procstat.Snapshot { return procstat.Read() }

// LookPath implements Machine.
func (Host) LookPath(binary string) (string, error) { return exec.LookPath(binary) }

// Environment implements Machine.
func (Host) Environment(tools []envinfo.Tool, pinned []int) results.Environment {
	f := envinfo.Collect(tools)
	return results.Environment{KernelRelease: f.KernelRelease, KernelVersion: f.KernelVersion, Machine: f.Machine,
		CPUModel: f.CPUModel, CPUs: f.CPUs, Tools: f.Tools, Hostname: f.Hostname, System: SystemFacts(pinned)}
}

// SystemFacts are nsperf check's items of this machine, for the CPUs the tools are pinned to.
func SystemFacts(pinned []int) []results.SystemFact {
	var out []results.SystemFact
	for _, it := range syscheck.Check("/", pinned, vm.KVMHangMarker()) {
		out = append(out, results.SystemFact{Name: it.Name, Value: it.Value, OK: it.OK, Advice: it.Advice})
	}
	return out
}

// ConcurrentWarning is the result's warning of a run measured while another held the
// measuring lock (--concurrent); where is "machine" or "host".
func ConcurrentWarning(busy, where string) string {
	return "measured while another nsperf run was measuring on this " + where + " (" + busy + "; --concurrent): both runs' figures may be skewed"
}

// build builds a case's topology under run id id, or under a fresh one when id is "",
// retrying on the rare collision of a fresh id with a run's that exists.
func build(m Machine, s *scenarios.Scenario, id topo.RunID, kept bool, progress io.Writer) (Network, error) {
	for attempt := 0; ; attempt++ {
		use := id
		if use == "" {
			use = m.NewRunID()
		}
		n, err := m.Build(s, use, kept, progress)
		if err != nil && id == "" && errors.Is(err, fs.ErrExist) && attempt < 5 {
			continue
		}
		return n, err
	}
}

// Up builds a scenario's topology (its first case) and applies its baseline state, leaving
// both in place.
func Up(s *scenarios.Scenario, progress io.Writer) (*topo.Live, error) {
	first := s.Expand()[0].Scenario
	n, err := build(Host{}, first, "", true, progress)
	if err != nil {
		return nil, err
	}
	live := n.(*topo.Live)
	err = live.Check(first.States[:1])
	if err == nil {
		_, err = live.Apply(first.States[0])
	}
	if err != nil {
		return nil, errors.Join(err, live.Teardown())
	}
	live.Keep()
	return live, nil
}
