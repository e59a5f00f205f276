// Package ovs talks to Open vSwitch through its database protocol (libovsdb), the way
// ovs-vsctl does, and runs a private OVS instance for a run.
package ovs

//go:generate go tool modelgen -p vswitchd -o vswitchd /usr/share/openvswitch/vswitch.ovsschema

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/ovs/vswitchd"
)

// RunKey is the external_ids key that names the nsperf run owning a bridge.
const RunKey = scenarios.OVSRunKey

// waitTimeout is how long the OVS code waits when its caller set no deadline.
const waitTimeout = 10 * time.Second

// Client is a connection to one OVS database.
type Client struct {
	c client.Client
}

// Connect opens a connection to endpoint (e.g. "unix:/run/openvswitch/db.sock") and monitors
// the tables nsperf uses. The client logs nothing: libovsdb's default logger prints every
// cache update.
func Connect(ctx context.Context, endpoint string) (*Client, error) {
	dbModel, err := vswitchd.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	quiet := logr.Discard()
	c, err := client.NewOVSDBClient(dbModel, client.WithEndpoint(endpoint), client.WithLogger(&quiet))
	if err != nil {
		return nil, fmt.Errorf("ovsdb %s: %w", endpoint, err)
	}
	if err := c.Connect(ctx); err != nil {
		return nil, fmt.Errorf("connect to ovsdb %s: %w", endpoint, err)
	}
	_, err = c.Monitor(ctx, c.NewMonitor(
		client.WithTable(&vswitchd.OpenvSwitch{}),
		client.WithTable(&vswitchd.Bridge{}),
		client.WithTable(&vswitchd.Port{}),
		client.WithTable(&vswitchd.Interface{}),
	))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("monitor ovsdb %s: %w", endpoint, err)
	}
	return &Client{c: c}, nil
}

// Close ends the connection.
func (c *Client) Close() { c.c.Close() }

// transact runs operations as one transaction and returns the first error, if any.
func (c *Client) transact(ctx context.Context, ops ...ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	results, err := c.c.Transact(ctx, ops...)
	if err != nil {
		return nil, err
	}
	if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return nil, err
	}
	return results, nil
}

// root returns the one Open_vSwitch row.
func (c *Client) root() (*vswitchd.OpenvSwitch, error) {
	var rows []vswitchd.OpenvSwitch
	if err := c.c.List(context.Background(), &rows); err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("ovsdb has %d Open_vSwitch rows, want 1", len(rows))
	}
	return &rows[0], nil
}

// EnsureRoot inserts the root Open_vSwitch row into a fresh database (`ovs-vsctl init`).
func (c *Client) EnsureRoot(ctx context.Context) error {
	var rows []vswitchd.OpenvSwitch
	if err := c.c.List(ctx, &rows); err != nil {
		return err
	}
	if len(rows) > 0 {
		return nil
	}
	ops, err := c.c.Create(&vswitchd.OpenvSwitch{UUID: "root"})
	if err != nil {
		return err
	}
	if _, err := c.transact(ctx, ops...); err != nil {
		return fmt.Errorf("insert the Open_vSwitch row: %w", err)
	}
	return waitFor(ctx, func() bool { _, err := c.root(); return err == nil })
}

// PortSpec is one port of a bridge: an internal port, or an existing device (a veth end).
type PortSpec struct {
	Name     string
	Internal bool
}

// BridgeSpec is a bridge to create, owned by a run (external_ids:nsperf-run=RunID).
type BridgeSpec struct {
	Name     string
	Datapath string
	RunID    string
	Ports    []PortSpec
}

