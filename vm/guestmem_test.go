package vm

import (
	"os"
	"testing"

	"github.com/nsperf/nsperf/testkit/testenv"
)

func TestMappingsOf(t *testing.T) {
	maps := []byte(`00400000-00452000 r-xp 00000000 00:1b 4711                               /usr/local/bin/nsperf
00652000-00653000 r--p 00052000 00:1b 4711                               /usr/local/bin/nsperf
00653000-00654000 rw-p 00053000 00:1b 4711                               /usr/local/bin/nsperf
00654000-00675000 rw-p 00000000 00:00 0                                  [heap]
7f1c0d400000-7f1c0d600000 r--p 00000000 00:1b 99                         /usr/local/bin/nsperf.old
7f1c0e000000-7f1c0e001000 r-xp 00000000 00:1b 12                         /opt/with space/nsperf
zzzz-7f1c0e001000 r-xp 00000000 00:1b 4711                               /usr/local/bin/nsperf
7f1c0e003000-7f1c0e002000 r-xp 00000000 00:1b 4711                               /usr/local/bin/nsperf
`)
	got := mappingsOf(maps, "/usr/local/bin/nsperf")
	want := [][2]uintptr{{0x400000, 0x452000}, {0x652000, 0x653000}, {0x653000, 0x654000}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d: got %x, want %x", i, got[i], want[i])
		}
	}
	if got := mappingsOf(maps, "/opt/with space/nsperf"); len(got) != 1 {
		t.Errorf("a path with a space: %x", got)
	}
	if got := mappingsOf(maps, "/usr/local/bin/other"); len(got) != 0 {
		t.Errorf("a file not mapped: %x", got)
	}
}

func TestStatusKB(t *testing.T) {
	status := []byte("Name:\tnsperf\nVmPeak:\t 1234 kB\nVmLck:\t   40124 kB\nVmPin:\t       0 kB\n")
	if got := statusKB(status, "VmLck"); got != 40124 {
		t.Errorf("VmLck %d", got)
	}
	if got := statusKB(status, "VmSwap"); got != 0 {
		t.Errorf("absent field %d", got)
	}
}

// TestLockOwnPages locks this test binary's mappings (root: no RLIMIT_MEMLOCK) and finds at least the binary's size in VmLck's order of magnitude.
func TestLockOwnPages(t *testing.T) {
	testenv.RequireRoot(t) // a user's memlock limit (8 MiB) is smaller than the binary
	kb, err := LockOwnPages()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	// The mappings cover the binary's loaded segments, not its debug sections: at least a
	// quarter of the file.
	if kb<<10 < fi.Size()/4 {
		t.Errorf("locked %d kB of a %d-byte binary", kb, fi.Size())
	}
}
