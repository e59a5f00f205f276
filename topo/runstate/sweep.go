package runstate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"golang.org/x/sys/unix"
)

// How long the sweep waits for killed processes to be gone, and how often it looks.
const (
	killTimeout  = 5 * time.Second
	pollInterval = 20 * time.Millisecond
)

// KillProcessesIn sends SIGKILL to every process whose network namespace is one of those
// mounted at nsPaths and waits until they have exited (a process leaves its namespace before
// it is a zombie, so both are waited for), so that the namespaces and their devices really
// disappear. One pass over /proc serves every namespace.
func KillProcessesIn(nsPaths []string) error {
	return KillTargets(NamespaceTargets(nsPaths), nsPaths)
}

// NamespaceTargets identifies the namespaces mounted at nsPaths (device and inode), so that
// their processes can be found after the mounts are gone.
func NamespaceTargets(nsPaths []string) map[[2]uint64]bool {
	targets := map[[2]uint64]bool{}
	for _, p := range nsPaths {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err == nil {
			targets[[2]uint64{st.Dev, st.Ino}] = true
		}
	}
	return targets
}

// KillTargets is KillProcessesIn for namespaces identified by NamespaceTargets; nsPaths
// only name them in the error.
func KillTargets(targets map[[2]uint64]bool, nsPaths []string) error {
	if len(targets) == 0 {
		return nil
	}
	deadline := time.Now().Add(waitlimit.Of(killTimeout))
	killed := map[int]bool{}
	for {
		pids := ProcessesIn(targets)
		for pid := range killed {
			if Running(pid) {
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

// Running reports whether a process still exists and is not yet a zombie.
func Running(pid int) bool {
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

func ProcessesIn(targets map[[2]uint64]bool) []int {
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
