package results

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/golden"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Expected values computed by hand: xs = 2 4 4 4 5 5 7 9, sum 40, mean 5, squared deviations
// 9 1 1 1 0 0 4 16 = 32, sample variance 32/7, stddev 2.138089935..., CV 0.427617987...
func TestDescribeByHand(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want Stats
	}{
		{"eight", []float64{9, 2, 4, 5, 4, 7, 4, 5}, Stats{N: 8, Mean: 5, Median: 4.5, Stddev: math.Sqrt(32.0 / 7), CV: math.Sqrt(32.0/7) / 5, Min: 2, Max: 9}},
		{"odd", []float64{3, 1, 2}, Stats{N: 3, Mean: 2, Median: 2, Stddev: 1, CV: 0.5, Min: 1, Max: 3}},
		{"one", []float64{7}, Stats{N: 1, Mean: 7, Median: 7, Min: 7, Max: 7}},
		{"none", nil, Stats{}},
		{"constant", []float64{4, 4, 4}, Stats{N: 3, Mean: 4, Median: 4, Min: 4, Max: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Describe(tc.xs)
			if got.N != tc.want.N || !near(got.Mean, tc.want.Mean) || !near(got.Median, tc.want.Median) ||
				!near(got.Stddev, tc.want.Stddev) || !near(got.CV, tc.want.CV) || got.Min != tc.want.Min || got.Max != tc.want.Max {
				t.Fatalf("Describe(%v) = %+v, want %+v", tc.xs, got, tc.want)
			}
		})
	}
}

func sample(round int, state, workload string, tput, rtt float64) Sample {
	return Sample{Round: round, State: state, Workload: workload, Tool: "iperf3",
		Metrics: []Metric{{Throughput, "bit/s", tput}, {RTTMean, "us", rtt}}}
}

func testSamples() []Sample {
	s := []Sample{
		sample(1, "off", "tcp4", 9e9, 60), sample(1, "on", "tcp4", 9.9e9, 50),
		sample(2, "off", "tcp4", 11e9, 70), sample(2, "on", "tcp4", 12.1e9, 60),
	}
	failed := sample(3, "on", "tcp4", 1, 1) // a failed run: kept, but not in the statistics
	failed.Error = "iperf3 reported an error: unable to connect"
	return append(s, failed)
}

func TestSummarizeChangeAndDirection(t *testing.T) {
	sums := Summarize(testSamples(), testStates, []string{"tcp4"}, Policy{})
	if len(sums) != 4 {
		t.Fatalf("%d summaries, want 4: %+v", len(sums), sums)
	}
	byKey := map[string]Summary{}
	for _, s := range sums {
		byKey[s.Metric+"/"+s.State] = s
	}
	on := byKey["throughput/on"]
	c := on.Comparison
	if on.Stats.N != 2 || c == nil || !near(c.Change, 0.1) || c.Verdict != Undecided || !strings.Contains(c.Note, "use at least 4") {
		t.Errorf("throughput/on = %+v comparison %+v; want n=2, +10%%, too few runs", on.Stats, c)
	}
	if c.Paired == nil || c.Paired.Rounds != 2 || c.Paired.Better != 2 || !near(c.Paired.Median, 1.1) {
		t.Errorf("paired %+v", c.Paired)
	}
	if byKey["throughput/off"].Comparison != nil {
		t.Error("the baseline has a comparison")
	}
	rtt := byKey["rtt_mean/on"] // 55 vs 65: lower is better, every round
	if rtt.Comparison == nil || !near(rtt.Comparison.Change, 55.0/65-1) || rtt.Comparison.Paired.Better != 2 {
		t.Errorf("rtt_mean/on comparison %+v", rtt.Comparison)
	}
}

var testStates = []StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}

