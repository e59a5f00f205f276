// Package testenv holds what root integration tests share: the root requirement that fails
// instead of skipping in CI, and the check that a test left nothing behind.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/runstate"
)

// RequireRoot skips a test that needs root, unless NSPERF_REQUIRE_ROOT=1 (set by .ci/run),
// where a skip would hide that the integration tests never ran: then it fails.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("NSPERF_REQUIRE_ROOT") == "1" {
		t.Fatal("this test needs root, and NSPERF_REQUIRE_ROOT=1 forbids skipping it")
	}
	t.Skip("needs root (network namespaces)")
}

// RequireTool fails (in CI) or skips when a program the test drives is missing.
func RequireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if os.Getenv("NSPERF_REQUIRE_ROOT") == "1" {
		t.Fatalf("%s is not installed (scripts/deps.sh installs it)", name)
	}
	t.Skipf("%s is not installed (scripts/deps.sh installs it)", name)
}

// watchedProcesses are the programs a test may start and must stop: every tool's (as the tools
// declare them), the OVS daemons, the history tests' PostgreSQL and the guests' QEMU.
var watchedProcesses = append(scenarios.ToolProcesses(), "ovsdb-server", "ovs-vswitchd", "postgres", "qemu-system-x86")

// Snapshot is what a test could leave behind: links in the root namespace, run namespaces,
// nsperf state files, the processes nsperf drives and its pins in bpffs.
type Snapshot struct {
	Links      []string // in the test's (root) namespace
	Namespaces []string
	StateFiles []string
	Processes  []string
	// NFTables are the nftables tables of the root namespace (`nft list tables`): the
	// big-packet counters live in the run's namespaces and must never land here.
	NFTables []string
	// Pins are the runs' directories of pins in bpffs (runstate.PinDir): the XDP links of
	// topologies kept up.
	Pins []string
}

// Take records the current leftovers-to-be.
func Take(stateDir string) Snapshot {
	var s Snapshot
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		s.Links = append(s.Links, l.Name())
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "nsp") {
			s.Namespaces = append(s.Namespaces, e.Name())
		}
	}
	s.StateFiles, _ = filepath.Glob(filepath.Join(stateDir, "nsp*"))
	s.Pins, _ = filepath.Glob(filepath.Join(runstate.PinRoot, "nsp*"))
	guests, _ := filepath.Glob(filepath.Join(stateDir, "vm", "vm-*")) // --kernel runs' guests
	s.StateFiles = append(s.StateFiles, guests...)
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		comm, err := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		// A zombie has exited and only waits for its new parent (init) to reap it.
		if st, ok := procstat.ReadPIDFile(filepath.Join("/proc", p.Name(), "stat")); ok && st.Exited() {
			continue
		}
		if slices.Contains(watchedProcesses, name) {
			s.Processes = append(s.Processes, p.Name()+" "+name)
		}
	}
	if c, err := nftables.New(); err == nil {
		tables, _ := c.ListTables()
		for _, tb := range tables {
			s.NFTables = append(s.NFTables, fmt.Sprintf("%d %s", tb.Family, tb.Name))
		}
	}
	sort.Strings(s.Namespaces)
	sort.Strings(s.Processes)
	return s
}

// CheckClean fails the test if anything exists now that did not exist in before.
func CheckClean(t testing.TB, before Snapshot, stateDir string) {
	t.Helper()
	after := Take(stateDir)
	for _, pair := range []struct {
		what          string
		before, after []string
	}{
		{"links in the root namespace", before.Links, after.Links},
		{"network namespaces", before.Namespaces, after.Namespaces},
		{"state files", before.StateFiles, after.StateFiles},
		{"processes", before.Processes, after.Processes},
		{"nftables tables in the root namespace", before.NFTables, after.NFTables},
		{"pins in bpffs", before.Pins, after.Pins},
	} {
		var mine []string
		for _, x := range added(pair.before, pair.after) {
			if !ofOthers(pair.what, x, stateDir) {
				mine = append(mine, x)
			}
		}
		mine = settled(pair.what, mine, stateDir)
		if len(mine) > 0 {
			t.Errorf("left behind %s: %v", pair.what, mine)
		}
	}
}

func added(before, after []string) []string {
	had := map[string]bool{}
	for _, b := range before {
		had[b] = true
	}
	var out []string
	for _, a := range after {
		if !had[a] {
			out = append(out, a)
		}
	}
	return out
}

// NewNetNS makes a network namespace of the given name (`ip netns add NAME`), one that
// nsperf did not create, and removes it (`ip netns del NAME`) when the test and its later
// cleanups end; processes a test starts in it are the test's to stop. Returns its path.
func NewNetNS(t testing.TB, name string) string {
	t.Helper()
	RequireRoot(t)
	h, err := netnsx.NewNamed(name)
	if err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	h.Close()
	path := filepath.Join("/run/netns", name)
	t.Cleanup(func() {
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			t.Errorf("unmount %s: %v", path, err)
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Errorf("remove %s: %v", path, err)
		}
	})
	return path
}

// RootTest is the preamble of a root integration test: root (a failure in CI when missing),
// the programs it drives, and the check, when the test and its cleanups end, that it left
// nothing behind.
func RootTest(t testing.TB, stateDir string, tools ...string) {
	t.Helper()
	RequireRoot(t)
	QuickIdleGate()
	for _, tool := range tools {
		RequireTool(t, tool)
	}
	before := Take(stateDir)
	t.Cleanup(func() { CheckClean(t, before, stateDir) })
}

// QuickIdleGate makes the runs of this test process (and the nsperf commands it starts) wait
// at most a second for idle pinned CPUs before a round, unless $NSPERF_IDLE_WAIT says
// otherwise: the tests assert behaviour, and make test's guest lane keeps a CPU busy, which
// would hold every round for the gate's 10 s. The gate itself is tested with a fake machine
// (runner's TestLoopIdleGate).
func QuickIdleGate() {
	if os.Getenv("NSPERF_IDLE_WAIT") == "" {
		os.Setenv("NSPERF_IDLE_WAIT", "1s")
	}
}
