package runstate

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/waitlimit"

	"golang.org/x/sys/unix"
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
	deadline := time.Now().Add(waitlimit.Of(waitlimit.Kill))
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
		time.Sleep(waitlimit.Poll)
	}
}

// Running reports whether a process still exists and is not yet a zombie.
func Running(pid int) bool {
	st, ok := procstat.ReadPID(pid)
	return ok && !st.Exited()
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

// kernelThreads lists kthreadd (pid 2) and its children, as /proc names: the kernel threads,
// which only the kernel starts and which stay in the initial namespaces. The sweep skips them;
// on a machine that runs few programs they are most of /proc (60 of 68 here), and each costs
// a readlink. Pid 2 counts only when its stat says it is a kernel thread: in a PID namespace
// pid 2 is an ordinary process. (Children of kthreadd also include the short-lived helpers
// that the kernel starts in the initial namespaces with CLONE_PARENT, such as modprobe.)
func kernelThreads() map[string]bool {
	if st, ok := procstat.ReadPID(2); !ok || !st.KernelThread() {
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
