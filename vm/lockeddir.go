package vm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/runstate"
)

// A run's directory beside the guests (a guest's, or a run's scratch directory) is named vm-*
// only while its run holds the lock file inside it: it is made under a hidden name, locked,
// and renamed to vm-*; to go, it is renamed back to a hidden name before it is emptied. Anyone
// who looks at vm-* (`nsperf cleanup`, a test checking that nothing of its own is left) thus
// never sees a live run's directory without its lock, neither in the moment after mkdir nor
// while a large tree is being removed. A hidden directory whose lock nobody holds is what a
// run killed in one of those moments left; Leftovers lists it too.
const (
	makingPrefix   = ".making-"
	removingPrefix = ".removing-"
)

// makeLockedDir makes parent/vm-NAME-XXXX (vm-XXXX when name is "") and returns it with its
// lock held (`mkdir` under a hidden name, `flock -n lock`, then `mv -T --no-clobber`).
func makeLockedDir(parent, name string) (dir string, lock *os.File, err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	pattern := "vm-"
	if name != "" {
		pattern += name + "-"
	}
	hidden, err := os.MkdirTemp(parent, makingPrefix+pattern)
	if err != nil {
		return "", nil, err
	}
	lock, err = os.OpenFile(filepath.Join(hidden, "lock"), os.O_CREATE|os.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		// Blocking: the file is new and nobody's but this run's; one who looks whether a
		// lock is held (runstate.LockHeld) holds it shared for a moment, which must not fail
		// the run.
		if err = unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
			lock.Close()
		} else if err = runstate.WriteLineage(lock); err != nil {
			lock.Close()
		}
	}
	if err != nil {
		os.RemoveAll(hidden)
		return "", nil, fmt.Errorf("lock %s: %w", hidden, err)
	}
	dir = filepath.Join(parent, strings.TrimPrefix(filepath.Base(hidden), makingPrefix))
	// RENAME_NOREPLACE: a plain rename would replace an empty directory of that name.
	if err := unix.Renameat2(unix.AT_FDCWD, hidden, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE); err != nil {
		lock.Close()
		os.RemoveAll(hidden)
		return "", nil, fmt.Errorf("name the guest directory %s: %w", dir, err)
	}
	return dir, lock, nil
}

// removeLockedDir removes a directory made by makeLockedDir and then lets its lock go.
func removeLockedDir(dir string, lock *os.File) error {
	defer lock.Close()
	hidden := filepath.Join(filepath.Dir(dir), removingPrefix+filepath.Base(dir))
	if err := os.Rename(dir, hidden); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove the guest directory %s: %w", dir, err)
	}
	return os.RemoveAll(hidden)
}

// hiddenGuestDir reports whether an entry of Dir() is a run's directory on its way in or out.
func hiddenGuestDir(name string) bool {
	return strings.HasPrefix(name, makingPrefix+"vm-") || strings.HasPrefix(name, removingPrefix+"vm-")
}
