package vm

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockOwnPages reads every page of nsperf's binary into the guest's memory and keeps it there
// (mlock of each of the executable's mappings in /proc/self/maps, as `vmtouch -l` does for a
// file), before the guest measures anything. The guest runs nsperf's binary from the host
// over 9p, and a page of its code that a sample touched first (reading counters, looking at
// the connection) was read from the host inside the measured window: the guest waited for the
// host's reply, whose time in virtual time follows the host's load (docs/method.md, "Virtual
// time: repeatability and the floor"). mlockall would also pin the Go runtime's reserved
// heap, most of a small guest's memory. It returns how much is locked (VmLck).
func LockOwnPages() (lockedKB int64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("lock nsperf's pages in guest memory: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("lock nsperf's pages in guest memory: %w", err)
	}
	ranges := mappingsOf(maps, exe)
	if len(ranges) == 0 {
		return 0, fmt.Errorf("lock nsperf's pages in guest memory: /proc/self/maps maps nothing of %s", exe)
	}
	for _, r := range ranges {
		if _, _, errno := unix.Syscall(unix.SYS_MLOCK, r[0], r[1]-r[0], 0); errno != 0 {
			return 0, fmt.Errorf("lock nsperf's pages in guest memory (mlock %#x-%#x of %s): %w", r[0], r[1], exe, errno)
		}
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return statusKB(status, "VmLck"), nil
}

// mappingsOf returns the address ranges [start, end) that /proc/PID/maps lists for the file
// path ("55d0c6a00000-55d0c8e2a000 r-xp 00000000 00:1b 1234   /path").
func mappingsOf(maps []byte, path string) [][2]uintptr {
	var out [][2]uintptr
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.Join(f[5:], " ") != path {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			continue
		}
		out = append(out, [2]uintptr{uintptr(a), uintptr(b)})
	}
	return out
}

// statusKB is the value in kB of one field of /proc/PID/status ("VmLck:\t  57344 kB"); 0 when
// the field is absent.
func statusKB(status []byte, field string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return n
	}
	return 0
}
