package scenarios

import (
	"fmt"
	"slices"
)

// The side metrics a run records of a TCP workload's connection beyond tcp_info's fields, from
// a capture of its segments in the client's namespace (results.TCPInfoNames has them all):
// the window the client announced in the last ACK of the handshake, in bytes; and where a
// state drops packets past the client's device, how many retransmissions the client sent and
// the median of their waits for a timer (since the last data sent or new data acknowledged),
// in µs.
//
// They are recorded only where a workload asks (record:, or run's --record): while a capture
// runs, every packet of the client's namespace is also handed to it (the kernel clones each
// one for the tap, `tcpdump -i any`), a cost the figures of a run without it never pay, and
// one that varies with when the capture ends.
const (
	SideHandshakeWindow = "handshake_window"
	SideRetransmitsSeen = "retransmits_seen"
	SideRetransmitWait  = "retransmit_wait_us"
)

// SideRecords are the names a workload's record: list takes.
func SideRecords() []string {
	return []string{SideHandshakeWindow, SideRetransmitsSeen, SideRetransmitWait}
}

// DropsOn are the devices ("ns/dev") a state of the scenario drops packets on, on purpose
// (Dropper), sorted.
func (s *Scenario) DropsOn() []string {
	var out []string
	for _, st := range s.States {
		for _, key := range SettingKeys() {
			if d, ok := st.Settings[key].(Dropper); ok {
				out = append(out, d.DropsOn()...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dropsPastClient says whether a state drops packets on a device outside the client's
// namespace of spec. A capture sees a packet as its device sends it, after the device's
// qdisc: one the client's own netem drops is never seen, and its retransmission would pass
// for new data.
func (s *Scenario) dropsPastClient(spec ToolSpec) bool {
	client, _ := spec.Ends()
	return slices.ContainsFunc(s.DropsOn(), func(ref string) bool {
		ns, _ := SplitTarget(ref)
		return ns != client.NS
	})
}

// CanRecord says whether the runs of workload w could record the side metric name, and if
// not, why: the tool measures over TCP, and for the waits of retransmissions a state drops
// packets past the client's device.
func (s *Scenario) CanRecord(w Workload, name string) (bool, string) {
	specs := w.Instances()
	if !slices.Contains(SideRecords(), name) {
		return false, fmt.Sprintf("%q is not a side metric a workload records: want %s", name, orList(SideRecords()))
	}
	if len(specs) == 0 || !specs[0].TCP() {
		return false, fmt.Sprintf("%s is of a TCP connection: workload %s's tool measures none", name, w.Name)
	}
	if name != SideHandshakeWindow && !s.dropsPastClient(specs[0]) {
		return false, fmt.Sprintf("%s needs a state that drops packets past the client's device (netem loss on a router's device): no state of %s does", name, s.Name)
	}
	return true, ""
}

// Records says whether the runs of workload w record the side metric name of its connection:
// its record: list names it (the waits of retransmissions and their count come together).
func (s *Scenario) Records(w Workload, name string) bool {
	if ok, _ := s.CanRecord(w, name); !ok {
		return false
	}
	if name == SideHandshakeWindow {
		return slices.Contains(w.Record, name)
	}
	return slices.Contains(w.Record, SideRetransmitsSeen) || slices.Contains(w.Record, SideRetransmitWait)
}

// Captures says what the runs of workload w capture of its TCP connection: its handshakes
// (the window of the last ACK), and each segment for the whole run (the waits of its
// retransmissions).
func (s *Scenario) Captures(w Workload) (handshake, every bool) {
	every = s.Records(w, SideRetransmitWait)
	return every || s.Records(w, SideHandshakeWindow), every
}

// record checks a workload's record: list.
func (v *validator) record(path string, w Workload) {
	for i, name := range w.Record {
		if ok, why := v.s.CanRecord(w, name); !ok {
			v.add(fmt.Sprintf("%s.record[%d]", path, i), "%s", why)
		}
	}
}
