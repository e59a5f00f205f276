package compare

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/fixture"
)

const scenarioText = fixture.PairScenario

// result makes a stored result of the scenario text with throughputs per state (Gbit/s).
var result = fixture.PairResult

var (
	baseOff = []float64{10.1, 9.8, 10.3, 10.0, 9.9, 10.2}
	baseOn  = []float64{12.0, 12.4, 11.8, 12.2, 12.1, 11.9}
	newOff  = []float64{8.1, 7.9, 8.3, 8.0, 7.8, 8.2}
	newOn   = []float64{12.1, 12.3, 11.9, 12.2, 12.0, 12.4}
)

// TestCompareDecidesAsRun: a state of one result against a state of another is decided by
// the same statistics as the two states within one run: the numbers are equal.
func TestCompareDecidesAsRun(t *testing.T) {
	both := result("nsp0001", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	var inRun results.Comparison
	for _, s := range both.Cases[0].Summaries {
		if s.State == "on" && s.Metric == results.Throughput {
			inRun = *s.Comparison
		}
	}
	a := result("nsp0002", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff})
	b := result("nsp0003", "", "6.18.44", scenarioText, map[string][]float64{"on": baseOn})
	rep, err := New([]Side{{Source: "a.json", Result: a}, {Source: "b.json", Result: b}}, Options{Pairs: []StatePair{{Base: "off", New: "on"}}})
	if err != nil {
		t.Fatal(err)
	}
	var across *results.Comparison
	for _, s := range rep.Result.Cases[0].Summaries {
		if s.State == "on@B" && s.Metric == results.Throughput {
			across = s.Comparison
		}
	}
	if across == nil {
		t.Fatalf("no comparison of on@B: %+v", rep.Result.Cases[0].Summaries)
	}
	inRun.Paired, inRun.Baseline, inRun.BaselineSide = nil, "off@A", results.SideOf{Side: "A", Of: "off"}
	if *across != inRun {
		t.Errorf("across runs %+v, within the run %+v", *across, inRun)
	}
	if across.Verdict != results.Improved {
		t.Errorf("verdict %s", across.Verdict)
	}
}

