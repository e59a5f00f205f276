package reproduce

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/fixture"
)

// read is a seed message's claims and series.
func read(t *testing.T, path string) (*claims.Report, []patches.Patch, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := claims.Read(path, data)
	if err != nil {
		t.Fatal(err)
	}
	series, err := patches.Read(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return rep, series, data
}

// TestChoose: each seed message chooses the shipped scenario that reproduces it, for the
// reasons said: the patch's functions as the coverage map measured them first, then the
// reference's words and the claims' tool.
func TestChoose(t *testing.T) {
	shipped, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want, why string }{
		{"../patches/testdata/ovs-internal-port-tso-v2.mbox", "ovs-internal-tso", "its traffic runs the patched do_setup (measured: nsperf coverage)"},
		{"../patches/testdata/vxlan-bigtcp-7of9.mbox", "vxlan-bigtcp", "its traffic runs the patched vxlan_setup (measured: nsperf coverage)"},
		{"../patches/testdata/vxlan-lowerdev-4.9-stable.mbox", "vxlan-lowerdev", "it reproduces vxlan-lowerdev-gso.md"},
		{"../claims/testdata/big-tcp-merge.txt", "big-tcp-rr", "it runs netperf, the claims' tool"},
		{"testdata/tcp-recovery-transfer.mbox", "veth-netem", "its workload get-2m is for the claims' transfer_time"},
		// A patch to the driver of a NIC QEMU emulates: the pair of such NICs, whose traffic
		// runs the patched function.
		{"testdata/virtio-net-xmit.mbox", "nic-virtio", "runs the patched start_xmit"},
		// A packet rate of pktgen's into a veth peer with XDP: the scenario that drives pktgen,
		// though veth-xdp's traffic runs the patched veth_xmit too.
		{"testdata/veth-xmit-pktgen.mbox", "veth-pktgen", "it runs pktgen, the claims' tool"},
		// xdp-bench's summary of a patch to veth's XDP receive: the scenario whose receiver is
		// xdp-bench and whose workload is for its rate.
		{"testdata/veth-xdp-rcv-xdp-bench.mbox", "veth-xdp-bench", "its workload xdp-drop is for the claims' xdp_rx_rate"},
		// The window of a handshake's last ACK with the client's route at initrwnd 64, of a
		// patch every TCP scenario runs: the one whose state sets the route's initrwnd.
		{"testdata/initrwnd-handshake-window.mbox", "veth-initcwnd", "its state initcwnd-64 sets initrwnd, which the message names"},
		// A loss probe's firing time, of a patch every TCP scenario runs: the scenario whose
		// runs record what each retransmission waited (packets lost past the client's device).
		{"testdata/tlp-timer-ms.mbox", "routed-netem", "its workload rr can record the claims' retransmit_wait_us"},
	} {
		rep, series, _ := read(t, tc.file)
		name, why, err := Choose(rep, series, shipped)
		if err != nil || name != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %s (%s) %v, want %s (%s)", filepath.Base(tc.file), name, why, err, tc.want, tc.why)
		}
	}
	// A patch to UDP's GRO goes to the one scenario whose traffic runs it (the coverage map),
	// not to a veth scenario of the same words.
	udp := "From: a <a@b>\nSubject: [PATCH net-next] udp: faster GRO receive\n\nBefore: 3.64 Mpps\nAfter: 3.79 Mpps\n---\n" +
		"diff --git a/net/ipv4/udp_offload.c b/net/ipv4/udp_offload.c\n--- a/net/ipv4/udp_offload.c\n+++ b/net/ipv4/udp_offload.c\n" +
		"@@ -700,3 +700,3 @@ struct sk_buff *udp_gro_receive(struct list_head *head, struct sk_buff *skb,\n \ta();\n-\tb();\n+\tc();\n \td();\n"
	rep, err := claims.Read("udp.mbox", []byte(udp))
	if err != nil {
		t.Fatal(err)
	}
	series, err := patches.Read("udp.mbox", []byte(udp))
	if err != nil {
		t.Fatal(err)
	}
	if name, why, err := Choose(rep, series, shipped); err != nil || name != "veth-udp" || !strings.Contains(why, "runs the patched udp_gro_receive") {
		t.Errorf("a UDP GRO patch: %s (%s) %v, want veth-udp", name, why, err)
	}
	// A patch to code the map saw no scenario run (SCTP) is refused before anything is built,
	// naming the file; one outside what the map traces (vhost) is left to the other reasons.
	for file, wantErr := range map[string]error{"net/sctp/sm_statefuns.c": ErrCodeNotRun, "drivers/vhost/net.c": nil} {
		mail := strings.ReplaceAll(udp, "net/ipv4/udp_offload.c", file)
		series, err := patches.Read("x.mbox", []byte(mail))
		if err != nil {
			t.Fatal(err)
		}
		name, _, err := Choose(rep, series, shipped)
		if !errors.Is(err, wantErr) || (wantErr != nil && !strings.Contains(err.Error(), file)) || (wantErr == nil && name == "") {
			t.Errorf("%s: %q %v, want %v", file, name, err, wantErr)
		}
	}
	rep, _, _ = read(t, "../claims/testdata/big-tcp-merge.txt")
	if _, _, err := Choose(rep, nil, nil); !errors.Is(err, ErrNoScenario) {
		t.Errorf("no scenario to choose from: %v", err)
	}
}

