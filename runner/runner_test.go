package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/iperf3"
	"github.com/nsperf/nsperf/runner/netperf"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

func TestSchedule(t *testing.T) {
	states := []string{"A", "B"}
	if got, want := Schedule(states, 3, scenarios.OrderAlternate, 0), [][]string{{"A", "B"}, {"A", "B"}, {"A", "B"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("alternate: %v", got)
	}
	if got, want := Schedule(states, 4, scenarios.OrderABBA, 0), [][]string{{"A", "B"}, {"B", "A"}, {"A", "B"}, {"B", "A"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("abba: %v", got)
	}
	three := []string{"A", "B", "C"}
	r1 := Schedule(three, 20, scenarios.OrderRandom, 42)
	if r2 := Schedule(three, 20, scenarios.OrderRandom, 42); !reflect.DeepEqual(r1, r2) {
		t.Error("random order is not reproducible from its seed")
	}
	if r3 := Schedule(three, 20, scenarios.OrderRandom, 43); reflect.DeepEqual(r1, r3) {
		t.Error("random order ignores its seed")
	}
	firsts := map[string]bool{}
	for _, round := range r1 {
		got := append([]string(nil), round...)
		sort.Strings(got)
		if !reflect.DeepEqual(got, three) {
			t.Fatalf("round %v is not a permutation of %v", round, three)
		}
		firsts[round[0]] = true
	}
	if len(firsts) < 2 {
		t.Errorf("20 random rounds all start with the same state: %v", r1)
	}
}

func load(t testing.TB) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load(scenarios.DefaultScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func short(t testing.TB, runs int, duration time.Duration) *scenarios.Scenario {
	s := load(t)
	if err := (scenarios.Overrides{Runs: runs, Duration: duration, Omit: 0}).Apply(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScriptGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "veth-bigtcp.sh.golden"), Script(load(t), "nsp0000", topo.PlanFacts()))
}

// TestRunTwoStates is the foundation's whole path: build, alternate two states, iperf3 over
// IPv4 and IPv6 on pinned CPUs, journal, result, teardown.
func TestRunTwoStates(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	out := filepath.Join(t.TempDir(), "r.json")
	var progress strings.Builder
	r, err := Run(context.Background(), short(t, 2, time.Second), Options{Machine: host.Machine{}, Out: out, Progress: &progress})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	stored, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Environment.System) < 9 { // how the machine was tuned, as nsperf check says
		t.Errorf("environment.system: %+v", stored.Environment.System)
	}
	if !stored.Complete || stored.RunID != r.RunID || stored.Scenario.SHA256 == "" || stored.Environment.Tools["iperf3"] == "" {
		t.Errorf("result header: complete %v run %s sha %q tools %v", stored.Complete, stored.RunID, stored.Scenario.SHA256, stored.Environment.Tools)
	}
	c := stored.Cases[0]
	if len(c.Samples) != 8 {
		t.Fatalf("%d samples, want 2 runs x 2 states x 2 workloads", len(c.Samples))
	}
	// Timings of the harness itself: each state's application, and the time to the first
	// measurement (values are reported, never asserted).
	if stored.FirstSampleSeconds <= 0 || len(c.States[0].ApplySeconds) == 0 || c.Samples[0].Noise == nil {
		t.Errorf("first sample after %gs, state apply times %v, noise %+v", stored.FirstSampleSeconds, c.States[0].ApplySeconds, c.Samples[0].Noise)
	}
	for _, s := range c.Samples {
		if s.Error != "" {
			t.Errorf("sample failed: %s: %s", s.Error, s.Stderr)
		}
		if v, ok := s.Value(results.Throughput); !ok || v <= 0 {
			t.Errorf("sample %s/%s round %d: throughput %v", s.State, s.Workload, s.Round, v)
		}
		if !strings.Contains(strings.Join(s.Argv, " "), "-A 0 --cport 40000") {
			t.Errorf("client not pinned or port not fixed: %v", s.Argv)
		}
	}
	// Alternating: the samples of each round run off then on.
	var order []string
	for _, s := range c.Samples {
		if s.Workload == "tcp4" {
			order = append(order, s.State)
		}
	}
	if strings.Join(order, " ") != "off on off on" {
		t.Errorf("state order %v, want off on off on", order)
	}
	want := map[string]uint64{"off": 65536, "on": 185000}
	for _, st := range c.States {
		for _, ref := range []string{"client/eth0", "server/eth0"} {
			d := st.Devices[ref]
			for _, k := range []string{"gso_max_size", "gro_max_size", "gso_ipv4_max_size", "gro_ipv4_max_size"} {
				if d[k] != want[st.Name] {
					t.Errorf("state %s %s %s = %d, want %d", st.Name, ref, k, d[k], want[st.Name])
				}
			}
			if d["tso_max_size"] != 524280 || d["tso_max_segs"] == 0 {
				t.Errorf("state %s %s: tso_max_size/segs not recorded: %v", st.Name, ref, d)
			}
		}
	}
	n := 0
	for _, s := range c.Summaries {
		if s.Metric == results.Throughput {
			n++
			if s.Stats.N != 2 || s.Stats.CV <= 0 || (s.State == "on") != (s.Comparison != nil) {
				t.Errorf("summary %+v", s)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d throughput summaries, want 2 workloads x 2 states", n)
	}
	journal, _, err := results.ReadJournal(out + ".journal")
	if err != nil || len(journal.Cases[0].Samples) != 8 {
		t.Errorf("journal: %v, %v", journal, err)
	}
	if !strings.Contains(progress.String(), "[8/8] round 2/2") {
		t.Errorf("progress lacks the last line:\n%s", progress.String())
	}
}

// TestFailedToolIsRecorded: a client that fails is a recorded sample with its stderr, the run
// says so, and nothing is left behind (the one-off server is stopped).
func TestFailedToolIsRecorded(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	fake := filepath.Join(t.TempDir(), "iperf3")
	real, _ := exec.LookPath("iperf3")
	script := "#!/bin/sh\ncase \"$1\" in -s|--version) exec " + real + " \"$@\";; esac\necho 'iperf3: error - simulated client failure' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := short(t, 1, time.Second)
	out := filepath.Join(t.TempDir(), "r.json")
	r, err := Run(context.Background(), s, Options{Out: out, ServerTimeout: 5 * time.Second, Machine: substitute(iperf3.Binary, fake)})
	if !errors.Is(err, ErrRunsFailed) {
		t.Fatalf("Run: %v, want ErrRunsFailed", err)
	}
	samples := r.Cases[0].Samples
	if len(samples) != 4 {
		t.Fatalf("%d samples, want every failed run recorded (4)", len(samples))
	}
	for _, s := range samples {
		if s.Error == "" || !strings.Contains(s.Stderr, "simulated client failure") {
			t.Errorf("sample: error %q stderr %q", s.Error, s.Stderr)
		}
	}
	if stored, _, err := results.ReadFile(out); err != nil || len(stored.Cases[0].Samples) != 4 {
		t.Errorf("stored result: %v", err)
	}
}

// TestPlanScriptRuns proves that `nsperf plan` output is a runnable script: it builds the
// topology with ip, applies the states (recreating a vxlan over its lower device), runs
// iperf3, and cleans up after itself.
func TestPlanScriptRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results int // 1 run x states x workloads
	}{{"veth-bigtcp", 4}, {"vxlan-lowerdev", 2}, {"big-tcp-rr", 2}, {"veth-clients", 6}} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.RootTest(t, runstate.Dir, "iperf3", "netperf")
			s, err := scenarios.Load(tc.name, scenarios.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := (scenarios.Overrides{Runs: 1, Duration: time.Second, Omit: 0}).Apply(s); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(t.TempDir(), "plan.sh")
			if err := os.WriteFile(script, []byte(Script(s, plan.NewRunID(), topo.PlanFacts())), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("sh", script).CombinedOutput()
			if err != nil {
				t.Fatalf("plan script: %v\n%s", err, out)
			}
			// One "sum_received" per iperf3 result, one "MIGRATED ... TEST" per netperf result.
			if n := strings.Count(string(out), `"sum_received"`) + strings.Count(string(out), "MIGRATED "); n != tc.results {
				t.Errorf("plan script printed %d results, want %d:\n%.2000s", n, tc.results, out)
			}
		})
	}
}

