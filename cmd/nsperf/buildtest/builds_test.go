// Package buildtest holds nsperf's kernel build tests (nsperf build, run --patch, reproduce of a patch: modules and whole kernels, the cache), which run the binary as a user does: split off from
// cmd/nsperf so that no test package comes near go test's time limit on a busy machine.
package buildtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/exitcode"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/clitest"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/vm"
	"golang.org/x/sys/unix"
)

// The whole-kernel tests' patch and scenario: the three tests that build whole kernels share
// one tree (TestWholeKernelTestsShareATree), whose cold build is the longest step of the suite.
const (
	wholePatch    = "../testdata/tcp-tso-2-segments.patch"
	wholeScenario = "../testdata/tcp-tso.yaml"
)

// TestMain starts the whole kernels' build at once, in the background: the module and guest
// tests before the whole-kernel tests run meanwhile, and those take it from the cache.
func TestMain(m *testing.M) {
	clitest.MainWithBackground(m, []string{"TestVMPatchWholeKernel", "TestBuildWholeInterrupted", "TestReproduceRevert"},
		"build", "--patch", wholePatch, "--scenario", wholeScenario)
}

// TestBuildRefuses: each input nsperf build must not build exits 2 with its reason in one
// line (the hunk that does not apply names its file, hunk and the context the source lacks),
// and adds nothing to the cache.
func TestBuildRefuses(t *testing.T) {
	testenv.RequireRoot(t)
	// A cache of its own, sharing the fetched base: a build beside the test (another nsperf
	// run) may add to the shared one.
	cache := clitest.ScratchCache(t)
	env := []string{"NSPERF_KERNEL_CACHE=" + cache}
	before := clitest.BuildsIn(t, cache)
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	diff := func(path, body string) string {
		return "diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n" + body
	}
	huge := filepath.Join(dir, "huge.mbox")
	if err := os.WriteFile(huge, []byte(strings.Repeat("From x Mon Jan  1 00:00:00 2024\nSubject: s\n\nbody\n\n", 700000)), 0o644); err != nil {
		t.Fatal(err)
	}
	ovs := clitest.Seeds + "ovs-internal-port-tso-v2.mbox"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"vxlan 7 of 9", []string{"--patch", clitest.Seeds + "vxlan-bigtcp-7of9.mbox"}, []string{"drivers/net/vxlan/vxlan_core.c: hunk 1 (@@ -3370,6 +3370,8 @@", `"dev->mangleid_features = NETIF_F_GSO_PARTIAL;"`, "patch 7 of 9", "1-6 of its series not given"}},
		{"4.9-stable", []string{"--patch", clitest.Seeds + "vxlan-lowerdev-4.9-stable.mbox"}, []string{"drivers/net/vxlan.c: the source has no such file"}},
		{"not a patch", []string{"--patch", write("notes.txt", "hello\nworld\n")}, []string{`2 lines of text starting "hello", with no unified diff`}},
		{"a merge message", []string{"--patch", clitest.Seeds + "big-tcp-merge.txt"}, []string{"no unified diff"}},
		{"a binary diff", []string{"--patch", write("fw.patch", "diff --git a/fw.bin b/fw.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\n")}, []string{"a binary diff"}},
		{"documentation only", []string{"--patch", write("doc.patch", diff("Documentation/networking/x.rst", "@@ -1 +1 @@\n-a\n+b\n"))}, []string{"only Documentation/: nothing to build"}},
		{"a path out of the source", []string{"--patch", write("up.patch", "--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n")}, []string{"leaves the source"}},
		{"an absolute path", []string{"--patch", write("abs.patch", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-x\n+y\n")}, []string{"an absolute path"}},
		{"a symlink", []string{"--patch", write("link.patch", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n")}, []string{"symbolic link"}},
		{"a cut hunk", []string{"--patch", write("cut.patch", diff("net/core/dev.c", "@@ -1,3 +1,4 @@\n a\n+b\n"))}, []string{"the hunk is cut"}},
		{"a huge mbox", []string{"--patch", huge}, []string{"file too large", "the limit is 32 MiB"}},
		{"another Debian", []string{"--patch", ovs, "--source", "debian:5.10"}, []string{"fetches debian:6.12 only"}},
		{"a directory that is no kernel", []string{"--patch", ovs, "--source", dir}, []string{"not a Linux source tree for x86 (no Makefile)"}},
		{"a tree configured in place", []string{"--patch", ovs, "--source", fakeTree(t, true)}, []string{"configured or built in place (it has .config)"}},
		{"a tree the patch does not fit", []string{"--patch", ovs, "--source", fakeTree(t, false)}, []string{"net/openvswitch/vport-internal_dev.c: the source has no such file"}},
		{"not a tarball", []string{"--patch", ovs, "--source", write("linux.tar.xz", "hello\n")}, []string{"refused, nothing kept: not a tar archive nsperf can read"}},
		{"not a config", []string{"--patch", ovs, "--config", write("notes.config", "hello\n")}, []string{"not a kernel config (no CONFIG_ line)"}},
		{"negative fuzz", []string{"--patch", ovs, "--fuzz", "-1"}, []string{"--fuzz -1"}},
		{"no patch", nil, []string{"no patch given"}},
	} {
		_, stderr, code := clitest.RunEnv(t, env, append([]string{"build"}, tc.args...)...)
		if code != exitcode.Usage {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, exitcode.Usage, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, stderr)
			}
		}
	}
	if after := clitest.BuildsIn(t, cache); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("the cache's builds changed: %v, before %v", after, before)
	}
}

// fakeTree is a directory with what makes a kernel tree (Makefile, Kconfig, the kconfig
// merge script, x86's Kconfig) and net/ipv4/tcp_output.c, not git; configured, it has .config.
func fakeTree(t *testing.T, configured bool) string {
	dir := t.TempDir()
	files := []string{"Makefile", "Kconfig", "scripts/kconfig/merge_config.sh", "arch/x86/Kconfig", "net/ipv4/tcp_output.c"}
	if configured {
		files = append(files, ".config")
	}
	for _, f := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildTreeWithoutHeaders: a tree as --source, with neither headers nor a config, is
// taken: the series is checked against it and both kernels are to be built whole with the
// minimal config (this tree's make then fails: exit 3 with the log, nothing cached).
func TestBuildTreeWithoutHeaders(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "make")
	cache := t.TempDir()
	tree := fakeTree(t, false)
	patch := filepath.Join(t.TempDir(), "tcp.patch")
	os.WriteFile(patch, []byte("--- a/net/ipv4/tcp_output.c\n+++ b/net/ipv4/tcp_output.c\n@@ -1 +1 @@\n-# net/ipv4/tcp_output.c\n+# patched\n"), 0o644)
	_, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", patch, "--source", tree)
	if code != exitcode.Infra {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Infra, stderr)
	}
	for _, want := range []string{"build: whole kernels, config minimal: --source is a tree, without the packaged image, headers and module tree", "build of config failed", "config.log"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if got := clitest.BuildsIn(t, cache); len(got) != 0 {
		t.Errorf("a failed build left %v in the cache", got)
	}
	if data, _ := os.ReadFile(filepath.Join(tree, "net/ipv4/tcp_output.c")); string(data) != "# net/ipv4/tcp_output.c\n" {
		t.Errorf("the source tree was written: %q", data)
	}
	// The same tree as a tarball (linux-6.12/ at its top): unpacked once into the cache, then
	// taken as the tree.
	tarball := filepath.Join(t.TempDir(), "linux-6.12.tar.gz")
	if out, err := exec.Command("tar", "-czf", tarball, "-C", filepath.Dir(tree), "--transform", "s|^"+filepath.Base(tree)+"|linux-6.12|", filepath.Base(tree)).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	_, stderr, code = clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", patch, "--source", tarball)
	if code != exitcode.Infra || !strings.Contains(stderr, "build: unpacking "+tarball) || !strings.Contains(stderr, "--source is a tree") {
		t.Errorf("the tarball: exit %d\n%s", code, stderr)
	}
	if done, _ := filepath.Glob(filepath.Join(cache, "sources", "tarball-*", "done")); len(done) != 1 {
		t.Errorf("the tarball was not unpacked into the cache: %v", done)
	}
}

// TestBuildFuzzRecorded: patch 7 of 9 of the vxlan series applies with --fuzz, at an offset;
// vxlan.ko is built for both kernels, and the manifest records how the hunk applied.
func TestBuildFuzzRecorded(t *testing.T) {
	testenv.RequireRoot(t)
	stdout, stderr, code := clitest.Run(t, "build", "--patch", clitest.Seeds+"vxlan-bigtcp-7of9.mbox", "--fuzz", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "1-6 of its series not given") {
		t.Errorf("no warning of the missing patches:\n%s", stderr)
	}
	var manifestPath string
	for _, line := range strings.Split(stdout, "\n") {
		if p, ok := strings.CutPrefix(line, "manifest: "); ok {
			manifestPath = p
		}
	}
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var m kbuild.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Patches) != 1 || len(m.Patches[0].Applied) != 1 || !strings.Contains(m.Patches[0].Applied[0], "drivers/net/vxlan/vxlan_core.c hunk 1: fuzz 1, offset") {
		t.Errorf("applied: %+v", m.Patches)
	}
	if len(m.Modules) != 1 || m.Modules[0].Name != "vxlan" || m.Mode != "modules" || !strings.Contains(m.Compiler, "gcc") {
		t.Errorf("manifest: %+v", m)
	}
	for _, k := range m.Kernels {
		if _, err := os.Stat(filepath.Join(k.Modules, "lib", "modules", m.Release, "kernel", "drivers", "net", "vxlan", "vxlan.ko")); err != nil {
			t.Errorf("kernel %s: %v", k.Label, err)
		}
	}
}

