package topo

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

func loadDefault(t testing.TB) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load(scenarios.DefaultScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildDefault builds the default topology as root and makes the test check, at its very end,
// that nothing is left behind.
func buildDefault(t *testing.T) (*scenarios.Scenario, *Live) {
	t.Helper()
	testenv.RequireRoot(t)
	s := loadDefault(t)
	return s, buildChecked(t, s)
}

// buildChecked builds a scenario's topology and makes the test check, at its very end, that
// nothing is left behind.
func buildChecked(t *testing.T, s *scenarios.Scenario) *Live {
	t.Helper()
	before := testenv.Take(runstate.Dir)
	t.Cleanup(func() { testenv.CheckClean(t, before, runstate.Dir) })
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDesiredResetsWhatAStateLeavesOut(t *testing.T) {
	pristine := Attrs{"mtu": 1500, "gso_max_size": 65536, "gro_max_size": 65536, "gso_ipv4_max_size": 65536, "gro_ipv4_max_size": 65536, "gso_max_segs": 65535, "tso_max_size": 524280}
	got := Desired(pristine, scenarios.DeviceSettings{"gso_max_size": 185000})
	want := maps.Clone(pristine)
	want["gso_max_size"] = 185000
	if !maps.Equal(got, want) || pristine["gso_max_size"] != 65536 {
		t.Fatalf("Desired = %+v, want %+v", got, want)
	}
}

func TestCapabilityProblem(t *testing.T) {
	p := Attrs{"tso_max_size": 65536, "tso_max_segs": 65535, "gso_ipv4_max_size": 65536}
	for _, tc := range []struct {
		knob string
		v    uint32
		want string
	}{
		{"gso_max_size", 185000, "gso_max_size 185000 > tso_max_size 65536 of client/eth0"},
		{"gso_ipv4_max_size", 65537, "gso_ipv4_max_size 65537 > tso_max_size 65536 of client/eth0"},
		{"gso_max_size", 65536, ""},
		{"gro_max_size", 185000, ""}, // GRO is not bounded by TSO
	} {
		k, _ := knobs.Lookup(tc.knob)
		if got := capabilityProblem("client/eth0", k, tc.v, p); got != tc.want {
			t.Errorf("%s %d: %q, want %q", tc.knob, tc.v, got, tc.want)
		}
	}
	gro4, _ := knobs.Lookup("gro_ipv4_max_size")
	// Named per device: two devices of a state give two lines that say which is which.
	if got := capabilityProblem("a/b", gro4, 1, Attrs{"tso_max_size": 65536}); !strings.Contains(got, "Linux 6.3") || !strings.Contains(got, "gro_ipv4_max_size of a/b:") {
		t.Errorf("missing IPv4 knobs: %q", got)
	}
}

// TestBuildApplyTeardown builds the default topology, checks the read-back limits of both
// states on both veth ends, and proves the teardown leaves nothing.
func TestBuildApplyTeardown(t *testing.T) {
	s, l := buildDefault(t)
	defer func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
		if err := l.Teardown(); err != nil { // idempotent
			t.Error("second teardown:", err)
		}
	}()
	// Every device and every namespace's lo carries the run's marker.
	for _, ref := range []string{"client/eth0", "server/eth0", "client/lo", "server/lo"} {
		ns, dev := splitRef(ref)
		link, err := l.lookup(ns, dev)
		if err != nil || link.Attrs().Alias != l.ID.Alias() {
			t.Errorf("%s: alias %q, want %q (%v)", ref, link.Attrs().Alias, l.ID.Alias(), err)
		}
		if dev == "lo" && link.Attrs().OperState == 0 && link.Attrs().Flags&1 == 0 {
			t.Errorf("%s is down", ref)
		}
	}
	for ref, a := range l.Pristine() {
		if a["tso_max_size"] != 524280 {
			t.Errorf("%s tso_max_size %d, want 524280 (veth)", ref, a["tso_max_size"])
		}
	}
	if err := l.Check(s.States); err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint32{65536, 185000, 65536} {
		st := s.States[0]
		if want == 185000 {
			st = s.States[1]
		}
		eff, err := l.Apply(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"client/eth0", "server/eth0"} { // the peer explicitly too
			a := eff.Devices[ref]
			if w := uint64(want); a["gso_max_size"] != w || a["gro_max_size"] != w || a["gso_ipv4_max_size"] != w || a["gro_ipv4_max_size"] != w {
				t.Errorf("state %s %s: %+v, want all sizes %d", st.Name, ref, a, want)
			}
			if read, _ := l.ReadAttrs(ref); !maps.Equal(read.Widen(), a) {
				t.Errorf("%s: Apply returned %+v, kernel has %+v", ref, a, read)
			}
		}
	}
}

func TestRefusedStateIsCapabilityError(t *testing.T) {
	s, l := buildDefault(t)
	defer l.Teardown()
	// Pretend the client end is a 64K-limited device, as a tap or an OVS internal port is.
	p := l.pristine["client/eth0"]
	p["tso_max_size"] = 65536
	l.pristine["client/eth0"] = p
	err := l.Check(s.States)
	var ce *capability.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "state on: gso_max_size 185000 > tso_max_size 65536 of client/eth0") {
		t.Fatalf("Check: %v", err)
	}
}

