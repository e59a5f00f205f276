package topo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/ovs"
	"github.com/nsperf/nsperf/topo/runstate"
)

// Removal is what Down did: what it removed and what it left alone, and why.
type Removal struct {
	Removed   []string
	LeftAlone []string
}

// Down removes a run that is not alive: its bridges in an existing OVS, its pins in bpffs
// (the XDP programs of a topology kept up), the namespaces that carry its marker (killing
// what still runs in them, which takes their devices along), its private OVS directory, then
// its state and lock files. It is what `nsperf down RUNID` and `nsperf cleanup` do, and it is
// idempotent. It refuses a live run.
func Down(o *runstate.StateFile) (Removal, error) {
	lock, alive, err := runstate.LockRun(o.RunID)
	if err != nil {
		return Removal{}, err
	}
	if alive {
		return Removal{}, fmt.Errorf("run %s is still in progress (its process holds %s); stop that process instead", o.RunID, runstate.LockPath(o.RunID))
	}
	var rm Removal
	var errs []error
	if o.OVSDB != "" {
		ctx, cancel := waitlimit.Context(context.Background(), ovsRemoveTimeout)
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
	// The pins first: an XDP program goes with its link's pin (`ip link set dev DEV xdp off`),
	// while its device is still there.
	if removed, err := removePins(o.RunID); err != nil {
		errs = append(errs, err)
	} else if removed {
		rm.Removed = append(rm.Removed, runstate.PinDir(o.RunID))
	}
	// Deleting a namespace kills what runs in it: a private OVS's daemons, the tools.
	for i := len(o.Namespaces) - 1; i >= 0; i-- {
		name := o.Namespaces[i]
		switch err := removeRunNamespace(name, o.RunID); {
		case errors.Is(err, runstate.ErrNotMarked):
			rm.LeftAlone = append(rm.LeftAlone, fmt.Sprintf("%s (%v)", name, err))
		case err != nil:
			errs = append(errs, err)
		default:
			rm.Removed = append(rm.Removed, name)
		}
	}
	if err := removeOVSDir(o.RunID); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := os.Remove(runstate.Path(o.RunID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	runstate.UnlockRun(o.RunID, lock, len(errs) == 0)
	return rm, errors.Join(errs...)
}

// removeOVSDir removes the private OVS directory of a run: a path derived from the run id
// under runstate.Dir, never one read from a file, and only if it is a real directory.
func removeOVSDir(id RunID) error {
	dir := runstate.OVSDir(id)
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory; left alone", dir)
	}
	return os.RemoveAll(dir)
}

// Leftover is something a killed run left behind, or a state file that cannot be trusted.
type Leftover struct {
	RunID      RunID
	Namespaces []string
	Reason     string
	// Problem is set for a state file nothing is done about (unreadable, forged, a symlink).
	Problem error
	state   *runstate.StateFile
}

// FindLeftovers lists runs that are not alive (or, with all, also those kept up on purpose)
// and namespaces named like a run's that no state file claims. A live run, one whose process
// holds its lock, is never listed, whatever its files say.
func FindLeftovers(all bool) ([]Leftover, error) {
	files, err := filepath.Glob(filepath.Join(runstate.Dir, "nsp*.json"))
	if err != nil {
		return nil, err
	}
	claimed := map[RunID]bool{}
	var out []Leftover
	for _, f := range files {
		id, err := ParseRunID(strings.TrimSuffix(filepath.Base(f), ".json"))
		if err != nil {
			continue
		}
		claimed[id] = true
		if runstate.Alive(id) {
			continue // a run in progress
		}
		o, err := runstate.Read(id)
		if err != nil {
			out = append(out, Leftover{RunID: id, Reason: "state file not trusted", Problem: err})
			continue
		}
		if o.Kept && !all {
			continue
		}
		reason := "its process is gone"
		if o.Kept {
			reason = "kept up by `nsperf up` or `run --keep`"
		}
		out = append(out, Leftover{RunID: o.RunID, Namespaces: o.Namespaces, Reason: reason, state: o})
	}
	orphans, err := orphanRuns(claimed)
	if err != nil {
		return nil, err
	}
	for id, nss := range orphans {
		if runstate.Alive(id) {
			continue // a run being built: its state file is on its way or its lock is held
		}
		what := "namespace without a state file"
		if len(nss) == 0 {
			switch {
			case exists(runstate.OVSDir(id)):
				what = "private OVS directory without a state file"
			case exists(runstate.PinDir(id)):
				what = "pins in bpffs without a state file"
			default:
				what = lockOnly
			}
		}
		sort.Strings(nss)
		out = append(out, Leftover{RunID: id, Namespaces: nss, Reason: what})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// orphanRuns are the runs that left something of theirs (namespaces, a private OVS directory,
// pins, an old lock file) without a state file that claims them, by run id: the namespaces,
// or none where the rest is what is left.
func orphanRuns(claimed map[RunID]bool) (map[RunID][]string, error) {
	orphans := map[RunID][]string{}
	entries, err := os.ReadDir(runstate.NetnsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		id, ok := runstate.RunOfNamespace(e.Name())
		if !ok || claimed[id] {
			continue
		}
		orphans[id] = append(orphans[id], e.Name())
	}
	dirs, _ := filepath.Glob(filepath.Join(runstate.Dir, "nsp*-ovs"))
	for _, d := range dirs {
		id, ok := runstate.RunOfNamespace(filepath.Base(d))
		if ok && !claimed[id] && d == runstate.OVSDir(id) && orphans[id] == nil {
			orphans[id] = []string{}
		}
	}
	pins, _ := filepath.Glob(filepath.Join(runstate.PinRoot, "nsp*"))
	for _, d := range pins {
		id, err := ParseRunID(filepath.Base(d))
		if err == nil && !claimed[id] && orphans[id] == nil {
			orphans[id] = []string{}
		}
	}
	// A lock file alone: a run killed between claiming its id and recording it, or a plan
	// script killed by a signal its EXIT trap does not see. Left, it takes its id from every
	// later run that draws it. Only an old one: a run locks the file it creates at once
	// (Claim, the script's flock), and a file caught in that moment is no leftover.
	locks, _ := filepath.Glob(filepath.Join(runstate.Dir, "nsp*.lock"))
	for _, f := range locks {
		id, err := ParseRunID(strings.TrimSuffix(filepath.Base(f), ".lock"))
		if err != nil || claimed[id] || orphans[id] != nil {
			continue
		}
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleLockAge {
			orphans[id] = []string{}
		}
	}
	return orphans, nil
}

// staleLockAge is how old a lock file without anything else of its run must be to be a
// leftover: far longer than a run takes between creating its lock file and locking it.
const staleLockAge = time.Minute

// lockOnly is the reason of a leftover that is a lock file and nothing else.
const lockOnly = "lock file without a state file"

// exists reports whether something is at path (not following a symlink).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Remove deletes a leftover: what carries the run's marker and the run's own directory.
func (l Leftover) Remove() (Removal, error) {
	if l.Problem != nil {
		return Removal{}, l.Problem
	}
	if l.state != nil {
		return Down(l.state)
	}
	rm, err := Down(&runstate.StateFile{RunID: l.RunID, Namespaces: l.Namespaces})
	if err == nil && l.Reason == lockOnly {
		rm.Removed = append(rm.Removed, runstate.LockPath(l.RunID))
	}
	return rm, err
}

// OVSLeftovers lists the bridges in an existing OVS whose run is over: its lock is free and it
// was not kept up on purpose.
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
		id, err := ParseRunID(b.ExternalIDs[ovs.RunKey])
		if err != nil || runstate.Alive(id) {
			continue
		}
		if o, err := runstate.Read(id); err == nil && o.Kept {
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

// removeRunNamespace removes a namespace of run id after checking that it is one: its name is
// RUNID-NAME and it carries the run's marker. An empty unmounted file of that name (a killed
// deletion) is removed too: it is no namespace and breaks `ip netns list`.
func removeRunNamespace(name string, id RunID) error {
	if run, ok := runstate.RunOfNamespace(name); !ok || run != id {
		return fmt.Errorf("namespace %q: %w", name, runstate.ErrNotMarked)
	}
	path := filepath.Join(runstate.NetnsDir, name)
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("namespace %s: not a regular file: %w", name, runstate.ErrNotMarked)
	}
	if runstate.IsNamespaceMount(path) {
		marker, err := runstate.Marker(path)
		if err != nil {
			return fmt.Errorf("namespace %s: read marker: %w", name, err)
		}
		if marker != id.Alias() {
			return fmt.Errorf("namespace %s %w", name, runstate.ErrNotMarked)
		}
	} else if st.Size() != 0 {
		return fmt.Errorf("namespace %s: a file with content, not a namespace: %w", name, runstate.ErrNotMarked)
	}
	return deleteNamespace(name)
}

// deleteNamespace kills every process still in a named namespace, then deletes it
// (`ip netns pids NAME | xargs kill -9; ip netns del NAME`). A namespace that is already gone
// is success, and so is one whose deletion was cut short after the unmount: the empty file
// left is removed.
func deleteNamespace(name string) error {
	path := filepath.Join(runstate.NetnsDir, name)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if runstate.IsNamespaceMount(path) {
		if err := runstate.KillProcessesIn([]string{path}); err != nil {
			return fmt.Errorf("delete namespace %s: %w", name, err)
		}
	}
	return removeNamespaceMount(name)
}

// removeNamespaceMount unmounts and removes a named namespace whose processes are gone
// (`ip netns del NAME`). The kernel removes its devices on its own after that; none of them is
// reachable any more. Gone already, or unmounted already, is success.
func removeNamespaceMount(name string) error {
	path := filepath.Join(runstate.NetnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete namespace %s: unmount: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}
