package ovs

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovn-org/libovsdb/database/inmemory"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/server"

	"github.com/nsperf/nsperf/topo/ovs/vswitchd"
)

// memoryOVS serves an empty Open_vSwitch database from libovsdb's in-memory server on a unix
// socket and connects a Client to it. No root, no ovsdb-server.
func memoryOVS(t *testing.T) *Client {
	t.Helper()
	clientModel, err := vswitchd.FullDatabaseModel()
	if err != nil {
		t.Fatal(err)
	}
	dbModel, errs := model.NewDatabaseModel(vswitchd.Schema(), clientModel)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	db := inmemory.NewDatabase(map[string]model.ClientDBModel{"Open_vSwitch": clientModel})
	srv, err := server.NewOvsdbServer(db, dbModel)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "db.sock")
	go srv.Serve("unix", sock)
	t.Cleanup(srv.Close)
	deadline := time.Now().Add(5 * time.Second)
	for !srv.Ready() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, "unix:"+sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.EnsureRoot(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBridgeInOneTransactionFoundAndDeletedByRun(t *testing.T) {
	c := memoryOVS(t)
	ctx := context.Background()
	for _, b := range []BridgeSpec{
		{Name: "nspaaaa-br0", Datapath: "netdev", RunID: "nspaaaa", Ports: []PortSpec{{Name: "int0", Internal: true}, {Name: "nspaaaap0"}}},
		{Name: "nspbbbb-br0", Datapath: "netdev", RunID: "nspbbbb", Ports: []PortSpec{{Name: "nspbbbbp0"}}},
	} {
		if err := c.AddBridge(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var bridges []vswitchd.Bridge
	var ports []vswitchd.Port
	var ifaces []vswitchd.Interface
	waitFor(ctx, func() bool { c.c.List(ctx, &ifaces); return len(ifaces) == 5 })
	c.c.List(ctx, &bridges)
	c.c.List(ctx, &ports)
	if len(bridges) != 2 || len(ports) != 5 || len(ifaces) != 5 {
		t.Fatalf("%d bridges, %d ports, %d interfaces; want 2, 5 (with the bridges' own), 5", len(bridges), len(ports), len(ifaces))
	}
	root, _ := c.root()
	if len(root.Bridges) != 2 || root.NextCfg != 2 {
		t.Errorf("Open_vSwitch: bridges %v next_cfg %d", root.Bridges, root.NextCfg)
	}
	types := map[string]string{}
	for _, i := range ifaces {
		types[i.Name] = i.Type
		if i.ExternalIDs[RunKey] == "" {
			t.Errorf("interface %s has no %s", i.Name, RunKey)
		}
	}
	if types["int0"] != "internal" || types["nspaaaap0"] != "" || types["nspaaaa-br0"] != "internal" {
		t.Errorf("interface types: %v", types)
	}
	mine, err := c.RunBridges(ctx, "nspaaaa")
	if err != nil || len(mine) != 1 || mine[0].DatapathType != "netdev" || len(mine[0].Ports) != 3 {
		t.Fatalf("RunBridges(nspaaaa) = %+v, %v", mine, err)
	}
	if err := c.DeleteRun(ctx, "nspaaaa"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRun(ctx, "nspaaaa"); err != nil { // nothing left: success
		t.Fatal(err)
	}
	waitFor(ctx, func() bool { b, _ := c.RunBridges(ctx, ""); return len(b) == 1 })
	left, _ := c.RunBridges(ctx, "")
	if len(left) != 1 || left[0].Name != "nspbbbb-br0" {
		t.Fatalf("after deleting run nspaaaa: %+v", left)
	}
	root, _ = c.root()
	if len(root.Bridges) != 1 {
		t.Errorf("Open_vSwitch.bridges still lists %v", root.Bridges)
	}
}

func TestErrorsSurface(t *testing.T) {
	c := memoryOVS(t)
	ctx := context.Background()
	b := BridgeSpec{Name: "nspaaaa-br0", Datapath: "netdev", RunID: "nspaaaa"}
	if err := c.AddBridge(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, func() bool { bs, _ := c.RunBridges(ctx, "nspaaaa"); return len(bs) == 1 })
	// Bridge names are an index of the schema: a second one is refused, and said so.
	err := c.AddBridge(ctx, b)
	if err == nil || !strings.Contains(err.Error(), "add bridge nspaaaa-br0") {
		t.Fatalf("duplicate bridge: %v", err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	// Nothing applies the configuration in a bare database: WaitApplied times out and says why.
	if err := c.WaitApplied(ctx2); err == nil || !strings.Contains(err.Error(), "ovs-vswitchd did not apply") {
		t.Fatalf("WaitApplied: %v", err)
	}
	if _, err := Connect(ctx2, "unix:"+filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Fatal("connected to a socket that does not exist")
	}
}

// TestCPUCountWait: ovs-vswitchd starts only once the machine is up for over 10 s (OVS 3.1
// counts no CPU before, and runs the kernel datapath without upcall handlers).
func TestCPUCountWait(t *testing.T) {
	for _, tc := range []struct{ uptime, want time.Duration }{
		{3 * time.Second, 7500 * time.Millisecond},
		{10 * time.Second, 500 * time.Millisecond},
		{11 * time.Second, 0},
		{48 * time.Hour, 0},
	} {
		if got := cpuCountWait(tc.uptime); got != tc.want {
			t.Errorf("up %s: wait %s, want %s", tc.uptime, got, tc.want)
		}
	}
}
