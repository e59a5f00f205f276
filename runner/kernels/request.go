package kernels

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// RequestFile is the request's name in a guest's exchange directory; the guest runs
// `nsperf guest /nsperf/request.json`.
const RequestFile = "request.json"

// RequestVersion is the version of GuestRequest's JSON. Host and guest run the same binary,
// so another version is a guest started by hand with a stale file.
const RequestVersion = 1

// GuestRequest is what the host's nsperf asks of the nsperf in a guest, written as
// RequestFile into the guest's exchange directory: every setting of the guest's run is a field
// here, none a hidden command-line flag.
type GuestRequest struct {
	Version int `json:"version"`
	// Command is what the guest does: CommandRun (measure a scenario) or CommandProbe.
	Command string `json:"command"`
	// Format is the probe's output format (CommandProbe).
	Format string `json:"format,omitempty"`
	// Scenario is a shipped scenario's name or the scenario file's path in the guest.
	Scenario string `json:"scenario"`
	Label    string `json:"label"`
	// Out is the result's path in the guest, in its exchange directory.
	Out string      `json:"out"`
	Run RunSettings `json:"run"`
	// VirtualTime: the guest's clock is QEMU's icount. Its waits are unbounded (the host's
	// deadline bounds the guest) and it does not wait for idle CPUs: work on the host cannot
	// reach a figure in virtual time.
	VirtualTime bool `json:"virtual_time"`
	// GateDir is where a guest of an A/B run waits for its turn before each round
	// (vm.GuestGate); "" for a single guest.
	GateDir string `json:"gate_dir,omitempty"`
	// StatesOptional: a state this kernel cannot apply is recorded as unavailable, and the
	// others are measured (an A/B run, a bisection step).
	StatesOptional bool `json:"states_optional"`
	// Baseline is the path in the guest of a bisection step's known-good result: an adaptive
	// run's looks decide against it.
	Baseline string `json:"baseline,omitempty"`
	// Count are the functions of the patch whose calls the guest counts before measuring.
	Count          []coverage.Target `json:"count,omitempty"`
	CountTruncated bool              `json:"count_truncated,omitempty"`
	// Trace are the functions the guest traces while it runs the scenario (nsperf coverage).
	Trace []string `json:"trace,omitempty"`
}

// What a guest is asked to do.
const (
	CommandRun   = "run"
	CommandProbe = "probe"
)

// guestArgs is the guest's command line: `nsperf guest` on its request.
func guestArgs(int, string) []string { return []string{"guest", vm.GuestDir + "/" + RequestFile} }

// ProbeOptions are a probe's guest settings: `nsperf probe` in the given format, in the guest.
func ProbeOptions(o vm.Options, format string) vm.Options {
	o.Generated = func(_ int, clock string) (map[string][]byte, error) {
		req := GuestRequest{Version: RequestVersion, Command: CommandProbe, Format: format, VirtualTime: clock == vm.ClockVirtual}
		data, err := json.MarshalIndent(req, "", "  ")
		return map[string][]byte{RequestFile: data}, err
	}
	o.Args = guestArgs
	return o
}

// RunSettings are the run settings given on the host, which a guest's run takes as they are.
type RunSettings struct {
	Overrides scenarios.Overrides `json:"overrides"`
	Policy    results.Policy      `json:"policy"` // zero fields: the scenario's
	MinChange *float64            `json:"min_change,omitempty"`
	// IdleLimit bounds the wait for idle pinned CPUs before a round; 0: the default, <0: none.
	IdleLimit time.Duration `json:"idle_limit"`
	// Built are the programs the host built from a kernel tree for the scenario's tools, at
	// their host paths (the guest sees the host's files), with their provenance.
	Built map[string]tool.Built `json:"built,omitempty"`
}

