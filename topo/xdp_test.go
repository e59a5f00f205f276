package topo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

const xdpStates = `  - name: plain
  - name: xdp
    xdp: {server/eth0: pass}
  - name: object
    xdp: {server/eth0: testdata/xdp-pass.o}
  - name: two
    xdp: {server/eth0: testdata/xdp-two.o}
`

// TestXDP attaches nsperf's XDP_PASS program to a real veth end (natively: veth runs XDP in
// its driver, on its NAPI path), reads it back, sees traffic pass, takes it away in the state
// without it, finds its removal from outside as drift, and leaves nothing attached.
func TestXDP(t *testing.T) {
	s := vethScenario(t, xdpStates)
	l := buildRoot(t, s)
	t.Cleanup(func() { // after the teardown
		if len(l.appliers["xdp"].(*xdpApplier).attached) != 0 {
			t.Errorf("programs still held after teardown: %v", l.appliers["xdp"].(*xdpApplier).attached)
		}
	})
	plain, withXDP := s.States[0], s.States[1]
	for round := 0; round < 2; round++ {
		devices, err := l.Apply(withXDP)
		if err != nil {
			t.Fatal(err)
		}
		if got := devices.XDP["server/eth0"]; !strings.HasPrefix(got, "pass (id ") || !strings.HasSuffix(got, ", native)") {
			t.Errorf("round %d: server/eth0 reads back %q, want pass, native", round, got)
		}
		if got := devices.XDP["client/eth0"]; got != "" {
			t.Errorf("client/eth0 has %q", got)
		}
		reaches(t, l, "198.18.0.2")
		if drift, err := l.Drift(); err != nil || len(drift) != 0 {
			t.Errorf("drift right after applying: %v %v", drift, err)
		}
		if _, err := l.Apply(plain); err != nil {
			t.Fatal(err)
		}
		if got, _ := l.appliers["xdp"].(*xdpApplier).read(l, "server/eth0"); got != "" {
			t.Errorf("the plain state keeps %q attached", got)
		}
	}
	// An object's XDP program (testdata/xdp-pass.ll, built with llc -march=bpf), replacing
	// nsperf's own in the state after it.
	if _, err := l.Apply(withXDP); err != nil {
		t.Fatal(err)
	}
	objDevices, err := l.Apply(s.States[2])
	if err != nil {
		t.Fatal(err)
	}
	if got := objDevices.XDP["server/eth0"]; !strings.HasPrefix(got, "object /") || !strings.Contains(got, "testdata/xdp-pass.o, program xdp_pass_obj (id ") {
		t.Errorf("object: reads back %q", got)
	}
	reaches(t, l, "198.18.0.2")
	// Two programs whose names sort opposite to their order in the file
	// (testdata/xdp-two.ll): the first in the file, xdp_zulu (XDP_PASS), is attached and
	// recorded, not xdp_alpha (XDP_DROP), which would cut the connection.
	twoDevices, err := l.Apply(s.States[3])
	if err != nil {
		t.Fatal(err)
	}
	if got := twoDevices.XDP["server/eth0"]; !strings.Contains(got, "testdata/xdp-two.o, program xdp_zulu (id ") {
		t.Errorf("two programs: reads back %q, want program xdp_zulu", got)
	}
	reaches(t, l, "198.18.0.2")
	// Someone detaches it mid-sample.
	if _, err := l.Apply(withXDP); err != nil {
		t.Fatal(err)
	}
	l.appliers["xdp"].(*xdpApplier).attached["server/eth0"].close()
	drift, err := l.Drift()
	if err != nil || len(drift) != 1 || !strings.Contains(drift[0], `server/eth0 xdp is "", applied "pass (id `) {
		t.Errorf("drift %q %v", drift, err)
	}
	delete(l.appliers["xdp"].(*xdpApplier).attached, "server/eth0")
	if cmds := plan.StateShell(l.Plan.StateSteps(withXDP)); len(cmds) != 1 || !strings.Contains(cmds[0], "link set dev eth0 xdp obj xdp_pass.o sec xdp") {
		t.Errorf("commands %q", cmds)
	}
}

func TestXDPPinName(t *testing.T) {
	if got := xdpPinName("server", "eth0.100"); got != "xdp:server:eth0:100" {
		t.Errorf("pin name %q: bpffs refuses a dot", got)
	}
}

