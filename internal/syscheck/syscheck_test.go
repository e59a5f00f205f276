package syscheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
)

// TestCheckGolden: nsperf check over a fake /sys and /proc: a powersave governor on a pinned
// CPU, a frequency range, turbo on, the pinned CPUs' sibling threads idle (SMT not shared),
// irqbalance running, IRQs that could move to CPUs 2-3, nohz_full without isolcpus on the
// pinned CPUs, THP madvise, 1.4% steal, and KVM that hung since boot.
func TestCheckGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, Check("testdata/root", []int{0, 1}, "run/nsperf/vm/kvm-hangs")); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "check.golden"), b.String())
}

// TestSiblingsPinned: client and server on two threads of one core is named.
func TestSiblingsPinned(t *testing.T) {
	for _, it := range Check("testdata/root", []int{0, 2}, "") {
		if it.Name == "SMT" && (it.OK || it.Value != "on; CPUs 0 and 2 are threads of one core") {
			t.Errorf("SMT: %+v", it)
		}
	}
}

// What /sys says is printed: its control characters are escaped (issue 31, item 21).
func TestReadEscapesControlCharacters(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "scaling_governor"), []byte("powersave\x1b]0;owned\x07\n"), 0o644)
	if got := read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b]0;owned\a`) {
		t.Errorf("read %q", got)
	}
}
