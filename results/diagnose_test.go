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

// TestDecidedOverReordering: a comparison decided by no more than the split between a state's
// reordered samples and its others is named a possible false alarm; a change larger than the
// split (a real one the regimes cannot make), or an undecided one, is not.
func TestDecidedOverReordering(t *testing.T) {
	sample := func(state string, round int, gbit float64, ofo uint64) Sample {
		s := Sample{Round: round, State: state, Workload: "tcp6", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: gbit * 1e9}}}
		s.Counters = &Counters{Namespaces: map[string]map[string]uint64{"server": {OutOfOrderCounter: ofo}}}
		return s
	}
	run := func(second []float64, reordered []bool) *Result {
		first := []float64{2.43, 2.44, 2.45, 2.43, 2.50, 2.44, 2.51, 2.44, 2.43, 2.45}
		firstOFO := []bool{false, false, false, false, true, false, true, false, false, true}
		var samples []Sample
		for i := range first {
			samples = append(samples, sample("a", i+1, first[i], map[bool]uint64{true: 40}[firstOFO[i]]), sample("b", i+1, second[i], map[bool]uint64{true: 40}[reordered[i]]))
		}
		c := Case{States: []StateRecord{{Name: "a"}, {Name: "b", CompareTo: "a"}}, Samples: samples}
		r := &Result{Cases: []Case{c}, Settings: Settings{Policy: Policy{Alpha: 0.05, MinChange: 0.014}}}
		r.Cases[0].Summaries = Summarize(c.Samples, c.States, []string{"tcp6"}, r.Settings.Policy)
		r.DecideFamily()
		return r
	}
	mostly := []bool{true, true, false, true, true, true, true, false, true, true}
	regimes := run([]float64{2.51, 2.50, 2.44, 2.52, 2.50, 2.51, 2.52, 2.44, 2.50, 2.51}, mostly)
	if got := strings.Join(regimes.Diagnose(), "\n"); !strings.Contains(got, "reordering: tcp6 throughput b vs a, improved by +2.7%, may be a false alarm: 8 of 10 samples out of order against 3 of 10") {
		t.Errorf("a change the size of the regimes' split:\n%s", got)
	}
	real := run([]float64{3.05, 3.04, 2.98, 3.06, 3.05, 3.04, 3.06, 2.97, 3.05, 3.04}, mostly)
	if got := strings.Join(real.Diagnose(), "\n"); strings.Contains(got, "false alarm") {
		t.Errorf("a 24%% change named a possible false alarm:\n%s", got)
	}
}

// TestOwnPagesReadInSamples: samples in which nsperf read pages of its own from storage (a
// guest: from the host) are counted in one line; samples that read none say nothing.
func TestOwnPagesReadInSamples(t *testing.T) {
	sample := func(faults int64) Sample {
		return Sample{State: "off", Workload: "tcp4", Noise: &Noise{SelfMajorFaults: faults}}
	}
	r := &Result{Cases: []Case{{Samples: []Sample{sample(6), sample(0), sample(1), sample(0)}}}}
	want := "noise: nsperf read 7 pages of its own from storage inside 2 samples"
	if got := strings.Join(r.Diagnose(), "\n"); !strings.Contains(got, want) {
		t.Errorf("diagnostics:\n%s\nwant %q", got, want)
	}
	r.Cases[0].Samples = []Sample{sample(0), sample(0)}
	if got := strings.Join(r.Diagnose(), "\n"); strings.Contains(got, "pages of its own") {
		t.Errorf("samples that read nothing were named:\n%s", got)
	}
}
