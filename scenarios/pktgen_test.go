package scenarios

import (
	"strings"
	"testing"
	"time"
)

// TestPktgenDurationOverride: a run shorter than xdp-bench's rate needs is refused on the
// command line with the reason, and raised to the shortest it measures in only where the
// caller asks for the tool's minimum (the coverage map's short runs); a pktgen workload
// without xdp-bench takes any whole seconds.
func TestPktgenDurationOverride(t *testing.T) {
	s, err := Load("veth-xdp-bench", Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = Overrides{Duration: time.Second, Omit: -1}.Apply(s)
	if err == nil || !strings.Contains(err.Error(), "--duration 1s: a pktgen workload with xdp_bench runs at least 3s") {
		t.Errorf("--duration 1s: %v", err)
	}
	if err := (Overrides{Duration: time.Second, Omit: -1, ToolMinimum: true}).Apply(s); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Workloads {
		if d := w.Spec().(*Pktgen).Duration.Std(); d != MinXDPBenchDuration {
			t.Errorf("%s: %s, want the minimum %s", w.Name, d, MinXDPBenchDuration)
		}
	}
	plain, err := Load("veth-pktgen", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (Overrides{Duration: time.Second, Omit: -1}).Apply(plain); err != nil || plain.Workloads[0].Spec().(*Pktgen).Duration.Std() != time.Second {
		t.Errorf("veth-pktgen --duration 1s: %v", err)
	}
}