// TestPlanScriptHoldsItsRun: a plan script holds its run's lock as nsperf's run does, so that
// nsperf cleanup beside it (another user's, another test's) leaves its namespaces alone and
// the script measures to its end; a second script of the same run refuses to start and
// touches nothing. (A cleanup once deleted a script's namespaces under it, and the script
// then waited for ever for a server in a namespace that was gone.)
func TestPlanScriptHoldsItsRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3", "flock")
	s, err := scenarios.Load("veth-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (scenarios.Overrides{Runs: 1, Duration: 2 * time.Second, Omit: 0}).Apply(s); err != nil {
		t.Fatal(err)
	}
	id := plan.NewRunID()
	script := filepath.Join(t.TempDir(), "plan.sh")
	if err := os.WriteFile(script, []byte(Script(s, id, topo.PlanFacts())), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command("sh", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	client := filepath.Join(runstate.NetnsDir, id.Namespace("client"))
	for seen := false; !seen; {
		select {
		case err := <-done:
			t.Fatalf("the script ended before its topology was seen: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
			_, err := os.Stat(client)
			seen = err == nil
		}
	}
	if !runstate.Alive(id) {
		t.Error("the script's run is not alive while it runs")
	}
	left, err := topo.FindLeftovers(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		if l.RunID == id {
			t.Errorf("cleanup would remove the live script's run: %+v", l)
		}
	}
	second, err := exec.Command("sh", script).CombinedOutput()
	if err == nil || !strings.Contains(string(second), "run "+string(id)+" is in progress") {
		t.Errorf("a second script of the run: %v\n%s", err, second)
	}
	if _, err := os.Stat(client); err != nil {
		t.Errorf("the refused second script touched the first's namespace: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("plan script: %v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), `"sum_received"`); n != 4 {
		t.Errorf("%d results, want 4:\n%.2000s", n, out.String())
	}
	if _, err := os.Stat(runstate.LockPath(id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the script left its lock file: %v", err)
	}
}

// TestVxlanRun: traffic over vxlan overlays, IPv4 and IPv6 inside, over IPv4 and IPv6
// underlays; an optional state the kernel refuses is reported unavailable, the others are
// measured; the report says what the recreated vxlan inherited.
func TestVxlanRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	s, err := scenarios.Load("../topo/testdata/vxlan.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	if len(c.Samples) != 8 {
		t.Fatalf("%d samples, want 4 workloads x 2 available states", len(c.Samples))
	}
	for _, s := range c.Samples {
		if v, _ := s.Value(results.Throughput); s.Error != "" || v <= 0 {
			t.Errorf("%s/%s: %v %s", s.State, s.Workload, v, s.Error)
		}
	}
	if c.States[2].Unavailable != "tx-udp_tnl-segmentation is fixed off on a/vx6" {
		t.Errorf("state fixed: unavailable %q", c.States[2].Unavailable)
	}
	var table strings.Builder
	results.Table(&table, r)
	for _, want := range []string{"unavailable", "inheritance: a/vx4 over a/eth0", "gso_max_size        lower 65536 / 16000"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

// TestMatrixRun: each case is built, measured and torn down in turn; the result has one case
// per matrix value, each with the MTU it asked for.
func TestMatrixRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	s, err := scenarios.Load("testdata/matrix.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cases) != 2 {
		t.Fatalf("%d cases", len(r.Cases))
	}
	for i, mtu := range []uint64{1500, 9000} {
		c := r.Cases[i]
		if c.Label != fmt.Sprintf("mtu=%d", mtu) || c.Matrix["mtu"] != fmt.Sprint(mtu) || len(c.Samples) != 2 {
			t.Errorf("case %d: label %q matrix %v, %d samples", i, c.Label, c.Matrix, len(c.Samples))
		}
		if got := c.States[0].Devices["server/eth0"]["mtu"]; got != mtu {
			t.Errorf("case %s: server/eth0 mtu %d", c.Label, got)
		}
	}
	var table strings.Builder
	results.Table(&table, r)
	if !strings.Contains(table.String(), "[mtu=1500]") || !strings.Contains(table.String(), "[mtu=9000]") {
		t.Errorf("table has no row group per case:\n%s", table.String())
	}
	if !strings.Contains(progress.String(), "[4/4] [mtu=9000] round 1/1") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

// TestOVSRun: TCP over IPv4 and IPv6 through a private OVS (internal port -> bridge -> veth);
// the OVS in use and the userspace datapath's caveat are in the result.
func TestOVSRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3", "ovs-vswitchd")
	s, err := scenarios.Load("../topo/testdata/ovs.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json")})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	byWorkload := map[string]float64{}
	for _, s := range c.Samples {
		if s.Error != "" {
			t.Errorf("%s/%s: %s %s", s.State, s.Workload, s.Error, s.Stderr)
		}
		byWorkload[s.Workload], _ = s.Value(results.Throughput)
	}
	if byWorkload["tcp4"] <= 0 || byWorkload["tcp6"] <= 0 {
		t.Errorf("throughput through OVS: %v", byWorkload)
	}
	if o := r.Environment.OVS; o == nil || o.Version == "" || o.Instance != "private" || o.Datapath == "" {
		t.Fatalf("environment.ovs = %+v", o)
	}
	if r.Environment.OVS.Datapath == "netdev" {
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "TSO, is off on ovs/int0, server/eth0") {
			t.Errorf("warnings: %v", r.Warnings)
		}
		if c.States[1].Unavailable == "" {
			t.Errorf("state on applied on a tap internal port: %+v", c.States[1])
		}
	}
}

