package kernels

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/coverage"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// TestGuestRequestCarriesTheRun: an A/B guest on the virtual clock runs `nsperf guest` on a
// request that holds its label, the run's settings as given, the gate, optional states and
// the clock; a bisection step's baseline is copied in and named; the request reads back.
func TestGuestRequestCarriesTheRun(t *testing.T) {
	minChange := 0.05
	k := Options{
		VM:           vm.Options{Kernels: []vm.Kernel{{Label: "base"}, {Label: "patched"}}},
		Scenario:     "/home/me/s.yaml",
		ScenarioFile: true,
		Baseline:     "/home/me/good.json",
		Run: RunSettings{Overrides: scenarios.Overrides{Auto: true, MaxRuns: 7, Duration: 2 * time.Second, Omit: -1},
			Policy: results.Policy{Alpha: 0.01}, MinChange: &minChange, IdleLimit: 3 * time.Second},
		Count:          []coverage.Target{{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c", Module: "openvswitch"}},
		CountTruncated: true,
	}
	o := k.guestOptions()
	if got := o.Args(1, vm.ClockVirtual); !reflect.DeepEqual(got, []string{"guest", vm.GuestDir + "/request.json"}) {
		t.Fatalf("guest command %q", got)
	}
	if o.Files["scenario.yaml"] != k.Scenario || o.Files["baseline.json"] != k.Baseline {
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
		Run: k.Run, VirtualTime: true, GateDir: vm.GuestDir, StatesOptional: true, Baseline: vm.GuestDir + "/baseline.json",
		Count: k.Count, CountTruncated: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request read back:\n got %+v\nwant %+v", got, want)
	}
	// The guest's plan counts the patch's functions before its measured runs.
	pl, err := GuestRequest{Version: RequestVersion, Command: CommandRun, Scenario: "pair", Out: "r.json", Count: k.Count}.Plan(pairScenario(t), &recordingMachine{})
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
	traced := Options{VM: vm.Options{Kernels: []vm.Kernel{{Label: "6.12"}}}, Scenario: "ovs-internal-tso", Trace: []string{"do_setup"}}
	if r := traced.request(0, vm.ClockVirtual); !r.StatesOptional || !reflect.DeepEqual(r.Trace, traced.Trace) {
		t.Errorf("a traced run: %+v (a state the kernel cannot apply must not stop the trace)", r)
	}
	one := Options{VM: vm.Options{Kernels: []vm.Kernel{{Label: "6.12"}}}, Scenario: "veth-bigtcp"}
	if r := one.request(0, vm.ClockWall); r.Scenario != "veth-bigtcp" || r.GateDir != "" || r.StatesOptional || r.VirtualTime {
		t.Errorf("one kernel on the wall clock: %+v", r)
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
}
