// Package host is the machine a run measures on when it is this one: topologies in network
// namespaces built by package topo, the measuring lock of topo/runstate, the programs on PATH
// and the facts of this host. It implements machine.Machine for the run engine.
package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/syscheck"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// *topo.Live is the host's built topology.
var _ machine.Network = (*topo.Live)(nil)

// Machine is this host: topologies in network namespaces, built by package topo.
type Machine struct{}

// Build implements Machine.
func (Machine) Build(s *scenarios.Scenario, id plan.RunID, kept bool, progress io.Writer) (machine.Network, error) {
	live, err := buildLive(s, id, kept, progress)
	if err != nil {
		return nil, err // a nil *topo.Live is not a nil Network
	}
	return live, nil
}

func buildLive(s *scenarios.Scenario, id plan.RunID, kept bool, progress io.Writer) (*topo.Live, error) {
	p := topo.NewPlan(s, id)
	if dp := p.Datapath(); dp != "" {
		fmt.Fprintf(progress, "building %s as run %s (OVS datapath %s)\n", s.Name, id, dp)
	} else {
		fmt.Fprintf(progress, "building %s as run %s\n", s.Name, id)
	}
	return topo.Build(p, topo.BuildOptions{Kept: kept})
}

// NewRunID implements Machine.
func (Machine) NewRunID() plan.RunID { return topo.NewRunID() }

// LockMeasuring implements Machine: one measuring run at a time per machine, guests
// included, since two at once halve each other's figures.
func (Machine) LockMeasuring(ctx context.Context, scenario string, concurrent bool, progress io.Writer) (func(), string, error) {
	lock, busy, err := runstate.LockMeasuring(ctx, scenario, concurrent, progress)
	if err != nil {
		return nil, "", err
	}
	return lock.Release, busy, nil
}

// CPUTimes implements Machine.
func (Machine) CPUTimes() procstat.Snapshot { return procstat.Read() }

// LookPath implements Machine.
func (Machine) LookPath(binary string) (string, error) { return exec.LookPath(binary) }

// Environment implements Machine.
func (Machine) Environment(tools []envinfo.Tool, pinned []int) results.Environment {
	f := Collect(tools)
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

// Up builds a scenario's topology (its first case) and applies its baseline state, leaving
// both in place.
func Up(s *scenarios.Scenario, progress io.Writer) (*topo.Live, error) {
	first := s.Expand()[0].Scenario
	live, err := machine.BuildAs("", topo.NewRunID, func(id plan.RunID) (*topo.Live, error) { return buildLive(first, id, true, progress) })
	if err != nil {
		return nil, err
	}
	err = live.Check(first.States[:1])
	if err == nil {
		_, err = live.Apply(first.States[0])
	}
	if err == nil {
		// What stays once this process is gone, read back: up says the state only if so.
		if err = live.Keep(); err != nil {
			err = fmt.Errorf("state %s: %w", first.States[0].Name, err)
		}
	}
	if err != nil {
		return nil, errors.Join(err, live.Teardown())
	}
	return live, nil
}

// Collect reads the kernel, CPU and the versions of the given tools.
func Collect(tools []envinfo.Tool) envinfo.Facts {
	env := envinfo.Facts{CPUs: runtime.NumCPU(), Tools: map[string]string{}}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.KernelRelease = unix.ByteSliceToString(u.Release[:])
		env.KernelVersion = unix.ByteSliceToString(u.Version[:])
		env.Machine = unix.ByteSliceToString(u.Machine[:])
		env.Hostname = unix.ByteSliceToString(u.Nodename[:])
	}
	env.CPUModel = cpuModel()
	for _, t := range tools {
		out, err := exec.Command(t.Argv[0], t.Argv[1:]...).CombinedOutput()
		if err != nil && len(out) == 0 {
			env.Tools[t.Name] = "unavailable: " + err.Error()
			continue
		}
		if t.Parse != nil {
			env.Tools[t.Name] = t.Parse(string(out))
		} else {
			env.Tools[t.Name] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		}
	}
	return env
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
