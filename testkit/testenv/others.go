package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// A test looks only at what it made: another nsperf run beside it (a user's run, a build, a
// guest of an A/B) holds its run's lock, or its guest's, for as long as it lives, and what it
// made is not the test's to judge. Nor is what other nsperf work on the machine left when it
// was killed: a run's state file and a guest's lock record the lineage of the process that
// made them (runstate.Lineage), and a leftover whose lineage does not hold this test process
// is another's. What a test's own runs left behind belongs to runs that have ended, whose
// locks nobody holds, made by this process or its children. These say whether a leftover is
// another's.

var (
	runIDRe = regexp.MustCompile(`nsp[0-9a-f]{4}`)
	guestRe = regexp.MustCompile(`nsperf-(vm-[A-Za-z0-9]+)`)
)

// self is this test process, as a lineage names it.
var self = sync.OnceValue(func() runstate.Proc {
	if l := runstate.OwnLineage(); len(l) > 0 {
		return l[0]
	}
	return runstate.Proc{PID: os.Getpid()}
})

// madeByOthers reports whether a lineage is known and is not of this process or its children.
// An unknown one (an nsperf before lineages, a kill before the record) counts as this test's.
func madeByOthers(l runstate.Lineage) bool { return len(l) > 0 && !l.Includes(self()) }

// othersRunIn reports whether s names a run (nspXXXX) that is alive now, one that another
// test is about to kill on purpose (HoldKilled), or one another process made.
func othersRunIn(s string) bool {
	for _, id := range runIDRe.FindAllString(s, -1) {
		if runstate.Alive(plan.RunID(id)) || Fixture(id) {
			return true
		}
		if f, err := runstate.Read(plan.RunID(id)); err == nil && madeByOthers(f.MadeBy) {
			return true
		}
	}
	return false
}

// GuestOfOthers reports whether dir is a guest directory (vm-X) of another: its session holds
// its lock, another test makes it on purpose (HoldFixture), or another process made it.
func GuestOfOthers(dir string) bool {
	lock := filepath.Join(dir, "lock")
	held, missing := runstate.LockHeld(lock)
	return held && !missing || Fixture(filepath.Base(dir)) || madeByOthers(runstate.ReadLineage(lock))
}

// ofOthers reports whether a leftover of kind what belongs to a run or guest alive now.
func ofOthers(what, item, stateDir string) bool {
	switch what {
	case "network namespaces", "links in the root namespace":
		return othersRunIn(item)
	case "pins in bpffs":
		return othersRunIn(filepath.Base(item))
	case "state files":
		if strings.HasPrefix(filepath.Base(item), "vm-") {
			return GuestOfOthers(item)
		}
		return othersRunIn(filepath.Base(item))
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
	if postgresOfOthers(pid) {
		return true
	}
	if m := guestRe.FindStringSubmatch(line); m != nil && GuestOfOthers(filepath.Join(stateDir, "vm", m[1])) {
		return true
	}
	if othersRunIn(line) {
		return true
	}
	var st syscall.Stat_t
	if syscall.Stat(filepath.Join("/proc", pid, "ns", "net"), &st) != nil {
		return false
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		var ns syscall.Stat_t
		if syscall.Stat(filepath.Join("/run/netns", e.Name()), &ns) == nil && ns.Ino == st.Ino && othersRunIn(e.Name()) {
			return true
		}
	}
	return false
}

// settled are the leftovers of kind what that are still there, and still nobody else's,
// after a moment: another run's transient things (QEMU asked for its --version, a guest
// directory whose session is removing it, the lock file first) are gone by then, while a
// test's leftover stays.
func settled(what string, items []string, stateDir string) []string {
	for wait := 0; len(items) > 0 && wait < 40; wait++ {
		time.Sleep(50 * time.Millisecond)
		var still []string
		for _, it := range items {
			if exists(what, it) && !ofOthers(what, it, stateDir) {
				still = append(still, it)
			}
		}
		items = still
	}
	return items
}

// exists reports whether a leftover of kind what is still there.
func exists(what, item string) bool {
	var path string
	switch what {
	case "processes":
		pid, _, _ := strings.Cut(item, " ")
		path = filepath.Join("/proc", pid)
	case "network namespaces":
		path = filepath.Join("/run/netns", item)
	case "links in the root namespace":
		path = filepath.Join("/sys/class/net", item)
	case "state files", "pins in bpffs":
		path = item
	default:
		return true
	}
	_, err := os.Lstat(path)
	return err == nil
}

// ownPostgres holds the data directories of the PostgreSQL servers this test process started
// (PostgresServer).
var ownPostgres sync.Map

// postgresOfOthers: a PostgreSQL process (the server and each of its workers runs in its
// data directory) whose data directory this test process did not make: another package's
// test's, or the machine's own server.
func postgresOfOthers(pid string) bool {
	comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
	if strings.TrimSpace(string(comm)) != "postgres" {
		return false
	}
	cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
	if err != nil {
		return false
	}
	_, own := ownPostgres.Load(cwd)
	return !own
}

// fixtureDir holds the locks of leftovers that a test makes on purpose (a killed run's guest,
// for `nsperf cleanup` to find). The test holds the lock for as long as it runs, so that the
// leftover checks of tests beside it, in other lanes, know the leftover is not theirs.
const fixtureDir = "/run/nsperf-test-fixtures"

// HoldFixture marks name (a guest's "vm-X") as a leftover this test makes on purpose, until
// the test ends.
func HoldFixture(t testing.TB, name string) {
	t.Helper()
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(fixtureDir, name+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		t.Fatalf("fixture %s is held by another test: %v", name, err)
	}
	t.Cleanup(func() { os.Remove(path); f.Close() })
}

// HoldKilled is for a test about to kill the nsperf it started (to show what `nsperf cleanup`
// finds): every run and guest that appeared since before becomes the test's fixture, so that
// what the killed process leaves, until the test cleans it up, is not the leftover of a test
// beside it.
func HoldKilled(t testing.TB, before Snapshot, stateDir string) {
	t.Helper()
	now := Take(stateDir)
	held := map[string]bool{}
	for _, item := range append(added(before.Namespaces, now.Namespaces), added(before.StateFiles, now.StateFiles)...) {
		name := filepath.Base(item)
		if strings.HasPrefix(name, "vm-") {
			held[name] = true
		}
		for _, id := range runIDRe.FindAllString(name, -1) {
			held[id] = true
		}
	}
	if len(held) == 0 {
		t.Fatal("the nsperf about to be killed made no run and no guest: the test proves nothing")
	}
	for name := range held {
		HoldFixture(t, name)
	}
}

// Fixture reports whether name is a leftover that a test alive now makes on purpose.
func Fixture(name string) bool {
	held, missing := runstate.LockHeld(filepath.Join(fixtureDir, name+".lock"))
	return held && !missing
}