// startBuild starts `nsperf build` of the veth patch in cache, its progress to be read.
func startBuild(t *testing.T, cache string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(clitest.Binary, "build", "--patch", "../testdata/veth-tso-8192.patch")
	cmd.Env = append(os.Environ(), "NSPERF_KERNEL_CACHE="+cache)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stderr)
}

// TestBuildInterrupted: Ctrl-C during a build stops it (exit 130) and leaves no build and no
// working directory in the cache, which a second call then builds whole.
func TestBuildInterrupted(t *testing.T) {
	testenv.RequireRoot(t)
	cache := clitest.ScratchCache(t)
	cmd, sc := startBuild(t, cache)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.HasPrefix(sc.Text(), "build: base:") {
			time.Sleep(time.Second) // into make
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Interrupted {
		t.Fatalf("exit %v, want %d\n%s", err, exitcode.Interrupted, strings.Join(said, "\n"))
	}
	if left := clitest.BuildsIn(t, cache); len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}
	if _, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", "../testdata/veth-tso-8192.patch"); code != 0 || strings.Contains(stderr, "cached") {
		t.Errorf("the build after the interrupted one: exit %d\n%s", code, stderr)
	}
}

// TestBuildKilledAndForeignManifest: nsperf killed with SIGKILL during make (no deferred
// cleanup runs) takes its make with it, so no build goes on in the cache; the next build is
// whole. A manifest.json in the cache that nsperf did not write (another key's, kernels named
// /etc/shadow) is never used: the build is made again in its place, saying why.
func TestBuildKilledAndForeignManifest(t *testing.T) {
	testenv.RequireRoot(t)
	cache := clitest.ScratchCache(t)
	cmd, sc := startBuild(t, cache)
	building := func() []string { // the processes that work in this cache
		var found []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			argv, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(argv), cache) {
				found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(argv), "\x00", " "))
			}
		}
		return found
	}
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.HasPrefix(sc.Text(), "build: base:") {
			for deadline := time.Now().Add(20 * time.Second); len(building()) == 0 && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
			}
			if len(building()) == 0 {
				t.Errorf("no make in the cache to kill:\n%s", strings.Join(said, "\n"))
			}
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for len(building()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := building(); len(left) > 0 {
		t.Fatalf("the build of a killed nsperf goes on:\n%s", strings.Join(left, "\n"))
	}
	build := func() (string, int) {
		_, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", "../testdata/veth-tso-8192.patch")
		return stderr, code
	}
	if stderr, code := build(); code != 0 || strings.Contains(stderr, "cached") {
		t.Fatalf("the build after the killed one: exit %d\n%s", code, stderr)
	}
	builds := clitest.BuildsIn(t, cache)
	if len(builds) != 1 {
		t.Fatalf("builds in the cache: %v", builds)
	}
	manifest := filepath.Join(cache, "builds", builds[0], "manifest.json")
	foreign := `{"version": 1, "key": "0123456789abcdef", "source": "debian", "mode": "modules", "kernels": [` +
		`{"label": "base", "image": "/etc/shadow", "modules": "/etc"}, {"label": "patched", "image": "/etc/shadow", "modules": "/etc"}]}`
	if err := os.WriteFile(manifest, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr2, code := build()
	if code != 0 || strings.Contains(stderr2, "cached") || !strings.Contains(stderr2, "is not a build of this key") {
		t.Fatalf("a foreign manifest: exit %d\n%s", code, stderr2)
	}
	data, err := os.ReadFile(manifest)
	if err != nil || strings.Contains(string(data), "/etc/shadow") || !strings.Contains(string(data), filepath.Join(cache, "builds", builds[0])) {
		t.Errorf("the manifest after the rebuild (%v):\n%s", err, data)
	}
}

// TestBuildFullDisk: a cache whose file system fills up during a build says so (exit 2) and
// keeps no part of the build.
func TestBuildFullDisk(t *testing.T) {
	testenv.RequireRoot(t)
	cache := clitest.ScratchCache(t)
	builds := filepath.Join(cache, "builds")
	if err := os.Mkdir(builds, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", builds, "tmpfs", 0, "size=4m"); err != nil {
		t.Fatalf("mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(builds, unix.MNT_DETACH) })
	_, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", "../testdata/veth-tso-8192.patch")
	if code != exitcode.Usage || !strings.Contains(stderr, "no space left in "+builds) {
		t.Errorf("exit %d, want %d with no space left\n%s", code, exitcode.Usage, stderr)
	}
	if left := clitest.BuildsIn(t, cache); len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}
}

// BenchmarkBuildModules times nsperf build of the OVS seed: cold (a cache with the base
// fetched but no build: both openvswitch.ko builds and the two module trees) and cached.
// make bench runs it; the figures are in docs/development.md (Speed).
func BenchmarkBuildModules(b *testing.B) {
	mbox := clitest.Seeds + "ovs-internal-port-tso-v2.mbox"
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			cache := clitest.ScratchCache(b)
			b.StartTimer()
			if _, stderr, code := clitest.RunEnv(b, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", mbox); code != 0 {
				b.Fatalf("exit %d\n%s", code, stderr)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		clitest.BuiltKernels(b, mbox)
		b.ResetTimer()
		for range b.N {
			if _, stderr, code := clitest.Run(b, "build", "--patch", mbox); code != 0 || !strings.Contains(stderr, "cached") {
				b.Fatalf("exit %d\n%s", code, stderr)
			}
		}
	})
}

// BenchmarkBuildWhole times nsperf build of a built-in change (net/ipv4/tcp_output.c) as two
// whole kernels with the minimal config: "patched" in the cache's warm tree (each iteration a
// series of its own, so nothing is cached: the base's tree is put back and relinked, then the
// patched file recompiled and linked); "cold" in a cache with the base fetched and nothing
// built, ccache empty (about 7 minutes on 2 vCPUs; only with NSPERF_BENCH_COLD_KERNEL=1). make
// bench runs them; the figures are in docs/development.md (Speed).
func BenchmarkBuildWhole(b *testing.B) {
	orig, err := os.ReadFile(wholePatch)
	if err != nil {
		b.Fatal(err)
	}
	variant := func(n int) string {
		p := filepath.Join(b.TempDir(), "tcp.patch")
		os.WriteFile(p, []byte(strings.Replace(string(orig), "min_tso_segs), 2);", fmt.Sprintf("min_tso_segs), %d);", n), 1)), 0o644)
		return p
	}
	build := func(b *testing.B, env []string, patch string) {
		stdout, stderr, code := clitest.RunEnv(b, env, "build", "--patch", patch, "--scenario", wholeScenario)
		if code != 0 || strings.Contains(stderr, "build: cached") {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
		if m := regexp.MustCompile(`(?m)^manifest: (\S+)/manifest.json$`).FindStringSubmatch(stdout); m != nil && env == nil {
			b.Cleanup(func() { os.RemoveAll(m[1]); os.RemoveAll(m[1] + ".logs") })
		}
	}
	b.Run("patched", func(b *testing.B) {
		if _, stderr, code := clitest.Run(b, "build", "--patch", wholePatch, "--scenario", wholeScenario); code != 0 {
			b.Fatalf("the tree's first build: exit %d\n%s", code, stderr) // the tree warm, cached or not
		}
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			p := variant(100 + i)
			b.StartTimer()
			build(b, nil, p)
		}
	})
	b.Run("cold", func(b *testing.B) {
		if os.Getenv("NSPERF_BENCH_COLD_KERNEL") == "" {
			b.Skip("set NSPERF_BENCH_COLD_KERNEL=1: a cold whole-kernel build takes minutes")
		}
		for range b.N {
			b.StopTimer()
			cache := clitest.ScratchCache(b)
			b.StartTimer()
			build(b, []string{"NSPERF_KERNEL_CACHE=" + cache}, wholePatch)
		}
	})
}

// TestVMPatchAB validates a real kernel patch end to end, from the mail it came as, and
// reproduces its claims: `nsperf reproduce` chooses ovs-internal-tso and runs `run --patch`, which builds Debian's 6.12 net/openvswitch from its source twice, as it is (base, A)
// and with "openvswitch: raise internal port TSO limit" (patched, B), each into a copy of the
// image's module tree (or takes both from the cache, which it says). The shipped
// ovs-internal-tso seed runs as a short A/B: "on" is unavailable on A with the tso_max_size
// reason and applies on B, where int0 reads back 524280; the result holds both kernels with
// how they were built (the patch's subject and sha256), both claims (+18.1% IPv4, +34.7%
// IPv6) reproduced by on@B against off@A, the capability, on@B against off@A and off@B against off@A. Figures are not asserted.
func TestVMPatchAB(t *testing.T) {
	mbox := clitest.Seeds + "ovs-internal-port-tso-v2.mbox"
	clitest.BuiltKernels(t, mbox) // built or cached before the run: the run below must find it cached
	clitest.NothingLeft(t)
	out := filepath.Join(t.TempDir(), "ab.json")
	junit := filepath.Join(t.TempDir(), "ab.xml")
	db := filepath.Join(t.TempDir(), "h.db")
	// Every guest's bridge must pass traffic: the fault that once stopped about one guest in
	// five (Open vSwitch 3.1 started in a guest up for under 10 s runs without upcall
	// handlers) is waited out by topo/ovs, not retried here.
	// nsperf reproduce runs it: run --patch on the mail, with run's own flags after --; the
	// run's table goes to stderr, the claims' table to stdout.
	// Nine runs, not five: in virtual time one sample in a few dozen still lands far from the
	// rest while the host is busy (issue 55: 'on' tcp4 at 2.44 among 3.2-3.3 Gbit/s, CV 11-12%,
	// in two of the last six suite runs). With five such a sample leaves the claim undecided
	// (p 0.15); with nine, below every other sample, its p is 0.004, 0.012 after Holm's
	// adjustment over the run's four gated comparisons (with seven, 0.079: undecided still).
	claimsTable, runOutput, code := clitest.Run(t, "reproduce", mbox, "--runs", "9", "--duration", "1s", "--out", out,
		"--", "--vm-accel", "tcg", "--db", db, "--junit", junit)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (both claims reproduced)\n%s\n%s", code, claimsTable, runOutput)
	}
	if !strings.Contains(runOutput, "build: cached") {
		t.Errorf("the second build was not taken from the cache:\n%s", runOutput)
	}
	if strings.Count(claimsTable, "reproduced") != 2 || !strings.Contains(claimsTable, "+18.1%") || !strings.Contains(claimsTable, "+34.7%") {
		t.Errorf("the claims' table:\n%s", claimsTable)
	}
	r := clitest.ReadAB(t, out)
	for i, k := range r.Kernels {
		if k.Build == nil || k.Build.Patched != (i == 1) || len(k.Build.Patches) != 1 || k.Build.Patches[0].Subject != "[PATCH net-next v2] openvswitch: raise internal port TSO limit" ||
			len(k.Build.Patches[0].SHA256) != 64 || k.Build.Mode != "modules" || !slices.Equal(k.Build.Modules, []string{"openvswitch"}) {
			t.Errorf("kernel %s's build: %+v", k.Label, k.Build)
		}
	}
	if !strings.Contains(runOutput, `built by nsperf from debian linux-source-6.12`) || !strings.Contains(runOutput, `with "[PATCH net-next v2] openvswitch: raise internal port TSO limit"`) {
		t.Errorf("the table does not say how the kernels were built:\n%s", runOutput)
	}
	a, b := r.Kernels[0].Cases[0], r.Kernels[1].Cases[0]
	if on := clitest.StateRecord(a, "on"); on == nil || !strings.Contains(on.Unavailable, "gso_max_size 524280 > tso_max_size 65536 of ovs/int0") {
		t.Errorf("on on kernel A: %+v", on)
	}
	if on := clitest.StateRecord(b, "on"); on == nil || on.Unavailable != "" || on.Devices["ovs/int0"]["tso_max_size"] != 524280 || on.Devices["ovs/int0"]["gso_max_size"] != 524280 {
		t.Errorf("on on kernel B: %+v", on)
	}
	if off := clitest.StateRecord(b, "off"); off == nil || off.Devices["ovs/p0"]["gso_max_size"] != 524280 {
		t.Errorf("the bridge's veth end on kernel B in off: %+v", off)
	}
	if len(r.Capabilities) != 1 || !strings.Contains(r.Capabilities[0].Line(), "on: unavailable on A (gso_max_size 524280 > tso_max_size 65536 of ovs/int0") ||
		!strings.Contains(r.Capabilities[0].Line(), "applies on B; on@B compared with off@A") {
		t.Errorf("capabilities: %+v", r.Capabilities)
	}
	// In virtual time (the default under TCG) the patch is decided in 9 runs of 1 s: the
	// patched kernel's on against the stock kernel's off improves both families, and the two
	// kernels' off, the same code, is no regression.
	if r.Reproduction == nil || len(r.Reproduction.Claims) != 2 {
		t.Fatalf("reproduction: %+v", r.Reproduction)
	}
	for i, w := range []string{"tcp4", "tcp6"} {
		if ch := r.Reproduction.Claims[i]; ch.Workload != w || ch.State != "on@B" || ch.Baseline != "off@A" || ch.Outcome != results.Reproduced {
			t.Errorf("claim %d: %+v", i+1, ch)
		}
	}
	for _, k := range r.Kernels {
		if k.Environment.VM == nil || k.Environment.VM.Clock != "virtual" {
			t.Errorf("kernel %s not in virtual time: %+v", k.Label, k.Environment.VM)
		}
		// The patched function (do_setup, the internal port's setup) ran on both kernels,
		// when the topology made the bridge's ports, counted by a kprobe in the module.
		if c := k.Coverage; c == nil || c.Error != "" || len(c.Functions) != 1 || c.Functions[0].Function != "do_setup" ||
			!slices.Equal(c.Functions[0].Probes, []string{"openvswitch:do_setup"}) || c.Functions[0].Calls[results.PhaseSetup] == 0 {
			t.Errorf("kernel %s's coverage: %+v", k.Label, c)
		}
	}
	// With a host CPU for each guest, A and B measure each round at once, each on its own CPU
	// (vm.PlanTogether), none paused; the turns say so, for every round of both.
	if allowed, _ := vm.AllowedCPUs(); len(allowed) >= 2 {
		pa, pb := r.Kernels[0].Environment.VM.Pinning, r.Kernels[1].Environment.VM.Pinning
		if pa == nil || pb == nil || len(pa.VCPUs) == 0 || len(pb.VCPUs) == 0 || slices.Equal(pa.VCPUs[0].CPUs, pb.VCPUs[0].CPUs) || len(pa.PausedCPUs)+len(pb.PausedCPUs) > 0 {
			t.Errorf("the guests' pinning: A %+v, B %+v; want a CPU each, no parking", pa, pb)
		}
		gates := map[string]int{}
		for _, turn := range r.Turns {
			if !turn.Together {
				t.Errorf("a turn in alternation: %+v", turn)
			}
			gates[turn.Kernel]++
		}
		if gates["A"] == 0 || gates["A"] != gates["B"] || !strings.Contains(runOutput, "vm: A and B run each round at once") {
			t.Errorf("turns %v:\n%s", gates, runOutput)
		}
	}
	if !strings.Contains(runOutput, "do_setup (net/openvswitch/vport-internal_dev.c, openvswitch.ko): ") || strings.Contains(runOutput, results.NotRun) {
		t.Errorf("the table does not give the patched function's calls:\n%s", runOutput)
	}
	verdicts := map[string]string{}
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Metric == results.Throughput {
			verdicts[s.Workload+" "+s.State+" vs "+s.Comparison.Baseline] = s.Comparison.Verdict
		}
	}
	for want, verdict := range map[string]string{"tcp4 on@B vs off@A": results.Improved, "tcp6 on@B vs off@A": results.Improved, "tcp4 off@B vs off@A": "", "tcp6 off@B vs off@A": ""} {
		got, ok := verdicts[want]
		if !ok || (verdict != "" && got != verdict) || (verdict == "" && got == results.Regressed) {
			t.Errorf("%s: %q, want %q (all: %v)\n%s", want, got, verdict, verdicts, runOutput)
		}
	}
	if !strings.Contains(runOutput, "capability: on: unavailable on A") {
		t.Errorf("the table lacks the capability line:\n%s", runOutput)
	}
	if data, err := os.ReadFile(junit); err != nil || !strings.Contains(string(data), `name="capability on"`) {
		t.Errorf("junit: %v", err)
	}
	// The history keeps the two kernels as two runs; compared again from there, and from the
	// result file, they say the same.
	for _, args := range [][]string{{"compare", "base", "patched", "--db", db}, {"compare", out}} {
		stdout, stderr, code := clitest.Run(t, args...)
		if (code != 0 && code != exitcode.Expectation) || !strings.Contains(stdout, "capability: on: unavailable on A (gso_max_size 524280 > tso_max_size 65536 of ovs/int0") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
}