// TestXDPProgramOrder: an object's functions in the order of the file (section, then offset),
// not of their names.
func TestXDPProgramOrder(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/xdp-pass.o": {"xdp_pass_obj"},
		"testdata/xdp-two.o":  {"xdp_zulu", "xdp_alpha"},
	} {
		if got, err := xdpProgramOrder(file); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", file, got, err, want)
		}
	}
}

// TestXDPKept: in a topology kept up (`nsperf up`, `run --keep`) the XDP program's bpf_link is
// pinned in bpffs, which holds it once nsperf lets go of its handles (as when its process
// exits); Down unpins it, and nothing is left.
func TestXDPKept(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s := vethScenario(t, "  - name: xdp\n    xdp: {server/eth0: pass}\n")
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{Kept: true})
	if err != nil {
		t.Fatal(err)
	}
	down := false
	t.Cleanup(func() {
		if !down {
			l.Teardown()
		}
	})
	if err := l.Check(s.States); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(s.States[0]); err != nil {
		t.Fatal(err)
	}
	pin := filepath.Join(runstate.PinDir(l.ID), "xdp:server:eth0")
	if _, err := os.Lstat(pin); err != nil {
		t.Fatalf("the link is not pinned: %v", err)
	}
	x := l.appliers["xdp"].(*xdpApplier).attached["server/eth0"]
	if err := l.Keep(); err != nil {
		t.Fatal(err)
	}
	if x.link != nil || x.prog != nil {
		t.Fatal("nsperf still holds the program after Keep")
	}
	// Held by the pin alone: read back as the program nsperf attached, traffic passes.
	if drift, err := l.Drift(); err != nil || len(drift) != 0 {
		t.Errorf("drift after Keep: %v %v", drift, err)
	}
	reaches(t, l, "198.18.0.2")
	o, err := runstate.Read(l.ID)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := Down(o)
	down = err == nil
	if err != nil || !slices.Contains(rm.Removed, runstate.PinDir(l.ID)) {
		t.Errorf("down: removed %q, %v", rm.Removed, err)
	}
	if _, err := os.Lstat(runstate.PinDir(l.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pins after down: %v", err)
	}
}

// TestXDPKeptRefused: where the link cannot be pinned, a kept topology refuses the state that
// attaches XDP, naming it, before and when it is applied; none is attached.
func TestXDPKeptRefused(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s := vethScenario(t, "  - name: xdp\n    xdp: {server/eth0: pass}\n")
	id := NewRunID()
	// Something not nsperf's where the run's pin directory would be.
	if err := mountBPFFS(); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(runstate.PinRoot, 0o700)
	if err := os.Symlink(t.TempDir(), runstate.PinDir(id)); err != nil {
		t.Fatal(err)
	}
	l, err := Build(NewPlan(s, id), BuildOptions{Kept: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(runstate.PinDir(id))
		os.Remove(runstate.PinRoot) // while empty
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
	})
	var capErr *capability.Error
	if err := l.Check(s.States); !errors.As(err, &capErr) || !strings.Contains(err.Error(), "state xdp: xdp on server/eth0 cannot stay attached after nsperf exits") {
		t.Errorf("check: %v", err)
	}
	if _, err := l.Apply(s.States[0]); !errors.As(err, &capErr) || !strings.Contains(err.Error(), "state xdp: ") || !strings.Contains(err.Error(), "is not a directory in bpffs") {
		t.Errorf("apply: %v", err)
	}
	if got, err := l.appliers["xdp"].(*xdpApplier).read(l, "server/eth0"); got != "" || err != nil {
		t.Errorf("attached after the refusal: %q %v", got, err)
	}
}

// TestOrphanPins: a run's pins in bpffs without its state file (a killed removal) are a
// leftover cleanup lists and removes.
func TestOrphanPins(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	id := NewRunID()
	dir, err := ensurePinDir(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removePins(id) })
	left, err := FindLeftovers(false)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(left, func(l Leftover) bool { return l.RunID == id })
	if i < 0 || left[i].Reason != "pins in bpffs without a state file" {
		t.Fatalf("leftovers %+v, want run %s's pins", left, id)
	}
	if rm, err := left[i].Remove(); err != nil || !slices.Contains(rm.Removed, dir) {
		t.Errorf("remove: %+v %v", rm, err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pins after cleanup: %v", err)
	}
}
