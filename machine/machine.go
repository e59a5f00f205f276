// Package machine is the seam between the run engine (package runner) and what it measures
// on: the interfaces a machine and one built topology implement, and the types that cross
// them. The engine knows only these; machine/host implements them with network namespaces on
// this machine (package topo), and the engine's tests with fakes that need no root.
package machine

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/netip"
	"time"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// Network is what the run loop needs of one built topology. *topo.Live is the real one (machine/host builds it); the
// loop's tests give it a fake with canned tool output, so that they need no root.
type Network interface {
	RunID() plan.RunID
	// StateCommands are the commands that put the devices into a state, for the result.
	StateCommands(scenarios.State) []string
	// Check returns every problem of the states at once (a *capability.Error for what
	// the kernel cannot do); CheckState those of one state.
	Check(states []scenarios.State) error
	CheckState(scenarios.State) error
	// Apply puts the topology into a state and returns it as read back: what each setting
	// kind recorded, and the devices' places (results.StateRecord.SetReadBack takes them).
	Apply(scenarios.State) (results.StateRecord, error)
	// Drift lists what differs from how the last Apply left it (a knob, a sysctl, a route).
	Drift() ([]string, error)
	// ClearTimeWait removes sockets left in TIME_WAIT on a port (`ss -K`).
	ClearTimeWait(ns string, port int) (int, error)
	// TCPInfo is the state of the busiest TCP connection in namespace ns to peer (`ss -ti`);
	// nil where there is none.
	TCPInfo(ns string, peer netip.Addr) (*TCPConnection, error)
	// CaptureTCP starts watching the TCP connections from namespace ns to peer: their
	// handshakes, for the window each client announced in its last ACK, and with every, each
	// segment, for the waits of the client's retransmissions.
	CaptureTCP(ns string, peer netip.Addr, every bool) (TCPCapture, error)
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
	// Keep leaves the topology up after the run, as it is (an error says what would not stay,
	// and the caller tears it down); Teardown removes it.
	Keep() error
	Teardown() error
}

// TCPConnection is one TCP connection as tcp_info shows it: its ports, what it has moved, and
// its state by the names of results.TCPInfoNames.
type TCPConnection struct {
	LocalPort, RemotePort uint16
	Moved                 uint64 // bytes, both ways
	DataSegments          uint64 // segments with data, both ways
	Info                  map[string]float64
}

// TCPCapture watches TCP connections (Network.CaptureTCP).
type TCPCapture interface {
	// Window is the window, in bytes, that the client announced in the last ACK of the
	// handshake of the connection between the ports; Latest of the latest handshake seen to
	// the remote port.
	Window(local, remote uint16) (uint32, bool)
	Latest(remote uint16) (uint32, bool)
	// Waits are how long each of the client's retransmissions on the connection between the
	// ports waited since its timers were last armed (a timer's time to fire); none
	// where not every segment was captured.
	Waits(local, remote uint16) []time.Duration
	// Close stops watching; its error is what stopped the capture early, if anything did.
	Close() error
}

// Machine is what a run needs of the host around its topologies: building them, the
// measuring lock, the programs installed and the facts a result records. host.Machine is
// the real one.
type Machine interface {
	// Build builds one case's topology under run id id; kept: it stays up after the run.
	Build(s *scenarios.Scenario, id plan.RunID, kept bool, progress io.Writer) (Network, error)
	NewRunID() plan.RunID
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

// BuildAs builds under run id id, or under a fresh one from newID when id is "", trying
// another fresh id on the rare collision with a run's that exists (fs.ErrExist).
func BuildAs[N any](id plan.RunID, newID func() plan.RunID, build func(plan.RunID) (N, error)) (N, error) {
	for attempt := 0; ; attempt++ {
		use := id
		if use == "" {
			use = newID()
		}
		n, err := build(use)
		if err != nil && id == "" && errors.Is(err, fs.ErrExist) && attempt < 5 {
			continue
		}
		return n, err
	}
}