// TestVMPatchNotExercised: the OVS patch reproduced with veth-bigtcp (--scenario), whose
// traffic never reaches Open vSwitch: each kernel's counting pass finds do_setup's module not
// loaded, the run warns that the patched code did not run, and every claim is "not
// exercised" (exit 4), never contradicted, whatever the veth figures did.
func TestVMPatchNotExercised(t *testing.T) {
	mbox := clitest.Seeds + "ovs-internal-port-tso-v2.mbox"
	clitest.BuiltKernels(t, mbox)
	clitest.NothingLeft(t)
	out := filepath.Join(t.TempDir(), "ab.json")
	claimsTable, runOutput, code := clitest.Run(t, "reproduce", mbox, "--scenario", "veth-bigtcp", "--runs", "2", "--duration", "1s", "--out", out,
		"--", "--vm-accel", "tcg", "--no-history")
	if code != exitcode.Skipped {
		t.Fatalf("exit %d, want %d (not exercised)\n%s\n%s", code, exitcode.Skipped, claimsTable, runOutput)
	}
	r := clitest.ReadAB(t, out)
	for _, k := range r.Kernels {
		if c := k.Coverage; c == nil || len(c.Functions) != 1 || c.Functions[0].Absent != "openvswitch.ko is not loaded" || c.Functions[0].Total() != 0 {
			t.Errorf("kernel %s's coverage: %+v", k.Label, c)
		}
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, results.NotRun) }) {
		t.Errorf("no warning that the patched code did not run: %q", r.Warnings)
	}
	if r.Reproduction == nil || len(r.Reproduction.Claims) == 0 {
		t.Fatalf("reproduction: %+v", r.Reproduction)
	}
	for _, ch := range r.Reproduction.Claims {
		if ch.Outcome != results.NotExercised && ch.Outcome != results.NotReproducible {
			t.Errorf("claim %d: %s, want %s", ch.Claim, ch.Outcome, results.NotExercised)
		}
	}
	if !strings.Contains(claimsTable, results.NotExercised) || !strings.Contains(runOutput, results.NotRun) {
		t.Errorf("the tables do not say it:\n%s\n%s", claimsTable, runOutput)
	}
}