// TestNetperfRun: netperf tests between namespaces, each with every metric it was asked for,
// one netserver per namespace and port, none left afterwards.
func TestNetperfRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "netperf")
	s, err := scenarios.Load("testdata/netperf.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"stream4": {"throughput bit/s"},
		"rr6":     {"throughput trans/s", "min_latency us", "p90_latency us", "p99_latency us"},
		"crr4":    {"throughput trans/s", "mean_latency us"},
		"udprr6":  {"throughput trans/s", "min_latency us", "p90_latency us", "p99_latency us"},
	}
	c := r.Cases[0]
	if len(c.Samples) != 8 {
		t.Fatalf("%d samples, want 4 workloads x 2 states", len(c.Samples))
	}
	for _, s := range c.Samples {
		if s.Error != "" || s.Row == "" {
			t.Errorf("%s/%s: error %q row %q\n%s", s.State, s.Workload, s.Error, s.Row, s.Output)
			continue
		}
		var got []string
		for _, m := range s.Metrics {
			if m.Value <= 0 {
				t.Errorf("%s/%s: %s = %v", s.State, s.Workload, m.Name, m.Value)
			}
			got = append(got, m.Name+" "+m.Unit)
		}
		sort.Strings(got)
		w := append([]string(nil), want[s.Workload]...)
		sort.Strings(w)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: metrics %v, want %v", s.Workload, got, w)
		}
	}
	if v := r.Environment.Tools["netperf"]; v == "" {
		t.Error("netperf version not recorded")
	}
}

