package topo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// deleteNamespace kills every process still in a named namespace, then deletes it
// (`ip netns pids NAME | xargs kill -9; ip netns del NAME`). A namespace that is already gone
// is success.
func deleteNamespace(name string) error {
	path := filepath.Join("/run/netns", name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := killProcessesIn(path); err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	if err := netns.DeleteNamed(name); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// killProcessesIn sends SIGKILL to every process whose network namespace is the one at nsPath
// and waits until they are gone, so that the namespace and its devices really disappear.
func killProcessesIn(nsPath string) error {
	var target unix.Stat_t
	if err := unix.Stat(nsPath, &target); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := processesIn(target)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in %s survive SIGKILL", pids, nsPath)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesIn(target unix.Stat_t) []int {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns/net"), &st) != nil {
			continue
		}
		if st.Dev == target.Dev && st.Ino == target.Ino {
			pids = append(pids, pid)
		}
	}
	return pids
}
