package kernels

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/fixture"
	"github.com/nsperf/nsperf/vm"

	"golang.org/x/sys/unix"
)

// TestGuestRequestCarriesTheRun: an A/B guest on the virtual clock runs `nsperf guest` on a
// request that holds its label, the run's settings as given, the gate, optional states and
// the clock; a bisection step's baseline is copied in and named; the request reads back.
func TestGuestRequestCarriesTheRun(t *testing.T) {
	minChange := 0.05
	scenarioFile := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(scenarioFile, []byte(fixture.PairScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	k := Plan{
		VM:             vm.Options{Kernels: []vm.Kernel{{Label: "base"}, {Label: "patched"}}},
		ScenarioArg:    scenarioFile,
		Baseline:       "/home/me/good.json",
		Overrides:      scenarios.Overrides{Auto: true, MaxRuns: 7, Duration: 2 * time.Second, Omit: -1},
		Run:            runner.Options{Policy: results.Policy{Alpha: 0.01}, MinChange: &minChange, Idle: runner.IdleGate{Limit: 3 * time.Second}},
		Count:          []coverage.Target{{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c", Module: "openvswitch"}},
		CountTruncated: true,
	}
	o := k.guestOptions()
	if got := o.Args(1, vm.ClockVirtual); !reflect.DeepEqual(got, []string{"guest", vm.GuestDir + "/request.json"}) {
		t.Fatalf("guest command %q", got)
	}
	if o.Files["scenario.yaml"] != k.ScenarioArg || o.Files["baseline.json"] != k.Baseline {
		t.Errorf("files copied into the guest: %v", o.Files)
	}
	files, err := o.Generated(1, vm.ClockVirtual)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), RequestFile)
	if err := os.WriteFile(path, files[RequestFile], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequest(path)
	if err != nil {
		t.Fatal(err)
	}
	want := GuestRequest{Version: RequestVersion, Command: CommandRun, Scenario: vm.GuestDir + "/scenario.yaml", Label: "patched", Out: vm.GuestDir + "/result.json",
		Run: RunSettings{Overrides: k.Overrides, Policy: k.Run.Policy, MinChange: &minChange, IdleLimit: 3 * time.Second}, VirtualTime: true, GateDir: vm.GuestDir, StatesOptional: true, Baseline: vm.GuestDir + "/baseline.json",
		Count: k.Count, CountTruncated: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request read back:\n got %+v\nwant %+v", got, want)
	}
	// The guest's plan counts the patch's functions before its measured runs.
	pl, err := GuestRequest{Version: RequestVersion, Command: CommandRun, Scenario: "pair", Out: "r.json", Count: k.Count}.Plan(context.Background(), pairScenario(t), &recordingMachine{})
	if err != nil || !reflect.DeepEqual(pl.Count, k.Count) {
		t.Errorf("the guest's plan: count %+v, %v", pl.Count, err)
	}
	probe := ProbeOptions(vm.Options{}, "json")
	files, err = probe.Generated(0, vm.ClockVirtual)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, files[RequestFile], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRequest(path); err != nil || got.Command != CommandProbe || got.Format != "json" || !got.VirtualTime || probe.Args(0, vm.ClockVirtual)[0] != "guest" {
		t.Errorf("probe request %+v, %v", got, err)
	}
	// On the wall clock the guest's waits keep their bounds.
	if files, err := probe.Generated(0, vm.ClockWall); err != nil || strings.Contains(string(files[RequestFile]), `"virtual_time": true`) {
		t.Errorf("probe on the wall clock: %s %v", files[RequestFile], err)
	}
	traced := Plan{VM: vm.Options{Kernels: []vm.Kernel{{Label: "6.12"}}}, ScenarioArg: "ovs-internal-tso", Trace: []string{"do_setup"}}
	if r := traced.guestRequest(0, vm.ClockVirtual); !r.StatesOptional || !reflect.DeepEqual(r.Trace, traced.Trace) {
		t.Errorf("a traced run: %+v (a state the kernel cannot apply must not stop the trace)", r)
	}
	one := Plan{VM: vm.Options{Kernels: []vm.Kernel{{Label: "6.12"}}}, ScenarioArg: "veth-bigtcp"}
	if r := one.guestRequest(0, vm.ClockWall); r.Scenario != "veth-bigtcp" || r.GateDir != "" || r.StatesOptional || r.VirtualTime {
		t.Errorf("one kernel on the wall clock: %+v", r)
	}
}

// TestGuestPlanIsTheHostPlan: a host's plan turned into a guest's request (guestRequest),
// written, read back and turned into the guest's plan (GuestRequest.Plan) runs the same
// scenario with the same changes, policy, bounds, label and functions to count and trace; only
// where the programs are and the clock's consequences differ.
func TestGuestPlanIsTheHostPlan(t *testing.T) {
	minChange := 0.03
	host := Plan{ScenarioArg: "pair", VM: vm.Options{Kernels: []vm.Kernel{{Label: "6.12-patched"}}},
		Overrides: scenarios.Overrides{Runs: 3, Duration: 2 * time.Second, Omit: 0},
		Run: runner.Options{Policy: results.Policy{Alpha: 0.01, CVLimit: 0.1}, MinChange: &minChange, Idle: runner.IdleGate{Limit: 4 * time.Second},
			Built: map[string]tool.Built{"udpgso_bench_tx": {Path: "/var/cache/x/udpgso_bench_tx", Provenance: "built from /src"}}},
		Count: []coverage.Target{{Function: "veth_xmit", File: "drivers/net/veth.c"}}, CountTruncated: true, Trace: []string{"veth_xmit", "tcp_sendmsg"}}
	path := filepath.Join(t.TempDir(), RequestFile)
	data, err := json.Marshal(host.guestRequest(0, vm.ClockWall))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	req, err := ReadRequest(path)
	if err != nil {
		t.Fatal(err)
	}
	guest, err := req.Plan(context.Background(), pairScenario(t), &recordingMachine{})
	if err != nil {
		t.Fatal(err)
	}
	if guest.ScenarioArg != "pair" || !reflect.DeepEqual(guest.Overrides, host.Overrides) || guest.Scenario.Runs != 3 {
		t.Errorf("scenario %q, overrides %+v (runs %d), want the host's %+v", guest.ScenarioArg, guest.Overrides, guest.Scenario.Runs, host.Overrides)
	}
	g, h := guest.Run, host.Run
	if !reflect.DeepEqual(g.Policy, h.Policy) || *g.MinChange != minChange || g.Idle.Limit != h.Idle.Limit || g.Label != "6.12-patched" || g.VirtualTime || !g.StatesOptional {
		t.Errorf("the guest's run options %+v, the host's %+v", g, h)
	}
	if b := g.Built["udpgso_bench_tx"]; b.Path != vm.GuestDir+"/built-udpgso_bench_tx" || b.Provenance != "built from /src" {
		t.Errorf("built programs in the guest: %+v", g.Built)
	}
	if !reflect.DeepEqual(guest.Count, host.Count) || !guest.CountTruncated || !reflect.DeepEqual(guest.Trace, host.Trace) {
		t.Errorf("count %+v (truncated %v), trace %v", guest.Count, guest.CountTruncated, guest.Trace)
	}
	if guest.Run.BeforeRound != nil {
		t.Error("a single guest waits at a gate")
	}
}

// TestReadRequestRefuses: a request of another version, with an unknown field or without a
// scenario is refused, saying why.
func TestReadRequestRefuses(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"version": 9, "command": "run", "scenario": "s", "out": "o"}`, "version 9"},
		{`{"version": 1, "command": "run", "scenario": "s", "out": "o", "runs": 5}`, `unknown field "runs"`},
		{`{"version": 1, "command": "run", "out": "o"}`, "no scenario"},
		{`{"version": 1, "command": "probe"}`, "without a format"},
		{`{"version": 1, "command": "rm -rf", "scenario": "s", "out": "o"}`, `command "rm -rf"`},
		{`not json`, "invalid character"},
	} {
		path := filepath.Join(t.TempDir(), RequestFile)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRequest(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
	fifo := filepath.Join(t.TempDir(), RequestFile)
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRequest(fifo); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("a FIFO as the request: %v", err)
	}
}
