package topo

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

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// errNotMarked: a namespace named like a run's that does not carry that run's marker; nsperf
// did not make it (or had not marked it yet) and leaves it alone.
var errNotMarked = errors.New("does not carry nsperf's marker for this run; left alone")

// markNamespace sets the run's marker on a namespace nsperf just created: the alias of its
// loopback device (`ip -n NAME link set lo alias nsperf:RUNID`). Only nsperf sets it, and
// cleanup removes only namespaces that carry it.
func markNamespace(h *netlink.Handle, id RunID) error {
	if err := h.LinkSetAlias(loopback, id.Alias()); err != nil {
		return fmt.Errorf("mark namespace: %w", err)
	}
	return nil
}

// loopback is lo of a new namespace: the kernel always gives it index 1.
var loopback = &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}

// namespaceMarker reads the marker of a mounted named namespace: the alias of its loopback.
func namespaceMarker(path string) (string, error) {
	fd, err := netns.GetFromPath(path)
	if err != nil {
		return "", err
	}
	defer fd.Close()
	h, err := netlink.NewHandleAt(fd, unix.NETLINK_ROUTE)
	if err != nil {
		return "", err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return "", err
	}
	return lo.Attrs().Alias, nil
}

// isNamespaceMount reports whether path is a mounted network namespace (nsfs), not the empty
// file a deletion interrupted between unmount and unlink leaves behind.
func isNamespaceMount(path string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && fs.Type == unix.NSFS_MAGIC
}

// removeRunNamespace removes a namespace of run id after checking that it is one: its name is
// RUNID-NAME and it carries the run's marker. An empty unmounted file of that name (a killed
// deletion) is removed too: it is no namespace and breaks `ip netns list`.
func removeRunNamespace(name string, id RunID) error {
	if m := runNamespaceName.FindStringSubmatch(name); m == nil || m[1] != string(id) {
		return fmt.Errorf("namespace %q: %w", name, errNotMarked)
	}
	path := filepath.Join(NetnsDir, name)
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("namespace %s: not a regular file: %w", name, errNotMarked)
	}
	if isNamespaceMount(path) {
		marker, err := namespaceMarker(path)
		if err != nil {
			return fmt.Errorf("namespace %s: read marker: %w", name, err)
		}
		if marker != id.Alias() {
			return fmt.Errorf("namespace %s %w", name, errNotMarked)
		}
	} else if st.Size() != 0 {
		return fmt.Errorf("namespace %s: a file with content, not a namespace: %w", name, errNotMarked)
	}
	return deleteNamespace(name)
}

// deleteNamespace kills every process still in a named namespace, then deletes it
// (`ip netns pids NAME | xargs kill -9; ip netns del NAME`). A namespace that is already gone
// is success, and so is one whose deletion was cut short after the unmount: the empty file
// left is removed.
func deleteNamespace(name string) error {
	path := filepath.Join(NetnsDir, name)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if isNamespaceMount(path) {
		if err := killProcessesInAll([]string{path}); err != nil {
			return fmt.Errorf("delete namespace %s: %w", name, err)
		}
	}
	return removeNamespaceMount(name)
}

// removeNamespaceMount unmounts and removes a named namespace whose processes are gone
// (`ip netns del NAME`). The kernel removes its devices on its own after that; none of them is
// reachable any more. Gone already, or unmounted already, is success.
func removeNamespaceMount(name string) error {
	path := filepath.Join(NetnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete namespace %s: unmount: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// killProcessesInAll sends SIGKILL to every process whose network namespace is one of those
// mounted at nsPaths and waits until they have exited (a process leaves its namespace before
// it is a zombie, so both are waited for), so that the namespaces and their devices really
// disappear. One pass over /proc serves every namespace.
func killProcessesInAll(nsPaths []string) error {
	return killProcessesIn(namespaceTargets(nsPaths), nsPaths)
}

// namespaceTargets identifies the namespaces mounted at nsPaths (device and inode), so that
// their processes can be found after the mounts are gone.
func namespaceTargets(nsPaths []string) map[[2]uint64]bool {
	targets := map[[2]uint64]bool{}
	for _, p := range nsPaths {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err == nil {
			targets[[2]uint64{st.Dev, st.Ino}] = true
		}
	}
	return targets
}

// killProcessesIn is killProcessesInAll for namespaces identified by namespaceTargets; nsPaths
// only name them in the error.
func killProcessesIn(targets map[[2]uint64]bool, nsPaths []string) error {
	if len(targets) == 0 {
		return nil
	}
	deadline := time.Now().Add(killTimeout)
	killed := map[int]bool{}
	for {
		pids := processesIn(targets)
		for pid := range killed {
			if exiting(pid) {
				pids = append(pids, pid)
			} else {
				delete(killed, pid)
			}
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in %s survive SIGKILL", pids, strings.Join(nsPaths, ", "))
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed[pid] = true
		}
		time.Sleep(pollInterval)
	}
}

// exiting reports whether a process still exists and is not yet a zombie.
func exiting(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := statFields(stat)
	return len(f) > 0 && string(f[0]) != "Z" && string(f[0]) != "X"
}

// statFields are the fields of a /proc/PID/stat line after the process name, which ends at
// the last ")" (a name may hold spaces and parentheses): state, ppid, pgrp, session, tty_nr,
// tpgid, flags, ... None for a line without a name.
func statFields(stat []byte) [][]byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(stat[i+1:])
}

func processesIn(targets map[[2]uint64]bool) []int {
	proc, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer proc.Close()
	kernelThreads := kernelThreads()
	names, _ := proc.Readdirnames(-1)
	// readlink of /proc/PID/ns/net ("net:[INODE]") costs half of a stat, which follows the
	// link into nsfs (BenchmarkProcessSweep, 67 processes: 0.35 against 0.65 ms); the inode
	// alone names a namespace, as nsfs has one device.
	inodes := map[string]bool{}
	for t := range targets {
		inodes["net:["+strconv.FormatUint(t[1], 10)+"]"] = true
	}
	self := os.Getpid()
	var pids []int
	buf := make([]byte, 64)
	for _, name := range names {
		if kernelThreads[name] {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		n, err := unix.Readlinkat(int(proc.Fd()), name+"/ns/net", buf)
		if err != nil {
			continue
		}
		if inodes[string(buf[:n])] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pfKthread is PF_KTHREAD of include/linux/sched.h, the flag of a kernel thread in the ninth
// field of /proc/PID/stat.
const pfKthread = 0x00200000

// kernelThreads lists kthreadd (pid 2) and its children, as /proc names: the kernel threads,
// which only the kernel starts and which stay in the initial namespaces. The sweep skips them;
// on a machine that runs few programs they are most of /proc (60 of 68 here), and each costs
// a readlink. Pid 2 counts only when its stat says it is a kernel thread: in a PID namespace
// pid 2 is an ordinary process. (Children of kthreadd also include the short-lived helpers
// that the kernel starts in the initial namespaces with CLONE_PARENT, such as modprobe.)
func kernelThreads() map[string]bool {
	if stat, err := os.ReadFile("/proc/2/stat"); err != nil || !isKernelThread(stat) {
		return nil
	}
	children, err := os.ReadFile("/proc/2/task/2/children")
	if err != nil {
		return nil
	}
	out := map[string]bool{"2": true}
	for _, pid := range strings.Fields(string(children)) {
		out[pid] = true
	}
	return out
}

// isKernelThread reads the flags of a /proc/PID/stat line.
func isKernelThread(stat []byte) bool {
	f := statFields(stat)
	if len(f) < 7 {
		return false
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	return err == nil && flags&pfKthread != 0
}
