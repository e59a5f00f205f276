package netnsx_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// threadNS is the inode of the calling thread's network namespace.
func threadNS(t *testing.T) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// newTarget is a network namespace of the test's own (root only), as a handle and as the
// inode that names it.
func newTarget(t *testing.T, name string) (netns.NsHandle, unix.Stat_t) {
	t.Helper()
	testenv.RootTest(t, t.TempDir())
	path := testenv.NewNetNS(t, name)
	target, err := netns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	var want unix.Stat_t
	if err := unix.Stat(path, &want); err != nil {
		t.Fatal(err)
	}
	return target, want
}

// TestDoOnAFreshThread: fn runs inside the target on a thread that is not the caller's, so
// the caller's thread never changes namespace (and a failed restore could not leave it in
// the wrong one); a panic in fn reaches the caller; fn's error is returned as it is.
func TestDoOnAFreshThread(t *testing.T) {
	target, want := newTarget(t, "nsptest-netnsx")

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	callerTID, callerNS := unix.Gettid(), threadNS(t)
	var fnTID int
	var fnNS uint64
	errMarker := os.ErrDeadlineExceeded
	err := netnsx.Do(target, func() error {
		fnTID, fnNS = unix.Gettid(), threadNS(t)
		return errMarker
	})
	if err != errMarker {
		t.Errorf("Do returned %v, want fn's error", err)
	}
	if fnNS != want.Ino {
		t.Errorf("fn ran in namespace %d, want the target's %d", fnNS, want.Ino)
	}
	if fnTID == callerTID {
		t.Errorf("fn ran on the caller's thread %d", callerTID)
	}
	if got := threadNS(t); got != callerNS {
		t.Errorf("the caller's thread is in namespace %d after Do, was in %d", got, callerNS)
	}

	defer func() {
		if p := recover(); p != "fn panicked" {
			t.Errorf("recovered %v, want fn's panic", p)
		}
		if got := threadNS(t); got != callerNS {
			t.Errorf("after a panic the caller's thread is in namespace %d, was in %d", got, callerNS)
		}
	}()
	netnsx.Do(target, func() error { panic("fn panicked") })
	t.Error("a panic in fn did not reach the caller")
}
