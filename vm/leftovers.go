package vm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/topo/runstate"
)

// Leftover is what a killed run on a kernel under test left: its guest's directory and the
// QEMU still running for it, if any.
type Leftover struct {
	Name string // the directory's name, vm-XXXX: QEMU runs with -name nsperf-vm-XXXX
	Dir  string // "" when only the process is left
	PIDs []int  // QEMU processes named for it
}

// Leftovers finds the guests of runs that are gone: directories in Dir() whose lock nobody
// holds, and QEMU processes whose -name is nsperf-NAME for such a directory (or for one that
// is gone). A guest whose run is alive (its lock held) is never listed.
func Leftovers() ([]Leftover, error) { return leftoversIn(Dir()) }

func leftoversIn(parent string) ([]Leftover, error) {
	found := map[string]*Leftover{}
	entries, err := os.ReadDir(parent)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && (strings.HasPrefix(e.Name(), "vm-") || hiddenGuestDir(e.Name())) {
			found[e.Name()] = &Leftover{Name: e.Name(), Dir: filepath.Join(parent, e.Name())}
		}
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if name := guestName(pid); name != "" {
			l := found[name]
			if l == nil {
				l = &Leftover{Name: name}
				found[name] = l
			}
			l.PIDs = append(l.PIDs, pid)
		}
	}
	var out []Leftover
	for _, l := range found {
		if l.Dir != "" && (locked(l.Dir) || gone(l.Dir) && len(l.PIDs) == 0) {
			continue
		}
		out = append(out, *l)
	}
	return out, nil
}

// gone reports whether a directory listed a moment ago is no longer there: its run renamed it
// to remove it (removeLockedDir) between the listing and the look at its lock, which then
// finds neither a lock file nor a directory to date. Not a leftover.
func gone(dir string) bool {
	_, err := os.Lstat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

// guestName is NAME when pid is a QEMU started by nsperf (-name nsperf-NAME), else "".
func guestName(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := bytes.Split(bytes.TrimRight(data, "\x00"), []byte{0})
	if len(args) == 0 || filepath.Base(string(args[0])) != QEMU {
		return ""
	}
	for i := 0; i+1 < len(args); i++ {
		if string(args[i]) == "-name" {
			if name, ok := strings.CutPrefix(string(args[i+1]), "nsperf-vm-"); ok && !strings.ContainsAny(name, "/,") {
				return "vm-" + name
			}
		}
	}
	return ""
}

// locked reports whether a run holds the guest directory's lock (it is alive).
func locked(dir string) bool {
	held, missing := runstate.LockHeld(filepath.Join(dir, "lock"))
	if missing {
		// A run creates the lock right after the directory: give a run starting now that
		// moment, then call it gone.
		st, err := os.Stat(dir)
		return err == nil && time.Since(st.ModTime()) < 10*time.Second
	}
	return held
}

// Remove kills the leftover's QEMU processes and removes its directory.
func (l Leftover) Remove() error {
	for _, pid := range l.PIDs {
		if guestName(pid) != l.Name { // gone, or the pid is another process by now
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill QEMU %d of %s: %w", pid, l.Name, err)
		}
		for i := 0; i < 500 && guestName(pid) == l.Name; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if l.Dir != "" {
		return os.RemoveAll(l.Dir)
	}
	return nil
}

// Kind says what the leftover was: a guest, or a run's scratch directory (ScratchDir).
func (l Leftover) Kind() string {
	name := strings.TrimPrefix(strings.TrimPrefix(l.Name, makingPrefix), removingPrefix)
	if len(l.PIDs) == 0 && strings.HasPrefix(name, "vm-modules-") {
		return "modules installed for a guest"
	}
	return "guest"
}

// String says what the leftover is.
func (l Leftover) String() string {
	var parts []string
	if len(l.PIDs) > 0 {
		parts = append(parts, fmt.Sprintf("QEMU pid %v", l.PIDs))
	}
	if l.Dir != "" {
		parts = append(parts, l.Dir)
	}
	return l.Name + " (" + strings.Join(parts, ", ") + ")"
}

// ScratchDir makes a directory for a run's files beside its guests (prefix names it, after
// "vm-"), locked like a guest's: removed by release, and by `nsperf cleanup` once the run is
// gone, as after a kill -9 (os.MkdirTemp in /tmp would outlive such a run).
func ScratchDir(prefix string) (dir string, release func(), err error) {
	dir, lock, err := makeLockedDir(Dir(), prefix)
	if err != nil {
		return "", nil, err
	}
	return dir, func() { removeLockedDir(dir, lock) }, nil
}
