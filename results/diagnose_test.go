package results

import (
	"strings"
	"testing"
)

// TestOutOfOrderSplit: the samples of a state in which the receiver queued segments out of
// order are named when their median differs from the others' by the floor or more, and not
// otherwise; a state whose samples are all alike in this says nothing.
func TestOutOfOrderSplit(t *testing.T) {
	sample := func(round int, gbit float64, ofo uint64) Sample {
		s := Sample{Round: round, State: "off", Workload: "tcp6", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: gbit * 1e9}}}
		s.Counters = &Counters{Namespaces: map[string]map[string]uint64{"client": {"TcpExtTCPDSACKRecv": ofo}, "server": {OutOfOrderCounter: ofo}}}
		return s
	}
	c := Case{States: []StateRecord{{Name: "off"}}, Samples: []Sample{
		sample(1, 2.44, 0), sample(2, 2.49, 40), sample(3, 2.43, 0), sample(4, 2.50, 70), sample(5, 2.45, 0),
	}}
	c.Summaries = Summarize(c.Samples, c.States, []string{"tcp6"}, Policy{})
	r := &Result{Cases: []Case{c}, Settings: Settings{Policy: Policy{MinChange: 0.007}}}
	want := "reordering: tcp6 throughput in off: 2 of 5 samples queued segments out of order (TcpExtTCPOFOQueue: reordering or loss), their median +2.3% against the others'"
	if got := strings.Join(r.Diagnose(), "\n"); !strings.Contains(got, want) {
		t.Errorf("diagnostics:\n%s\nwant %q", got, want)
	}
	r.Settings.Policy.MinChange = 0.03
	if got := strings.Join(r.Diagnose(), "\n"); strings.Contains(got, "reordering") {
		t.Errorf("a split below the floor was named:\n%s", got)
	}
	r.Settings.Policy.MinChange = 0.007
	for i := range r.Cases[0].Samples {
		r.Cases[0].Samples[i].Counters = nil
	}
	if got := strings.Join(r.Diagnose(), "\n"); strings.Contains(got, "reordering") {
		t.Errorf("samples without counters were split:\n%s", got)
	}
}
