package knobs_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestHostWideSysctlsMatchTheKernel: in a new network namespace on this kernel, each of the
// machine's sysctls under SysctlPrefixes (but the per-device conf and neigh trees) is absent or
// read-only exactly when CheckSysctl refuses it as host-wide: the declared list is the
// kernel's rule. On a kernel older than the list's (6.18) only one way: a name since made a
// namespace's own is machine-wide there, and found at run time. (A package of its own:
// testenv imports knobs.)
func TestHostWideSysctlsMatchTheKernel(t *testing.T) {
	testenv.RequireRoot(t)
	var names []string
	for _, top := range []string{"core", "ipv4", "ipv6"} {
		err := filepath.WalkDir(filepath.Join("/proc/sys/net", top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "conf" || d.Name() == "neigh") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				names = append(names, strings.ReplaceAll(strings.TrimPrefix(path, "/proc/sys/"), "/", "."))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	settable := map[string]bool{} // in a new namespace
	done := make(chan error)
	go func() {
		// The thread leaves with the goroutine, never unlocked: its namespace goes with it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		for _, name := range names {
			settable[name] = unix.Access(knobs.SysctlPath(name), unix.W_OK) == nil
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(uts.Release[:]), "%d.%d", &major, &minor)
	complete := major > 6 || major == 6 && minor >= 18
	for _, name := range names {
		listed := strings.Contains(knobs.CheckSysctl(name, "1"), " is host-wide: ")
		if listed && settable[name] {
			t.Errorf("%s: refused as host-wide, but a new namespace can set it", name)
		}
		if !listed && !settable[name] && complete {
			t.Errorf("%s: absent or read-only in a new namespace, but not refused as host-wide", name)
		}
	}
}
