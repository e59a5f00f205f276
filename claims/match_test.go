package claims

import (
	"strings"
	"testing"

	"github.com/nsperf/nsperf/results"
)

// TestMatch: the OVS claims meet the A/B's on@B against off@A of their family (not off@B
// against off@A), and are reproduced where that improved; a claim the run decided the other
// way is contradicted, one it did not decide is undecided, and one with no comparison says
// so.
// at is where compare.Kernels places a merged state (results.SideOf).
func at(name string) results.SideOf {
	of, side, _ := strings.Cut(name, "@")
	return results.SideOf{Side: side, Of: of}
}

func TestMatch(t *testing.T) {
	rep := readSeed(t, "ovs-internal-port-tso-v2.mbox")
	cmp := func(base, verdict string, change float64) *results.Comparison {
		return &results.Comparison{Baseline: base, BaselineSide: at(base), Verdict: verdict, Change: change, ChangeLo: change - 0.01, ChangeHi: change + 0.01, Direction: 1}
	}
	r := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{
		{Workload: "tcp4", Metric: "throughput", State: "off@A", SideOf: at("off@A")},
		{Workload: "tcp4", Metric: "throughput", State: "off@B", SideOf: at("off@B"), Comparison: cmp("off@A", results.NoChange, 0.001)},
		{Workload: "tcp4", Metric: "throughput", State: "on@B", SideOf: at("on@B"), Comparison: cmp("off@A", results.Improved, 0.24)},
		{Workload: "tcp6", Metric: "throughput", State: "on@B", SideOf: at("on@B"), Comparison: cmp("off@A", results.Regressed, -0.1)},
	}}}}
	facts := Facts{Families: map[string]string{"tcp4": "IPv4", "tcp6": "IPv6"}}
	got := Match(rep, r, facts)
	if len(got) != 2 {
		t.Fatalf("%d checks", len(got))
	}
	if g := got[0]; g.Workload != "tcp4" || g.State != "on@B" || g.Baseline != "off@A" || g.Outcome != results.Reproduced || g.StatedChange == nil || *g.StatedChange != 0.181 {
		t.Errorf("IPv4: %+v", g)
	}
	if g := got[1]; g.Workload != "tcp6" || g.Outcome != results.Contradicted {
		t.Errorf("IPv6: %+v", g)
	}
	r.Cases[0].Summaries[2].Comparison.Verdict = results.TooNoisy
	if g := Match(rep, r, facts)[0]; g.Outcome != results.Undecided {
		t.Errorf("too noisy: %+v", g)
	}
	if g := Match(rep, &results.Result{}, facts)[0]; g.Outcome != results.Undecided || g.Reason == "" {
		t.Errorf("no comparison: %+v", g)
	}
	// A netperf claim meets the netperf workload, and an offloads-off claim a pair of
	// offloads-off states.
	vx := readSeed(t, "vxlan-bigtcp-7of9.mbox")
	both := &results.Result{Cases: []results.Case{{Matrix: map[string]string{"mtu": "1500"}, Label: "mtu=1500", Summaries: []results.Summary{
		{Workload: "tcp4", Metric: "throughput", State: "on@B", SideOf: at("on@B"), Comparison: cmp("off@A", results.Improved, 0.1)},
		{Workload: "stream4", Metric: "throughput", State: "on@B", SideOf: at("on@B"), Comparison: cmp("off@A", results.Improved, 0.1)},
		{Workload: "stream4", Metric: "throughput", State: "sw-on@B", SideOf: at("sw-on@B"), Comparison: cmp("off@A", results.Improved, 0.1)},
		{Workload: "stream4", Metric: "throughput", State: "sw-on@B", SideOf: at("sw-on@B"), Comparison: cmp("sw-off@A", results.Improved, 0.3)},
	}}}}
	vf := Facts{Tools: map[string]string{"tcp4": "iperf3", "stream4": "netperf"}, OffloadsOff: map[string]bool{"sw-on": true, "sw-off": true}}
	got = Match(vx, both, vf)
	if g := got[0]; g.Workload != "stream4" || g.State != "on@B" || g.Baseline != "off@A" || g.Case != "mtu=1500" {
		t.Errorf("standard MTU: %+v", g)
	}
	if g := got[1]; g.Outcome != results.Undecided || g.Measured != nil {
		t.Errorf("8k MTU has no case here: %+v", g)
	}
	if g := got[2]; g.State != "sw-on@B" || g.Baseline != "sw-off@A" {
		t.Errorf("offloads off: %+v", g)
	}
	// A latency claim that fell is better: reproduced by an improvement of a lower-is-better
	// metric.
	merge := readSeed(t, "big-tcp-merge.txt")
	lat := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{
		{Workload: "rr6", Metric: "p99_latency", State: "on", Comparison: &results.Comparison{Baseline: "off", Verdict: results.Improved, Change: -0.05, Direction: -1}},
		{Workload: "rr6", Metric: "throughput", State: "on", Comparison: &results.Comparison{Baseline: "off", Verdict: results.Equivalent, Change: 0.001, Direction: 1}},
	}}}}
	for _, g := range Match(merge, lat, Facts{}) {
		want := map[string]string{"p99_latency": results.Reproduced, "transaction_rate": results.Contradicted, "min_latency": results.Undecided, "p90_latency": results.Undecided}[g.Metric]
		if g.Outcome != want {
			t.Errorf("%s: %s, want %s (%s)", g.Metric, g.Outcome, want, g.Reason)
		}
	}
}