// TestCompareGolden: two kernels, every state by name, as table and markdown.
func TestCompareGolden(t *testing.T) {
	base := result("nsp0001", "base", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	patched := result("nsp0002", "patched", "6.19.0-rc1", scenarioText, map[string][]float64{"off": newOff, "on": newOn})
	rep, err := New([]Side{{Source: "base.json", Result: base}, {Source: "patched.json", Result: patched}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// As compare prints them (package render): the header, then the merged result.
	for format, write := range map[string]func(io.Writer, *results.Result) error{"table": results.Table, "markdown": results.Markdown} {
		var out bytes.Buffer
		rep.WriteHeader(&out, format == "markdown")
		if err := write(&out, rep.Result); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "kernels."+format+".golden"), out.String())
	}
	failures := rep.Result.Failures()
	if len(failures) != 1 || !strings.Contains(failures[0], "off@B vs off@A") {
		t.Errorf("failures %q, want the regression of off", failures)
	}
	env := strings.Join(rep.Environment, "\n")
	for _, want := range []string{"label differs: A base, B patched", "kernel release differs: A 6.18.44, B 6.19.0-rc1", "same: kernel version, cpu model, cpus, hostname"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
}

// TestCompareThreeResults: each result against the first, as benchstat does.
func TestCompareThreeResults(t *testing.T) {
	a := result("nsp0001", "", "k1", scenarioText, map[string][]float64{"off": baseOff})
	b := result("nsp0002", "", "k2", scenarioText, map[string][]float64{"off": newOff})
	c := result("nsp0003", "", "k3", scenarioText, map[string][]float64{"off": baseOff})
	rep, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}, {Source: "c", Result: c}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range rep.Result.Cases[0].Summaries {
		if s.Comparison != nil {
			got[s.State] = s.Comparison.Baseline + " " + s.Comparison.Verdict
		}
	}
	if got["off@B"] != "off@A regressed" || got["off@C"] != "off@A no significant change" || len(got) != 2 {
		t.Errorf("comparisons %v", got)
	}
}

// TestCompareRefusesOtherMeasurement: a topology or tool argument that differs is refused,
// naming the first difference, unless forced; a differing duration is only a warning.
func TestCompareRefusesOtherMeasurement(t *testing.T) {
	base := result("nsp0001", "", "k", scenarioText, map[string][]float64{"off": baseOff})
	for _, tc := range []struct{ name, from, to, want string }{
		{"topology", "b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}", "b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}\n        mtu: 9000", "topology.links[0].veth.mtu: 0 / 9000"},
		{"tool", "addr: 198.18.0.2}}", "addr: 198.18.0.2}, streams: 4}", "workloads.tcp4.iperf3.streams: 1 / 4"},
		{"state", "gso_max_size: 185000", "gso_max_size: 65536", "states.on.devices.client/eth0.gso_max_size: 185000 / 65536"},
		// Every setting of a state counts, not only its devices' limits.
		{"state sysctl", "devices: {client/eth0: {gso_max_size: 185000}}", "devices: {client/eth0: {gso_max_size: 185000}}\n    sysctls: {client: {net.ipv4.tcp_autocorking: 0}}", "states.on.sysctls.client: (not set) / {net.ipv4.tcp_autocorking: \"0\"}"},
		{"state route", "devices: {client/eth0: {gso_max_size: 185000}}", "devices: {client/eth0: {gso_max_size: 185000}}\n    routes: {server: {198.18.0.0/24: {initcwnd: 64}}}", "states.on.routes.server"},
		{"clients", "  - name: tcp4\n", "  - name: tcp4\n    clients: [{cpu: 0}, {cpu: 1}]\n", "workloads.tcp4.clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(scenarioText, tc.from, tc.to, 1)
			if text == scenarioText {
				t.Fatal("the edit changed nothing")
			}
			other := result("nsp0002", "", "k", text, map[string][]float64{"off": newOff, "on": newOn})
			if strings.HasPrefix(tc.name, "state") {
				base = result("nsp0001", "", "k", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
			}
			sides := []Side{{Source: "a", Result: base}, {Source: "b", Result: other}}
			rep, err := New(sides, Options{})
			var inc *IncomparableError
			if !errors.As(err, &inc) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want the difference %q", err, tc.want)
			}
			if rep == nil || !strings.Contains(rep.ScenarioDiff, "+") {
				t.Errorf("no scenario diff with the refusal")
			}
			rep, err = New(sides, Options{Force: true})
			if err != nil || rep.Result == nil || !strings.Contains(strings.Join(rep.Warnings, "\n"), "--force") {
				t.Fatalf("--force: %v %+v", err, rep)
			}
		})
	}
	longer := strings.Replace(scenarioText, "addr: 198.18.0.2}}", "addr: 198.18.0.2}, duration: 20s}", 1)
	other := result("nsp0002", "", "k", longer, map[string][]float64{"off": newOff})
	other.Settings.RunLength = map[string]string{"tcp4": "22s"}
	rep, err := New([]Side{{Source: "a", Result: base}, {Source: "b", Result: other}}, Options{})
	if err != nil {
		t.Fatalf("a longer duration is method, not another measurement: %v", err)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "a run of workload tcp4 takes 12s in A, 22s in B") {
		t.Errorf("warnings %q", w)
	}
}

// TestCompareStateNotes: a state a side lacks is a clear error naming what it has.
func TestCompareStateNotes(t *testing.T) {
	a := result("nsp0001", "", "k", scenarioText, map[string][]float64{"off": baseOff})
	b := result("nsp0002", "", "k", scenarioText, map[string][]float64{"on": newOn})
	if _, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, Options{}); err == nil || !strings.Contains(err.Error(), "--state") {
		t.Errorf("no common state: %v", err)
	}
	if _, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, Options{Pairs: []StatePair{{Base: "off", New: "of"}}}); err == nil || !strings.Contains(err.Error(), `B has no state "of" (it has: on)`) {
		t.Errorf("unknown state: %v", err)
	}
}

