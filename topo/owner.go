package topo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/topo/ovs"
)

// StateDir holds one state file and one lock file per run: what the run created, so that
// `nsperf down` and `nsperf cleanup` can remove it after the run is gone, and the lock that
// says whether the run is still alive. /run is cleared at boot, as are network namespaces.
var StateDir = "/run/nsperf"

// NetnsDir is where named network namespaces are mounted (`ip netns add`).
const NetnsDir = "/run/netns"

// maxStateFile bounds what is read as a state file; a real one is a few hundred bytes.
const maxStateFile = 64 << 10

// Owner is the state file of one run. It is a record, never a licence: what cleanup removes
// must also carry the run's marker in the kernel (the alias nsperf:RUNID on a namespace's
// loopback, external_ids on OVS rows), and a run is alive while its lock is held, whatever
// the file says.
type Owner struct {
	RunID      RunID     `json:"run_id"`
	PID        int       `json:"pid"`             // the nsperf process that made the run; information only
	Kept       bool      `json:"kept"`            // left up on purpose (`nsperf up`, `run --keep`)
	Scenario   string    `json:"scenario"`        // name
	Created    time.Time `json:"created"`         //
	Namespaces []string  `json:"namespaces"`      // full names, recorded before each is created
	Dirs       []string  `json:"dirs,omitempty"`  // the private OVS directory (always OVSDir(RunID))
	OVSDB      string    `json:"ovsdb,omitempty"` // an existing OVS the run added bridges to

	lock *os.File // held from the claim until the run's teardown ends
}

func ownerPath(id RunID) string { return filepath.Join(StateDir, string(id)+".json") }
func lockPath(id RunID) string  { return filepath.Join(StateDir, string(id)+".lock") }

// ensureStateDir creates StateDir, or checks that the existing one is a real directory owned
// by this user: a symlink or somebody else's directory there is refused.
func ensureStateDir() error {
	if err := os.MkdirAll(filepath.Dir(StateDir), 0o755); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	if err := os.Mkdir(StateDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create state directory: %w", err)
	}
	st, err := os.Lstat(StateDir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || sys == nil || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s is not a directory owned by uid %d; refusing to use it (remove it)", StateDir, os.Geteuid())
	}
	return nil
}