// guestRequest is what guest i of the plan's guests (p.VM.Kernels, prepared) is asked on
// the given clock: the one place a plan becomes a guest's request (GuestRequest.Plan is the
// way back, in the guest).
func (p Plan) guestRequest(i int, clock string) GuestRequest {
	req := GuestRequest{Version: RequestVersion, Command: CommandRun, Scenario: p.ScenarioArg, Label: p.VM.Kernels[i].Label, Out: vm.GuestDir + "/result.json",
		Run:         RunSettings{Overrides: p.Overrides, Policy: p.Run.Policy, MinChange: p.Run.MinChange, IdleLimit: p.Run.Idle.Limit},
		VirtualTime: clock == vm.ClockVirtual, Count: p.Count, CountTruncated: p.CountTruncated, Trace: p.Trace}
	if scenarioIsFile(p.ScenarioArg) {
		req.Scenario = vm.GuestDir + "/scenario.yaml"
	}
	// In virtual time the floor follows the instrument (results.Repeatability), unless the
	// command line or the scenario sets one.
	if req.VirtualTime && p.Run.MinChange == nil && p.Scenario != nil && p.Scenario.MinChange == nil {
		pol := p.virtualFloor()
		req.Run.Policy, req.Run.MinChange = pol, &pol.MinChange
	}
	if len(p.Run.Built) > 0 {
		// The guest runs its copies in the exchange directory (guestOptions): the host's
		// paths may be where it sees nothing.
		req.Run.Built = map[string]tool.Built{}
		for name, b := range p.Run.Built {
			b.Path = vm.GuestDir + "/" + builtName(name)
			req.Run.Built[name] = b
		}
	}
	if len(p.VM.Kernels) > 1 {
		// A state one kernel cannot apply is what an A/B of a patch may be about: each
		// guest records it as unavailable and measures the rest.
		req.GateDir, req.StatesOptional = vm.GuestDir, true
	}
	if len(p.Trace) > 0 {
		// A trace records what the kernel can run: a state it cannot apply is left out.
		req.StatesOptional = true
	}
	if p.Baseline != "" {
		// A bisection step measures what it can: a state this kernel lost is judged against
		// the baseline (bad), not a reason to stop.
		req.Baseline, req.StatesOptional = vm.GuestDir+"/baseline.json", true
	}
	return req
}

// builtName is a built program's name in the guest's exchange directory.
func builtName(program string) string { return "built-" + program }

// maxRequest bounds a guest's request: the functions a coverage run traces make it about 1 MB.
const maxRequest = 64 << 20

// ReadRequest reads a guest's request, strictly: a file that is not regular or is larger than
// maxRequest, an unknown field or another version is refused.
func ReadRequest(path string) (GuestRequest, error) {
	var req GuestRequest
	data, err := safefile.ReadRegular(path, maxRequest)
	if err != nil {
		return req, fmt.Errorf("guest request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("guest request %s: %w", path, err)
	}
	if req.Version != RequestVersion {
		return req, fmt.Errorf("guest request %s: version %d, this nsperf reads %d: host and guest must run the same nsperf", path, req.Version, RequestVersion)
	}
	switch {
	case req.Command == CommandRun && (req.Scenario == "" || req.Out == ""):
		return req, fmt.Errorf("guest request %s: no scenario or no result path", path)
	case req.Command == CommandProbe && req.Format == "":
		return req, fmt.Errorf("guest request %s: a probe without a format", path)
	case req.Command != CommandRun && req.Command != CommandProbe:
		return req, fmt.Errorf("guest request %s: command %q: want %s or %s", path, req.Command, CommandRun, CommandProbe)
	}
	return req, nil
}

// Plan is what the guest carries out for its request, here: s (the scenario as the host
// named it, loaded in the guest) with the host's changes applied, the run's settings, in an
// A/B the wait for its turn before each round (until ctx ends), and, for a bisection step,
// looks decided against the known-good kernel's result.
func (req GuestRequest) Plan(ctx context.Context, s *scenarios.Scenario, m machine.Machine) (Plan, error) {
	if err := req.Run.Overrides.Apply(s); err != nil {
		return Plan{}, inputerr.Error{Err: err}
	}
	opt := runner.Options{Out: req.Out, Label: req.Label, Policy: req.Run.Policy, MinChange: req.Run.MinChange,
		StatesOptional: req.StatesOptional, VirtualTime: req.VirtualTime, Machine: m, Built: req.Run.Built}
	opt.Idle.Limit = req.Run.IdleLimit
	if req.VirtualTime {
		opt.Idle.Limit = -1 // work on the host cannot reach a figure in virtual time
	}
	if req.GateDir != "" {
		opt.BeforeRound = vm.GuestGate(ctx, req.GateDir)
	}
	if req.Baseline != "" {
		base, _, err := results.ReadFile(req.Baseline)
		if err != nil {
			return Plan{}, fmt.Errorf("the bisection's baseline: %w", err)
		}
		pol := runner.ResolvePolicy(s, opt).Effective()
		workloads := make([]string, len(s.Workloads))
		for i, w := range s.Workloads {
			workloads[i] = w.Name
		}
		// An adaptive step stops as soon as this kernel is decided against the good one.
		opt.Look = func(cs results.Case, gates map[string][]string, alpha float64) []string {
			return compare.Look(base, cs, workloads, gates, alpha, pol.CVLimit, pol.MinChange)
		}
	}
	return Plan{Scenario: s, ScenarioArg: req.Scenario, Overrides: req.Run.Overrides, Run: opt, Count: req.Count, CountTruncated: req.CountTruncated, Trace: req.Trace}, nil
}