func TestTwoRunsAtOnceDoNotCollide(t *testing.T) {
	testenv.RequireRoot(t)
	before := testenv.Take(runstate.Dir)
	s := loadDefault(t)
	var wg sync.WaitGroup
	lives := make([]*Live, 2)
	errs := make([]error, 2)
	for i := range lives {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lives[i], errs[i] = Build(NewPlan(s, NewRunID()), BuildOptions{})
		}(i)
	}
	wg.Wait()
	for i := range lives {
		if errs[i] != nil {
			t.Error(errs[i])
			continue
		}
		if err := lives[i].Teardown(); err != nil {
			t.Error(err)
		}
	}
	testenv.CheckClean(t, before, runstate.Dir)
}

func TestFailedBuildRemovesWhatItBuilt(t *testing.T) {
	testenv.RequireRoot(t)
	before := testenv.Take(runstate.Dir)
	s := loadDefault(t)
	p := NewPlan(s, NewRunID())
	// A step that fails after namespaces and the veth exist: an address on a missing device.
	p.Steps = append(p.Steps, plan.Step{Kind: plan.SetUp, NS: "client", Dev: "nodev0", Do: "ip link set nodev0 up"})
	if _, err := Build(p, BuildOptions{}); err == nil || !strings.Contains(err.Error(), "nodev0") {
		t.Fatalf("Build: %v", err)
	}
	testenv.CheckClean(t, before, runstate.Dir)
}

