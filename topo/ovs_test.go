package topo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/runstate"
)

func loadOVS(t *testing.T) *scenarios.Scenario {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "ovs-vswitchd")
	s, err := scenarios.Load("testdata/ovs.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOVSPrivateBuild builds the seed topology on a private OVS: the internal port exists in
// the run's ovs namespace, the bridge carries the run id, and teardown stops the daemons and
// leaves nothing.
func TestOVSPrivateBuild(t *testing.T) {
	s := loadOVS(t)
	// The bridge's end of the veth named by the scenario, and set in a state like any device.
	s.Topology.OVS.Bridges[0].Ports[1].Name = "p0"
	s.States[0].Settings["devices"].(scenarios.DeviceKnobs)["ovs/p0"] = s.States[0].Settings["devices"].(scenarios.DeviceKnobs)["server/eth0"]
	l := buildChecked(t, s)
	defer func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(runstate.OVSDir(l.ID)); !os.IsNotExist(err) {
			t.Errorf("private OVS directory left: %v", err)
		}
	}()
	ctx := context.Background()
	bridges, err := l.ovsClient.RunBridges(ctx, string(l.ID))
	if err != nil || len(bridges) != 1 || bridges[0].Name != string(l.ID)+"-br0" || bridges[0].DatapathType != l.Plan.Datapath() {
		t.Fatalf("bridges: %+v, %v", bridges, err)
	}
	a, err := l.ReadAttrs("ovs/int0")
	if err != nil || a["tso_max_size"] == 0 {
		t.Fatalf("ovs/int0: %+v, %v", a, err)
	}
	eff, err := l.Apply(s.States[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := eff.Devices["ovs/p0"]["gso_max_size"]; got != 524280 {
		t.Errorf("ovs/p0, the bridge's veth end, gso_max_size %d in state off, want 524280", got)
	}
	if _, _, mode := l.OVS(); mode != "private" {
		t.Errorf("mode %q", mode)
	}
	if l.Plan.Datapath() == scenarios.DatapathNetdev && len(l.Warnings()) != 1 {
		t.Errorf("userspace datapath without a warning: %v", l.Warnings())
	}
}

// TestOVSKilledRunCleanup: a run that died leaves a private OVS running in its namespace;
// nsperf cleanup kills the daemons, deletes the namespaces and the directory.
func TestOVSKilledRunCleanup(t *testing.T) {
	l := buildChecked(t, loadOVS(t))
	l.ovsInst.Detach() // as if nsperf had been killed: the daemons stay
	l.Keep()           // as if its process had been killed: the lock is free, files and objects stay
	left, err := FindLeftovers(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, lo := range left {
		if lo.RunID == l.ID {
			rm, err := lo.Remove()
			if err != nil {
				t.Fatal(err)
			}
			if len(rm.LeftAlone) > 0 || len(rm.Removed) != len(l.spaces) {
				t.Errorf("removed %v, left alone %v", rm.Removed, rm.LeftAlone)
			}
		}
	}
	if _, err := os.Stat(runstate.OVSDir(l.ID)); !os.IsNotExist(err) {
		t.Errorf("private OVS directory left: %v", err)
	}
}

// TestExistingOVS: with db: unix:PATH nsperf adds only its own bridge to that OVS and removes
// it again; the OVS itself stays.
func TestExistingOVS(t *testing.T) {
	s := loadOVS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// An "existing" OVS of the test's own, in a namespace of its own so that its devices do
	// not touch the machine's.
	nsName := "nsptest-existing-ovs"
	if out, err := exec.Command("ip", "netns", "add", nsName).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", nsName).Run()
	dir := t.TempDir()
	in, err := ovs.Start(ctx, filepath.Join(dir, "ovs"), func(start func() error) error { return inNamespace(nsName, start) })
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	before := testenv.Take(runstate.Dir)
	defer testenv.CheckClean(t, before, runstate.Dir)
	if err := (scenarios.Overrides{OVSDB: in.Endpoint, Omit: -1}).Apply(s); err == nil || !strings.Contains(err.Error(), "runs in the ovs namespace") {
		t.Fatalf("an existing OVS accepted a workload in the ovs (root) namespace: %v", err)
	}
	// Move the internal port into the server namespace and run nothing in the root namespace.
	// The test's OVS runs in nsName, which stands for the root namespace: build from there.
	s.Topology.OVS.Bridges[0].Ports[0].NS = "server"
	s.Workloads = nil
	if err := (scenarios.Overrides{OVSDB: in.Endpoint, Omit: -1}).Apply(s); err != nil {
		t.Fatal(err)
	}
	var l *Live
	err = inNamespace(nsName, func() error {
		var err error
		l, err = Build(NewPlan(s, NewRunID()), BuildOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := in.Client.RunBridges(ctx, string(l.ID))
	if err != nil || len(mine) != 1 {
		t.Errorf("bridges of the run in the existing OVS: %+v, %v", mine, err)
	}
	if a, err := l.ReadAttrs("server/int0"); err != nil || a["mtu"] == 0 {
		t.Errorf("internal port moved into server: %+v %v", a, err)
	}
	if err := inNamespace(nsName, l.Teardown); err != nil {
		t.Fatal(err)
	}
	if err := in.Client.WaitApplied(ctx); err != nil {
		t.Error(err)
	}
	if left, _ := in.Client.RunBridges(ctx, ""); len(left) != 0 {
		t.Errorf("bridges left in the existing OVS: %+v", left)
	}
}

// inNamespace runs fn with the calling thread in the named namespace.
func inNamespace(name string, fn func() error) error {
	h, err := netns.GetFromName(name)
	if err != nil {
		return err
	}
	defer h.Close()
	return netnsx.Do(h, fn)
}