// claimOwner creates the lock and state file of a new run and takes the lock, before anything
// of the run exists; it fails with fs.ErrExist if the run id is taken.
func claimOwner(id RunID, scenario string, kept bool, namespaces ...string) (*Owner, error) {
	if err := ensureStateDir(); err != nil {
		return nil, err
	}
	if matches, _ := filepath.Glob(filepath.Join(NetnsDir, string(id)+"-*")); len(matches) > 0 {
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	lock, err := os.OpenFile(lockPath(id), os.O_CREATE|os.O_EXCL|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim run id %s: %w", id, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("claim run id %s: lock: %w", id, err)
	}
	if _, err := os.Lstat(ownerPath(id)); err == nil {
		os.Remove(lockPath(id))
		lock.Close()
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	o := &Owner{RunID: id, PID: os.Getpid(), Kept: kept, Scenario: scenario, Created: time.Now().UTC(), Namespaces: namespaces, lock: lock}
	if err := o.save(); err != nil {
		o.release()
		return nil, err
	}
	return o, nil
}

// save rewrites the state file atomically: a new file renamed over the old one, so a symlink
// planted at its path is replaced, never followed.
func (o *Owner) save() error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	// The state directory is /run (tmpfs): no fsync, see safefile.Replace.
	if err := safefile.Replace(ownerPath(o.RunID), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}

// release removes the state and lock files and drops the lock: the run is over.
func (o *Owner) release() error {
	err := os.Remove(ownerPath(o.RunID))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if rerr := os.Remove(lockPath(o.RunID)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if o.lock != nil {
		o.lock.Close()
		o.lock = nil
	}
	return err
}

// StateFileError says that a state file cannot be trusted or read; nothing is done on its word.
type StateFileError struct {
	Path string
	Err  error
}

func (e *StateFileError) Error() string {
	return fmt.Sprintf("state file %s: %v; nothing of it was touched (look, then remove the file by hand)", e.Path, e.Err)
}
func (e *StateFileError) Unwrap() error { return e.Err }

// ErrNoStateFile: the run has no state file; nothing of it is known to be up.
var ErrNoStateFile = errors.New("no state file")

// ReadOwner reads and checks the state file of a run: a regular file (never through a
// symlink), owned by this user, small, naming this run, whose namespaces and directories are
// exactly the ones a run of this id can have.
func ReadOwner(id RunID) (*Owner, error) {
	path := ownerPath(id)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w in %s; nothing of it is known to be up (see `nsperf cleanup --dry-run`)", id, ErrNoStateFile, StateDir)
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = errors.New("is a symlink")
		}
		return nil, &StateFileError{Path: path, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &StateFileError{Path: path, Err: err}
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.Mode().IsRegular():
		return nil, &StateFileError{Path: path, Err: errors.New("not a regular file")}
	case sys == nil || int(sys.Uid) != os.Geteuid():
		return nil, &StateFileError{Path: path, Err: fmt.Errorf("not owned by uid %d", os.Geteuid())}
	case st.Size() > maxStateFile:
		return nil, &StateFileError{Path: path, Err: fmt.Errorf("%d bytes, more than a state file has", st.Size())}
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, &StateFileError{Path: path, Err: err}
	}
	o, err := ParseOwner(id, data)
	if err != nil {
		return nil, &StateFileError{Path: path, Err: err}
	}
	return o, nil
}

// runNamespaceName is what every namespace of a run is called: RUNID-NAME, NAME as scenario
// namespaces are named (letters, digits, '_', '-').
var runNamespaceName = regexp.MustCompile(`^(nsp[0-9a-f]{4})-[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// ParseOwner decodes a state file of run id and checks every name in it; it never trusts a
// path from the file: namespaces must be RUNID-NAME and the only directory OVSDir(RUNID).
func ParseOwner(id RunID, data []byte) (*Owner, error) {
	var o Owner
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("not a state file: %w", err)
	}
	if o.RunID != id {
		return nil, fmt.Errorf("names run %q, not %s", o.RunID, id)
	}
	for _, ns := range o.Namespaces {
		if m := runNamespaceName.FindStringSubmatch(ns); m == nil || m[1] != string(id) {
			return nil, fmt.Errorf("namespace %q is not a namespace of run %s", ns, id)
		}
	}
	for _, d := range o.Dirs {
		if d != OVSDir(id) {
			return nil, fmt.Errorf("directory %q is not run %s's private OVS directory %s", d, id, OVSDir(id))
		}
	}
	if o.OVSDB != "" && !strings.HasPrefix(o.OVSDB, "unix:/") {
		return nil, fmt.Errorf("ovsdb %q is not unix:PATH", o.OVSDB)
	}
	return &o, nil
}

// lockRun takes the lock of a run that is not alive, creating the lock file if a killed run
// left none; alive reports that the run's own process (or another cleanup) holds it. The
// caller removes what it must and then calls unlockRun.
func lockRun(id RunID) (lock *os.File, alive bool, err error) {
	if err := ensureStateDir(); err != nil {
		return nil, false, err
	}
	for {
		f, err := os.OpenFile(lockPath(id), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("lock of run %s: %w", id, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("lock of run %s: %w", id, err)
		}
		// The owner may have removed the file between our open and our lock: then this lock
		// is on a file nobody else will look at. Try again on the current one.
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Lstat(lockPath(id), &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
			return f, false, nil
		}
		f.Close()
	}
}

// unlockRun removes the lock file of a run whose leftovers are gone and drops the lock.
func unlockRun(id RunID, f *os.File, remove bool) {
	if remove {
		os.Remove(lockPath(id))
	}
	f.Close()
}

// Alive reports whether a run is in progress: its process holds the run's lock. A process id
// means nothing here: ids are reused within minutes. A run without a lock file is not alive: a
// run creates it before anything else and removes it after everything else.
func Alive(id RunID) bool {
	held, missing := LockHeld(lockPath(id))
	return held && !missing
}

// LockHeld reports whether a process holds the lock file at path (flock), or that there is
// no such file. When it cannot tell, the lock counts as held: touch nothing.
func LockHeld(path string) (held, missing bool) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, true
	}
	if err != nil {
		return true, false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil, false
}

// Removal is what Down did: what it removed and what it left alone, and why.
type Removal struct {
	Removed   []string
	LeftAlone []string
}

// Down removes a run that is not alive: its bridges in an existing OVS, the namespaces that
// carry its marker (killing what still runs in them, which takes their devices along), its
// private OVS directory, then its state and lock files. It is what `nsperf down RUNID` and
// `nsperf cleanup` do, and it is idempotent. It refuses a live run.
func Down(o *Owner) (Removal, error) {
	lock, alive, err := lockRun(o.RunID)
	if err != nil {
		return Removal{}, err
	}
	if alive {
		return Removal{}, fmt.Errorf("run %s is still in progress (its process holds %s); stop that process instead", o.RunID, lockPath(o.RunID))
	}
	var rm Removal
	var errs []error
	if o.OVSDB != "" {
		ctx, cancel := context.WithTimeout(context.Background(), ovsRemoveTimeout)
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
		name := o.Namespaces[i]
		switch err := removeRunNamespace(name, o.RunID); {
		case errors.Is(err, errNotMarked):
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
		if err := os.Remove(ownerPath(o.RunID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	unlockRun(o.RunID, lock, len(errs) == 0)
	return rm, errors.Join(errs...)
}

// removeOVSDir removes the private OVS directory of a run: a path derived from the run id
// under StateDir, never one read from a file, and only if it is a real directory.
func removeOVSDir(id RunID) error {
	dir := OVSDir(id)
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
	owner   *Owner
}

// FindLeftovers lists runs that are not alive (or, with all, also those kept up on purpose)
// and namespaces named like a run's that no state file claims. A live run, one whose process
// holds its lock, is never listed, whatever its files say.
func FindLeftovers(all bool) ([]Leftover, error) {
	files, err := filepath.Glob(filepath.Join(StateDir, "nsp*.json"))
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
		if Alive(id) {
			continue // a run in progress
		}
		o, err := ReadOwner(id)
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
		out = append(out, Leftover{RunID: o.RunID, Namespaces: o.Namespaces, Reason: reason, owner: o})
	}
	orphans := map[RunID][]string{}
	entries, err := os.ReadDir(NetnsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		m := runNamespaceName.FindStringSubmatch(e.Name())
		if m == nil || claimed[RunID(m[1])] {
			continue
		}
		orphans[RunID(m[1])] = append(orphans[RunID(m[1])], e.Name())
	}
	dirs, _ := filepath.Glob(filepath.Join(StateDir, "nsp*-ovs"))
	for _, d := range dirs {
		m := runNamespaceName.FindStringSubmatch(filepath.Base(d))
		if m != nil && !claimed[RunID(m[1])] && d == OVSDir(RunID(m[1])) && orphans[RunID(m[1])] == nil {
			orphans[RunID(m[1])] = []string{}
		}
	}
	for id, nss := range orphans {
		if Alive(id) {
			continue // a run being built: its state file is on its way or its lock is held
		}
		what := "namespace without a state file"
		if len(nss) == 0 {
			what = "private OVS directory without a state file"
		}
		sort.Strings(nss)
		out = append(out, Leftover{RunID: id, Namespaces: nss, Reason: what})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// Remove deletes a leftover: what carries the run's marker and the run's own directory.
func (l Leftover) Remove() (Removal, error) {
	if l.Problem != nil {
		return Removal{}, l.Problem
	}
	if l.owner != nil {
		return Down(l.owner)
	}
	return Down(&Owner{RunID: l.RunID, Namespaces: l.Namespaces})
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
		if err != nil || Alive(id) {
			continue
		}
		if o, err := ReadOwner(id); err == nil && o.Kept {
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
