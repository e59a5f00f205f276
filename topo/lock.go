package topo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// MeasuringLock is the machine-wide lock one measuring run holds: two runs measuring at once
// on one machine halve each other's figures without either noticing.
type MeasuringLock struct{ f *os.File }

func measuringLockPath() string { return filepath.Join(StateDir, "measuring.lock") }

// LockMeasuring takes the measuring lock, waiting (and saying so on progress) while another
// run holds it, until ctx ends. With concurrent it does not wait: it takes the lock if it is
// free, and otherwise returns at once with busy naming the run that holds it, for a warning
// in the result.
func LockMeasuring(ctx context.Context, scenario string, concurrent bool, progress io.Writer) (lock *MeasuringLock, busy string, err error) {
	if err := ensureStateDir(); err != nil {
		return nil, "", err
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
