package kernels

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/fixture"
	"github.com/nsperf/nsperf/topo/plan"
)

// recordingMachine is a machine that records the scenario it is asked to build and refuses
// to build it: enough to see where Execute runs a plan and with which scenario.
type recordingMachine struct{ built []*scenarios.Scenario }

func (m *recordingMachine) Build(s *scenarios.Scenario, _ plan.RunID, _ bool, _ io.Writer) (machine.Network, error) {
	m.built = append(m.built, s)
	return nil, capability.Missing("the recording machine builds nothing")
}
func (m *recordingMachine) NewRunID() plan.RunID { return "nsp0001" }
func (m *recordingMachine) LockMeasuring(context.Context, string, bool, io.Writer) (func(), string, error) {
	return func() {}, "", nil
}
func (m *recordingMachine) CPUTimes() procstat.Snapshot            { return procstat.Snapshot{} }
func (m *recordingMachine) LookPath(binary string) (string, error) { return "/fake/" + binary, nil }
func (m *recordingMachine) Environment([]envinfo.Tool, []int) results.Environment {
	return results.Environment{KernelRelease: "fake"}
}

func pairScenario(t *testing.T) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("pair.yaml", []byte(fixture.PairScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExecuteHere: a plan without kernels or a patch runs on the plan's machine, with the
// scenario the plan carries (loaded once by the caller, never again).
func TestExecuteHere(t *testing.T) {
	s := pairScenario(t)
	m := &recordingMachine{}
	_, err := Execute(context.Background(), Plan{Scenario: s, ScenarioArg: "pair.yaml", Run: runner.Options{Machine: m, Out: filepath.Join(t.TempDir(), "r.json")}})
	if !errors.Is(err, capability.ErrMissing) {
		t.Errorf("err %v, want the machine's refusal", err)
	}
	if len(m.built) == 0 || m.built[0] != s {
		t.Errorf("the machine was asked to build %v, want the plan's scenario itself", m.built)
	}
}

// fakeImage writes the first bytes of an x86 kernel image of release.
func fakeImage(t *testing.T, dir, release string) string {
	t.Helper()
	data := make([]byte, 0x400)
	copy(data[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(data[0x206:], 0x20f)
	binary.LittleEndian.PutUint16(data[0x20e:], 0x300-0x200)
	copy(data[0x300:], release+" (fake) #1 SMP\x00")
	path := filepath.Join(dir, "vmlinuz-"+release)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExecutePatch: a plan with a patch builds first, through the plan's builder, for the
// plan's scenario and with the patch's bytes as the caller read them; the build's two kernels
// are then the run's, labelled base and patched, and the build's lines are said. The guests
// cannot boot here (no nsperf binary to give them): the run stops there.
func TestExecutePatch(t *testing.T) {
	s := pairScenario(t)
	dir := t.TempDir()
	base, patched := fakeImage(t, dir, "6.12.0-base"), fakeImage(t, dir, "6.12.0-patched")
	var got kbuild.BuildRequest
	builder := func(_ context.Context, req kbuild.BuildRequest) (*kbuild.Manifest, error) {
		got = req
		return &kbuild.Manifest{Build: results.Build{Key: "k", Source: "debian linux-source-6.12", Patches: []results.BuildPatch{{Subject: "[PATCH] veth: faster", SHA256: strings.Repeat("a", 64)}}}, Cached: true,
			Kernels: []kbuild.BuiltKernel{{Label: "base", Image: base}, {Label: "patched", Image: patched}}}, nil
	}
	var progress bytes.Buffer
	p := Plan{Scenario: s, ScenarioArg: "pair", Run: runner.Options{Machine: &recordingMachine{}, Progress: &progress, Out: filepath.Join(dir, "r.json")},
		Patch: &kbuild.BuildRequest{Patches: []string{"msg.mbox"}, Inputs: map[string][]byte{"msg.mbox": []byte("the message")}}, Builder: builder}
	p.VM.Binary = filepath.Join(dir, "no-nsperf")
	_, err := Execute(context.Background(), p)
	var input inputerr.Error
	if err == nil || errors.As(err, &input) {
		t.Fatalf("the kernels were not prepared, or the guests booted without an nsperf binary: %v", err)
	}
	if len(got.Scenarios) != 1 || got.Scenarios[0] != s || string(got.Inputs["msg.mbox"]) != "the message" || got.Progress == nil {
		t.Errorf("the builder was asked: %+v", got)
	}
	if !strings.Contains(progress.String(), "build: cached (k): base and patched") || !strings.Contains(progress.String(), "[PATCH] veth: faster") {
		t.Errorf("the build is not said:\n%s", progress.String())
	}
	// A patch with kernels of its own, or with one label, is refused before any build.
	got = kbuild.BuildRequest{}
	for _, bad := range []Request{{Kernels: []string{base}}, {Labels: []string{"one"}}} {
		q := p
		q.Kernels = bad
		if _, err := Execute(context.Background(), q); err == nil || got.Patches != nil {
			t.Errorf("%+v: err %v, built %v", bad, err, got.Patches)
		}
	}
}

// TestCountScenario: the counting pass runs the plan's scenario with its changes, one short
// run per state and workload, nothing left out at the start, never adaptive.
func TestCountScenario(t *testing.T) {
	s := pairScenario(t)
	ov := scenarios.Overrides{Auto: true, MaxRuns: 9, Duration: 30 * time.Second, Omit: 5 * time.Second, AA: true}
	if err := ov.Apply(s); err != nil {
		t.Fatal(err)
	}
	c, err := countScenario(Plan{Scenario: s, Overrides: ov})
	if err != nil {
		t.Fatal(err)
	}
	if c.Runs != 1 || c.Adaptive || len(c.States) != 2 || c.States[1].Name != c.States[0].Name+"-again" {
		t.Errorf("runs %d, adaptive %v, states %+v", c.Runs, c.Adaptive, c.States)
	}
	for _, w := range c.Workloads {
		if w.Length() != CountRunLength {
			t.Errorf("workload %s runs %s, want %s", w.Name, w.Length(), CountRunLength)
		}
	}
	if s.Runs == 1 || s.Workloads[0].Length() == CountRunLength {
		t.Errorf("the plan's own scenario was changed")
	}
	if got := countPassLength(s); got != 2*time.Duration(len(s.Workloads))*CountRunLength {
		t.Errorf("count pass length %s", got)
	}
}

// TestLoad: a plan's scenario is loaded for where it runs with the plan's changes, once its
// parts go together: a build's settings need a series, at most two kernels, labels need
// kernels, a single label labels the run; a result that cannot be written and a scenario that
// does not load are refused before anything runs.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := Plan{ScenarioArg: "veth-bigtcp", Overrides: scenarios.Overrides{Runs: 3, Omit: -1}, Kernels: Request{Labels: []string{"mine"}}, Run: runner.Options{Out: filepath.Join(dir, "r.json")}}
	if err := p.Load(0); err != nil || p.Scenario == nil || p.Scenario.Name != "veth-bigtcp" || p.Scenario.Runs != 3 || p.Run.Label != "mine" {
		t.Fatalf("%v: %+v", err, p)
	}
	// In a guest, its vCPUs decide which CPUs exist: one vCPU has no CPU 1 to pin to.
	guest := Plan{ScenarioArg: "veth-bigtcp", Kernels: Request{Kernels: []string{"/boot/vmlinuz"}}}
	var problems scenarios.Problems
	if err := guest.Load(1); !errors.As(err, &problems) {
		t.Errorf("a scenario pinned to CPU 1 in a guest of one vCPU: %v", err)
	}
	var input inputerr.Error
	for _, bad := range []struct {
		plan Plan
		want string
	}{
		{Plan{ScenarioArg: "veth-bigtcp", Patch: &kbuild.BuildRequest{Config: "minimal"}}, "give --patch too"},
		{Plan{ScenarioArg: "veth-bigtcp", Kernels: Request{Kernels: []string{"a", "b", "c"}}}, "--kernel given 3 times"},
		{Plan{ScenarioArg: "veth-bigtcp", Kernels: Request{Labels: []string{"a", "b"}}}, "--label given more than once"},
		{Plan{ScenarioArg: "veth-bigtcp", Kernels: Request{Kernels: []string{"a"}}}, "--vm-cpus -1"},
		{Plan{ScenarioArg: "no-such-scenario"}, "no-such-scenario"},
		{Plan{ScenarioArg: "veth-bigtcp", Overrides: scenarios.Overrides{MaxRuns: 5}}, "--max-runs 5"},
		{Plan{ScenarioArg: "veth-bigtcp", Run: runner.Options{Out: dir}}, "--out: " + dir},
	} {
		if err := bad.plan.Load(-1); !errors.As(err, &input) || !strings.Contains(err.Error(), bad.want) || bad.plan.Scenario != nil {
			t.Errorf("%+v: %v, want an input error with %q", bad.plan, err, bad.want)
		}
	}
}

// TestCoverageOf: coverage loads every shipped scenario when none is named, each with the
// tracing schedule (a second a run, or the shortest its tool measures in); a scenario that does not exist is refused before anything is fetched.
func TestCoverageOf(t *testing.T) {
	c, err := CoverageOf(nil, 0)
	shipped, _ := scenarios.Shipped()
	if err != nil || len(c.Args) != len(shipped) || len(c.Scenarios) != len(shipped) {
		t.Fatalf("%d of %d scenarios: %v", len(c.Scenarios), len(shipped), err)
	}
	for _, s := range c.Scenarios {
		for _, w := range s.Workloads {
			// A transfer of a fixed size is as long as its bytes take; its length a limit. A
			// tool that measures only in longer runs takes its shortest (pktgen with xdp-bench).
			want := time.Second
			if p, ok := w.Spec().(*scenarios.Pktgen); ok && p.XDPBench != "" {
				want = scenarios.MinXDPBenchDuration
			}
			if s.Runs != 1 || !w.LengthIsLimit() && w.Length() != want {
				t.Errorf("%s %s: %d runs of %s, want the tracing schedule", s.Name, w.Name, s.Runs, w.Length())
			}
		}
	}
	var input inputerr.Error
	if _, err := CoverageOf([]string{"veth-bigtcp", "no-such-scenario"}, 0); !errors.As(err, &input) || !strings.Contains(err.Error(), "no-such-scenario") {
		t.Errorf("no-such-scenario: %v", err)
	}
}
