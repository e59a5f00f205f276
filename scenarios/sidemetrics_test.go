package scenarios

import (
	"strings"
	"testing"
)

// TestRecords: a TCP workload can record its handshake's window; the waits of its
// retransmissions only where a state drops packets past its client's device (routed-netem's
// router), not where the client's own device drops them (veth-netem) or nothing is dropped
// (veth-bigtcp); a UDP workload neither. It records only what its record: list asks
// (routed-netem's: the waits), and captures nothing otherwise.
func TestRecords(t *testing.T) {
	for _, tc := range []struct {
		scenario, workload  string
		canWindow, canWaits bool
		handshake, every    bool
	}{
		{"routed-netem", "rr", true, true, true, true},
		{"veth-netem", "rr", true, false, false, false},
		{"veth-bigtcp", "tcp4", true, false, false, false},
		{"veth-udp", "", false, false, false, false},
	} {
		s := mustLoad(t, tc.scenario)
		w := s.Workloads[0]
		for _, wl := range s.Workloads {
			if wl.Name == tc.workload {
				w = wl
			}
		}
		if got, _ := s.CanRecord(w, SideHandshakeWindow); got != tc.canWindow {
			t.Errorf("%s/%s: can record the handshake window %v, want %v", tc.scenario, w.Name, got, tc.canWindow)
		}
		for _, name := range []string{SideRetransmitWait, SideRetransmitsSeen} {
			if got, _ := s.CanRecord(w, name); got != tc.canWaits {
				t.Errorf("%s/%s: can record %s %v, want %v", tc.scenario, w.Name, name, got, tc.canWaits)
			}
			if got := s.Records(w, name); got != tc.every {
				t.Errorf("%s/%s: records %s %v, want %v", tc.scenario, w.Name, name, got, tc.every)
			}
		}
		if handshake, every := s.Captures(w); handshake != tc.handshake || every != tc.every {
			t.Errorf("%s/%s: captures handshakes %v, every segment %v; want %v, %v", tc.scenario, w.Name, handshake, every, tc.handshake, tc.every)
		}
		if ok, _ := s.CanRecord(w, "rtt_us"); ok || s.Records(w, "rtt_us") {
			t.Errorf("%s: answers for a name it does not own", tc.scenario)
		}
	}
	if got := mustLoad(t, "routed-netem").DropsOn(); len(got) != 1 || got[0] != "router/r1" {
		t.Errorf("routed-netem drops on %v, want [router/r1]", got)
	}
}

// TestRecordOverrides: --record adds a side metric to every workload that can record it and
// refuses one none can; reproduce's RecordClaimed adds where it can and is silent elsewhere.
// A record: list a workload cannot keep is refused with its position.
func TestRecordOverrides(t *testing.T) {
	s := mustLoad(t, "veth-bigtcp")
	if err := (Overrides{Omit: -1, Record: []string{SideHandshakeWindow}}).Apply(s); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Workloads {
		if handshake, every := s.Captures(w); !handshake || every {
			t.Errorf("veth-bigtcp/%s after --record handshake_window: captures %v, %v", w.Name, handshake, every)
		}
	}
	for _, tc := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Omit: -1, Record: []string{SideRetransmitWait}}, "--record retransmit_wait_us: no workload of veth-bigtcp can record it: retransmit_wait_us needs a state that drops packets past the client's device"},
		{Overrides{Omit: -1, Record: []string{"rtt"}}, `--record rtt: no workload of veth-bigtcp can record it: "rtt" is not a side metric a workload records: want handshake_window, retransmits_seen or retransmit_wait_us`},
		{Overrides{Omit: -1, RecordClaimed: []string{SideRetransmitWait}}, ""},
	} {
		err := tc.o.Apply(mustLoad(t, "veth-bigtcp"))
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	udp := "name: u\ntopology:\n  namespaces: [a, b]\n  links:\n    - veth:\n        a: {ns: a, name: eth0, addrs: [198.18.0.1/24]}\n        b: {ns: b, name: eth0, addrs: [198.18.0.2/24]}\n" +
		"states:\n  - name: s\nworkloads:\n  - name: w\n    iperf3:\n      protocol: udp\n      client: {ns: a}\n      server: {ns: b, addr: 198.18.0.2}\n    record: [handshake_window]\n"
	_, err := Parse("u.yaml", []byte(udp), Options{})
	if err == nil || !strings.Contains(err.Error(), "workloads[0].record[0]: handshake_window is of a TCP connection: workload w's tool measures none") {
		t.Errorf("a UDP workload's record: %v", err)
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