// TestVMPatchWholeKernel: a built-in change (net/ipv4/tcp_output.c: TSO packets of two
// segments) is built by nsperf build as two whole kernels with the minimal config, in the
// cache's lasting tree (a fresh machine pays the cold base build once, the patched build
// recompiles the one file), then booted as an A/B in virtual time: both kernels record the
// whole build, the config and the patch, and the patched kernel's flow is decided slower.
func TestVMPatchWholeKernel(t *testing.T) {
	const patch = wholePatch
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "qemu-system-x86_64")
	testenv.RequireTool(t, "busybox")
	for _, tool := range []string{"make", "flex", "bison", "bc"} {
		testenv.RequireTool(t, tool)
	}
	// The minimal config of the scenario the run below measures: run --patch builds for its
	// own scenario, and finds this build in the cache.
	stdout, stderr, code := clitest.Run(t, "build", "--patch", patch, "--scenario", wholeScenario)
	if code != 0 {
		t.Fatalf("nsperf build: exit %d\n%s\n%s", code, stdout, stderr)
	}
	trees := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		var label, kernel string
		if n, _ := fmt.Sscanf(line, "%s --kernel %s", &label, &kernel); n == 2 && !strings.Contains(line, "--modules") {
			trees[strings.TrimSuffix(label, ":")] = kernel
		}
	}
	if trees["base"] == "" || trees["patched"] == "" || trees["base"] == trees["patched"] {
		t.Fatalf("nsperf build printed no two whole kernels:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "whole kernels") || !strings.Contains(stderr, "config minimal") {
		t.Errorf("the build does not say it built whole kernels with the minimal config:\n%s", stderr)
	}
	clitest.NothingLeft(t)
	out := filepath.Join(t.TempDir(), "ab.json")
	runOut, runErr, code := clitest.Run(t, "run", wholeScenario, "--patch", patch, "--vm-accel", "tcg", "--no-history", "--out", out)
	if code != 0 && code != 1 {
		t.Fatalf("run --patch: exit %d\n%s\n%s", code, runOut, runErr)
	}
	if !strings.Contains(runErr, "build: cached") {
		t.Errorf("run --patch did not take the build from the cache:\n%s", runErr)
	}
	r := clitest.ReadAB(t, out)
	for i, k := range r.Kernels {
		if k.Build == nil || k.Build.Mode != "whole" || k.Build.Config != "minimal" || k.Build.Patched != (i == 1) || len(k.Build.Patches) != 1 ||
			k.Build.Patches[0].Subject != "[PATCH] tcp: a stand-in built-in regression: TSO packets of 2 segments" || len(k.Build.ConfigSHA256) != 64 {
			t.Errorf("kernel %s's build: %+v", k.Label, k.Build)
		}
	}
	// The minimal config gives the kernels a PVH entry point: QEMU boots their vmlinux.
	for _, k := range r.Kernels {
		if k.Environment.VM == nil || k.Environment.VM.Boot != vm.BootPVH {
			t.Errorf("kernel %s did not boot through PVH: %+v", k.Label, k.Environment.VM)
		}
	}
	if r.Kernels[0].Environment.KernelRelease != r.Kernels[1].Environment.KernelRelease || strings.Contains(r.Kernels[0].Environment.KernelRelease, "deb12") {
		t.Errorf("releases %q and %q: want the same, built from the source", r.Kernels[0].Environment.KernelRelease, r.Kernels[1].Environment.KernelRelease)
	}
	var verdict string
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Metric == results.Throughput && s.State == "default@B" && s.Comparison.Baseline == "default@A" {
			verdict = s.Comparison.Verdict
		}
	}
	if verdict != results.Regressed {
		t.Errorf("default@B vs default@A: %q, want %s (TSO packets of two segments)\n%s", verdict, results.Regressed, runOut)
	}
	if !strings.Contains(runOut, "whole kernel") {
		t.Errorf("the table does not say the kernels were built whole:\n%s", runOut)
	}
	// The minimal config has kprobe events: the changed function is counted in the image,
	// or said to have no symbol of its own (inlined), never silently left out.
	for _, k := range r.Kernels {
		c := k.Coverage
		if c == nil || c.Error != "" || len(c.Functions) != 1 || c.Functions[0].Function != "tcp_tso_autosize" ||
			(c.Functions[0].Total() == 0 && !strings.Contains(c.Functions[0].NotCounted, "inlined")) {
			t.Errorf("kernel %s's coverage: %+v", k.Label, c)
		}
	}
}

