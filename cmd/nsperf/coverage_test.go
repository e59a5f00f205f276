package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/testkit/clitest"
)

// TestCoverageChecksBeforeFetching: every argument of coverage is checked before Debian's
// kernel is fetched: a bad one is exit 2 naming it, with nothing downloaded or created in the
// kernel cache (the test's own), and --kernel and --modules, which coverage cannot honour (its
// map is of that kernel's source), are refused with what it traces instead, not ignored.
func TestCoverageChecksBeforeFetching(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("name: broken\nno_such_key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notMap := filepath.Join(dir, "map.json")
	if err := os.WriteFile(notMap, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := "coverage traces only Debian's 6.12 kernel"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"coverage", "no-such-scenario"}, "no-such-scenario"},
		{[]string{"coverage", "veth-bigtcp", "no-such-scenario"}, "no-such-scenario"},
		{[]string{"coverage", broken}, "no_such_key"},
		{[]string{"coverage", "--kernel", "/boot/vmlinuz", "veth-bigtcp"}, "--kernel: " + refused},
		{[]string{"coverage", "--modules", "/lib/modules", "veth-bigtcp"}, "--modules: " + refused},
		{[]string{"coverage", "--kernel", "/boot/vmlinuz"}, "--kernel: " + refused},
		{[]string{"coverage", "veth-bigtcp", "--vm-clock", "bogus"}, "--vm-clock"},
		{[]string{"coverage", "veth-bigtcp", "--vm-accel", "kvm", "--vm-clock", "virtual"}, "--vm-clock"},
		{[]string{"coverage", "veth-bigtcp", "--vm-cpus", "-1"}, "--vm-cpus -1"},
		{[]string{"coverage", "veth-bigtcp", "--vm-memory", "-1"}, "--vm-memory -1"},
		{[]string{"coverage", "veth-bigtcp", "--boot-timeout", "-1s"}, "--boot-timeout -1s"},
		{[]string{"coverage", "veth-bigtcp", "--vm-hide", "relative"}, "--vm-hide"},
		{[]string{"coverage", "veth-bigtcp", "--out", dir}, "--out: " + dir + " is a directory"},
		{[]string{"coverage", "veth-bigtcp", "--update"}, "--update"},
		{[]string{"coverage", "veth-bigtcp", "--update", "--out", filepath.Join(dir, "absent.json")}, "absent.json"},
		{[]string{"coverage", "veth-bigtcp", "--update", "--out", notMap}, "not a coverage map"},
	} {
		_, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "fetching") {
			t.Errorf("%v: exit %d, want %d with %q and nothing fetched\n%s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
	if entries, err := os.ReadDir(cache); !os.IsNotExist(err) {
		t.Errorf("refused arguments left the kernel cache with %d entries (err %v): nothing may be fetched before the checks", len(entries), err)
	}
	stdout, _, code := clitest.Run(t, "coverage", "--help")
	if code != exitOK || strings.Contains(stdout, "--kernel stringArray") || strings.Contains(stdout, "--modules stringArray") || !strings.Contains(stdout, "--kernel and --modules are refused") {
		t.Errorf("coverage --help: exit %d, want the flags it refuses left out of the list and the refusal said:\n%s", code, stdout)
	}
}
