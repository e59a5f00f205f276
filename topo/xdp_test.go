package topo

import (
	"strings"
	"testing"

	"github.com/nsperf/nsperf/topo/plan"
)

const xdpStates = `  - name: plain
  - name: xdp
    xdp: {server/eth0: pass}
  - name: object
    xdp: {server/eth0: testdata/xdp-pass.o}
`

// TestXDP attaches nsperf's XDP_PASS program to a real veth end (natively: veth runs XDP in
// its driver, on its NAPI path), reads it back, sees traffic pass, takes it away in the state
// without it, finds its removal from outside as drift, and leaves nothing attached.
func TestXDP(t *testing.T) {
	s := vethScenario(t, xdpStates)
	l := buildRoot(t, s)
	t.Cleanup(func() { // after the teardown
		if len(l.xdp) != 0 {
			t.Errorf("programs still held after teardown: %v", l.xdp)
		}
	})
	plain, withXDP := s.States[0], s.States[1]
	for round := 0; round < 2; round++ {
		devices, err := l.Apply(withXDP)
		if err != nil {
			t.Fatal(err)
		}
		if got := devices["server/eth0"].XDP; !strings.HasPrefix(got, "pass (id ") || !strings.HasSuffix(got, ", native)") {
			t.Errorf("round %d: server/eth0 reads back %q, want pass, native", round, got)
		}
		if got := devices["client/eth0"].XDP; got != "" {
			t.Errorf("client/eth0 has %q", got)
		}
		reaches(t, l, "198.18.0.2")
		if drift, err := l.Drift(devices); err != nil || len(drift) != 0 {
			t.Errorf("drift right after applying: %v %v", drift, err)
		}
		if _, err := l.Apply(plain); err != nil {
			t.Fatal(err)
		}
		if got, _ := l.readXDP("server/eth0"); got != "" {
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
	if got := objDevices["server/eth0"].XDP; !strings.HasPrefix(got, "object /") || !strings.Contains(got, "testdata/xdp-pass.o (id ") {
		t.Errorf("object: reads back %q", got)
	}
	reaches(t, l, "198.18.0.2")
	// Someone detaches it mid-sample.
	devices, err := l.Apply(withXDP)
	if err != nil {
		t.Fatal(err)
	}
	l.xdp["server/eth0"].close()
	drift, err := l.Drift(devices)
	if err != nil || len(drift) != 1 || !strings.Contains(drift[0], `server/eth0 xdp is "", applied "pass (id `) {
		t.Errorf("drift %q %v", drift, err)
	}
	delete(l.xdp, "server/eth0")
	if cmds := plan.StateShell(l.Plan.StateSteps(withXDP)); len(cmds) != 1 || !strings.Contains(cmds[0], "link set dev eth0 xdp obj xdp_pass.o sec xdp") {
		t.Errorf("commands %q", cmds)
	}
}