// TestNetperfFailureRecorded: a netperf that fails is a recorded sample with its error, and
// the netserver does not outlive the run.
func TestNetperfFailureRecorded(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "netperf")
	fake := filepath.Join(t.TempDir(), "netperf")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'establish control: are you sure there is a netserver listening on 198.18.0.2 at port 12865?'\nexit 255\n"), 0o755)
	s, err := scenarios.Load("big-tcp-rr", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	(scenarios.Overrides{Runs: 1, Duration: time.Second, Omit: -1}).Apply(s)
	r, err := Run(context.Background(), s, Options{Out: filepath.Join(t.TempDir(), "r.json"), Machine: substitute(netperf.Binary, fake)})
	if !errors.Is(err, ErrRunsFailed) || len(r.Cases[0].Samples) != 2 {
		t.Fatalf("Run: %v", err)
	}
	for _, s := range r.Cases[0].Samples {
		if !strings.Contains(s.Error, "are you sure there is a netserver") {
			t.Errorf("sample error %q", s.Error)
		}
	}
}

// TestMissingToolIsACapability: a scenario whose tool is not installed is refused before
// anything is built (exit 4), with the way to install it.
func TestMissingToolIsACapability(t *testing.T) {
	s, err := scenarios.Load("big-tcp-rr", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{missing: []string{netperf.Binary}}
	_, err = Run(context.Background(), s, Options{Out: filepath.Join(t.TempDir(), "r.json"), Machine: m})
	var capErr *capability.Error
	if !errors.As(err, &capErr) || !strings.Contains(err.Error(), "netperf is not installed (Debian: apt-get install netperf; netperf is in Debian's non-free component") || m.builds != 0 {
		t.Fatalf("Run: %v", err)
	}
}

// calibration loads testdata/calibration.yaml with the token bucket at rate.
func calibration(t *testing.T, rate string) *scenarios.Scenario {
	t.Helper()
	data, err := os.ReadFile("testdata/calibration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Parse("calibration.yaml", []byte(strings.Replace(string(data), "RATE", rate, 1)), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func throughputComparison(t *testing.T, r *results.Result) results.Comparison {
	t.Helper()
	for _, s := range r.Cases[0].Summaries {
		if s.Metric == results.Throughput && s.Comparison != nil {
			return *s.Comparison
		}
	}
	t.Fatalf("no throughput comparison in %+v", r.Cases[0].Summaries)
	return results.Comparison{}
}

// TestCalibration: an effect of known size is found, and no effect where there is none. A
// token bucket at a quarter of the measured throughput is reported regressed and significant
// (at about -75%: far more than a busy machine takes off an uncapped run, which halved one
// here while another job installed packages); an A/A run (the baseline against itself)
// reports no significant change.
func TestCalibration(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	dir := t.TempDir()

	// What the link does here, now.
	probe := calibration(t, "1gbit")
	probe.States = probe.States[:1]
	probe.Runs = 2
	r, err := Run(context.Background(), probe, Options{Machine: host.Machine{}, Out: filepath.Join(dir, "probe.json")})
	if err != nil {
		t.Fatal(err)
	}
	baseline := r.Cases[0].Summaries[0].Centre.Median
	quarter := uint64(baseline/4/1e6) * 1e6

	r, err = Run(context.Background(), calibration(t, fmt.Sprintf("%dbit", quarter)), Options{Machine: host.Machine{}, Out: filepath.Join(dir, "capped.json")})
	if err != nil {
		t.Fatal(err)
	}
	c := throughputComparison(t, r)
	if c.Verdict != results.Regressed || c.P > 0.05 || c.Change > -0.4 || c.Change < -0.95 {
		t.Errorf("cap at %d bit/s of %.0f: %+v; want regressed, significant, about -75%%", quarter, baseline, c)
	}
	if q := r.Cases[0].States[1].Qdiscs["client/eth0"]; !strings.HasPrefix(q, "tbf rate ") {
		t.Errorf("capped state's qdisc read back as %q", q)
	}
	if q := r.Cases[0].States[0].Qdiscs["client/eth0"]; q != "" {
		t.Errorf("base state kept a qdisc: %q", q)
	}

	// A/A at alpha 0.01. Under no difference a false positive has probability alpha, so one
	// repetition keeps this test from failing by chance more than once in 10^4 runs.
	for attempt := 1; ; attempt++ {
		aa := calibration(t, "1gbit")
		if err := (scenarios.Overrides{AA: true, Omit: -1}).Apply(aa); err != nil {
			t.Fatal(err)
		}
		r, err = Run(context.Background(), aa, Options{Machine: host.Machine{}, Out: filepath.Join(dir, "aa.json"), Policy: results.Policy{Alpha: 0.01}})
		if err != nil {
			t.Fatal(err)
		}
		c = throughputComparison(t, r)
		if c.Baseline != "base" || r.Cases[0].States[1].Name != "base-again" {
			t.Fatalf("A/A states: %+v", r.Cases[0].States)
		}
		if c.Verdict != results.Improved && c.Verdict != results.Regressed {
			break
		}
		if attempt == 2 {
			t.Errorf("A/A found a difference twice: %+v", c)
			break
		}
	}
}

// TestSockperfRun: sockperf between two namespaces, with the real tool: a UDP ping-pong (its
// server is ready once its UDP socket is bound), under-load and throughput over TCP; each
// sample has its mode's metrics, in the units sockperf declares, and its summary row.
func TestSockperfRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "sockperf", "taskset")
	s, err := scenarios.Load("testdata/sockperf.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"pp4udp": {"mean_latency us", "p99_latency us", "min_latency us", "max_latency us"},
		"ul4":    {"mean_latency us", "p99_latency us"},
		"tput4":  {"throughput bit/s", "message_rate msg/s"},
	}
	c := r.Cases[0]
	if len(c.Samples) != 6 {
		t.Fatalf("%d samples, want 3 workloads x 2 states", len(c.Samples))
	}
	for _, s := range c.Samples {
		if s.Error != "" || s.Row == "" {
			t.Errorf("%s/%s: error %q row %q\n%s", s.State, s.Workload, s.Error, s.Row, s.Output)
			continue
		}
		got := map[string]float64{}
		for _, m := range s.Metrics {
			got[m.Name+" "+m.Unit] = m.Value
		}
		for _, w := range want[s.Workload] {
			if got[w] <= 0 {
				t.Errorf("%s/%s: %s = %v (metrics %v)", s.State, s.Workload, w, got[w], got)
			}
		}
	}
	if v := r.Environment.Tools["sockperf"]; !strings.HasPrefix(v, "3.") {
		t.Errorf("sockperf version %q", v)
	}
}

