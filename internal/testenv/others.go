package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// A test looks only at what it made: another nsperf run beside it (a user's run, a build, a
// guest of an A/B) holds its run's lock, or its guest's, for as long as it lives, and what it
// made is not the test's to judge. What a test's own runs left behind belongs to runs that
// have ended, whose locks nobody holds. These say whether a leftover belongs to a live run.

var (
	runIDRe = regexp.MustCompile(`nsp[0-9a-f]{4}`)
	guestRe = regexp.MustCompile(`nsperf-(vm-[A-Za-z0-9]+)`)
)

// liveRunIn reports whether s names a run (nspXXXX) that is alive now.
func liveRunIn(s string) bool {
	for _, id := range runIDRe.FindAllString(s, -1) {
		if runstate.Alive(plan.RunID(id)) {
			return true
		}
	}
	return false
}

// liveGuest reports whether dir is a guest directory whose session holds its lock.
func liveGuest(dir string) bool {
	held, missing := runstate.LockHeld(filepath.Join(dir, "lock"))
	return held && !missing
}

// ofOthers reports whether a leftover of kind what belongs to a run or guest alive now.
func ofOthers(what, item, stateDir string) bool {
	switch what {
	case "network namespaces", "links in the root namespace":
		return liveRunIn(item)
	case "state files":
		if strings.HasPrefix(filepath.Base(item), "vm-") {
			return liveGuest(item)
		}
		return liveRunIn(filepath.Base(item))
	case "processes":
		pid, _, _ := strings.Cut(item, " ")
		return processOfOthers(pid, stateDir)
	}
	return false
}

// processOfOthers: a QEMU of a live guest (-name nsperf-vm-X), a daemon whose command line
// names a live run (a private OVS's directory), or a tool in a live run's namespace.
func processOfOthers(pid, stateDir string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil {
		return false // gone by now: nothing was left
	}
	line := strings.ReplaceAll(string(cmdline), "\x00", " ")
	if m := guestRe.FindStringSubmatch(line); m != nil && liveGuest(filepath.Join(stateDir, "vm", m[1])) {
		return true
	}
	if liveRunIn(line) {
		return true
	}
	var st syscall.Stat_t
	if syscall.Stat(filepath.Join("/proc", pid, "ns", "net"), &st) != nil {
		return false
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		var ns syscall.Stat_t
		if syscall.Stat(filepath.Join("/run/netns", e.Name()), &ns) == nil && ns.Ino == st.Ino && liveRunIn(e.Name()) {
			return true
		}
	}
	return false
}

// settled are the processes of procs ("PID comm") that are still there, and still nobody
// else's, after a moment: another run's short-lived programs (QEMU asked for its --version, a
// tool between two samples) are gone by then, while a test's leftover stays.
func settled(procs []string, stateDir string) []string {
	for wait := 0; len(procs) > 0 && wait < 40; wait++ {
		time.Sleep(50 * time.Millisecond)
		var still []string
		for _, p := range procs {
			pid, _, _ := strings.Cut(p, " ")
			if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil && !processOfOthers(pid, stateDir) {
				still = append(still, p)
			}
		}
		procs = still
	}
	return procs
}