// TestNothingComparedFails: a comparison that compares nothing is an error naming what is
// missing, never a pass: no samples, only failed ones, a metric no result has, no shared
// workload.
func TestNothingComparedFails(t *testing.T) {
	base := func() *results.Result {
		return result("nsp0001", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	}
	empty := base()
	empty.Cases[0].Samples = nil
	failed := base()
	for i := range failed.Cases[0].Samples {
		failed.Cases[0].Samples[i].Error, failed.Cases[0].Samples[i].Metrics = "iperf3 client timed out", nil
	}
	other := base()
	for i := range other.Cases[0].Samples {
		other.Cases[0].Samples[i].Workload = "tcp6"
	}
	for _, tc := range []struct {
		name  string
		new   *results.Result
		opt   Options
		wants string
	}{
		{"no samples", empty, Options{}, "B (new) has no successful sample"},
		{"all failed", failed, Options{}, "B (new) has no successful sample"},
		{"no such metric", base(), Options{Metrics: []string{"nonexistent"}}, "no metric nonexistent in A (it has: throughput)"},
		{"no shared workload", other, Options{}, "no workload is measured in every result's paired states"},
	} {
		_, err := New([]Side{{Source: "base", Result: base()}, {Source: "new", Result: tc.new}}, tc.opt)
		var nothing *NothingComparedError
		if !errors.As(err, &nothing) || !strings.Contains(err.Error(), tc.wants) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.wants)
		}
	}
	if _, err := New([]Side{{Source: "base", Result: base()}, {Source: "new", Result: base()}}, Options{}); err != nil {
		t.Errorf("a real comparison: %v", err)
	}
}

// TestStaleScenarioHash: a text edited after its run, with the old hash left in place, is
// compared as the text it is: the MTU it now names is a difference, and reading the file
// recomputes the hash with a warning.
func TestStaleScenarioHash(t *testing.T) {
	a := result("nsp0001", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	b := result("nsp0002", "", "6.18.44", scenarioText, map[string][]float64{"off": newOff, "on": newOn})
	b.Scenario.Text = strings.Replace(scenarioText, "b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}", "b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}\n        mtu: 9000", 1)
	rep, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, Options{})
	var incomparable *IncomparableError
	if !errors.As(err, &incomparable) || !strings.Contains(err.Error(), "mtu") || rep == nil || !strings.Contains(rep.ScenarioDiff, "mtu: 9000") {
		t.Errorf("an edited text with a stale hash: %v", err)
	}
	path := filepath.Join(t.TempDir(), "b.json")
	if err := results.WriteFile(path, b); err != nil {
		t.Fatal(err)
	}
	back, warnings, err := results.ReadFile(path)
	if err != nil || back.Scenario.SHA256 == a.Scenario.SHA256 || len(warnings) != 1 || !strings.Contains(warnings[0], "does not match its text") {
		t.Errorf("read back: %v, warnings %v", err, warnings)
	}
}