// TestAttach: the claims of a message are set beside a result measured with a scenario: the
// message's sha256, the scenario and why, and one check per claim, matched on the scenario's
// facts (a claim of a metric the result has is measured; the table says each).
func TestAttach(t *testing.T) {
	s, err := scenarios.Parse("pair.yaml", []byte(fixture.PairScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("veth: faster\n\nBefore: 10 Gbit/s\nAfter: 11 Gbit/s\n")
	rep, err := claims.Read("msg.txt", msg)
	if err != nil || len(rep.Claims) != 1 {
		t.Fatalf("claims %+v %v", rep, err)
	}
	r := fixture.PairResult("nsp0001", "", "6.12", fixture.PairScenario, map[string][]float64{"off": {10, 10.1, 9.9, 10, 10.2, 9.8}, "on": {11, 11.1, 10.9, 11, 11.2, 10.8}})
	Attach(r, rep, "msg.txt", msg, s, "--scenario")
	rp := r.Reproduction
	if rp == nil || rp.Source != "msg.txt" || len(rp.SHA256) != 64 || rp.Scenario != "pair" || rp.Why != "--scenario" || len(rp.Claims) != 1 {
		t.Fatalf("reproduction %+v", rp)
	}
	if ch := rp.Claims[0]; ch.Measured == nil || ch.State != "on" || ch.Baseline != "off" || ch.Outcome == "" {
		t.Errorf("the claim's check: %+v", ch)
	}
	var b strings.Builder
	if err := (Report{Claims: rep, Result: r}).WriteText(&b); err != nil || !strings.Contains(b.String(), "+10.0%") || !strings.Contains(b.String(), "tcp4 on vs off") {
		t.Errorf("the table: %v\n%s", err, b.String())
	}
	if c, u := (Report{Claims: rep, Result: r}).Outcomes(); len(c)+len(u) != 0 || rp.Claims[0].Outcome != results.Reproduced {
		t.Errorf("+10%% against a decided +10%%: %s; contradicted %v, undecided %v", rp.Claims[0].Outcome, c, u)
	}

	// The same figures from kernels whose counting pass found the patch's function never
	// called: what moved is not the patch's doing, so the claim is not exercised, whichever
	// way the figures went.
	never := &results.Coverage{Functions: []results.FunctionCalls{{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c",
		Module: "openvswitch", Absent: "openvswitch.ko is not loaded", Calls: map[string]uint64{}}}}
	r.Kernels = []*results.Result{{Label: "base", Coverage: never}, {Label: "patched", Coverage: never}}
	Attach(r, rep, "msg.txt", msg, s, "--scenario")
	if ch := r.Reproduction.Claims[0]; ch.Outcome != results.NotExercised || !strings.Contains(ch.Reason, results.NotRun) || !strings.Contains(ch.Reason, "--scenario") {
		t.Errorf("a claim of code that did not run: %+v", ch)
	}
	if c, u := (Report{Claims: rep, Result: r}).Outcomes(); len(c)+len(u) != 0 {
		t.Errorf("not exercised counted as contradicted %v or undecided %v", c, u)
	}
}

// TestHardwareDrivers: a series of only NIC driver files is for its device; one that also
// changes the stack, or a virtual driver, is not.
func TestHardwareDrivers(t *testing.T) {
	for _, tc := range []struct {
		touched []string
		drivers string
		all     bool
	}{
		{[]string{"drivers/net/ethernet/mellanox/mlx5/core/en_tx.c", "drivers/net/ethernet/mellanox/mlx5/core/en.h"}, "drivers/net/ethernet/mellanox", true},
		{[]string{"drivers/net/ethernet/intel/ice/ice_main.c", "net/core/dev.c"}, "drivers/net/ethernet/intel", false},
		{[]string{"drivers/net/veth.c"}, "", false},
		{[]string{"arch/mips/include/asm/mach-lantiq/xway/xway_dma.h"}, "arch/mips", true},
		{[]string{"arch/x86/lib/csum-partial_64.c"}, "", false},
		{[]string{"arch/arm64/boot/dts/ti/k3-am64-main.dtsi"}, "arch/arm64/boot/dts/ti", true},
		{[]string{"drivers/net/ethernet/freescale/fec_main.c", "Documentation/networking/x.rst"}, "drivers/net/ethernet/freescale", true},
		// The drivers of NICs QEMU emulates run in a guest with a NIC pair.
		{[]string{"drivers/net/ethernet/intel/e1000e/netdev.c"}, "", false},
		{[]string{"drivers/net/ethernet/intel/e1000e/netdev.c", "drivers/net/ethernet/intel/ice/ice_main.c"}, "drivers/net/ethernet/intel", false},
		{[]string{"drivers/net/virtio_net.c"}, "", false},
	} {
		drivers, all := HardwareDrivers(tc.touched)
		if strings.Join(drivers, ",") != tc.drivers || all != tc.all {
			t.Errorf("%v: %v %v, want %s %v", tc.touched, drivers, all, tc.drivers, tc.all)
		}
	}
}

// TestBaseHint: the tree and the date a patch was posted for, from its mail.
func TestBaseHint(t *testing.T) {
	got := BaseHint([]patches.Patch{{Subject: "[PATCH net-next 5/5] tcp_cubic: tweak Hystart", Date: "Mon, 23 Dec 2019 12:27:54 -0800"}})
	if !strings.Contains(got, "for net-next on Mon, 23 Dec 2019") || !strings.Contains(got, "--source") {
		t.Errorf("%q", got)
	}
	if BaseHint([]patches.Patch{{}}) != "" {
		t.Errorf("a hint for a patch that says nothing of its base")
	}
}

// TestLacks: what a message's measurement had that a run here lacks, from what it names:
// programs nsperf does not drive (not the ones it drives), two hosts, a NIC; nothing for a
// message that names none. A word that only starts like a device name is none.
func TestLacks(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want []string
		not  []string
	}{
		{"veth: faster\n\nBetween both hosts, with trafgen on eth1:\nBefore: 3.6 Mpps\nAfter: 3.8 Mpps\n",
			[]string{"measured with trafgen, which nsperf does not drive (it drives iperf3, netperf", "between two hosts", "on the NIC eth1"}, nil},
		// pktgen and xdp-bench are driven (veth-pktgen, veth-xdp-bench): a message measured
		// with them lacks only its NIC.
		{"veth: faster\n\nwith pktgen on eth1 and xdp-bench:\nBefore: 3.6 Mpps\nAfter: 3.8 Mpps\n", []string{"on the NIC eth1"}, []string{"pktgen", "xdp-bench"}},
		{"tcp: x\n\n  ./neper/tcp_rr -c -H 10.0.0.1\n  perf top shows 0.76% -> 0.61%\n", []string{"neper, perf (a CPU profile)"}, nil},
		{"veth: x\n\niperf3 -c 10.0.0.1 gives 10 Gbit/s, ensuring nothing\n", nil, []string{"iperf3,", "ensuring"}},
	} {
		rep, err := claims.Read("msg.txt", []byte(c.msg))
		if err != nil {
			t.Fatal(err)
		}
		got := Lacks(rep)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", c.msg, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%q: %q says %q", c.msg, got, n)
			}
		}
		if c.want == nil && got != "" {
			t.Errorf("%q: %q, want nothing", c.msg, got)
		}
	}
}

