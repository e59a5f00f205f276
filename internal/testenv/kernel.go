package testenv

import (
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
		out, err := exec.Command("scripts/test-kernel.sh", dir).CombinedOutput()
		if err != nil {
			// Tests run in their package's directory: the script is at the module's root.
			root, _ := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
			out, err = exec.Command(filepath.Join(strings.TrimSpace(string(root)), "scripts", "test-kernel.sh"), dir).CombinedOutput()
		}
		if image = find(); err != nil || image == "" {
			msg := fmt.Sprintf("no test kernel in %s: scripts/test-kernel.sh: %v\n%s", dir, err, out)
			if os.Getenv("NSPERF_REQUIRE_ROOT") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return image, filepath.Join(dir, "root")
}
