package clitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// GuestTest is the preamble of a guest test: the test kernel, and the check at the end that
// nothing of the run is left, on the host or of the guest.
func GuestTest(t *testing.T) (image, modules string) {
	t.Helper()
	image, modules = testenv.TestKernel(t)
	NothingLeft(t)
	return image, modules
}

// DefaultKernelTest is the preamble of a guest test on the default kernel (Debian's 6.12,
// kbuild.DefaultKernel, fetched once into the cache): root, QEMU, the kernel, and the check at
// the end that nothing of the run is left.
func DefaultKernelTest(t *testing.T) (image, modules string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "qemu-system-x86_64")
	image, modules, _, err := kbuild.DefaultKernel(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	NothingLeft(t)
	return image, modules
}

// NothingLeft checks at the end of the test that nothing it made from now on is left: no
// namespace, state file, link or process of its runs (testenv.CheckClean), no guest.
func NothingLeft(t *testing.T) {
	t.Helper()
	before := testenv.Take(runstate.Dir)
	NoGuestLeft(t)
	t.Cleanup(func() { testenv.CheckClean(t, before, runstate.Dir) })
}

// NoGuestLeft checks at the end of the test that no guest it made from now on outlived its
// command: no QEMU process and no guest directory (vm.Leftovers) that was not there when it
// was called and is not another's (testenv.GuestOfOthers: a guest of another nsperf run beside
// the test holds its own lock; a killed run's guest that another test makes on purpose is
// held by that test; what other nsperf work on the machine left records who made it).
func NoGuestLeft(t testing.TB) {
	t.Helper()
	before := guestNames()
	t.Cleanup(func() { guestsLeftSince(t, before) })
}

// guestNames are the names of the guests and guest directories there now, alive or not.
func guestNames() map[string]bool {
	names := map[string]bool{}
	all, _ := vm.Leftovers()
	for _, l := range all {
		names[l.Name] = true
	}
	dirs, _ := filepath.Glob(filepath.Join(vm.Dir(), "vm-*"))
	for _, d := range dirs {
		names[filepath.Base(d)] = true
	}
	return names
}

// guestsLeftSince reports the guests and guest directories left that were not in before and
// are not another's.
func guestsLeftSince(t testing.TB, before map[string]bool) {
	t.Helper()
	all, err := vm.Leftovers()
	var guests []vm.Leftover
	for _, l := range all {
		if before[l.Name] || l.Dir != "" && testenv.GuestOfOthers(l.Dir) || l.Dir == "" && testenv.Fixture(l.Name) {
			continue
		}
		guests = append(guests, l)
	}
	if err != nil || len(guests) > 0 {
		t.Errorf("guests left behind: %v %v", guests, err)
	}
	dirs, _ := filepath.Glob(filepath.Join(vm.Dir(), "vm-*"))
	var left []string
	for _, d := range dirs {
		if before[filepath.Base(d)] {
			continue
		}
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			continue // renamed away since the listing: its run is removing it
		}
		if !testenv.GuestOfOthers(d) {
			left = append(left, d)
		}
	}
	if len(left) > 0 {
		t.Errorf("guest directories left behind: %v", left)
	}
}

// BuiltKernels builds a patch's base and patched kernel with `nsperf build` on Debian's 6.12
// (fetched into the kernel cache on first use, about a minute; a module build is about 20 s
// per kernel, cached after) and returns the image and the two module trees. Where it cannot
// build, the test fails in CI and skips elsewhere.
func BuiltKernels(t testing.TB, patch string) (image, base, patched string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "qemu-system-x86_64")
	testenv.RequireTool(t, "busybox")
	stdout, stderr, code := Run(t, "build", "--patch", patch)
	if code != 0 {
		testenv.Unavailable(t, fmt.Sprintf("nsperf build --patch %s: exit %d\n%s", patch, code, stderr))
	}
	trees := map[string][2]string{}
	for _, line := range strings.Split(stdout, "\n") {
		var label, kernel, modules string
		if n, _ := fmt.Sscanf(line, "%s --kernel %s --modules %s", &label, &kernel, &modules); n == 3 {
			trees[strings.TrimSuffix(label, ":")] = [2]string{kernel, modules}
		}
	}
	if trees["base"][0] == "" || trees["base"][0] != trees["patched"][0] {
		t.Fatalf("nsperf build printed no base and patched kernel:\n%s", stdout)
	}
	return trees["base"][0], trees["base"][1], trees["patched"][1]
}

// ReadAB reads the result of an A/B run of two kernels.
func ReadAB(t *testing.T, path string) *results.Result {
	t.Helper()
	r, _, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kernels) != 2 {
		t.Fatalf("%d kernels in the result", len(r.Kernels))
	}
	return r
}

func StateRecord(c results.Case, name string) *results.StateRecord {
	for i := range c.States {
		if c.States[i].Name == name {
			return &c.States[i]
		}
	}
	return nil
}

// BuildsIn lists a kernel cache's builds: a build directory, or a working one left behind.
func BuildsIn(t *testing.T, cache string) []string {
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

// ScratchCache is a kernel cache of its own that shares the fetched sources of the real one.
func ScratchCache(t testing.TB) string {
	t.Helper()
	BuiltKernels(t, Seeds+"ovs-internal-port-tso-v2.mbox") // the base, fetched once
	cache := t.TempDir()
	if err := os.Symlink(filepath.Join(kbuild.CacheDir(), "sources"), filepath.Join(cache, "sources")); err != nil {
		t.Fatal(err)
	}
	return cache
}