// TestWriteLayout: the measurement is written in the message's layout: the OVS seed's table
// (its column labels, a row per family with the medians and the CVs of both sides), and the
// BIG TCP merge's rows of netperf -O selectors, one per run, for each state.
func TestWriteLayout(t *testing.T) {
	ovs := readSeed(t, "ovs-internal-port-tso-v2.mbox")
	r := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{
		{Workload: "tcp4", Metric: "throughput", State: "off@A", SideOf: at("off@A"), Stats: results.Stats{Median: 20e9, CV: 0.01}},
		{Workload: "tcp4", Metric: "throughput", State: "on@B", SideOf: at("on@B"), Stats: results.Stats{Median: 25e9, CV: 0.005}},
	}}}}
	checks := []results.ClaimCheck{{Claim: 1, Metric: "throughput", Workload: "tcp4", State: "on@B", Baseline: "off@A", Measured: &results.Comparison{Change: 0.25}}}
	var b strings.Builder
	if err := WriteLayout(&b, ovs, r, checks); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"measured   BIG TCP off   BIG TCP on   CV off / on", "IPv4       20 Gbit/s     25 Gbit/s    1.00% / 0.50%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the OVS layout lacks %q:\n%s", want, b.String())
		}
	}
	merge := readSeed(t, "big-tcp-merge.txt")
	rr := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{
		{Workload: "rr6", Metric: "min_latency", State: "off", Stats: results.Stats{Median: 78}},
		{Workload: "rr6", Metric: "min_latency", State: "on", Stats: results.Stats{Median: 60}},
	}}}}
	for i, st := range []string{"off", "on", "off", "on"} {
		rr.Cases[0].Samples = append(rr.Cases[0].Samples, results.Sample{Round: i/2 + 1, State: st, Workload: "rr6", Metrics: []results.Metric{
			{Name: "min_latency", Value: 70 + float64(i)}, {Name: "p90_latency", Value: 140}, {Name: "p99_latency", Value: 180}, {Name: "throughput", Value: 8400}}})
	}
	var idx int
	for i, c := range merge.Claims {
		if c.Metric == "min_latency" {
			idx = i
		}
	}
	checks = make([]results.ClaimCheck, len(merge.Claims))
	checks[idx] = results.ClaimCheck{Claim: idx + 1, Metric: "min_latency", Workload: "rr6", State: "on", Baseline: "off", Measured: &results.Comparison{}}
	b.Reset()
	if err := WriteLayout(&b, merge, rr, checks); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"measured, off (MIN_LATENCY,P90_LATENCY,P99_LATENCY,THROUGHPUT):\n  70.00        140.00       180.00       8400.00\n", "measured, on (MIN_LATENCY"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the merge layout lacks %q:\n%s", want, b.String())
		}
	}
}

