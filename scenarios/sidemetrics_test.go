package scenarios

import "testing"

// TestRecords: a TCP workload records its handshake's window; the waits of its retransmissions
// only where a state drops packets past its client's device (routed-netem's router), not
// where the client's own device drops them (veth-netem) or nothing is dropped (veth-bigtcp);
// a UDP workload records neither.
func TestRecords(t *testing.T) {
	for _, tc := range []struct {
		scenario, workload string
		window, waits      bool
	}{
		{"routed-netem", "rr", true, true},
		{"veth-netem", "rr", true, false},
		{"veth-bigtcp", "tcp4", true, false},
		{"veth-udp", "", false, false},
	} {
		s, err := Load(tc.scenario, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := s.Workloads[0]
		for _, wl := range s.Workloads {
			if wl.Name == tc.workload {
				w = wl
			}
		}
		if got := s.Records(w, SideHandshakeWindow); got != tc.window {
			t.Errorf("%s/%s: records the handshake window %v, want %v", tc.scenario, w.Name, got, tc.window)
		}
		for _, name := range []string{SideRetransmitWait, SideRetransmitsSeen} {
			if got := s.Records(w, name); got != tc.waits {
				t.Errorf("%s/%s: records %s %v, want %v", tc.scenario, w.Name, name, got, tc.waits)
			}
		}
		if s.Records(w, "rtt_us") {
			t.Errorf("%s: Records answers for a name it does not own", tc.scenario)
		}
	}
	if got := mustLoad(t, "routed-netem").DropsOn(); len(got) != 1 || got[0] != "router/r1" {
		t.Errorf("routed-netem drops on %v, want [router/r1]", got)
	}
}

func mustLoad(t *testing.T, name string) *Scenario {
	t.Helper()
	s, err := Load(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
