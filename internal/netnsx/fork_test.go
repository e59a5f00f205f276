package netnsx_test

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
)

// TestForkedChildOutlivesSysfsThreads: children started with Pdeathsig through Fork, inside
// a namespace, live on while WithSysfs ends one thread after another (each ends on purpose);
// they run in the target namespace; the caller's thread never changes namespace. Started on
// an ordinary thread instead (netnsx.Do), the runtime reuses that thread for WithSysfs and the
// children get SIGKILL.
func TestForkedChildOutlivesSysfsThreads(t *testing.T) {
	target, want := newTarget(t, "nsptest-fork")
	var children []*exec.Cmd
	defer func() {
		for _, c := range children {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range 10 {
		c := exec.Command("sleep", "60")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := netnsx.Fork(target, c.Start); err != nil {
			t.Fatal(err)
		}
		children = append(children, c)
		for range 5 {
			if err := netnsx.WithSysfs(target, func(sys string) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // a SIGKILL sent is delivered by now
	for i, c := range children {
		var st unix.Stat_t
		if err := unix.Stat("/proc/"+strconv.Itoa(c.Process.Pid)+"/ns/net", &st); err != nil {
			t.Fatalf("child %d (pid %d) is gone: %v", i, c.Process.Pid, err)
		}
		if st.Ino != want.Ino {
			t.Errorf("child %d runs in namespace %d, want the target's %d", i, st.Ino, want.Ino)
		}
		if state := procState(c.Process.Pid); state == "Z" {
			t.Errorf("child %d (pid %d) was killed while threads ended", i, c.Process.Pid)
		}
	}
}

// procState is the state letter of /proc/PID/stat ("S", "Z", ...).
func procState(pid int) string {
	var b [512]byte
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	n, _ := unix.Read(fd, b[:])
	s := string(b[:max(n, 0)])
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
