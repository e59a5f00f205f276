package topo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/topo/ovs"
)

// StateDir holds one state file per run: what the run created, so that `nsperf down` and
// `nsperf cleanup` can remove it after the run is gone. /run is cleared at boot, as are
// network namespaces.
var StateDir = "/run/nsperf"

// Owner is the state file of one run.
type Owner struct {
	RunID      RunID     `json:"run_id"`
	PID        int       `json:"pid"`             // the nsperf process that owns the run
	Kept       bool      `json:"kept"`            // left up on purpose (`nsperf up`, `run --keep`)
	Scenario   string    `json:"scenario"`        // name
	Created    time.Time `json:"created"`         //
	Namespaces []string  `json:"namespaces"`      // full names, recorded before each is created
	Dirs       []string  `json:"dirs,omitempty"`  // private OVS directories
	OVSDB      string    `json:"ovsdb,omitempty"` // an existing OVS the run added bridges to
}

func ownerPath(id RunID) string { return filepath.Join(StateDir, string(id)+".json") }

// claimOwner creates the state file of a new run; it fails if the run id is taken, so two runs
// never share an id.
func claimOwner(id RunID, scenario string, kept bool) (*Owner, error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	if matches, _ := filepath.Glob(filepath.Join("/run/netns", string(id)+"-*")); len(matches) > 0 {
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	f, err := os.OpenFile(ownerPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("claim run id %s: %w", id, err)
	}
	f.Close()
	o := &Owner{RunID: id, PID: os.Getpid(), Kept: kept, Scenario: scenario, Created: time.Now().UTC()}
	return o, o.save()
}

// save rewrites the state file atomically.
func (o *Owner) save() error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	tmp := ownerPath(o.RunID) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	if err := os.Rename(tmp, ownerPath(o.RunID)); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}

func (o *Owner) remove() error {
	err := os.Remove(ownerPath(o.RunID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// ReadOwner reads the state file of a run.
func ReadOwner(id RunID) (*Owner, error) {
	data, err := os.ReadFile(ownerPath(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run %s: no state file in %s; nothing of it is known to be up (see `nsperf cleanup`)", id, StateDir)
		}
		return nil, err
	}
	var o Owner
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("state file of run %s: %w", id, err)
	}
	return &o, nil
}

// Alive reports whether the process that owns the run still exists. A reused pid makes a dead
// run look alive, which leaves its leftovers for a later cleanup rather than removing a live run.
func (o *Owner) Alive() bool {
	return o.PID > 0 && syscall.Kill(o.PID, 0) == nil
}

// Owners lists the state files of all runs.
func Owners() ([]*Owner, error) {
	files, err := filepath.Glob(filepath.Join(StateDir, "nsp*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Owner
	for _, f := range files {
		id, err := ParseRunID(strings.TrimSuffix(filepath.Base(f), ".json"))
		if err != nil {
			continue
		}
		o, err := ReadOwner(id)
		if err != nil {
			continue
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// Down removes everything a run recorded in its state file, then the file: the namespaces
// (after killing what still runs in them), which takes their devices with them. It is what
// `nsperf down RUNID` and `nsperf cleanup` do, and it is idempotent.
func Down(o *Owner) error {
	var errs []error
	if o.OVSDB != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := ovs.Connect(ctx, o.OVSDB)
		if err == nil {
			err = c.DeleteRun(ctx, string(o.RunID))
			c.Close()
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("bridges of run %s in %s: %w", o.RunID, o.OVSDB, err))
		}
	}
	// Deleting a namespace kills what runs in it: a private OVS's daemons, the tools.
	for i := len(o.Namespaces) - 1; i >= 0; i-- {
		if err := deleteNamespace(o.Namespaces[i]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range o.Dirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, o.remove())
	}
	return errors.Join(errs...)
}

// Leftover is something a killed run left behind.
type Leftover struct {
	RunID      RunID
	Namespaces []string
	Reason     string
	owner      *Owner
	dirs       []string
}

// FindLeftovers lists runs whose owner is gone (or, with all, also those kept up on purpose)
// and namespaces named like a run's that no state file claims.
func FindLeftovers(all bool) ([]Leftover, error) {
	owners, err := Owners()
	if err != nil {
		return nil, err
	}
	claimed, claimedDir := map[string]bool{}, map[string]bool{}
	var out []Leftover
	for _, o := range owners {
		for _, ns := range o.Namespaces {
			claimed[ns] = true
		}
		for _, d := range o.Dirs {
			claimedDir[d] = true
		}
		switch {
		case o.Kept && !all:
			continue
		case !o.Kept && o.Alive():
			continue // a run in progress
		}
		reason := fmt.Sprintf("owner process %d is gone", o.PID)
		if o.Kept {
			reason = "kept up by `nsperf up` or `run --keep`"
		}
		out = append(out, Leftover{RunID: o.RunID, Namespaces: o.Namespaces, Reason: reason, owner: o})
	}
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	orphans := map[RunID][]string{}
	for _, e := range entries {
		m := namespaceOfRun.FindStringSubmatch(e.Name())
		if m == nil || claimed[e.Name()] {
			continue
		}
		orphans[RunID(m[1])] = append(orphans[RunID(m[1])], e.Name())
	}
	dirs, _ := filepath.Glob(filepath.Join(StateDir, "nsp*-ovs"))
	orphanDirs := map[RunID][]string{}
	for _, d := range dirs {
		m := namespaceOfRun.FindStringSubmatch(filepath.Base(d))
		if m == nil || claimedDir[d] {
			continue
		}
		orphanDirs[RunID(m[1])] = append(orphanDirs[RunID(m[1])], d)
		if orphans[RunID(m[1])] == nil {
			orphans[RunID(m[1])] = []string{}
		}
	}
	for id, nss := range orphans {
		what := "namespace without a state file"
		if len(nss) == 0 {
			what = "private OVS directory without a state file"
		}
		out = append(out, Leftover{RunID: id, Namespaces: nss, Reason: what, dirs: orphanDirs[id]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// Remove deletes a leftover.
func (l Leftover) Remove() error {
	if l.owner != nil {
		return Down(l.owner)
	}
	return Down(&Owner{RunID: l.RunID, Namespaces: l.Namespaces, Dirs: l.dirs})
}

// OVSLeftovers lists the bridges in an existing OVS whose run is over: no state file, or one
// whose owner is gone and that was not kept up on purpose.
func OVSLeftovers(ctx context.Context, db string) (map[RunID][]string, error) {
	c, err := ovs.Connect(ctx, db)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	bridges, err := c.RunBridges(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[RunID][]string{}
	for _, b := range bridges {
		id := RunID(b.ExternalIDs[ovs.RunKey])
		if o, err := ReadOwner(id); err == nil && (o.Kept || o.Alive()) {
			continue
		}
		out[id] = append(out[id], b.Name)
	}
	return out, nil
}

// RemoveOVSRun deletes a run's bridges from an existing OVS.
func RemoveOVSRun(ctx context.Context, db string, id RunID) error {
	c, err := ovs.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.DeleteRun(ctx, string(id))
}