// TestCounterClaims: a claim about ACKs per second meets the receiver's TcpOutSegs per
// second between the states its throughput was compared in (fewer ACKs: reproduced), backlog
// drops the receiver's TcpExtTCPBacklogDrop; a quantity nsperf does not record is not
// reproducible here, with the reason.
func TestCounterClaims(t *testing.T) {
	rep, err := Read("m", []byte("Subject: tcp: defer ACKs\n\n- Throughput is increased by 20% (100Gbit -> 120Gbit).\n"+
		"- Number of generated ACK per second shrinks from 240,000 to 40,000.\n- Number of backlog drops per second shrinks from 230 to 0.\n"+
		"- Number of context switches per second shrinks from 500 to 20.\n"))
	if err != nil || len(rep.Claims) != 4 {
		t.Fatalf("%v %+v", err, rep.Claims)
	}
	sample := func(state string, acks, drops uint64) results.Sample {
		return results.Sample{Workload: "tcp", State: state, Seconds: 2, Counters: &results.Counters{Namespaces: map[string]map[string]uint64{
			"server": {"TcpOutSegs": acks, "TcpExtTCPBacklogDrop": drops}, "client": {"TcpOutSegs": 10 * acks}}}}
	}
	var samples []results.Sample
	for i := uint64(0); i < 5; i++ {
		samples = append(samples, sample("reverted@A", 480000+i*1000, 460+i), sample("base@B", 80000+i*1000, 0))
	}
	cmp := &results.Comparison{Baseline: "reverted@A", Verdict: results.Improved, Change: 0.1, ChangeLo: 0.05, ChangeHi: 0.15, Direction: 1}
	r := &results.Result{Cases: []results.Case{{Samples: samples, Summaries: []results.Summary{
		{Workload: "tcp", Metric: "throughput", State: "base@B", Comparison: cmp}}}}}
	got := Match(rep, r, Facts{Ends: map[string]map[string]string{"tcp": {"client": "client", "server": "server"}}})
	if g := got[1]; g.Outcome != results.Reproduced || g.Metric != "ns server TcpOutSegs per second" || g.Measured == nil || g.Measured.Change > -0.8 {
		t.Errorf("ACKs: %+v %+v", g, g.Measured)
	}
	if g := got[2]; g.Outcome != results.Reproduced || !strings.Contains(g.Metric, "TcpExtTCPBacklogDrop") {
		t.Errorf("backlog drops: %+v", g)
	}
	if g := got[3]; g.Outcome != results.NotReproducible || !strings.Contains(g.Reason, "context_switches") {
		t.Errorf("context switches: %+v", g)
	}
}

// TestMatchUnits: a throughput claim in bit/s does not meet a request/response workload's
// throughput, which is a transaction rate.
func TestMatchUnits(t *testing.T) {
	rep, err := Read("m", []byte("Subject: x\n\nip link set dev eth0 gso_max_size 185000\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n"))
	if err != nil || len(rep.Claims) != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	cmp := &results.Comparison{Baseline: "off", Verdict: results.Improved, Change: 0.2, ChangeLo: 0.1, ChangeHi: 0.3, Direction: 1}
	rr := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{{Workload: "rr6", Metric: "throughput", Unit: "trans/s", State: "on", Comparison: cmp}}}}}
	if g := Match(rep, rr, Facts{})[0]; g.Outcome != results.Undecided || g.Measured != nil {
		t.Errorf("a bit/s claim met a transaction rate: %+v", g)
	}
	rr.Cases[0].Summaries[0].Unit = "bit/s"
	if g := Match(rep, rr, Facts{})[0]; g.Outcome != results.Reproduced {
		t.Errorf("a bit/s claim and a bit/s stream: %+v", g)
	}
}

// TestOutcomeOfNoChange: a claim of no change worth a verdict (96 -> 96.05 Gbit/s, below the
// run's min change) is reproduced by an equivalent measurement and contradicted by a
// decided change; a claimed change is contradicted by equivalence, as before.
func TestOutcomeOfNoChange(t *testing.T) {
	noChange := Claim{Change: 0.0005}
	gain := Claim{Change: 0.2}
	for _, tc := range []struct {
		c       Claim
		verdict string
		want    string
	}{
		{noChange, results.Equivalent, results.Reproduced},
		{noChange, results.Improved, results.Contradicted},
		{noChange, results.NoChange, results.Undecided},
		{noChange, results.Negligible, results.Reproduced},
		{gain, results.Equivalent, results.Contradicted},
		{gain, results.Improved, results.Reproduced},
	} {
		m := results.Comparison{Verdict: tc.verdict, Direction: 1, MinChange: 0.02}
		if got, why := outcome(tc.c, m); got != tc.want {
			t.Errorf("claimed %+.2f%%, %s: %s (%s), want %s", 100*tc.c.Change, tc.verdict, got, why, tc.want)
		}
	}
}

