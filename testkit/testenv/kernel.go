package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKernelDir is where the guest tests keep Debian's kernel package, extracted (boot/ and
// lib/modules/), between runs; NSPERF_TEST_KERNEL_DIR overrides it. scripts/test-kernel.sh
// fills it; TestKernel does when it is empty.
func TestKernelDir() string {
	if d := os.Getenv("NSPERF_TEST_KERNEL_DIR"); d != "" {
		return d
	}
	return "/var/cache/nsperf-test-kernel"
}

// TestKernel returns a kernel image that is not the host's and its modules tree: Debian's
// linux-image-*-amd64, fetched with apt-get download and extracted with dpkg -x on first use.
// Without it the test fails in CI (NSPERF_REQUIRE_ROOT=1) and skips elsewhere.
func TestKernel(t testing.TB) (image, modules string) {
	t.Helper()
	RequireRoot(t)
	RequireTool(t, "qemu-system-x86_64")
	RequireTool(t, "busybox")
	dir := TestKernelDir()
	find := func() string {
		m, _ := filepath.Glob(filepath.Join(dir, "root", "boot", "vmlinuz-*"))
		if len(m) == 0 {
			return ""
		}
		return m[0]
	}
	if image = find(); image == "" {
		out, err := script("test-kernel.sh", dir)
		if image = find(); err != nil || image == "" {
			Unavailable(t, fmt.Sprintf("no test kernel in %s: scripts/test-kernel.sh: %v\n%s", dir, err, out))
		}
	}
	return image, filepath.Join(dir, "root")
}

// script runs one of the module's scripts/ with arg: tests run in their package's directory,
// and the scripts are at the module's root. The output is stdout, then stderr.
func script(name, arg string) ([]byte, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(root)), "scripts", name), arg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return append(stderr.Bytes(), stdout.Bytes()...), err
}

// Unavailable fails the test in CI (NSPERF_REQUIRE_ROOT=1) and skips it elsewhere.
func Unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("NSPERF_REQUIRE_ROOT") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
