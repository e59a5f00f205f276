package scenarios

import "slices"

// The side metrics a run records of a TCP workload's connection beyond tcp_info's fields, from
// a capture of its segments in the client's namespace (results.TCPInfoNames has them all):
// the window the client announced in the last ACK of the handshake, in bytes; and where a
// state drops packets past the client's device, how many retransmissions the client sent and
// the median of their waits for a timer (since the last data sent or new data acknowledged),
// in µs.
const (
	SideHandshakeWindow = "handshake_window"
	SideRetransmitsSeen = "retransmits_seen"
	SideRetransmitWait  = "retransmit_wait_us"
)

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

// CapturesRetransmits says whether the runs of spec capture each segment of its connection
// for the waits of its retransmissions: it measures over TCP, and a state drops packets on a
// device outside its client's namespace. A capture sees a packet as its device sends it,
// after the device's qdisc: one the client's own netem drops is never seen, and its
// retransmission would pass for new data.
func (s *Scenario) CapturesRetransmits(spec ToolSpec) bool {
	if !spec.TCP() {
		return false
	}
	client, _ := spec.Ends()
	return slices.ContainsFunc(s.DropsOn(), func(ref string) bool {
		ns, _ := SplitTarget(ref)
		return ns != client.NS
	})
}

// Records says whether the runs of workload w record the side metric name of its connection.
func (s *Scenario) Records(w Workload, name string) bool {
	specs := w.Instances()
	if len(specs) == 0 {
		return false
	}
	switch name {
	case SideHandshakeWindow:
		return specs[0].TCP()
	case SideRetransmitsSeen, SideRetransmitWait:
		return s.CapturesRetransmits(specs[0])
	}
	return false
}