// TestMatchTransferAndPercentile: a transfer's time and a latency written with its
// statistic meet the measurements of those metrics (lower is better for both), where a
// latency alone could not.
func TestMatchTransferAndPercentile(t *testing.T) {
	rep, err := Read("m", []byte("Subject: [PATCH net] tcp: x\n\nA 10 MB download over the lossy path took 3.81 s before and 2.95 s after.\n\np99 latency of TCP_RR went from 48.2 us to 39.5 us.\n"))
	if err != nil || len(rep.Claims) != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	lower := func(change float64) *results.Comparison {
		return &results.Comparison{Baseline: "off@A", BaselineSide: at("off@A"), Verdict: results.Improved, Change: change, ChangeLo: change - 0.02, ChangeHi: change + 0.02, Direction: -1}
	}
	r := &results.Result{Cases: []results.Case{{Summaries: []results.Summary{
		{Workload: "get-2m", Metric: "transfer_time", Unit: "s", State: "rack@B", SideOf: at("rack@B"), Comparison: lower(-0.2)},
		{Workload: "rr", Metric: "p99_latency", Unit: "us", State: "rack@B", SideOf: at("rack@B"), Comparison: lower(-0.15)},
	}}}}
	got := Match(rep, r, Facts{Tools: map[string]string{"get-2m": "netperf", "rr": "netperf"}})
	want := map[string]string{"transfer_time": "get-2m", "p99_latency": "rr"}
	for _, g := range got {
		if g.Workload != want[g.Metric] || g.Outcome != results.Reproduced {
			t.Errorf("%s: %+v, want reproduced by %s", g.Metric, g, want[g.Metric])
		}
	}
}

// TestHandshakeWindowClaim: a claim about the window of a handshake's last ACK meets the
// client's connection's handshake window, compared as a level between the states its
// workload's throughput was compared in: a larger window is reproduced, the same window is
// not decided.
func TestHandshakeWindowClaim(t *testing.T) {
	rep, err := Read("m", []byte("Subject: tcp: honour initrwnd\n\nThe window of the handshake's third ACK grows from 65536 to 175232 bytes.\n"))
	if err != nil || len(rep.Claims) != 1 {
		t.Fatalf("%v %+v", err, rep.Claims)
	}
	for _, c := range []struct {
		name      string
		after     float64
		outcome   string
		increased bool
	}{{"larger", 92672, results.Reproduced, true}, {"the same", 65152, results.Undecided, false}} {
		var samples []results.Sample
		for range 5 {
			for state, w := range map[string]float64{"reverted@A": 65152, "base@B": c.after} {
				samples = append(samples, results.Sample{Workload: "tcp", State: state, Seconds: 2,
					Counters: &results.Counters{TCP: map[string]float64{"rtt_us": 40, results.HandshakeWindow: w}}})
			}
		}
		cmp := &results.Comparison{Baseline: "reverted@A", Verdict: results.Improved, Change: 0.1, ChangeLo: 0.05, ChangeHi: 0.15, Direction: 1}
		r := &results.Result{Cases: []results.Case{{Samples: samples, Summaries: []results.Summary{
			{Workload: "tcp", Metric: "throughput", State: "base@B", Comparison: cmp}}}}}
		got := Match(rep, r, Facts{Ends: map[string]map[string]string{"tcp": {"client": "client", "server": "server"}}})
		g := got[0]
		if g.Outcome != c.outcome || g.Metric != "tcp "+results.HandshakeWindow || g.Measured == nil || (g.Measured.Change > 0.3) != c.increased {
			t.Errorf("%s: %+v %+v", c.name, g, g.Measured)
		}
	}
}