// TestUDPRun: the shipped veth-udp scenario, short, with real namespaces and iperf3 -u: each
// sample has the received datagrams per second (the gate), the loss and the jitter beside the
// bits; the receiver's GRO reads back off and on, as each state set it; the packet rate's
// comparison is the gated one.
func TestUDPRun(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	s, err := scenarios.Load("veth-udp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (scenarios.Overrides{Runs: 1, Duration: time.Second, Omit: 0}).Apply(s); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Concurrent: true})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	if len(c.Samples) != 4 {
		t.Fatalf("%d samples, want 2 workloads x 2 states", len(c.Samples))
	}
	for _, smp := range c.Samples {
		got := map[string]results.Metric{}
		for _, m := range smp.Metrics {
			got[m.Name] = m
		}
		rate, loss := got[scenarios.MetricPacketRate], got[scenarios.MetricPacketLoss]
		// 1400-byte datagrams: the bits received are the datagrams received times their size
		// and headers, within what iperf3's own rounding leaves.
		if smp.Error != "" || rate.Unit != "pps" || rate.Value <= 0 || loss.Unit != "%" || loss.Value < 0 || loss.Value > 100 ||
			got[results.Throughput].Value < rate.Value*1400*8*0.99 {
			t.Errorf("%s/%s: %v %v", smp.State, smp.Workload, smp.Metrics, smp.Error)
		}
	}
	for _, st := range c.States {
		want := map[string]string{"gro-off": "off", "gro-on": "on"}[st.Name]
		if on, ok := st.Features["server/eth0"]["rx-gro"]; !ok || on != (want == "on") {
			t.Errorf("state %s: server/eth0 rx-gro read back %v (%v), want %s (%+v)", st.Name, on, ok, want, st.Features)
		}
	}
	gated := 0
	for _, sm := range c.Summaries {
		if sm.Comparison != nil && sm.Metric == scenarios.MetricPacketRate && sm.Comparison.Gated {
			gated++
		}
	}
	if gated != 2 {
		t.Errorf("%d gated packet_rate comparisons, want one per workload", gated)
	}
}