func TestSideName(t *testing.T) {
	for i, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := SideName(i); got != want {
			t.Errorf("SideName(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestMissingStateIsNotForceable: a state that is not in a result cannot be compared with
// --force either, and the message does not say it can.
func TestMissingStateIsNotForceable(t *testing.T) {
	a := result("nsp0001", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	b := result("nsp0002", "", "6.18.44", scenarioText, map[string][]float64{"off": newOff, "on": newOn})
	_, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, Options{Pairs: []StatePair{{Base: "on", New: "nonexistent"}}, Force: true})
	var incomparable *IncomparableError
	if !errors.As(err, &incomparable) || incomparable.Forceable || strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), `has no state "nonexistent"`) {
		t.Errorf("a missing state with --force: %v", err)
	}
}

// TestSystemDifferences: how the machines were tuned (nsperf check's items, stored in each
// result) is listed where it differs.
func TestSystemDifferences(t *testing.T) {
	a := result("nsp0001", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	b := result("nsp0002", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	a.Environment.System = []results.SystemFact{{Name: "CPU governor", Value: "performance", OK: true}, {Name: "turbo", Value: "off", OK: true}}
	b.Environment.System = []results.SystemFact{{Name: "CPU governor", Value: "CPU 0 powersave"}, {Name: "turbo", Value: "off", OK: true}}
	rep, err := New([]Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(rep.Environment, "\n")
	if !strings.Contains(env, "CPU governor differs: A performance, B CPU 0 powersave") || strings.Contains(env, "turbo differs") {
		t.Errorf("environment:\n%s", env)
	}
}

// TestCompareSideMetrics: compare lists the counters that moved between the results' states
// (across kernels too), from the stored samples' counters.
func TestCompareSideMetrics(t *testing.T) {
	a, b := counted("nsp0001", "6.18.44", 100), counted("nsp0002", "6.19.0", 300)
	rep, err := New([]Side{{Source: "a.json", Result: a}, {Source: "b.json", Result: b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range rep.Result.Cases {
		for _, m := range c.SideMetrics {
			if m.Counter == "ns server TcpExtTCPOFOQueue" && m.State == "off@B" && m.Baseline == "off@A" {
				found = true
			}
			if m.Counter == "client/eth0 tx_packets" {
				t.Errorf("a counter that did not move is listed: %+v", m)
			}
		}
	}
	if !found {
		t.Errorf("no side metric for TcpExtTCPOFOQueue off@B vs off@A: %+v", rep.Result.Cases[0].SideMetrics)
	}
}

// withCPU records the guest's -cpu in a result.
func withCPU(r *results.Result, model string) *results.Result {
	r.Environment.VM.CPU = model
	return r
}

// counted is a result whose samples carry counters: server's TcpExtTCPOFOQueue moves by ofo
// (plus the round) per sample, client/eth0 sends 1000 packets whatever the state.
func counted(id, kernel string, ofo uint64) *results.Result {
	r := result(id, kernel, kernel, scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	for i := range r.Cases[0].Samples {
		s := &r.Cases[0].Samples[i]
		s.Counters = &results.Counters{
			Devices:    map[string]results.DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000}},
			Namespaces: map[string]map[string]uint64{"server": {"TcpExtTCPOFOQueue": ofo + uint64(s.Round)}},
		}
	}
	r.Recompute()
	return r
}

// TestCompareRefusesOtherClock: virtual-time figures count instructions; they compare only
// with figures of the same clock, icount options, QEMU and guest CPU model (exit 2 without
// --force).
func TestCompareRefusesOtherClock(t *testing.T) {
	guest := func(id, clock, icount, qemu string) *results.Result {
		r := result(id, "", "6.12", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
		r.Environment.VM = &results.VMInfo{Accel: "tcg", QEMU: qemu, Clock: clock, Icount: icount}
		return r
	}
	virtual := guest("nsp0001", "virtual", "shift=2,sleep=off,align=off", "7.2.22")
	for _, tc := range []struct {
		name  string
		other *results.Result
		want  string
	}{
		{"wall guest", guest("nsp0002", "wall", "", "7.2.22"), "clock: virtual in A, wall in B"},
		{"recorded before clocks", guest("nsp0002", "", "", "7.2.22"), "clock: virtual in A, wall in B"},
		{"host", result("nsp0002", "", "6.18", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn}), "clock: virtual in A, wall in B"},
		{"icount", guest("nsp0002", "virtual", "shift=3,sleep=off,align=off", "7.2.22"), "icount options: shift=2,sleep=off,align=off in A, shift=3,sleep=off,align=off in B"},
		{"qemu", guest("nsp0002", "virtual", "shift=2,sleep=off,align=off", "8.2.0"), "QEMU version in virtual time: 7.2.22 in A, 8.2.0 in B"},
		{"cpu", withCPU(guest("nsp0002", "virtual", "shift=2,sleep=off,align=off", "7.2.22"), "qemu64,-cx16"), "guest CPU in virtual time: QEMU's default (qemu64) in A, qemu64,-cx16 in B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sides := []Side{{Source: "a", Result: virtual}, {Source: "b", Result: tc.other}}
			_, err := New(sides, Options{})
			var inc *IncomparableError
			if !errors.As(err, &inc) || !inc.Forceable || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want the difference %q", err, tc.want)
			}
			rep, err := New(sides, Options{Force: true})
			if err != nil || !strings.Contains(strings.Join(rep.Warnings, "\n"), tc.want) {
				t.Fatalf("--force: %v, warnings %v", err, rep.Warnings)
			}
		})
	}
	same := guest("nsp0002", "virtual", "shift=2,sleep=off,align=off", "7.2.22")
	if _, err := New([]Side{{Source: "a", Result: virtual}, {Source: "b", Result: same}}, Options{}); err != nil {
		t.Errorf("the same clock: %v", err)
	}
	if key := results.ClockOf(withCPU(guest("nsp0002", "virtual", "shift=2,sleep=off,align=off", "7.2.22"), "qemu64,-cx16")).Key(); key != "virtual icount=shift=2,sleep=off,align=off qemu=7.2.22 cpu=qemu64,-cx16" {
		t.Errorf("clock key %q", key)
	}
	if key := results.ClockOf(virtual).Key(); key != "virtual icount=shift=2,sleep=off,align=off qemu=7.2.22" {
		t.Errorf("the key of a result without a CPU model changed: %q", key)
	}
	wallGuest, host := guest("nsp0003", "wall", "", "7.2.22"), result("nsp0004", "", "6.18", scenarioText, map[string][]float64{"off": baseOff, "on": baseOn})
	if _, err := New([]Side{{Source: "a", Result: wallGuest}, {Source: "b", Result: host}}, Options{}); err != nil {
		t.Errorf("a wall-clock guest and a host: %v", err)
	}
}

// TestCompareNamesThePatch: two stored runs of kernels nsperf built (the base and the patched
// kernel of a series, taken from the history as two runs) say in the header which was built
// with the series and which without, by its subject.
func TestCompareNamesThePatch(t *testing.T) {
	a := result("nsp0001", "base", "6.12.118", scenarioText, map[string][]float64{"off": baseOff})
	b := result("nsp0002", "patched", "6.12.118", scenarioText, map[string][]float64{"off": newOff})
	for i, r := range []*results.Result{a, b} {
		r.Build = &results.KernelBuild{Patched: i == 1, Build: results.Build{Mode: "whole", Config: "minimal", Patches: []results.BuildPatch{{Subject: "[PATCH] tcp: two segments", SHA256: "ab"}}}}
	}
	b.Reproduction = &results.Reproduction{Source: "tcp.mbox", Scenario: "tcp-tso", Claims: []results.ClaimCheck{{Claim: 1, Metric: "throughput", Lines: []int{12}, ClaimedChange: -0.5, Outcome: results.Undecided}}}
	rep, err := New([]Side{{Source: "history", Result: a}, {Source: "history", Result: b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var head strings.Builder
	rep.WriteHeader(&head, false)
	for _, want := range []string{`label base, kernel 6.12.118, built without "[PATCH] tcp: two segments"`, `label patched, kernel 6.12.118, built with "[PATCH] tcp: two segments"`,
		"B: claimed by tcp.mbox", "B: claim 1 (lines 12) throughput: claimed -50.0%; measured nothing that stands for it: undecided"} {
		if !strings.Contains(head.String(), want) {
			t.Errorf("the header lacks %q:\n%s", want, head.String())
		}
	}
}

// TestMergedSides: the merged result of two runs places every state, sample and summary on
// its side with its own name (results.SideOf), and each comparison its baseline: STATE@SIDE
// is only the name shown.
func TestMergedSides(t *testing.T) {
	a := result("nsp0002", "", "6.18.44", scenarioText, map[string][]float64{"off": baseOff})
	b := result("nsp0003", "", "6.18.44", scenarioText, map[string][]float64{"on": baseOn})
	rep, err := New([]Side{{Source: "a.json", Result: a}, {Source: "b.json", Result: b}}, Options{Pairs: []StatePair{{Base: "off", New: "on"}}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Result.Cases[0]
	want := map[string]results.SideOf{"off@A": {Side: "A", Of: "off"}, "on@B": {Side: "B", Of: "on"}}
	for _, st := range c.States {
		if st.SideOf != want[st.Name] {
			t.Errorf("state %s: %+v", st.Name, st.SideOf)
		}
	}
	for _, s := range c.Samples {
		if s.SideOf != want[s.State] {
			t.Errorf("sample of %s: %+v", s.State, s.SideOf)
		}
	}
	for _, s := range c.Summaries {
		if s.SideOf != want[s.State] || (s.Comparison != nil && s.Comparison.BaselineSide != want["off@A"]) {
			t.Errorf("summary of %s: %+v, baseline %+v", s.State, s.SideOf, s.Comparison)
		}
	}
}
