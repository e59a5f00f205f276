// Package runstate is what a run leaves on the machine to be found again: its state file
// and lock under Dir, the marker on its namespaces, the machine's measuring lock, and the
// sweep that kills what still runs in its namespaces. The live topology (topo), the kernels
// under test (vm) and cleanup use it; it never removes a device or a namespace itself.
package runstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/topo/plan"
)

// OVSDir is where a run's private OVS keeps its database, sockets and logs.
func OVSDir(id plan.RunID) string { return plan.Facts{StateDir: Dir}.OVSDir(id) }

// BPFFS is where bpffs is mounted (`mount -t bpf bpf /sys/fs/bpf`, as systemd and ip do it).
const BPFFS = "/sys/fs/bpf"

// PinRoot holds, one directory per run (PinDir), what nsperf pins in bpffs so that it outlives
// its process: the bpf_links of the XDP programs of a topology kept up (`nsperf up`, `run
// --keep`), which would go with their last file descriptor otherwise.
const PinRoot = BPFFS + "/nsperf"

// PinDir is a run's directory in PinRoot: derived from the run id, never read from a file.
func PinDir(id plan.RunID) string { return filepath.Join(PinRoot, string(id)) }

// Dir holds one state file and one lock file per run: what the run created, so that `nsperf
// down` and `nsperf cleanup` can remove it after the run is gone, and the lock that says
// whether the run is still alive; and the machine's measuring lock. /run is cleared at boot,
// as are network namespaces.
const Dir = plan.StateDir

// NetnsDir is where named network namespaces are mounted (`ip netns add`).
const NetnsDir = "/run/netns"

// maxStateFile bounds what is read as a state file; a real one is a few hundred bytes.
const maxStateFile = 64 << 10

// StateFile is the state file of one run. It is a record, never a licence: what cleanup removes
// must also carry the run's marker in the kernel (the alias nsperf:RUNID on a namespace's
// loopback, external_ids on OVS rows), and a run is alive while its lock is held, whatever
// the file says.
type StateFile struct {
	RunID      plan.RunID `json:"run_id"`
	PID        int        `json:"pid"`               // the nsperf process that made the run; information only
	Kept       bool       `json:"kept"`              // left up on purpose (`nsperf up`, `run --keep`)
	Scenario   string     `json:"scenario"`          // name
	Created    time.Time  `json:"created"`           //
	Namespaces []string   `json:"namespaces"`        // full names, recorded before each is created
	Dirs       []string   `json:"dirs,omitempty"`    // the private OVS directory (always OVSDir(RunID))
	OVSDB      string     `json:"ovsdb,omitempty"`   // an existing OVS the run added bridges to
	MadeBy     Lineage    `json:"made_by,omitempty"` // the nsperf process and its ancestors

	lock *os.File // held from the claim until the run's teardown ends
}

func Path(id plan.RunID) string     { return filepath.Join(Dir, string(id)+".json") }
func LockPath(id plan.RunID) string { return id.LockPath() }

// EnsureDir creates Dir, or checks that the existing one is a real directory owned
// by this user: a symlink or somebody else's directory there is refused.
func EnsureDir() error {
	if err := os.MkdirAll(filepath.Dir(Dir), 0o755); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	if err := os.Mkdir(Dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create state directory: %w", err)
	}
	st, err := os.Lstat(Dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || sys == nil || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s is not a directory owned by uid %d; refusing to use it (remove it)", Dir, os.Geteuid())
	}
	return nil
}

// Claim creates the lock and state file of a new run and takes the lock, before anything
// of the run exists; it fails with fs.ErrExist if the run id is taken.
func Claim(id plan.RunID, scenario string, kept bool, namespaces ...string) (*StateFile, error) {
	if err := EnsureDir(); err != nil {
		return nil, err
	}
	if matches, _ := filepath.Glob(filepath.Join(NetnsDir, string(id)+"-*")); len(matches) > 0 {
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	lock, err := os.OpenFile(LockPath(id), os.O_CREATE|os.O_EXCL|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim run id %s: %w", id, err)
	}
	// Blocking: whoever looks whether the run is alive (LockHeld, cleanup's LockRun) holds
	// the new file's lock for a moment, which must not fail the run. Cleanup may have taken
	// the file for a dead run's and removed it: then the id is lost, as if taken.
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("claim run id %s: lock: %w", id, err)
	}
	var held, now unix.Stat_t
	if unix.Fstat(int(lock.Fd()), &held) != nil || unix.Lstat(LockPath(id), &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		lock.Close()
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	if _, err := os.Lstat(Path(id)); err == nil {
		os.Remove(LockPath(id))
		lock.Close()
		return nil, fmt.Errorf("run id %s: %w", id, fs.ErrExist)
	}
	o := &StateFile{RunID: id, PID: os.Getpid(), Kept: kept, Scenario: scenario, Created: time.Now().UTC(), Namespaces: namespaces, MadeBy: OwnLineage(), lock: lock}
	if err := o.Save(); err != nil {
		o.Release()
		return nil, err
	}
	return o, nil
}

// save rewrites the state file atomically: a new file renamed over the old one, so a symlink
// planted at its path is replaced, never followed.
func (o *StateFile) Save() error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	// The state directory is /run (tmpfs): no fsync, see safefile.Replace.
	if err := safefile.Replace(Path(o.RunID), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}

// release removes the state and lock files and drops the lock: the run is over.
func (o *StateFile) Release() error {
	err := os.Remove(Path(o.RunID))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if rerr := os.Remove(LockPath(o.RunID)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if o.lock != nil {
		o.lock.Close()
		o.lock = nil
	}
	return err
}

// Unlock drops the run's lock and keeps its files: the run is left up on purpose (`nsperf
// up`, `run --keep`), and `nsperf down` or `cleanup --all` may remove it.
func (o *StateFile) Unlock() {
	if o.lock != nil {
		o.lock.Close()
		o.lock = nil
	}
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

// Read reads and checks the state file of a run: a regular file (never through a
// symlink), owned by this user, small, naming this run, whose namespaces and directories are
// exactly the ones a run of this id can have.
func Read(id plan.RunID) (*StateFile, error) {
	path := Path(id)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w in %s; nothing of it is known to be up (see `nsperf cleanup --dry-run`)", id, ErrNoStateFile, Dir)
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
	o, err := Parse(id, data)
	if err != nil {
		return nil, &StateFileError{Path: path, Err: err}
	}
	return o, nil
}

// namespaceName is what every namespace of a run is called: RUNID-NAME, NAME as scenario
// namespaces are named (letters, digits, '_', '-').
var namespaceName = regexp.MustCompile(`^(` + plan.RunIDPattern + `)-[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// Parse decodes a state file of run id and checks every name in it; it never trusts a
// path from the file: namespaces must be RUNID-NAME and the only directory OVSDir(RUNID).
func Parse(id plan.RunID, data []byte) (*StateFile, error) {
	var o StateFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("not a state file: %w", err)
	}
	if o.RunID != id {
		return nil, fmt.Errorf("names run %q, not %s", o.RunID, id)
	}
	for _, ns := range o.Namespaces {
		if m := namespaceName.FindStringSubmatch(ns); m == nil || m[1] != string(id) {
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

// RunOfNamespace returns the run a namespace name belongs to (RUNID-NAME), if it is one.
func RunOfNamespace(name string) (plan.RunID, bool) {
	m := namespaceName.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return plan.RunID(m[1]), true
}
