package runstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/plan"
)

// measuringLockPoll is how often a run waiting for another one's measuring lock tries.
const measuringLockPoll = 250 * time.Millisecond

// MeasuringLock is the machine-wide lock one measuring run holds: two runs measuring at once
// on one machine halve each other's figures without either noticing.
type MeasuringLock struct{ f *os.File }

func measuringLockPath() string { return filepath.Join(Dir, "measuring.lock") }

// LockMeasuring takes the measuring lock, waiting (and saying so on progress) while another
// run holds it, until ctx ends. With concurrent it does not wait: it takes the lock if it is
// free, and otherwise returns at once with busy naming the run that holds it, for a warning
// in the result.
func LockMeasuring(ctx context.Context, scenario string, concurrent bool, progress io.Writer) (lock *MeasuringLock, busy string, err error) {
	if err := EnsureDir(); err != nil {
		return nil, "", err
	}
	if progress == nil {
		progress = io.Discard // the wait is still said nowhere, never a panic
	}
	f, err := os.OpenFile(measuringLockPath(), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("measuring lock: %w", err)
	}
	said := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, "", fmt.Errorf("measuring lock %s: %w", measuringLockPath(), err)
		}
		holder := holderOf(f)
		if concurrent {
			f.Close()
			return &MeasuringLock{}, holder, nil
		}
		if !said {
			fmt.Fprintf(progress, "waiting: another nsperf run is measuring on this machine (%s); --concurrent measures at once, with a warning in the result\n", holder)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, "", ctx.Err()
		case <-time.After(measuringLockPoll):
		}
	}
	// Who holds it, for the message of a run that waits: information only.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("process %d, scenario %s, since %s\n", os.Getpid(), scenario, time.Now().UTC().Format(time.RFC3339))), 0)
	return &MeasuringLock{f: f}, "", nil
}

func holderOf(f *os.File) string {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		return s
	}
	return "holder unknown"
}

// Release drops the lock.
func (l *MeasuringLock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// LockRun takes the lock of a run that is not alive, creating the lock file if a killed run
// left none; alive reports that the run's own process (or another cleanup) holds it. The
// caller removes what it must and then calls UnlockRun.
func LockRun(id plan.RunID) (lock *os.File, alive bool, err error) {
	if err := EnsureDir(); err != nil {
		return nil, false, err
	}
	for {
		f, err := os.OpenFile(LockPath(id), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
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
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Lstat(LockPath(id), &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
			return f, false, nil
		}
		f.Close()
	}
}

// UnlockRun removes the lock file of a run whose leftovers are gone and drops the lock.
func UnlockRun(id plan.RunID, f *os.File, remove bool) {
	if remove {
		os.Remove(LockPath(id))
	}
	f.Close()
}

// Alive reports whether a run is in progress: its process holds the run's lock. A process id
// means nothing here: ids are reused within minutes. A run without a lock file is not alive: a
// run creates it before anything else and removes it after everything else.
func Alive(id plan.RunID) bool {
	held, missing := LockHeld(LockPath(id))
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
