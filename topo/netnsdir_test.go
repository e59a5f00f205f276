package topo

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestNamespaceDeletableAfterIPNetnsAdd: a namespace of nsperf's can be deleted after someone
// ran `ip netns add` while it existed. iproute2 binds /run/netns over itself when it is not a
// mount point; before nsperf made it one, its namespaces then lay under that bind and their
// deletion failed with "device or resource busy" (seen here with a test beside a run). The
// test runs itself again in a mount namespace of its own whose /run is a fresh tmpfs, so
// /run/netns starts as a plain directory and the host's mounts are not touched.
func TestNamespaceDeletableAfterIPNetnsAdd(t *testing.T) {
	if os.Getenv("NSPERF_TEST_PRIVATE_RUN") == "1" {
		namespaceDeletableAfterIPNetnsAdd(t)
		return
	}
	testenv.RootTest(t, t.TempDir(), "ip", "unshare")
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", os.Args[0], "-test.run", "^TestNamespaceDeletableAfterIPNetnsAdd$", "-test.v")
	cmd.Env = append(os.Environ(), "NSPERF_TEST_PRIVATE_RUN=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("in a mount namespace of its own: %v\n%s", err, out)
	}
}

func namespaceDeletableAfterIPNetnsAdd(t *testing.T) {
	if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a fresh /run: %v", err)
	}
	h, err := netnsx.NewNamed("nsptest-ours")
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if out, err := exec.Command("ip", "netns", "add", "nsptest-theirs").CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	if err := removeNamespaceMount("nsptest-ours"); err != nil {
		t.Errorf("after ip netns add: %v", err)
	}
	if _, err := os.Lstat(netnsx.RunDir + "/nsptest-ours"); !os.IsNotExist(err) {
		t.Errorf("/run/netns/nsptest-ours is still there: %v", err)
	}
}
