package topo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/netnsx"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/topo/plan"
)

const napiStates = `  - name: softirq
    offloads: {server/eth0: {rx-gro: "on"}}
  - name: tuned
    offloads: {server/eth0: {rx-gro: "on"}}
    devices: {server/eth0: {threaded: 1, gro_flush_timeout: 20000, napi_defer_hard_irqs: 2}}
  - name: no-napi
`

// TestNAPIKnobs: the NAPI knobs without a netlink attribute are set and read back through
// the device's own namespace's sysfs (the host's /sys lists none of the run's devices), reset
// to their values as built in the state that leaves them out, and a change from outside is
// drift; the plan prints the sysfs write.
func TestNAPIKnobs(t *testing.T) {
	s := vethScenario(t, napiStates)
	l := buildRoot(t, s)
	built := l.Pristine()["server/eth0"]
	if built["threaded"] != 0 || built["napi_defer_hard_irqs"] != 0 {
		t.Errorf("as built: %v", built)
	}
	if _, ok := l.Pristine()["client/eth0"]["threaded"]; ok {
		t.Errorf("client/eth0, whose NAPI knobs no state sets, had them read: %v", l.Pristine()["client/eth0"])
	}
	softirq, tuned := s.States[0], s.States[1]
	for round := 0; round < 2; round++ {
		devices, err := l.Apply(tuned)
		if err != nil {
			t.Fatal(err)
		}
		a := devices.Devices["server/eth0"]
		if a["threaded"] != 1 || a["gro_flush_timeout"] != 20000 || a["napi_defer_hard_irqs"] != 2 {
			t.Errorf("round %d, tuned: %v", round, a)
		}
		reaches(t, l, "198.18.0.2")
		if drift, err := l.Drift(); err != nil || len(drift) != 0 {
			t.Errorf("drift right after applying: %v %v", drift, err)
		}
		devices, err = l.Apply(softirq)
		if err != nil {
			t.Fatal(err)
		}
		if a := devices.Devices["server/eth0"]; a["threaded"] != uint64(built["threaded"]) || a["gro_flush_timeout"] != uint64(built["gro_flush_timeout"]) {
			t.Errorf("round %d, softirq: %v, want as built %v", round, a, built)
		}
	}
	// A state without GRO, so without NAPI, after the tuned one: the knobs are reset while
	// the NAPI still exists (the kernel refuses them on a device without one, and would keep
	// threaded for the next NAPI the device gets), so the state after it starts as built.
	if _, err := l.Apply(tuned); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(s.States[2]); err != nil {
		t.Fatalf("the state without NAPI after the tuned one: %v", err)
	}
	if devices, err := l.Apply(softirq); err != nil || devices.Devices["server/eth0"]["threaded"] != 0 {
		t.Errorf("softirq after no-napi: %v %v", devices.Devices["server/eth0"], err)
	}
	if _, err := l.Apply(tuned); err != nil {
		t.Fatal(err)
	}
	knob, _ := knobs.Lookup("gro_flush_timeout")
	if err := l.setSysfsKnob("server/eth0", knob, 5); err != nil {
		t.Fatal(err)
	}
	if drift, err := l.Drift(); err != nil || len(drift) != 1 || drift[0] != "server/eth0 gro_flush_timeout is 5, applied 20000" {
		t.Errorf("drift %q %v", drift, err)
	}
	cmds := strings.Join(plan.StateShell(l.Plan.StateSteps(tuned)), "\n")
	if !strings.Contains(cmds, "ip netns exec "+l.Namespace("server")+" sh -c 'echo 1 > /sys/class/net/eth0/threaded'") {
		t.Errorf("commands:\n%s", cmds)
	}
}

// TestRPSCPUs: receive steering's mask is written to the device's receive queues, read back
// as hexadecimal, reset by a state that leaves it out, and a queue changed from outside is
// drift.
func TestRPSCPUs(t *testing.T) {
	s := vethScenario(t, "  - name: plain\n  - name: steered\n    devices: {server/eth0: {rps_cpus: 0x2}}\n")
	l := buildRoot(t, s)
	if built := l.Pristine()["server/eth0"]["rps_cpus"]; built != 0 {
		t.Errorf("as built: rps_cpus %x", built)
	}
	plain, steered := s.States[0], s.States[1]
	for round := 0; round < 2; round++ {
		devices, err := l.Apply(steered)
		if err != nil {
			t.Fatal(err)
		}
		if got := devices.Devices["server/eth0"]["rps_cpus"]; got != 2 {
			t.Errorf("round %d, steered: rps_cpus %x, want 2", round, got)
		}
		reaches(t, l, "198.18.0.2")
		devices, err = l.Apply(plain)
		if err != nil {
			t.Fatal(err)
		}
		if got := devices.Devices["server/eth0"]["rps_cpus"]; got != 0 {
			t.Errorf("round %d, plain: rps_cpus %x, want 0 as built", round, got)
		}
	}
	if _, err := l.Apply(steered); err != nil {
		t.Fatal(err)
	}
	// One queue set apart from outside (`echo 1 > .../queues/rx-0/rps_cpus`).
	ns := l.spaces["server"]
	if err := netnsx.WithSysfs(ns.fd, func(sys string) error {
		return os.WriteFile(filepath.Join(sys, "class/net/eth0/queues/rx-0/rps_cpus"), []byte("1\n"), 0)
	}); err != nil {
		t.Fatal(err)
	}
	if drift, err := l.Drift(); err != nil || len(drift) != 1 || drift[0] != "server/eth0 rps_cpus is 1, applied 2" {
		t.Errorf("drift after a queue changed: %q %v", drift, err)
	}
	cmds := strings.Join(plan.StateShell(l.Plan.StateSteps(steered)), "\n")
	if !strings.Contains(cmds, "ip netns exec "+l.Namespace("server")+" sh -c 'echo 2 | tee /sys/class/net/eth0/queues/rx-*/rps_cpus >/dev/null'") {
		t.Errorf("commands:\n%s", cmds)
	}
}

// TestReadSysfsKnobQueues: a knob kept per queue is read from every queue's file, which must
// agree; a mask is hexadecimal, in words of 32 bits.
func TestReadSysfsKnobQueues(t *testing.T) {
	rps, _ := knobs.Lookup("rps_cpus")
	sys := t.TempDir()
	write := func(queue, text string) {
		dir := filepath.Join(sys, "class/net/eth0/queues", queue)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "rps_cpus"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := readSysfsKnob(sys, "eth0", rps); err == nil || !strings.Contains(err.Error(), "no /class/net/eth0/queues/rx-*/rps_cpus") {
		t.Errorf("no queue: %v", err)
	}
	write("rx-0", "00000000,0000000a\n")
	write("rx-1", "a\n")
	if v, err := readSysfsKnob(sys, "eth0", rps); err != nil || v != 0xa {
		t.Errorf("two queues at 0xa: %x %v", v, err)
	}
	write("rx-1", "2\n")
	if _, err := readSysfsKnob(sys, "eth0", rps); err == nil || err.Error() != "its queues differ: /class/net/eth0/queues/rx-0/rps_cpus is a, /class/net/eth0/queues/rx-1/rps_cpus is 2" {
		t.Errorf("queues apart: %v", err)
	}
}
