package topo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/runstate"
)

// ensurePinDir returns a run's directory of pins in bpffs (runstate.PinDir), made if missing,
// with bpffs mounted at runstate.BPFFS first if it is not (`mount -t bpf bpf /sys/fs/bpf`, as
// ip and systemd do it, and left mounted as they leave it).
func ensurePinDir(id RunID) (string, error) {
	if err := mountBPFFS(); err != nil {
		return "", err
	}
	dir := runstate.PinDir(id)
	// Another run's removePins may take the parent away between the two mkdirs: again, then.
	err := os.MkdirAll(dir, 0o700)
	for attempt := 0; errors.Is(err, fs.ErrNotExist) && attempt < 3; attempt++ {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return "", err
	}
	if st, err := os.Lstat(dir); err != nil {
		return "", err
	} else if !st.IsDir() || !onBPFFS(dir) {
		return "", fmt.Errorf("%s is not a directory in bpffs (remove it)", dir)
	}
	return runstate.PinDir(id), nil
}

// mountBPFFS mounts bpffs at runstate.BPFFS unless it is there, under a lock in the state
// directory: two runs mounting it at once would stack two, the lower one's pins out of sight.
func mountBPFFS() error {
	if onBPFFS(runstate.BPFFS) {
		return nil
	}
	if err := runstate.EnsureDir(); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(runstate.Dir, "bpffs.lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("bpffs lock: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("bpffs lock: %w", err)
	}
	if onBPFFS(runstate.BPFFS) {
		return nil // mounted by the run that held the lock
	}
	if err := unix.Mount("bpf", runstate.BPFFS, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount bpffs on %s: %w", runstate.BPFFS, err)
	}
	return nil
}

// onBPFFS reports whether path is on a bpffs (`stat -f -c %T PATH` says bpf_fs).
func onBPFFS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.BPF_FS_MAGIC
}

// removePins removes a run's directory of pins in bpffs and what is pinned in it (`rm -r
// /sys/fs/bpf/nsperf/RUNID`): an XDP program whose link's pin goes is detached. The parent
// directory goes too when no other run's is left in it. removed: there was one.
func removePins(id RunID) (removed bool, err error) {
	dir := runstate.PinDir(id)
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() || !onBPFFS(dir) {
		return false, fmt.Errorf("%s is not a directory in bpffs; left alone", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("unpin run %s's XDP links: %w", id, err)
	}
	os.Remove(runstate.PinRoot) // only while empty: another run's pins keep it
	return true, nil
}