// TestSeveralClients: a workload with clients runs one client process per placement at once,
// for every tool, each on its CPUs and ports (and each iperf3 or sockperf client with a server
// of its own); the sample's figures are the clients' total (rates add up, latencies are the
// mean) with each client's beside them.
func TestSeveralClients(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3", "netperf", "sockperf", "taskset")
	s, err := scenarios.Load("testdata/clients.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json")})
	if err != nil {
		t.Fatal(err)
	}
	// What each client's argv must carry: its CPU, and its own ports where the tool has them.
	wantArgv := map[string][2]string{
		"iperf3x2": {"-p 5401 -4 -J -t 1 -O 0 -P 2 -A 0 --cport 41000", "-p 5402 -4 -J -t 1 -O 0 -P 2 -A 1 --cport 41002"},
		"rrx2":     {"-T 0,1", "-T 1,0"},
		"tputx2":   {"-p 11411", "-p 11412"},
	}
	additive := map[string]string{"iperf3x2": "throughput", "rrx2": "throughput", "tputx2": "message_rate"}
	averaged := map[string]string{"iperf3x2": "rtt_mean", "rrx2": "p99_latency"}
	samples := r.Cases[0].Samples
	if len(samples) != 3 {
		t.Fatalf("%d samples, want 3", len(samples))
	}
	for _, smp := range samples {
		if smp.Error != "" {
			t.Errorf("%s: %s\n%s", smp.Workload, smp.Error, smp.Stderr)
			continue
		}
		if len(smp.ClientsArgv) != 2 {
			t.Errorf("%s: clients' argv %q", smp.Workload, smp.ClientsArgv)
			continue
		}
		for i, want := range wantArgv[smp.Workload] {
			if got := strings.Join(smp.ClientsArgv[i], " "); !strings.Contains(got, want) {
				t.Errorf("%s: client %d runs %q, want %q in it", smp.Workload, i+1, got, want)
			}
		}
		total := func(name string) (float64, float64, float64) {
			v, _ := smp.Value(name)
			c1, _ := smp.Value(scenarios.ClientMetric(name, 0))
			c2, _ := smp.Value(scenarios.ClientMetric(name, 1))
			if v <= 0 || c1 <= 0 || c2 <= 0 {
				t.Errorf("%s: %s %v, its clients' %v and %v", smp.Workload, name, v, c1, c2)
			}
			return v, c1, c2
		}
		if v, c1, c2 := total(additive[smp.Workload]); math.Abs(v-(c1+c2)) > 1e-6*v {
			t.Errorf("%s: %s total %v, the clients' %v + %v", smp.Workload, additive[smp.Workload], v, c1, c2)
		}
		if name := averaged[smp.Workload]; name != "" {
			if v, c1, c2 := total(name); math.Abs(v-(c1+c2)/2) > 1e-6*v {
				t.Errorf("%s: %s total %v, want the clients' mean of %v and %v", smp.Workload, name, v, c1, c2)
			}
		}
	}
}