// AddBridge creates a bridge with its ports and interfaces in one transaction, named with
// UUIDs and hooked into Open_vSwitch.bridges; it bumps next_cfg so that WaitApplied can tell
// when ovs-vswitchd has carried it out. Equivalent: `ovs-vsctl add-br NAME -- set bridge NAME
// datapath_type=DP external_ids:nsperf-run=ID -- add-port NAME P [-- set interface P
// type=internal] ...`.
func (c *Client) AddBridge(ctx context.Context, b BridgeSpec) error {
	root, err := c.root()
	if err != nil {
		return err
	}
	ids := map[string]string{RunKey: b.RunID}
	var models []model.Model
	var ports []string
	// The bridge's own (local) port, as ovs-vsctl adds it.
	all := append([]PortSpec{{Name: b.Name, Internal: true}}, b.Ports...)
	for i, p := range all {
		iface := &vswitchd.Interface{UUID: fmt.Sprintf("iface%d", i), Name: p.Name, ExternalIDs: ids}
		if p.Internal {
			iface.Type = "internal"
		}
		port := &vswitchd.Port{UUID: fmt.Sprintf("port%d", i), Name: p.Name, Interfaces: []string{iface.UUID}, ExternalIDs: ids}
		models = append(models, iface, port)
		ports = append(ports, port.UUID)
	}
	bridge := &vswitchd.Bridge{UUID: "bridge", Name: b.Name, DatapathType: b.Datapath, Ports: ports, ExternalIDs: ids}
	models = append(models, bridge)
	ops, err := c.c.Create(models...)
	if err != nil {
		return err
	}
	mutate, err := c.c.Where(root).Mutate(root,
		model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationInsert, Value: []string{bridge.UUID}},
		model.Mutation{Field: &root.NextCfg, Mutator: ovsdb.MutateOperationAdd, Value: 1})
	if err != nil {
		return err
	}
	if _, err := c.transact(ctx, append(ops, mutate...)...); err != nil {
		return fmt.Errorf("add bridge %s: %w", b.Name, err)
	}
	return nil
}

// WaitApplied waits until ovs-vswitchd has applied the database as it is now (cur_cfg has
// reached next_cfg), as ovs-vsctl does unless --no-wait.
func (c *Client) WaitApplied(ctx context.Context) error {
	root, err := c.root()
	if err != nil {
		return err
	}
	want := root.NextCfg
	err = waitFor(ctx, func() bool {
		r, err := c.root()
		return err == nil && r.CurCfg >= want
	})
	if err != nil {
		return fmt.Errorf("ovs-vswitchd did not apply the configuration (cur_cfg below %d): %w", want, err)
	}
	return nil
}

// RunBridges lists the bridges a run owns (external_ids:nsperf-run=ID), or of every run when
// runID is "".
func (c *Client) RunBridges(ctx context.Context, runID string) ([]vswitchd.Bridge, error) {
	var out []vswitchd.Bridge
	err := c.c.WhereCache(func(b *vswitchd.Bridge) bool {
		id, ok := b.ExternalIDs[RunKey]
		return ok && (runID == "" || id == runID)
	}).List(ctx, &out)
	return out, err
}

// DeleteRun removes every bridge of a run (`ovs-vsctl del-br`); their ports and interfaces go
// with them (the database removes rows that nothing refers to). Nothing to delete is success.
func (c *Client) DeleteRun(ctx context.Context, runID string) error {
	bridges, err := c.RunBridges(ctx, runID)
	if err != nil || len(bridges) == 0 {
		return err
	}
	root, err := c.root()
	if err != nil {
		return err
	}
	var uuids []string
	var ops []ovsdb.Operation
	for i := range bridges {
		uuids = append(uuids, bridges[i].UUID)
		del, err := c.c.Where(&bridges[i]).Delete()
		if err != nil {
			return err
		}
		ops = append(ops, del...)
	}
	mutate, err := c.c.Where(root).Mutate(root,
		model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationDelete, Value: uuids},
		model.Mutation{Field: &root.NextCfg, Mutator: ovsdb.MutateOperationAdd, Value: 1})
	if err != nil {
		return err
	}
	if _, err := c.transact(ctx, append(mutate, ops...)...); err != nil {
		return fmt.Errorf("delete bridges of run %s: %w", runID, err)
	}
	return nil
}

// InterfaceErrors returns the error column of a run's interfaces that have one (ovs-vswitchd
// writes there why it could not open a device).
func (c *Client) InterfaceErrors(ctx context.Context, runID string) (map[string]string, error) {
	var ifaces []vswitchd.Interface
	err := c.c.WhereCache(func(i *vswitchd.Interface) bool { return i.ExternalIDs[RunKey] == runID }).List(ctx, &ifaces)
	out := map[string]string{}
	for _, i := range ifaces {
		if i.Error != nil && *i.Error != "" {
			out[i.Name] = *i.Error
		}
	}
	return out, err
}

func waitFor(ctx context.Context, ok func() bool) error {
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = waitlimit.Context(ctx, waitTimeout)
		defer cancel()
	}
	for !ok() {
		select {
		case <-ctx.Done():
			return errors.New("timed out")
		case <-time.After(waitlimit.Poll):
		}
	}
	return nil
}