func testResult() *Result {
	samples := testSamples()
	return &Result{
		Schema: Schema, RunID: "nsp0000", Scenario: ScenarioInfo{Name: "veth-bigtcp"},
		Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Complete: true,
		Settings:    Settings{Runs: 2, Order: "alternate"},
		Environment: Environment{KernelRelease: "6.18.44"},
		Cases: []Case{{
			States:    testStates,
			Samples:   samples,
			Summaries: Summarize(samples, testStates, []string{"tcp4"}, Policy{}),
		}},
	}
}

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, testResult()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "table.golden"), b.String())
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{65.567e9, "bit/s", "65.567 Gbps"}, {139e6, "bit/s", "139.000 Mbps"}, {9816, "count", "9816.0"},
		{96.84, "%", "96.8%"}, {58, "us", "58.0 us"}, {485756.957, "pps", "485.757 kpps"}, {3.64e6, "pps", "3.640 Mpps"}, {12, "pps", "12.0 pps"},
	} {
		if got := FormatValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("FormatValue(%v, %s) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "r.json")
	r := testResult()
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != r.RunID || len(got.Cases[0].Samples) != 5 || got.Cases[0].Summaries[1].Stats.N != 2 {
		t.Fatalf("round trip lost data: %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	os.WriteFile(path, []byte(`{"schema":"nsperf.result/v9"}`), 0o644)
	if _, _, err := ReadFile(path); err == nil {
		t.Error("read a result of another schema")
	}
}

func TestJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.journal")
	r := testResult()
	j, err := NewJournal(path, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.BeginCase(0, r.Cases[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("journal created before its first sample: %v", err)
	}
	for _, s := range testSamples() {
		if err := j.Append(0, s); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	got, warnings, err := ReadJournal(path)
	if err != nil || len(warnings) > 0 || len(got.Cases) != 1 || len(got.Cases[0].Samples) != 5 || got.Cases[0].Samples[4].Error == "" {
		t.Fatalf("ReadJournal = %+v, %v, %v", got, warnings, err)
	}
	if got.Complete || got.RunID != r.RunID || len(got.Cases[0].States) != len(r.Cases[0].States) {
		t.Errorf("journal header or case lost: complete=%v run=%s states=%d", got.Complete, got.RunID, len(got.Cases[0].States))
	}
}

func TestInheritanceVerdicts(t *testing.T) {
	dev := func(tso, segs, gso, gsoSegs, gso4 uint64) map[string]uint64 {
		return map[string]uint64{"tso_max_size": tso, "tso_max_segs": segs, "gso_max_size": gso, "gso_max_segs": gsoSegs, "gso_ipv4_max_size": gso4}
	}
	c := Case{States: []StateRecord{
		{Name: "a", Recreated: []string{"n/vx0"}, Lower: map[string]string{"n/vx0": "n/eth0"},
			Devices: map[string]map[string]uint64{"n/eth0": dev(524280, 65535, 65536, 65535, 65536), "n/vx0": dev(524280, 65535, 65536, 65535, 65536)}},
		{Name: "b", Recreated: []string{"n/vx0"}, Lower: map[string]string{"n/vx0": "n/eth0"},
			Devices: map[string]map[string]uint64{"n/eth0": dev(524280, 65535, 16000, 16, 65536), "n/vx0": dev(524280, 64, 16000, 65535, 65535)}},
		{Name: "c", Unavailable: "not here"},
	}}
	got := strings.Join(Inheritance(c), "\n")
	for _, want := range []string{
		"inheritance: n/vx0 over n/eth0, created anew in each state; values per state a / b:",
		"tso_max_size        lower 524280 / 524280   device 524280 / 524280   equal (the lower device's value never changed: shows nothing)",
		"tso_max_segs        lower 65535 / 65535     device 65535 / 64        differs (the lower device's value never changed)",
		"gso_max_size        lower 65536 / 16000     device 65536 / 16000     inherited",
		"gso_max_segs        lower 65535 / 16        device 65535 / 65535     not inherited",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

func TestTableUnavailableAndCompareToGolden(t *testing.T) {
	states := []StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off", Unavailable: "gso_max_size 185000 > tso_max_size 65536 of client/vx0"},
		{Name: "sw-off", CompareTo: "off"}, {Name: "sw-on", CompareTo: "sw-off"}}
	var samples []Sample
	for round := 1; round <= 2; round++ {
		samples = append(samples, sample(round, "off", "tcp4", 10e9+float64(round)*1e8, 50),
			sample(round, "sw-off", "tcp4", 8e9+float64(round)*1e8, 60), sample(round, "sw-on", "tcp4", 9e9+float64(round)*1e8, 55))
	}
	r := &Result{Schema: Schema, RunID: "nsp0000", Scenario: ScenarioInfo{Name: "vxlan-bigtcp"}, Complete: true,
		Settings: Settings{Runs: 2, Order: "alternate"},
		Cases: []Case{{Label: "mtu=1500", Matrix: map[string]string{"mtu": "1500"}, States: states, Samples: samples,
			Summaries: Summarize(samples, states, []string{"tcp4"}, Policy{})}}}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "table-unavailable.golden"), b.String())
}

func netperfResult() *Result {
	states := []StateRecord{
		{Name: "off", Commands: []string{"ip -n nsp0000-client link set dev eth0 gso_max_size 65536 gro_max_size 65536"}},
		{Name: "on", CompareTo: "off", Commands: []string{"ip -n nsp0000-client link set dev eth0 gso_max_size 185000 gro_max_size 185000"}},
	}
	argv := []string{"netperf", "-H", "2001:2::2", "-t", "TCP_RR", "--", "-r", "80000,80000", "-O", "MIN_LATENCY,P90_LATENCY,P99_LATENCY,THROUGHPUT"}
	rr := func(round int, state, row string, min, p90, p99, tput float64) Sample {
		return Sample{Round: round, State: state, Workload: "rr6", Tool: "netperf", Argv: argv, Row: row,
			Metrics: []Metric{{Throughput, "trans/s", tput}, {"min_latency", "us", min}, {"p90_latency", "us", p90}, {"p99_latency", "us", p99}}}
	}
	samples := []Sample{ // rows of shared/seeds/big-tcp.md
		rr(1, "off", "77           138          183          8542.19", 77, 138, 183, 8542.19),
		rr(1, "on", "57           83           117          13871.38", 57, 83, 117, 13871.38),
		rr(2, "off", "79           143          178          8215.28", 79, 143, 178, 8215.28),
		rr(2, "on", "64           118          155          11432.94", 64, 118, 155, 11432.94),
	}
	return &Result{Schema: Schema, RunID: "nsp0000", Scenario: ScenarioInfo{Name: "big-tcp-rr"}, Complete: true,
		Settings: Settings{Runs: 2, Order: "alternate"}, Environment: Environment{KernelRelease: "6.18.44"},
		Cases: []Case{{States: states, Samples: samples, Summaries: Summarize(samples, states, []string{"rr6"}, Policy{})}}}
}

// writers are the result's writers of the text formats, by format name (package render
// holds the table of formats that uses them).
var writers = map[string]func(io.Writer, *Result) error{
	"netdev": Netdev, "markdown": Markdown, "csv": CSV, "table": Table,
	"json": Encode, "benchstat": Benchstat, "junit": JUnit, "ktap": KTAP,
}

func TestFormatsGolden(t *testing.T) {
	for _, format := range []string{"netdev", "markdown", "csv", "table"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := writers[format](&b, netperfResult()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "big-tcp-rr."+format+".golden"), b.String())
		})
	}
}

func TestDirectionOfNetperfMetrics(t *testing.T) {
	for name, want := range map[string]Direction{"min_latency": LowerIsBetter, "p99_latency": LowerIsBetter, "local_cpu_util": NoDirection, "cpu_sender": NoDirection, "cpu_sender_per_gbit": LowerIsBetter, "local_cpu_util_per_trans": LowerIsBetter,
		"throughput": HigherIsBetter, "transaction_rate": HigherIsBetter, "retransmits": LowerIsBetter} {
		if got := DirectionOf(name); got != want {
			t.Errorf("DirectionOf(%s) = %d, want %d", name, got, want)
		}
	}
}
