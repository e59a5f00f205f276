package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nsperf/nsperf/kbuild"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/testenv"
)

const seedDir = "../../patches/testdata/"

// buildsIn lists a kernel cache's builds: a build directory, or a working one left behind.
func buildsIn(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cache, "builds"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".logs") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestBuildRefuses: each input nsperf build must not build exits 2 with its reason in one
// line (the hunk that does not apply names its file, hunk and the context the source lacks),
// and adds nothing to the cache.
func TestBuildRefuses(t *testing.T) {
	testenv.RequireRoot(t)
	builtKernels(t, seedDir+"ovs-internal-port-tso-v2.mbox") // the base, fetched once
	before := buildsIn(t, kbuild.CacheDir())
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
	ovs := seedDir + "ovs-internal-port-tso-v2.mbox"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"vxlan 7 of 9", []string{"--patch", seedDir + "vxlan-bigtcp-7of9.mbox"}, []string{"drivers/net/vxlan/vxlan_core.c: hunk 1 (@@ -3370,6 +3370,8 @@", `"dev->mangleid_features = NETIF_F_GSO_PARTIAL;"`, "patch 7 of 9", "1-6 of its series not given"}},
		{"4.9-stable", []string{"--patch", seedDir + "vxlan-lowerdev-4.9-stable.mbox"}, []string{"drivers/net/vxlan.c: the source has no such file"}},
		{"not a patch", []string{"--patch", write("notes.txt", "hello\nworld\n")}, []string{`2 lines of text starting "hello", with no unified diff`}},
		{"a merge message", []string{"--patch", seedDir + "big-tcp-merge.txt"}, []string{"no unified diff"}},
		{"a binary diff", []string{"--patch", write("fw.patch", "diff --git a/fw.bin b/fw.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\n")}, []string{"a binary diff"}},
		{"documentation only", []string{"--patch", write("doc.patch", diff("Documentation/networking/x.rst", "@@ -1 +1 @@\n-a\n+b\n"))}, []string{"only Documentation/: nothing to build"}},
		{"a path out of the source", []string{"--patch", write("up.patch", "--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n")}, []string{"leaves the source"}},
		{"an absolute path", []string{"--patch", write("abs.patch", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-x\n+y\n")}, []string{"an absolute path"}},
		{"a symlink", []string{"--patch", write("link.patch", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n")}, []string{"symbolic link"}},
		{"a cut hunk", []string{"--patch", write("cut.patch", diff("net/core/dev.c", "@@ -1,3 +1,4 @@\n a\n+b\n"))}, []string{"the hunk is cut"}},
		{"a huge mbox", []string{"--patch", huge}, []string{"is not a patch series"}},
		{"another Debian", []string{"--patch", ovs, "--source", "debian:5.10"}, []string{"fetches debian:6.12 only"}},
		{"a directory that is no kernel", []string{"--patch", ovs, "--source", dir}, []string{"not a Linux source tree for x86 (no Makefile)"}},
		{"a tree configured in place", []string{"--patch", ovs, "--source", fakeTree(t, true)}, []string{"configured or built in place (it has .config)"}},
		{"a tree the patch does not fit", []string{"--patch", ovs, "--source", fakeTree(t, false)}, []string{"net/openvswitch/vport-internal_dev.c: the source has no such file"}},
		{"not a tarball", []string{"--patch", ovs, "--source", write("linux.tar.xz", "hello\n")}, []string{"not a source tarball tar can read"}},
		{"not a config", []string{"--patch", ovs, "--config", write("notes.config", "hello\n")}, []string{"not a kernel config (no CONFIG_ line)"}},
		{"negative fuzz", []string{"--patch", ovs, "--fuzz", "-1"}, []string{"--fuzz -1"}},
		{"no patch", nil, []string{"no patch given"}},
	} {
		_, stderr, code := runBinary(t, append([]string{"build"}, tc.args...)...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, exitUsage, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, stderr)
			}
		}
	}
	if after := buildsIn(t, kbuild.CacheDir()); strings.Join(after, " ") != strings.Join(before, " ") {
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
	_, stderr, code := runBinaryEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", patch, "--source", tree)
	if code != exitInfra {
		t.Fatalf("exit %d, want %d\n%s", code, exitInfra, stderr)
	}
	for _, want := range []string{"build: whole kernels, config minimal: --source is a tree, without the packaged image, headers and module tree", "build of config failed", "config.log"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if got := buildsIn(t, cache); len(got) != 0 {
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
	_, stderr, code = runBinaryEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", patch, "--source", tarball)
	if code != exitInfra || !strings.Contains(stderr, "build: unpacking "+tarball) || !strings.Contains(stderr, "--source is a tree") {
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
	stdout, stderr, code := runBinary(t, "build", "--patch", seedDir+"vxlan-bigtcp-7of9.mbox", "--fuzz", "3")
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

// scratchCache is a kernel cache of its own that shares the fetched sources of the real one.
func scratchCache(t testing.TB) string {
	t.Helper()
	builtKernels(t, seedDir+"ovs-internal-port-tso-v2.mbox") // the base, fetched once
	cache := t.TempDir()
	if err := os.Symlink(filepath.Join(kbuild.CacheDir(), "sources"), filepath.Join(cache, "sources")); err != nil {
		t.Fatal(err)
	}
	return cache
}

// TestBuildInterrupted: Ctrl-C during a build stops it (exit 130) and leaves no build and no
// working directory in the cache, which a second call then builds whole.
func TestBuildInterrupted(t *testing.T) {
	testenv.RequireRoot(t)
	cache := scratchCache(t)
	cmd := exec.Command(binary, "build", "--patch", "testdata/veth-tso-8192.patch")
	cmd.Env = append(os.Environ(), "NSPERF_KERNEL_CACHE="+cache)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.HasPrefix(sc.Text(), "build: base:") {
			time.Sleep(time.Second) // into make
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d\n%s", err, exitInterrupted, strings.Join(said, "\n"))
	}
	if left := buildsIn(t, cache); len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}
	if _, stderr, code := runBinaryEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", "testdata/veth-tso-8192.patch"); code != 0 || strings.Contains(stderr, "cached") {
		t.Errorf("the build after the interrupted one: exit %d\n%s", code, stderr)
	}
}

// TestBuildFullDisk: a cache whose file system fills up during a build says so (exit 2) and
// keeps no part of the build.
func TestBuildFullDisk(t *testing.T) {
	testenv.RequireRoot(t)
	cache := scratchCache(t)
	builds := filepath.Join(cache, "builds")
	if err := os.Mkdir(builds, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", builds, "tmpfs", 0, "size=4m"); err != nil {
		t.Fatalf("mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(builds, unix.MNT_DETACH) })
	_, stderr, code := runBinaryEnv(t, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", "testdata/veth-tso-8192.patch")
	if code != exitUsage || !strings.Contains(stderr, "no space left in "+builds) {
		t.Errorf("exit %d, want %d with no space left\n%s", code, exitUsage, stderr)
	}
	if left := buildsIn(t, cache); len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}
}

// BenchmarkBuildModules times nsperf build of the OVS seed: cold (a cache with the base
// fetched but no build: both openvswitch.ko builds and the two module trees) and cached.
// make bench runs it; the figures are in the README.
func BenchmarkBuildModules(b *testing.B) {
	mbox := seedDir + "ovs-internal-port-tso-v2.mbox"
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			cache := scratchCache(b)
			b.StartTimer()
			if _, stderr, code := runBinaryEnv(b, []string{"NSPERF_KERNEL_CACHE=" + cache}, "build", "--patch", mbox); code != 0 {
				b.Fatalf("exit %d\n%s", code, stderr)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		builtKernels(b, mbox)
		b.ResetTimer()
		for range b.N {
			if _, stderr, code := runBinary(b, "build", "--patch", mbox); code != 0 || !strings.Contains(stderr, "cached") {
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
// bench runs them; the figures are in the README.
func BenchmarkBuildWhole(b *testing.B) {
	orig, err := os.ReadFile("testdata/tcp-tso-2-segments.patch")
	if err != nil {
		b.Fatal(err)
	}
	variant := func(n int) string {
		p := filepath.Join(b.TempDir(), "tcp.patch")
		os.WriteFile(p, []byte(strings.Replace(string(orig), "min_tso_segs), 2);", fmt.Sprintf("min_tso_segs), %d);", n), 1)), 0o644)
		return p
	}
	build := func(b *testing.B, env []string, patch string) {
		stdout, stderr, code := runBinaryEnv(b, env, "build", "--patch", patch, "--scenario", "testdata/tcp-tso.yaml")
		if code != 0 || strings.Contains(stderr, "build: cached") {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
		if m := regexp.MustCompile(`(?m)^manifest: (\S+)/manifest.json$`).FindStringSubmatch(stdout); m != nil && env == nil {
			b.Cleanup(func() { os.RemoveAll(m[1]); os.RemoveAll(m[1] + ".logs") })
		}
	}
	b.Run("patched", func(b *testing.B) {
		if _, stderr, code := runBinary(b, "build", "--patch", "testdata/tcp-tso-2-segments.patch", "--scenario", "testdata/tcp-tso.yaml"); code != 0 {
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
			cache := scratchCache(b)
			b.StartTimer()
			build(b, []string{"NSPERF_KERNEL_CACHE=" + cache}, "testdata/tcp-tso-2-segments.patch")
		}
	})
}