// TestBuildWholeInterrupted: Ctrl-C during the patched kernel's make, in the cache's lasting
// tree, exits 130, caches no build and leaves the tree as the base: the patched file put
// back, no journal, nothing under the build's key (so the next build of the series builds
// both kernels, never "cached").
func TestBuildWholeInterrupted(t *testing.T) {
	testenv.RequireRoot(t)
	for _, tool := range []string{"make", "flex", "bison", "bc"} {
		testenv.RequireTool(t, tool)
	}
	orig, err := os.ReadFile(wholePatch)
	if err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(t.TempDir(), "tcp-tso-3-segments.patch")
	os.WriteFile(patch, []byte(strings.Replace(string(orig), "min_tso_segs), 2);", "min_tso_segs), 3);", 1)), 0o644)
	cache := kbuild.CacheDir()
	cmd := exec.Command(clitest.Binary, "build", "--patch", patch, "--scenario", wholeScenario)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said []string
	tree, key := "", ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said = append(said, sc.Text())
		// build: base: make bzImage in TREE/obj (log: CACHE/builds/KEY.logs/base.log)
		if m := regexp.MustCompile(`^build: base: make bzImage in (\S+)/obj \(log: \S+/builds/([0-9a-f]+)\.logs/base\.log\)`).FindStringSubmatch(sc.Text()); m != nil {
			tree, key = m[1], m[2]
		}
		if strings.HasPrefix(sc.Text(), "build: patched: make bzImage") {
			time.Sleep(2 * time.Second) // into make, compiling tcp_output.c
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Interrupted || tree == "" || key == "" {
		t.Fatalf("exit %v, want %d; tree %q, key %q\n%s", err, exitcode.Interrupted, tree, key, strings.Join(said, "\n"))
	}
	if _, err := os.Stat(filepath.Join(tree, "patched-files.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is left: %v", err)
	}
	pristine, _ := filepath.Glob(filepath.Join(cache, "sources", "debian-*", "src", "linux-source-6.12", "net", "ipv4", "tcp_output.c"))
	want, _ := os.ReadFile(pristine[0])
	if got, _ := os.ReadFile(filepath.Join(tree, "src", "net", "ipv4", "tcp_output.c")); !bytes.Equal(got, want) {
		t.Error("the tree's tcp_output.c is not the base's after the interruption")
	}
	// The cache is the machine's (the whole tree is built once for every test that needs it):
	// other builds may come and go in it meanwhile, so only this build's key is looked at.
	// What a build caches is builds/KEY (its manifest) and, while it works, builds/KEY.tmp-PID.
	for _, name := range clitest.BuildsIn(t, cache) {
		if name == key || strings.HasPrefix(name, key+".") {
			t.Errorf("the interrupted build left %s in the cache", name)
		}
	}
	os.RemoveAll(filepath.Join(cache, "builds", key+".logs"))
}

// TestReproduceNotHere: the 4.9-stable patch names a file 6.12 no longer has: reproduce exits
// 4, says why, and names the shipped scenario that models the claim's effect.
func TestReproduceNotHere(t *testing.T) {
	testenv.RequireRoot(t)
	_, stderr, code := clitest.Run(t, "reproduce", clitest.Seeds+"vxlan-lowerdev-4.9-stable.mbox", "--out", filepath.Join(t.TempDir(), "r.json"), "--", "--no-history")
	if code != exitcode.Skipped || !strings.Contains(stderr, "drivers/net/vxlan.c: the source has no such file") || !strings.Contains(stderr, "nsperf run vxlan-lowerdev") {
		t.Errorf("exit %d, want %d\n%s", code, exitcode.Skipped, stderr)
	}
}

// TestReproduceRevert: a commit already in Debian's 6.12 (133c4c0d3717, "tcp: defer regular
// ACK while processing socket backlog", merged in v6.7, needing fuzz 3 in reverse) is
// reproduced by reverting it: kernel A the base with the commit reverted, kernel B the base
// as it is, both recorded as applied in reverse; each of its three claims (throughput, ACKs
// per second, backlog drops per second) is set beside a measurement, the ACK claim beside the
// receiver's TcpOutSegs per second, with an outcome (reproduced, contradicted or undecided:
// never "not reproducible").
func TestReproduceRevert(t *testing.T) {
	testenv.RequireRoot(t)
	clitest.NothingLeft(t)
	out := filepath.Join(t.TempDir(), "revert.json")
	table, stderr, code := clitest.Run(t, "reproduce", clitest.Seeds+"tcp-backlog-ack-defer.patch", "--fuzz", "3", "--runs", "3", "--out", out, "--", "--no-history")
	if code != 0 && code != 1 && code != 5 {
		t.Fatalf("exit %d\n%s\n%s", code, table, stderr)
	}
	if !strings.Contains(stderr, "applies in reverse): kernel A is the base with it reverted, kernel B the base as it is") {
		t.Errorf("the build did not say it reverts:\n%s", stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kernels) != 2 || r.Kernels[0].Label != "reverted" || r.Kernels[1].Label != "base" {
		t.Fatalf("kernels %d: want reverted and base", len(r.Kernels))
	}
	for i, k := range r.Kernels {
		if k.Build == nil || k.Build.Applied != "reverse" || k.Build.Patched != (i == 1) {
			t.Errorf("kernel %d provenance: %+v", i, k.Build)
		}
	}
	if r.Reproduction == nil || len(r.Reproduction.Claims) != 3 {
		t.Fatalf("reproduction: %+v", r.Reproduction)
	}
	for _, ch := range r.Reproduction.Claims {
		if ch.Measured == nil || ch.Outcome == results.NotReproducible {
			t.Errorf("claim %d not set beside a measurement: %+v", ch.Claim, ch)
		}
	}
	if ack := r.Reproduction.Claims[1]; !strings.Contains(ack.Metric, "TcpOutSegs") {
		t.Errorf("the ACK claim met %q, want the receiver's TcpOutSegs", ack.Metric)
	}
}

// TestBuildSecretsHidden: a patch whose code includes a file of root's (`#include
// "/root/..."`, or `.incbin` of it) is compiled in the sandbox, as nobody and without /root:
// the build fails (exit 3), and the secret is in no log, no output and no object of it.
func TestBuildSecretsHidden(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bwrap")
	cache := clitest.ScratchCache(t)
	token := fmt.Sprintf("NSPERF_SECRET_%d_%d", os.Getpid(), time.Now().UnixNano())
	secret := filepath.Join("/root", fmt.Sprintf(".nsperf-test-secret-%d", os.Getpid())) // the name is no secret
	if err := os.WriteFile(secret, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(secret) })
	for name, line := range map[string]string{
		"include": `+#include "` + secret + `"`,
		"incbin":  `+asm(".incbin \"` + secret + `\"");`,
	} {
		patch := filepath.Join(t.TempDir(), name+".patch")
		text := "From: a <a@b>\nSubject: [PATCH] veth: " + name + "\n\n---\n" +
			"diff --git a/drivers/net/veth.c b/drivers/net/veth.c\n--- a/drivers/net/veth.c\n+++ b/drivers/net/veth.c\n" +
			"@@ -10,3 +10,4 @@\n  */\n \n" + line + "\n #include <linux/netdevice.h>\n"
		if err := os.WriteFile(patch, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := clitest.RunEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", patch)
		if code != exitcode.Infra || !strings.Contains(stderr, "No such file or directory") && !strings.Contains(stderr, "file not found") {
			t.Errorf("%s: exit %d, want %d (the build fails: no such file)\n%s", name, code, exitcode.Infra, stderr)
		}
		if strings.Contains(stdout+stderr, token) {
			t.Errorf("%s: the secret reached the output:\n%s", name, stderr)
		}
		err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(token)) {
				t.Errorf("%s: the secret is in %s", name, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