// TestFactsOffloadsOff: a state is "offloads off" when it switches some feature off, not
// when it only switches features on.
func TestFactsOffloadsOff(t *testing.T) {
	for name, want := range map[string]map[string]bool{
		"veth-udp":     {"gro-off": true, "gro-on": false},
		"vxlan-bigtcp": {"off": false, "on": false, "sw-off": true, "sw-on": true},
	} {
		s, err := scenarios.Load(name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := Facts(s).OffloadsOff; !maps.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

// TestDraftFor: a message that toggles a sysctl no shipped scenario's states set is measured
// with the scenario drafted from it (a message in the layout of the one that added
// tcp_tso_rtt_log: echo 0, measured, echo 9, measured), and the reason names the sysctl; a message of device toggles (the BIG
// TCP merge) and one without toggles keep a shipped scenario.
func TestDraftFor(t *testing.T) {
	shipped, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	msg := "Subject: [PATCH net-next] tcp: TSO sizes from min_rtt\n\nBefore:\n~# echo 0 >/proc/sys/net/ipv4/tcp_tso_rtt_log\n" +
		"~# iperf3 -c 10.0.0.2\nthroughput: 96005 Mbit/s\n\nAfter:\n~# echo 9 >/proc/sys/net/ipv4/tcp_tso_rtt_log\n" +
		"~# iperf3 -c 10.0.0.2\nthroughput: 96046 Mbit/s\n"
	rep, err := claims.Read("msg.txt", []byte(msg))
	if err != nil || len(rep.Claims) != 1 {
		t.Fatalf("claims %+v %v", rep, err)
	}
	if why := DraftFor(rep, shipped); why != "the message toggles sysctl net.ipv4.tcp_tso_rtt_log, which no shipped scenario's states set: its toggles as the states of a drafted scenario" {
		t.Errorf("008: %q", why)
	}
	draft, err := Draft(rep, "008.txt", filepath.Join(t.TempDir(), "drafted.yaml"))
	if err != nil || !strings.Contains(string(draft), "client: {net.ipv4.tcp_tso_rtt_log: 9}") {
		t.Errorf("draft %v:\n%s", err, draft)
	}
	for _, seed := range []string{"../claims/testdata/big-tcp-merge.txt", "../patches/testdata/ovs-internal-port-tso-v2.mbox"} {
		rep, _, _ := read(t, seed)
		if why := DraftFor(rep, shipped); why != "" {
			t.Errorf("%s: %q", seed, why)
		}
	}
	// A shipped scenario whose states set the sysctl models the toggle.
	s := *shipped[0]
	s.States = []scenarios.State{{Name: "on", Settings: scenarios.Settings{"sysctls": scenarios.Sysctls{"client": {"net.ipv4.tcp_tso_rtt_log": "9"}}}}}
	if why := DraftFor(rep, []*scenarios.Scenario{&s}); why != "" {
		t.Errorf("with a scenario that sets it: %q", why)
	}
}

// TestChooseByTest: a claim measured with netperf's TCP_CRR goes to the scenario whose
// workload runs TCP_CRR with the claims' sizes (netperf's default: veth-netperf, not
// veth-initcwnd's 64 KiB responses), among the many whose traffic runs the patched connect
// path, and the reason says so.
func TestChooseByTest(t *testing.T) {
	shipped, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	rep := &claims.Report{Claims: []claims.Claim{{Tool: "netperf", Options: map[string]string{"test": "TCP_CRR"}, Metric: "throughput", Unit: "trans/s",
		Before: claims.Values{Median: 61234}, After: claims.Values{Median: 64120}}}}
	msg := "From: a <a@b>\nSubject: [PATCH net-next] tcp: cheaper connect\n\nnetperf -t TCP_CRR\n---\n" +
		"diff --git a/net/ipv4/tcp_ipv4.c b/net/ipv4/tcp_ipv4.c\n--- a/net/ipv4/tcp_ipv4.c\n+++ b/net/ipv4/tcp_ipv4.c\n" +
		"@@ -200,3 +200,3 @@ int tcp_v4_connect(struct sock *sk, struct sockaddr *uaddr, int addr_len)\n \ta();\n-\tb();\n+\tc();\n \td();\n"
	series, err := patches.Read("crr.patch", []byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	name, why, err := Choose(rep, series, shipped)
	if err != nil || name != "veth-netperf" || !strings.Contains(why, "its workload crr runs the claims' TCP_CRR with their sizes") {
		t.Errorf("%s (%s) %v", name, why, err)
	}
	rep.Claims[0].Options["sizes"] = "64,65536" // netperf -t TCP_CRR -- -r 64,65536
	name, why, err = Choose(rep, series, shipped)
	if err != nil || name != "veth-initcwnd" || !strings.Contains(why, "its workload crr-64k runs the claims' TCP_CRR with their sizes") {
		t.Errorf("with 64 KiB responses: %s (%s) %v", name, why, err)
	}
}

// TestChooseWholeWordsAndTies: a reference's words count only as whole words of the message
// ("bigger" is not "big"; "BIG TCP" is "bigtcp"), and a tie is said with the rule that broke
// it, never left to the list's order.
func TestChooseWholeWordsAndTies(t *testing.T) {
	parse := func(name, ref string, extraNS bool) *scenarios.Scenario {
		text := strings.Replace(fixture.PairScenario, "name: pair\n", "name: "+name+"\nreference: "+ref+"\n", 1)
		if extraNS {
			text = strings.Replace(text, "namespaces: [client, server]", "namespaces: [client, server, spare]", 1)
		}
		s, err := scenarios.Parse(name+".yaml", []byte(text), scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	choose := func(msg string, shipped ...*scenarios.Scenario) (string, string, error) {
		mail := "From: a <a@b>\nSubject: [PATCH] " + msg
		rep, err := claims.Read("m.mbox", []byte(mail))
		if err != nil {
			t.Fatal(err)
		}
		series, err := patches.Read("m.mbox", []byte(mail))
		if err != nil {
			t.Fatal(err)
		}
		return Choose(rep, series, shipped)
	}
	big := parse("big-one", "big-tcp.md", false)
	if name, why, err := choose("veth: bigger packets\n\nBefore: 10 Gbit/s\nAfter: 11 Gbit/s\n", big); err != nil && !errors.Is(err, ErrNoScenario) || strings.Contains(why, "shares") {
		t.Errorf("'bigger' matched 'big': %s (%s) %v", name, why, err)
	}
	if name, why, err := choose("veth: BIG TCP for veth\n\nBefore: 10 Gbit/s\nAfter: 11 Gbit/s\n", big); err != nil || name != "big-one" || !strings.Contains(why, "shares 2 word(s)") {
		t.Errorf("BIG TCP: %s (%s) %v, want big and tcp", name, why, err)
	}
	msg := "veth: BIG TCP\n\nBefore: 10 Gbit/s\nAfter: 11 Gbit/s\n"
	// Equally simple: the name decides, and the message says so, in either list order.
	for _, order := range [][]*scenarios.Scenario{{parse("zz", "big-tcp.md", false), parse("aa", "big-tcp.md", false)}, {parse("aa", "big-tcp.md", false), parse("zz", "big-tcp.md", false)}} {
		name, why, err := choose(msg, order...)
		if err != nil || name != "aa" || !strings.Contains(why, "it ties with zz: taken as first by name of the equally simple (give --scenario to take another)") {
			t.Errorf("a tie: %s (%s) %v", name, why, err)
		}
	}
	// A simpler one wins the tie, said as such.
	name, why, err := choose(msg, parse("aa", "big-tcp.md", true), parse("zz", "big-tcp.md", false))
	if err != nil || name != "zz" || !strings.Contains(why, "it ties with aa: taken as the simplest of them") {
		t.Errorf("a tie of unequal scenarios: %s (%s) %v", name, why, err)
	}
}

// TestScoredTerms: each term of the table scores what it names and says why: the merge
// message (no diff, netperf TCP_RR 80000/80000 in trans/s) against big-tcp-rr and the OVS
// patch against ovs-internal-tso, whose traffic runs the patched function.
func TestScoredTerms(t *testing.T) {
	for _, tc := range []struct {
		file, scenario string
		want           []int // points of runsPatch, sharesWords, runsTool, runsTest, measuresUnit, gatesMetric, setsNamed, records
	}{
		{"../claims/testdata/big-tcp-merge.txt", "big-tcp-rr", []int{0, 2, 1, 3, 2, 3, 2, 0}},
		{"../patches/testdata/ovs-internal-port-tso-v2.mbox", "ovs-internal-tso", []int{20, 4, 1, 0, 2, 0, 2, 0}},
		// A transfer's time in seconds, of a patch to TCP's loss recovery: the scenario whose
		// workload is a transfer of a fixed size over a lossy path.
		{"testdata/tcp-recovery-transfer.mbox", "veth-netem", []int{20, 0, 0, 0, 0, 3, 0, 0}},
		// A packet rate of pktgen's, of a patch to veth_xmit: the generator's frames are in pps,
		// the rate its workload is for.
		{"testdata/veth-xmit-pktgen.mbox", "veth-pktgen", []int{20, 0, 1, 0, 2, 3, 0, 0}},
		// A handshake's window with the client's route at initrwnd 64, of a patch to
		// tcp_select_initial_window: the scenario whose state sets initrwnd.
		{"testdata/initrwnd-handshake-window.mbox", "veth-initcwnd", []int{20, 0, 0, 0, 0, 0, 2, 3}},
	} {
		rep, series, _ := read(t, tc.file)
		s, err := scenarios.Load(tc.scenario, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := wantedBy(rep, series)
		for i, term := range scoredTerms {
			points, reason := term(s, w)
			if points != tc.want[i] || (points > 0) != (reason != "") {
				t.Errorf("%s, term %d: %d points (%q), want %d", tc.scenario, i, points, reason, tc.want[i])
			}
		}
	}
}

// TestVerdict: the claims' outcomes decide a reproduction: a contradicted claim over an
// undecided one, an undecided one over the reproduced; with no claim measured, why not (a
// patch's code that did not run first).
func TestVerdict(t *testing.T) {
	report := func(outcomes ...string) Report {
		rp := &results.Reproduction{}
		for i, o := range outcomes {
			rp.Claims = append(rp.Claims, results.ClaimCheck{Claim: i + 1, Outcome: o, Reason: "reason of " + o})
		}
		return Report{Result: &results.Result{Reproduction: rp}}
	}
	for _, tc := range []struct {
		outcomes     []string
		verdict, why string
	}{
		{[]string{results.Reproduced, results.NotReproducible}, Reproduced, ""},
		{[]string{results.Reproduced, results.Undecided, results.Contradicted, results.Undecided}, Contradicted, "claim(s) 3 contradicted"},
		{[]string{results.Undecided, results.Reproduced, results.Undecided}, Undecided, "claim(s) 1, 3 undecided"},
		{[]string{results.NotReproducible, results.NotExercised}, NotMeasured, "reason of " + results.NotExercised},
		{[]string{results.NotReproducible}, NotMeasured, "none of the claims can be set beside a measurement here"},
	} {
		if verdict, why := report(tc.outcomes...).Verdict(); verdict != tc.verdict || !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%v: %s (%s), want %s (%s)", tc.outcomes, verdict, why, tc.verdict, tc.why)
		}
	}
}