// TestTeardownKillsWhatRunsInside: a process left in a run's namespace is killed by the
// teardown (on another thread, while the namespaces are unmounted), and is gone, or a zombie
// waiting for its parent, by the time Teardown returns, which removes the state file last.
func TestTeardownKillsWhatRunsInside(t *testing.T) {
	_, l := buildDefault(t)
	sleeper := exec.Command("ip", "netns", "exec", l.Namespace("client"), "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sleeper.Wait(); close(exited) }()
	// ip netns exec has become sleep once the process is in the namespace.
	for i := 0; i < 500; i++ {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", sleeper.Process.Pid)); strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.Teardown(); err != nil {
		t.Fatal(err)
	}
	if runstate.Running(sleeper.Process.Pid) {
		t.Errorf("process %d still runs after the teardown", sleeper.Process.Pid)
	}
	<-exited
	if _, err := os.Stat(runstate.Path(l.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file: %v", err)
	}
}

func TestCleanupRemovesKilledRun(t *testing.T) {
	_, l := buildDefault(t)
	l.Keep() // as if its process had been killed: the lock is free, files and objects stay
	// Something still runs in the namespace, as an iperf3 server of a killed run would.
	sleeper := exec.Command("ip", "netns", "exec", l.Namespace("server"), "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	go sleeper.Wait()
	left, err := FindLeftovers(false)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, lo := range left {
		if lo.RunID == l.ID {
			found = true
			if _, err := lo.Remove(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		l.Teardown()
		t.Fatalf("run %s not among leftovers %+v", l.ID, left)
	}
}

// TestVxlanRecreateAndOffloads: a recreated vxlan is created anew over its lower device in
// each state; offloads are set, read back, and reset by a state that leaves them out; a fixed
// feature that cannot change is a capability error naming the device and the feature.
func TestVxlanRecreateAndOffloads(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s, err := scenarios.Load("testdata/vxlan.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Teardown()
	index := func(ref string) int {
		ns, dev := splitRef(ref)
		link, err := l.spaces[ns].nl.LinkByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		return link.Attrs().Index
	}
	base, small, fixed := s.States[0], s.States[1], s.States[2]
	seen := map[int]bool{}
	for i, st := range []scenarios.State{base, small, base} {
		got, err := l.Apply(st)
		if err != nil {
			t.Fatalf("apply %s: %v", st.Name, err)
		}
		vx := got.Devices["a/vx4"]
		if !slices.Equal(got.Recreated, []string{"a/vx4"}) || got.Lower["a/vx4"] != "a/eth0" {
			t.Errorf("%s: recreated %v, a/vx4 lower %q", st.Name, got.Recreated, got.Lower["a/vx4"])
		}
		if vx["tso_max_size"] != got.Devices["a/eth0"]["tso_max_size"] {
			t.Errorf("%s: a/vx4 tso_max_size %d, its lower device's %d", st.Name, vx["tso_max_size"], got.Devices["a/eth0"]["tso_max_size"])
		}
		seen[index("a/vx4")] = true
		eth := got.Devices["a/eth0"]
		wantOn := st.Name == "base"
		for _, f := range []string{"tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation"} {
			if on, ok := got.Features["a/eth0"][f]; !ok || on != wantOn {
				t.Errorf("apply %d (%s): a/eth0 %s = %v (recorded %v), want %v", i, st.Name, f, on, ok, wantOn)
			}
		}
		if wantGSO := map[bool]uint64{true: 65536, false: 16000}[wantOn]; eth["gso_max_size"] != wantGSO || (eth["gso_max_segs"] == 16) == wantOn {
			t.Errorf("%s: a/eth0 gso_max_size %d segs %d", st.Name, eth["gso_max_size"], eth["gso_max_segs"])
		}
	}
	if len(seen) < 2 {
		t.Errorf("a/vx4 kept its ifindex across states: it was not recreated")
	}
	_, err = l.Apply(fixed)
	var ce *capability.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "tx-udp_tnl-segmentation is fixed off on a/vx6") {
		t.Fatalf("apply fixed: %v", err)
	}
}

// vethScenario is a scenario over one veth pair (client/eth0 198.18.0.1/24, server/eth0
// 198.18.0.2/24) with an iperf3 workload and the states given as YAML list items: what the
// tests of one kind of state setting build.
func vethScenario(t *testing.T, states string) *scenarios.Scenario {
	t.Helper()
	text := "name: t\ntopology:\n  namespaces: [client, server]\n  links:\n    - veth:\n" +
		"        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}\n        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}\n" +
		"states:\n" + states + "workloads:\n  - name: tcp\n    iperf3:\n      client: {ns: client}\n      server: {ns: server, addr: 198.18.0.2}\n"
	s, err := scenarios.Parse("t.yaml", []byte(text), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildRoot builds s in a root test: torn down at its end (a teardown error fails it), and
// checked that nothing is left behind.
func buildRoot(t *testing.T, s *scenarios.Scenario) *Live {
	t.Helper()
	testenv.RootTest(t, runstate.Dir)
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
	})
	return l
}
