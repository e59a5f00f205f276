package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/testkit/clitest"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// nsperfWithin runs nsperf in process and fails the test if it has not returned after limit:
// a FIFO or a device must be refused, never read from.
func nsperfWithin(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		stdout, stderr, code = nsperf(args...)
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(limit):
		t.Fatalf("nsperf %v still running after %s", args, limit)
	}
	return
}

// TestInputFilesRefused: a FIFO, a device, an oversized file and a directory as a scenario or
// a result: exit 2 at once, with a sentence naming the file and the limit.
func TestInputFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte(strings.Repeat("# padding\n", 110_000)), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", fifo}, "not a regular file (a FIFO)"},
		{[]string{"validate", "/dev/zero"}, "not a regular file (a character device)"},
		{[]string{"validate", big}, "the limit is 1 MiB"},
		{[]string{"report", fifo}, "not a regular file"},
		{[]string{"report", "/dev/zero"}, "not a regular file"},
		{[]string{"report", dir}, "not a regular file (a directory)"},
	} {
		_, stderr, code := nsperfWithin(t, 10*time.Second, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("nsperf %v: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestReportBadResult: a corrupt, empty or truncated result, or one of another schema, is exit
// 2 with the file named; never a raw decoder error with exit 3.
func TestReportBadResult(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage.json": "garbage", "empty.json": "", "truncated.json": `{"schema":"nsperf.result/v1","run_id":`,
		"v10.json": `{"schema":"nsperf.result/v10"}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		_, stderr, code := nsperf("report", path)
		if code != exitUsage || !strings.Contains(stderr, path+": ") {
			t.Errorf("%s: exit %d, want 2 naming the file:\n%s", name, code, stderr)
		}
	}
}

// TestShellInjectionRefused: a device name that is shell syntax is refused by validation, with
// its position.
func TestShellInjectionRefused(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/library/veth-bigtcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"e`id`;x", "e$(id>P)", "-rf", "a'b"} {
		text := strings.Replace(string(data), "name: eth0", "name: \""+name+"\"", 1)
		file := filepath.Join(t.TempDir(), "evil.yaml")
		os.WriteFile(file, []byte(text), 0o644)
		_, stderr, code := nsperf("validate", file)
		if code != exitUsage || !strings.Contains(stderr, "evil.yaml:") || !strings.Contains(stderr, "an interface name takes letters, digits") {
			t.Errorf("device %q: exit %d, want 2 with a positioned problem:\n%s", name, code, stderr)
		}
		if out, _, code := nsperf("plan", file); code == 0 || strings.Contains(out, name) {
			t.Errorf("device %q: plan exit %d wrote a script with it", name, code)
		}
	}
}

// TestIperf3LimitsValidated: iperf3 refuses -t above 86400 s; validation says so instead of
// every run failing after the topology is built.
func TestIperf3LimitsValidated(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/library/veth-bigtcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "long.yaml")
	os.WriteFile(file, []byte(strings.Replace(string(data), "duration: 10s", "duration: 100000s", 1)), 0o644)
	if !strings.Contains(string(data), "duration: 10s") {
		t.Fatal("veth-bigtcp.yaml no longer says duration: 10s; adapt the test")
	}
	_, stderr, code := nsperf("validate", file)
	if code != exitUsage || !strings.Contains(stderr, "iperf3 measures at most 24h0m0s") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	if _, stderr, code := nsperf("run", "veth-bigtcp", "--duration", "100000s"); code != exitUsage || !strings.Contains(stderr, "at most") {
		t.Errorf("--duration 100000s: exit %d\n%s", code, stderr)
	}
}

// TestOutputPathsCheckedFirst: --out naming a directory or an unwritable place, and --junit
// likewise, fail with exit 2 before anything is built.
func TestOutputPathsCheckedFirst(t *testing.T) {
	before := testenv.Take(runstate.Dir)
	defer testenv.CheckClean(t, before, runstate.Dir)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--out", dir}, {"--out", dir + "/"}, {"--out", "/proc/nsperf/r.json"}, {"--junit", dir},
	} {
		start := time.Now()
		_, stderr, code := nsperf(append([]string{"run", "veth-bigtcp", "--runs", "1", "--duration", "1s"}, args...)...)
		if code != exitUsage || strings.Contains(stderr, "building") {
			t.Errorf("%v: exit %d after %s, want 2 before building:\n%s", args, code, time.Since(start), stderr)
		}
	}
}

// TestJUnitReplacesSymlink: the JUnit file is written as a new file; a symlink at its path is
// replaced and its target left as it was.
func TestJUnitReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	link := filepath.Join(dir, "junit.xml")
	os.Symlink(victim, link)
	r := &results.Result{Schema: results.Schema, RunID: "nsp0000", Scenario: results.ScenarioInfo{Name: "x"}}
	if err := writeJUnit(link, r); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me\n" {
		t.Errorf("the symlink's target was written: %q", data)
	}
	if data, _ := os.ReadFile(link); !strings.Contains(string(data), "<testsuites") {
		t.Errorf("junit file: %q", data)
	}
}

// TestOutStdout: --out - writes the result JSON to stdout (the table to stderr) and no file
// named "-".
func TestOutStdout(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	t.Chdir(t.TempDir())
	stdout, stderr, code := nsperf("run", "veth-bigtcp", "--runs", "1", "--duration", "1s", "--omit", "0s", "--out", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var r results.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Schema != results.Schema || len(r.Cases[0].Samples) != 4 {
		t.Fatalf("stdout is not the result JSON: %v\n%.300s", err, stdout)
	}
	if !strings.Contains(stderr, "on vs off") || !strings.Contains(stderr, "result: stdout") {
		t.Errorf("stderr lacks the table or the result line:\n%s", stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
}

// TestMissingCapabilities: root without CAP_NET_ADMIN and CAP_SYS_ADMIN (a restricted
// container) is exit 4 naming them, not exit 3 with a kernel error.
func TestMissingCapabilities(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "setpriv")
	out, err := exec.Command("setpriv", "--bounding-set", "-net_admin,-sys_admin", "--inh-caps", "-net_admin,-sys_admin",
		clitest.Binary, "run", "veth-bigtcp", "--runs", "1", "--duration", "1s", "--out", filepath.Join(t.TempDir(), "r.json")).CombinedOutput()
	var exit *exec.ExitError
	if !errorsAs(err, &exit) || exit.ExitCode() != exitSkipped || !strings.Contains(string(out), "CAP_NET_ADMIN and CAP_SYS_ADMIN") {
		t.Errorf("exit %v, want 4 naming the capabilities:\n%s", err, out)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// TestFileInputsBounded: every file a command reads as input is read regular and bounded:
// /dev/zero, a FIFO and a file over the limit are refused at once with exit 2, naming what
// they are, before anything is fetched or built (the build's cache is the test's own).
func TestFileInputsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.patch")
	if err := os.Truncate(must(os.Create(big)), 33<<20); err != nil {
		t.Fatal(err)
	}
	mbox := clitest.Seeds + "ovs-internal-port-tso-v2.mbox"
	env := []string{"NSPERF_KERNEL_CACHE=" + filepath.Join(dir, "cache")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "--patch", "/dev/zero"}, "/dev/zero: not a regular file (a character device)"},
		{[]string{"build", "--patch", fifo}, "not a regular file (a FIFO)"},
		{[]string{"build", "--patch", big}, "file too large"},
		{[]string{"build", "--patch", mbox, "--config", "/dev/zero"}, "--config: /dev/zero: not a regular file"},
		{[]string{"claims", "/dev/zero"}, "/dev/zero: not a regular file"},
		{[]string{"claims", fifo}, "not a regular file (a FIFO)"},
		{[]string{"reproduce", big}, "file too large"},
		{[]string{"run", "veth-bigtcp", "--patch", "/dev/zero"}, "/dev/zero: not a regular file"},
	} {
		_, stderr, code := clitest.RunEnv(t, env, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cache", "sources")); err == nil {
		t.Error("a refused input fetched a base")
	}
}

// must is the file of os.Create, closed, for Truncate.
func must(f *os.File, err error) string {
	if err != nil {
		panic(err)
	}
	f.Close()
	return f.Name()
}
