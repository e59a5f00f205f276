package claims

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"gopkg.in/yaml.v3"

	"github.com/nsperf/nsperf/internal/golden"
)

var seeds = []string{"vxlan-bigtcp-7of9.mbox", "ovs-internal-port-tso-v2.mbox", "vxlan-lowerdev-4.9-stable.mbox", "big-tcp-merge.txt"}

// fixtures are messages made around real output of the tools: iperf3 3.12's text summary and
// its -J object between two namespaces (before and after a 16 KiB GSO limit), and a table
// nsperf printed (results/testdata/table.golden).
var fixtures = []string{"iperf3-text.txt", "iperf3-json.txt", "nsperf-table.txt"}

func readSeed(t *testing.T, name string) *Report {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSeedsGolden: each seed, as the mail it came as, lists exactly its claims, as a table
// and as JSON (testdata/NAME.txt.golden, NAME.json.golden).
func TestSeedsGolden(t *testing.T) {
	for _, name := range append(append([]string{}, seeds...), fixtures...) {
		r := readSeed(t, name)
		var text bytes.Buffer
		if err := r.Text(&text); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/"+name+".txt.golden", text.String())
		js, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/"+name+".json.golden", string(js)+"\n")
	}
}

// TestSeedClaims asserts what the goldens hold that the issue names: the vxlan mail's six
// numbers under three conditions; the OVS table's four numbers with two CVs a row and the
// stated +18.1% / +34.7%; 139 Mbps -> 8.68 Gbps with the stated 6,144 %; the BIG TCP merge's
// two times ten rows with medians, its latency percentiles and its toggle.
func TestSeedClaims(t *testing.T) {
	vx := readSeed(t, "vxlan-bigtcp-7of9.mbox")
	want := [][3]any{{"mtu", "standard", [2]float64{34440e6, 39564.78e6}}, {"mtu", "8k", [2]float64{55684.26e6, 61466.47e6}}, {"offloads", "off", [2]float64{21820.82e6, 29390.78e6}}}
	if len(vx.Claims) != 3 {
		t.Fatalf("vxlan: %d claims", len(vx.Claims))
	}
	for i, w := range want {
		c := vx.Claims[i]
		if c.Conditions[w[0].(string)] != w[1].(string) || c.Before.Median != w[2].([2]float64)[0] || c.After.Median != w[2].([2]float64)[1] || c.Options["test"] != "TCP_STREAM" {
			t.Errorf("vxlan claim %d: %+v", i+1, c)
		}
	}
	ovs := readSeed(t, "ovs-internal-port-tso-v2.mbox")
	for i, w := range []struct {
		family         string
		before, after  float64
		cvB, cvA, said float64
	}{{"IPv4", 65.567e9, 77.42e9, 0.0112, 0.0037, 0.181}, {"IPv6", 55.355e9, 74.568e9, 0.012, 0.0068, 0.347}} {
		c := ovs.Claims[i]
		if c.Conditions["family"] != w.family || c.Before.Median != w.before || c.After.Median != w.after || *c.Before.CV != w.cvB || *c.After.CV != w.cvA || c.Stated == nil || *c.Stated != w.said || c.Mismatch {
			t.Errorf("ovs %s: %+v", w.family, c)
		}
	}
	st := readSeed(t, "vxlan-lowerdev-4.9-stable.mbox")
	if c := st.Claims[0]; len(st.Claims) != 1 || c.Before.Median != 139e6 || c.After.Median != 8.68e9 || c.Stated == nil || *c.Stated != 61.44 || c.Mismatch {
		t.Errorf("4.9-stable: %+v", st.Claims)
	}
	merge := readSeed(t, "big-tcp-merge.txt")
	metrics := map[string]float64{"min_latency": 77.5, "p90_latency": 131.5, "p99_latency": 173.5, "transaction_rate": 8841.755}
	for _, c := range merge.Claims {
		if len(c.Before.Values) != 10 || len(c.After.Values) != 10 || c.Before.Median != metrics[c.Metric] || c.Options["sizes"] != "80000,80000" {
			t.Errorf("merge %s: %+v", c.Metric, c)
		}
		delete(metrics, c.Metric)
	}
	if len(metrics) > 0 || len(merge.Toggles) != 1 || merge.Toggles[0].Settings["devices"]["gso_max_size"] != "185000" || merge.Toggles[0].Settings["devices"]["gro_max_size"] != "185000" {
		t.Errorf("merge: missing %v, toggles %+v", metrics, merge.Toggles)
	}
}

// TestNoNumbers: a message without numbers says so, and what it describes; nothing is made
// up.
func TestNoNumbers(t *testing.T) {
	r, err := Read("m", []byte("net: faster path\n\nThis gives lower latencies and increased transactions rate.\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.Text(&out)
	if len(r.Claims) != 0 || !strings.Contains(out.String(), "no numbers") || !strings.Contains(out.String(), "lower latencies and increased transactions rate") {
		t.Errorf("%+v\n%s", r, out.String())
	}
}

const classic = `# netperf -H 10.1.0.2 -t TCP_STREAM -l60
MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.1.0.2 () port 0 AF_INET : demo
Recv   Send    Send
Socket Socket  Message  Elapsed
Size   Size    Size     Time     Throughput
bytes  bytes   bytes    secs.    10^6bits/sec

131072  16384  16384    30.00    34440.00
`

// TestBadInputs: each input that is not what a claim reader expects gets a clear answer
// and nothing is invented.
func TestBadInputs(t *testing.T) {
	if _, err := Read("bin", []byte("a\x00b")); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary: %v", err)
	}
	many := strings.Repeat("From x Mon Jan  1 00:00:00 2024\nSubject: s\n\nbody\n\n", 100000)
	if _, err := Read("many", []byte(many)); err == nil || !strings.Contains(err.Error(), "more than 1000 mails") {
		t.Errorf("10^5 mails: %v", err)
	}
	cut := "Before:\n" + classic[:strings.Index(classic, "bytes  bytes")] + "\n"
	r, err := Read("cut", []byte(cut))
	if err != nil || len(r.Claims) != 0 || len(r.Unparsed) != 1 || !strings.Contains(r.Unparsed[0].Reason, "cut") {
		t.Errorf("a netperf block cut in half: %+v %v", r, err)
	}
	quoted := "Re: x\n\n> Before: 1 Gbps\n> After: 2 Gbps\n\nThanks.\n"
	if r, err := Read("quoted", []byte(quoted)); err != nil || len(r.Claims) != 0 || r.Quoted != 2 {
		t.Errorf("a claim in a quoted reply: %+v %v", r, err)
	}
	for _, tc := range []struct {
		text          string
		before, after float64
		unit          string
	}{
		{"Before: 1,200 Mbit/s\nAfter: 2.5 Gbits/sec\n", 1.2e9, 2.5e9, "bit/s"},
		{"Before: 900 Mbps\nAfter: 1 Gbps\n", 9e8, 1e9, "bit/s"},
		{"Before: 12,345 tps\nAfter: 13,000.5 trans/s\n", 12345, 13000.5, "trans/s"},
	} {
		r, err := Read("units", []byte(tc.text))
		if err != nil || len(r.Claims) != 1 || r.Claims[0].Before.Median != tc.before || r.Claims[0].After.Median != tc.after || r.Claims[0].Unit != tc.unit {
			t.Errorf("%q: %+v %v", tc.text, r, err)
		}
	}
	body := "Before: 1 Gbps\nAfter: 2 Gbps\n"
	for enc, text := range map[string]string{
		"quoted-printable": "From x Mon Jan  1 00:00:00 2024\nSubject: s\nContent-Transfer-Encoding: quoted-printable\n\nBefore: 1 G=\nbps\nAfter: 2 Gbps\n",
		"base64":           "From x Mon Jan  1 00:00:00 2024\nSubject: s\nContent-Transfer-Encoding: base64\n\n" + base64.StdEncoding.EncodeToString([]byte(body)) + "\n",
	} {
		r, err := Read(enc, []byte(text))
		if err != nil || len(r.Claims) != 1 || r.Claims[0].Change != 1 {
			t.Errorf("%s: %+v %v", enc, r, err)
		}
	}
}

// TestClassicWithCPU: netperf's classic block with -c -C carries CPU utilisation and service
// demand besides throughput; a TCP_RR block its transaction rate.
func TestClassicWithCPU(t *testing.T) {
	text := `Before:
# netperf -H h -t TCP_STREAM -c -C
MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to h () port 0 AF_INET
Recv   Send    Send                          Utilization       Service Demand
Socket Socket  Message  Elapsed              Send     Recv     Send    Recv
Size   Size    Size     Time     Throughput  local    remote   local   remote
bytes  bytes   bytes    secs.    10^6bits/s  % S      % S      us/KB   us/KB

131072  16384  16384    10.00    9000.00     10.00    20.00    0.364   0.728

After:
# netperf -H h -t TCP_STREAM -c -C
MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to h () port 0 AF_INET
Recv   Send    Send                          Utilization       Service Demand
Socket Socket  Message  Elapsed              Send     Recv     Send    Recv
Size   Size    Size     Time     Throughput  local    remote   local   remote
bytes  bytes   bytes    secs.    10^6bits/s  % S      % S      us/KB   us/KB

131072  16384  16384    10.00    9900.00     9.00     21.00    0.300   0.700

Before:
# netperf -H h -t TCP_RR
MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to h () port 0 AF_INET : first burst 0
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate
bytes  Bytes  bytes    bytes   secs.    per sec

16384  131072 1        1       10.00    30000.00
16384  131072
After:
# netperf -H h -t TCP_RR
MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to h () port 0 AF_INET : first burst 0
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate
bytes  Bytes  bytes    bytes   secs.    per sec

16384  131072 1        1       10.00    33000.00
`
	r, err := Read("cpu", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	for _, c := range r.Claims {
		got[c.Metric+c.Quantity] = [2]float64{c.Before.Median, c.After.Median}
	}
	// The CPU columns under the netperf driver's names; service demand, which nsperf does not
	// measure, as a quantity.
	want := map[string][2]float64{"throughput": {9e9, 9.9e9}, "local_cpu_util": {10, 9}, "remote_cpu_util": {20, 21}, "local_service_demand": {0.364, 0.3}, "remote_service_demand": {0.728, 0.7}, "transaction_rate": {30000, 33000}}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%s: %v, want %v (all %v)", m, got[m], w, got)
		}
	}
}

// FuzzRead: no input makes the reader panic, and every claim it returns has both sides.
func FuzzRead(f *testing.F) {
	for _, name := range append(append([]string{}, seeds...), fixtures...) {
		if data, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(classic))
	layouts, _ := filepath.Glob("testdata/layouts/*.txt")
	families, _ := filepath.Glob("testdata/families/*.txt") // every layout family's fixture
	for _, name := range append(layouts, families...) {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return // mutations past the seeds' size cost time, not coverage: large inputs are bounded by the readers' limits
		}
		r, err := Read("fuzz", data)
		if err != nil {
			return
		}
		for _, c := range r.Claims {
			if len(c.Before.Values) == 0 || len(c.After.Values) == 0 {
				t.Fatalf("a claim without a side: %+v", c)
			}
		}
		var b bytes.Buffer
		_ = r.Text(&b)
		// A drafted scenario is YAML whatever the message's toggles hold (a device, a sysctl or
		// a qdisc parameter written in it): quoted where a plain scalar would not do.
		b.Reset()
		if err := r.WriteScenario(&b, "drafted"); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("the drafted scenario is not YAML: %v\n%s", err, b.String())
		}
	})
}

// TestToolOutputs: iperf3's text summary gives the receiver's bitrate with the command's
// options and the stated drop; its -J object the receiver's bits_per_second with the test's
// protocol and duration; nsperf's table each row's two states with their CVs, a trans/s
// throughput as a transaction rate. A cut -J object and a summary without its rows are
// listed as unparsed, not claims.
func TestToolOutputs(t *testing.T) {
	text := readSeed(t, "iperf3-text.txt")
	if len(text.Claims) != 1 {
		t.Fatalf("iperf3 text: %+v", text.Claims)
	}
	c := text.Claims[0]
	if c.Tool != "iperf3" || c.Before.Median != 8.74e9 || c.After.Median != 3.01e9 || c.Options["duration"] != "2s" || c.Stated == nil || *c.Stated != -0.656 {
		t.Errorf("iperf3 text: %+v", c)
	}
	js := readSeed(t, "iperf3-json.txt")
	if len(js.Claims) != 1 || js.Claims[0].Before.Median != 8.965774215e9 || js.Claims[0].After.Median < 3e9 || js.Claims[0].Options["protocol"] != "TCP" || js.Claims[0].Options["duration"] != "2s" {
		t.Errorf("iperf3 -J: %+v", js.Claims)
	}
	tab := readSeed(t, "nsperf-table.txt")
	if len(tab.Claims) != 2 || tab.Claims[0].Metric != "throughput" || tab.Claims[0].Before.Median != 10e9 || *tab.Claims[0].Before.CV != 0.1414 ||
		tab.Claims[1].Metric != "rtt_mean" || tab.Claims[1].Change != -0.1538 || tab.Claims[0].Options["scenario"] != "veth-bigtcp" {
		t.Errorf("nsperf table: %+v", tab.Claims)
	}
	rr, err := Read("rr", []byte("big-tcp-rr  run nsp0000  2 runs per state, alternate order  kernel 6.18.44\n"+
		"workload   metric        off                    on                      CV off / on      on vs off\n"+
		"rr6        throughput    8378.74 trans/s ±n/a   12652.16 trans/s ±n/a   2.76% / 13.63%   +51.0% undecided\n"))
	if err != nil || len(rr.Claims) != 1 || rr.Claims[0].Metric != "transaction_rate" || rr.Claims[0].Unit != "trans/s" {
		t.Errorf("nsperf rr table: %+v %v", rr, err)
	}
	data, _ := os.ReadFile("testdata/iperf3-json.txt")
	cut := strings.Join(strings.Split(string(data), "\n")[:60], "\n") + "\n"
	r, err := Read("cut", []byte(cut))
	if err != nil || len(r.Claims) != 0 || len(r.Unparsed) != 1 || !strings.Contains(r.Unparsed[0].Reason, "cut before its closing brace") {
		t.Errorf("a cut -J object: %+v %v", r, err)
	}
	r, err = Read("rows", []byte("- - - - - - - - - - - - - - - - - - - - - - - - -\n[ ID] Interval           Transfer     Bitrate         Retr\n\niperf Done.\n"))
	if err != nil || len(r.Claims) != 0 || len(r.Unparsed) != 1 || !strings.Contains(r.Unparsed[0].Reason, "without its sender or receiver row") {
		t.Errorf("a summary without rows: %+v %v", r, err)
	}
}

// TestWriteScenario: the scenario drafted from each seed and fixture loads as it is: the merge
// message's toggle as before (64 KiB) and after (185000) on both ends with netperf TCP_RR
// 80000/80000 and its four selectors over IPv6; the vxlan mail's MTUs as a matrix; the OVS
// table's two families as two iperf3 workloads and one state.
func TestWriteScenario(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{}
	for _, name := range append(append([]string{}, seeds...), fixtures...) {
		r := readSeed(t, name)
		var b bytes.Buffer
		if err := r.WriteScenario(&b, "drafted"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".yaml")
		os.WriteFile(path, b.Bytes(), 0o644)
		if _, err := scenarios.Load(path, scenarios.Options{}); err != nil {
			t.Errorf("%s: the draft does not load: %v\n%s", name, err, b.String())
		}
		texts[name] = b.String()
	}
	for name, wants := range map[string][]string{
		"big-tcp-merge.txt": {"netperf:", "test: TCP_RR", "request: 80000", "response: 80000", "outputs: [MIN_LATENCY, P90_LATENCY, P99_LATENCY, THROUGHPUT]",
			"client/eth0: {gro_max_size: 65536, gso_max_size: 65536}", "server/eth0: {gro_max_size: 185000, gso_max_size: 185000}", "compare_to: \"before\"", `addr: "2001:2::2"`, "duration: 2s"},
		"vxlan-bigtcp-7of9.mbox":        {"mtu: ${mtu}", "matrix: {mtu: [1500, 8000]}", "test: TCP_STREAM"},
		"ovs-internal-port-tso-v2.mbox": {"name: tcp4\n    iperf3:", "name: tcp6\n    iperf3:", "- name: default"},
	} {
		for _, w := range wants {
			if !strings.Contains(texts[name], w) {
				t.Errorf("%s: the draft lacks %q:\n%s", name, w, texts[name])
			}
		}
	}
}

// TestLayouts: the layouts the claims corpus lacks, from the tools' real output (neper's
// name=value lines, sockperf's summary, ping's rtt line, a table of percentiles, netperf -O
// rows with a label column under a command wrapped over two lines): each gives the pairs a
// careful reader takes from it, and nothing else.
func TestLayouts(t *testing.T) {
	for _, tc := range []struct {
		file  string
		pairs [][2]float64 // before, after medians as the claims give them
	}{
		// neper's result is its throughput, and its latency in seconds (kept in us); its count
		// of transactions scales with the run's length and is no result.
		{"neper-tcp-rr.txt", [][2]float64{{41234.5, 45561.2}, {18, 16}, {24, 21}, {23, 21}, {41, 35}}},
		{"sockperf-ping-pong.txt", [][2]float64{{5.802, 5.311}, {45.551, 41.02}, {8.193, 7.455}, {5.686, 5.203}, {4.716, 4.39}}},
		{"ping-rtt.txt", [][2]float64{{30, 27}, {41, 35}, {58, 49}, {8, 6}}},
		{"percentile-table.txt", [][2]float64{{23, 21}, {29, 26}, {41, 35}}},
		{"netperf-o-layouts.txt", [][2]float64{{20, 18}, {41, 35}, {41234.5, 45012.7}}},
	} {
		data, err := os.ReadFile("testdata/layouts/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Read(tc.file, data)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var got [][2]float64
		for _, c := range r.Claims {
			got = append(got, [2]float64{c.Before.Median, c.After.Median})
		}
		if len(got) != len(tc.pairs) {
			t.Errorf("%s: %d claims %v, want %v", tc.file, len(got), got, tc.pairs)
			continue
		}
		for _, want := range tc.pairs {
			if !slices.ContainsFunc(got, func(g [2]float64) bool { return near(g[0], want[0]) && near(g[1], want[1]) }) {
				t.Errorf("%s: no claim %v in %v", tc.file, want, got)
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.005*math.Abs(b) }

// TestDeclareKeepsOnlyDeclared: a claim keeps its metric only where a tool declares it with
// that unit; otherwise what it measures is its Quantity (reported, with nothing of nsperf's
// to set beside it). And no claim of the reader's fixtures says neither.
func TestDeclareKeepsOnlyDeclared(t *testing.T) {
	for _, c := range []struct {
		in               Claim
		metric, quantity string
	}{
		{Claim{Metric: "throughput", Unit: "bit/s"}, "throughput", ""},
		{Claim{Metric: "throughput", Unit: "pps"}, "", "throughput"},
		{Claim{Metric: "TcpInSegs", Unit: "count"}, "", "TcpInSegs"},
		{Claim{Metric: "throughput"}, "", "throughput"},
		{Claim{Quantity: "share", Unit: "%"}, "", "share"},
		{Claim{Metric: "rtt_mean", Quantity: "latency", Unit: "us"}, "rtt_mean", "latency"},
	} {
		got := declare(c.in)
		if got.Metric != c.metric || got.Quantity != c.quantity {
			t.Errorf("declare(%q %q %q) = %q %q, want %q %q", c.in.Metric, c.in.Quantity, c.in.Unit, got.Metric, got.Quantity, c.metric, c.quantity)
		}
	}
	files, _ := filepath.Glob("testdata/*.txt")
	mboxes, _ := filepath.Glob("testdata/*.mbox")
	layouts, _ := filepath.Glob("testdata/layouts/*.txt")
	for _, f := range append(append(files, mboxes...), layouts...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Read(f, data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range r.Claims {
			if c.Metric == "" && c.Quantity == "" {
				t.Errorf("%s: a claim says neither its metric nor its quantity: %+v", f, c)
			}
		}
	}
}

// FuzzLine: the generic reader's line parsers (figures, states, table rows, labels, arrows,
// name=value) take any line without panicking, and a figure is always a finite number.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"Before: ~3.64Mpps", "| 0.17±0.02 | 6.3s |", "XDP_TX: 811Kpps -> 1.4Mpps", "rtt min/avg/max/mdev = 0.030/0.041/0.058/0.008 ms",
		"sockperf: ---> percentile 99.000 =    8.193", "net + GRE offlaod support:\t~25Gbps", "  3.07%  [kernel]  [k] tcp_ack",
		"1048576000 bytes received in 9.52 secs (107563.0 kB/s)", "from 512Mbps to 730Mbps", "TcpOutSegs  20481733  0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fig := range readFigures(s).figures {
			if math.IsNaN(fig.value) || math.IsInf(fig.value, 0) {
				t.Fatalf("%q: figure %v", s, fig.value)
			}
		}
		stateOf(s)
		labelKey(s)
		splitRow(s)
		lines := []line{{1, s}}
		rs, _ := lineReadings(lines, 0, block{side: "before", state: "before"})
		for _, r := range rs {
			if math.IsNaN(r.value) || math.IsInf(r.value, 0) {
				t.Fatalf("%q: reading %v", s, r.value)
			}
		}
		var rep Report
		rep.proseRanges(lines)
	})
}

// TestControlCharacters: nothing of a message reaches the terminal raw: an escape sequence
// in a label, a toggle or a bad diff is shown escaped; a colour (SGR) is dropped.
func TestControlCharacters(t *testing.T) {
	msg := "Subject: x\n\nip link set dev eth0\x1b[2J gso_max_size 185000\n\nBefore:\nTcp\x1b[31mInSegs 100 0.0\nAfter:\nTcp\x1b[31mInSegs 200 0.0\n" +
		"\nbefore \x07bell: 5 Gbps\nafter \x07bell: 6 Gbps\n---\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-\x1b]0;title\x07\n"
	r, err := Read("m\x1b[1m", []byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Text(&out); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsFunc(strings.ReplaceAll(out.String(), "\n", ""), unicode.IsControl) {
		t.Errorf("control characters reach the terminal:\n%q", out.String())
	}
	// A colour pasted with a tool's output is no part of its text: the counter is read.
	if len(r.Claims) != 2 || !strings.Contains(out.String(), `eth0\x1b[2J`) || !strings.Contains(out.String(), "TcpInSegs") {
		t.Errorf("claims %+v, output:\n%s", r.Claims, out.String())
	}
}

// TestSummaries: a report without claims has "claims": [] and a true sentence; an mbox's
// escaped ">From " line is text, not a quote.
func TestSummaries(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Subject: x\n\nThis makes it faster.\n", "no numbers"},
		{"Subject: x\n\nWith this patch: 9.22 Gbps\n", "numbers of one state only"},
		{"Subject: x\n\n> Before: 5 Gbps\n> After: 6 Gbps\n\nThanks, applied.\n", "figures only in a quoted reply"},
		{"Subject: x\n\nIt takes 50ms and 1 ms.\n", "figures, but none of one measurement before and after a change"},
	} {
		r, err := Read("m", []byte(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(r)
		if !strings.HasPrefix(r.Summary, tc.want) || !bytes.Contains(data, []byte(`"claims":[]`)) {
			t.Errorf("%q: summary %q, want %q; %s", tc.text, r.Summary, tc.want, data)
		}
	}
	r, err := Read("m", []byte("From a@b Mon Jan  1 00:00:00 2024\nSubject: x\n\n>From the start, nothing.\n"))
	if err != nil || r.Quoted != 0 {
		t.Errorf("an mbox's >From line: quoted %d, %v", r.Quoted, err)
	}
}

// TestSysctlToggles: the sysctl commands a message shows are toggles of their own (sysctl
// with or without -w, several settings, a quoted value; echo into /proc/sys, through tee):
// a sysctl set to one value, measured, then to another is drafted as the first value before
// and the last after; one set once is as built before; a name nsperf does not set is said,
// not drafted; and the draft loads.
func TestSysctlToggles(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want map[string]string
	}{
		{"sysctl -w net.ipv4.tcp_autocorking=0", map[string]string{"net.ipv4.tcp_autocorking": "0"}},
		{"sudo sysctl -q -w net.core.busy_poll=50 net.core.busy_read=50", map[string]string{"net.core.busy_poll": "50", "net.core.busy_read": "50"}},
		{`sysctl net.ipv4.tcp_rmem="4096 131072 6291456"`, map[string]string{"net.ipv4.tcp_rmem": "4096 131072 6291456"}},
		{"echo 0 >/proc/sys/net/ipv4/tcp_tso_rtt_log", map[string]string{"net.ipv4.tcp_tso_rtt_log": "0"}},
		{"echo 1 | sudo tee /proc/sys/net/ipv4/tcp_low_latency", map[string]string{"net.ipv4.tcp_low_latency": "1"}},
		{"sysctl net.ipv4.tcp_autocorking", nil}, // a read
		{"echo hello", nil},
	} {
		got, ok := toggle(tc.cmd, 1)
		if ok != (tc.want != nil) || !maps.Equal(got.Settings["sysctls"], tc.want) {
			t.Errorf("%q: %v %+v, want %v", tc.cmd, ok, got, tc.want)
		}
	}
	msg := `tcp: a change measured with its sysctl

Before:
# echo 0 > /proc/sys/net/ipv4/tcp_tso_rtt_log
# sysctl -w net.ipv4.tcp_autocorking=0
# sysctl -w kernel.sched_autogroup_enabled=0
# iperf3 -c 10.0.0.2
throughput: 10.1 Gbit/s

After:
# echo 9 > /proc/sys/net/ipv4/tcp_tso_rtt_log
# iperf3 -c 10.0.0.2
throughput: 12.3 Gbit/s
`
	r, err := Read("msg.txt", []byte(msg))
	if err != nil || len(r.Toggles) != 4 {
		t.Fatalf("toggles %+v %v", r.Toggles, err)
	}
	if len(r.Claims) != 1 || r.Claims[0].Before.Median != 10.1e9 || r.Claims[0].After.Median != 12.3e9 {
		t.Errorf("claims %+v", r.Claims)
	}
	var b bytes.Buffer
	if err := r.WriteScenario(&b, "drafted"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"  - name: \"before\"\n    sysctls:\n      client: {net.ipv4.tcp_tso_rtt_log: 0}\n      server: {net.ipv4.tcp_tso_rtt_log: 0}\n",
		"    sysctls:\n      client: {net.ipv4.tcp_autocorking: 0, net.ipv4.tcp_tso_rtt_log: 9}\n",
		"# not drafted: sysctl kernel.sched_autogroup_enabled",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the draft lacks %q:\n%s", w, b.String())
		}
	}
	path := filepath.Join(t.TempDir(), "drafted.yaml")
	os.WriteFile(path, b.Bytes(), 0o644)
	if _, err := scenarios.Load(path, scenarios.Options{}); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, b.String())
	}
}

// TestQdiscToggles: tc's root qdisc commands are toggles with the qdisc as a scenario writes
// it, checked as a scenario's would be (netem's delay with its jitter, a flag, a rate); one
// nsperf cannot attach is no toggle; a message that attaches fq, measures, and removes it
// drafts fq before and the default after.
func TestQdiscToggles(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"tc qdisc replace dev eth0 root fq", "{fq: {}}"},
		{"sudo tc qdisc add dev eth0 root handle 1: fq maxrate 1gbit flow_limit 100", `{fq: {maxrate: "1gbit", flow_limit: 100}}`},
		{"tc qdisc add dev eth0 root netem delay 10ms 1ms loss 1%", `{netem: {delay: "10ms", jitter: "1ms", loss: "1%"}}`},
		{"tc qdisc replace dev eth0 root fq_codel target 2ms noecn", `{fq_codel: {target: "2ms", noecn: true}}`},
		{"tc qdisc del dev eth0 root", "none"},
		{"tc qdisc add dev eth0 root cake bandwidth 1gbit", ""}, // not a kind nsperf attaches
		{"tc qdisc add dev eth0 root fq pacing_frobnicate 3", ""},
		{"tc qdisc show dev eth0", ""},
	} {
		got, ok := toggle(tc.cmd, 1)
		if ok != (tc.want != "") || got.Settings["qdiscs"]["root"] != tc.want {
			t.Errorf("%q: %v %q, want %q", tc.cmd, ok, got.Settings["qdiscs"]["root"], tc.want)
		}
	}
	msg := "net: a pacing change\n\n# tc qdisc replace dev eth0 root fq\n# iperf3 -c 10.0.0.2\nBefore: 9.1 Gbit/s\n\n" +
		"# tc qdisc del dev eth0 root\n# iperf3 -c 10.0.0.2\nAfter: 9.8 Gbit/s\n"
	r, err := Read("msg.txt", []byte(msg))
	if err != nil || len(r.Toggles) != 2 || len(r.Claims) != 1 {
		t.Fatalf("toggles %+v claims %+v %v", r.Toggles, r.Claims, err)
	}
	var b bytes.Buffer
	if err := r.WriteScenario(&b, "drafted"); err != nil {
		t.Fatal(err)
	}
	before, after, _ := strings.Cut(b.String(), `- name: "after"`)
	if !strings.Contains(before, "qdiscs: {client/eth0: {fq: {}}}") || strings.Contains(after, "qdiscs:") {
		t.Errorf("draft:\n%s", b.String())
	}
	path := filepath.Join(t.TempDir(), "drafted.yaml")
	os.WriteFile(path, b.Bytes(), 0o644)
	if _, err := scenarios.Load(path, scenarios.Options{}); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, b.String())
	}
}

// TestOtherLinkWordsNotKnobs: `ip link set dev eth0 xdp obj FILE sec xdp` is a toggle whose
// words are no device knob: the draft leaves them out and loads (it wrote {xdp: obj} before).
func TestOtherLinkWordsNotKnobs(t *testing.T) {
	msg := "veth: a change with XDP attached\n\n# ip link set dev eth0 xdp obj xdp_pass.o sec xdp\n# iperf3 -c 10.0.0.2\nBefore: 9.1 Gbit/s\nAfter: 9.8 Gbit/s\n"
	r, err := Read("msg.txt", []byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteScenario(&b, "drafted"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "xdp") {
		t.Errorf("draft:\n%s", b.String())
	}
	path := filepath.Join(t.TempDir(), "drafted.yaml")
	os.WriteFile(path, b.Bytes(), 0o644)
	if _, err := scenarios.Load(path, scenarios.Options{}); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, b.String())
	}
}

// TestImpossibleFigures: a negative rate or time is no measurement (moved to what was not
// read, with why); a change from 0 has no percentage ("from 0", never "+0.0%"), keeps its
// direction, and a stated percentage is not held against it.
func TestImpossibleFigures(t *testing.T) {
	for _, text := range []string{"Before: -5 Gbps\nAfter: 2 Gbps\n", "Before: 12 us\nAfter: -3 us\n", "Before: -100 pps\nAfter: 200 pps\n"} {
		r, err := Read("neg", []byte(text))
		if err != nil || len(r.Claims) != 0 || len(r.Unparsed) != 1 || !strings.Contains(r.Unparsed[0].Reason, "is never negative") {
			t.Errorf("%q: %+v %v", text, r, err)
		}
	}
	r, err := Read("zero", []byte("Drops:\nBefore: 0 pps\nAfter: 250 pps (+100%)\n"))
	if err != nil || len(r.Claims) != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	c := r.Claims[0]
	if !c.FromZero || c.Change != 0 || c.Mismatch || !rises(c) {
		t.Errorf("from 0: %+v", c)
	}
	var out strings.Builder
	if err := r.Text(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "from 0") || strings.Contains(out.String(), "+0.0%") {
		t.Errorf("the table:\n%s", out.String())
	}
	if outcome, what := outcome(c, results.Comparison{Direction: 1, Verdict: results.Improved, Change: 0.5}); outcome != results.Reproduced || !strings.Contains(what, "claimed from 0 (better)") {
		t.Errorf("a rise from 0 measured as a rise: %s (%s)", outcome, what)
	}
}

// TestBounded: an input with more claims than a report keeps (a table of MaxClaims+5 rows) and
// more figures than are paired is read to its end, keeps MaxClaims claims and says what it
// left out, so that memory does not grow with a stranger's table (a 32 MiB one: 311 MB).
func TestBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("Subject: x\n\n| flows | before | after |\n|---|---|---|\n")
	for i := range MaxClaims + 5 {
		fmt.Fprintf(&b, "| %d | %d Gbit/s | %d Gbit/s |\n", i+1, 10+i%7, 12+i%5)
	}
	b.WriteString("\nBefore: 1 Gbps\nAfter: 2 Gbps\n")
	r, err := Read("big.txt", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != MaxClaims {
		t.Errorf("%d claims, want the first %d", len(r.Claims), MaxClaims)
	}
	last := r.Unparsed[len(r.Unparsed)-1].Reason
	if !strings.Contains(last, "goes on past what a report keeps") || !strings.Contains(last, "6 more claims or table rows") {
		t.Errorf("the left-out part is not said: %q", last)
	}
	var lines strings.Builder
	for range maxFigures/2 + 5 {
		lines.WriteString("before: 2 Gbit/s\nafter: 3 Gbit/s\n\n")
	}
	r, err = Read("figures.txt", []byte(lines.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unparsed) == 0 {
		t.Fatalf("figures past the bound: nothing said (%d claims, %s)", len(r.Claims), r.Summary)
	}
	if last := r.Unparsed[len(r.Unparsed)-1].Reason; !strings.Contains(last, "10 more figures") {
		t.Errorf("figures past the bound: %q", last)
	}
	// A block of 20,000 rows aligned with single spaces: each line may start a table whose
	// columns are found by alignment, so that search is bounded (maxAlignedRows); unbounded, it
	// grows with the square of the block's rows.
	var aligned strings.Builder
	aligned.WriteString("Subject: x\n\ntest base patched\n")
	for i := range 20000 {
		fmt.Fprintf(&aligned, "t%d %d.1 %d.2\n", i, i, i)
	}
	if _, err := Read("aligned.txt", []byte(aligned.String())); err != nil {
		t.Fatal(err)
	}
}

// TestStrangeShapes: inputs no message has are cut or refused with a sentence, and the rest of
// the message is still read: a table of 10,000 columns (its lines are past maxLine), one of 500
// columns in short lines (past maxTableColumns), a list 1,000 levels deep over a result, and
// one line of 10 MB.
func TestStrangeShapes(t *testing.T) {
	table := func(columns int) string {
		var b strings.Builder
		b.WriteString("Subject: x\n\n")
		for row := range 3 {
			for c := range columns {
				if row == 0 {
					fmt.Fprintf(&b, "c%d  ", c)
				} else {
					fmt.Fprintf(&b, "%d  ", c+row)
				}
			}
			b.WriteString("\n")
		}
		return b.String() + "\nBefore: 10 Gbit/s\nAfter: 12 Gbit/s\n"
	}
	var deep strings.Builder
	deep.WriteString("Subject: x\n\n")
	for d := range 1000 {
		deep.WriteString(strings.Repeat("  ", d) + "- level " + fmt.Sprint(d) + ":\n")
	}
	deep.WriteString("\nBefore: 10 Gbit/s\nAfter: 12 Gbit/s\n")
	long := "Subject: x\n\n" + strings.Repeat("before: 1 Gbps after: 2 Gbps ", 10<<20/30) + "\n\nBefore: 10 Gbit/s\nAfter: 12 Gbit/s\n"
	for _, tc := range []struct {
		name, text string
		reason     string // said of the shape, "" when nothing is
		line       int
	}{
		{"10,000 columns", table(10000), "longer than any line of a message is read", 4},
		{"500 columns", table(500), "a table whose states could not be told", 4},
		{"1,000 levels", deep.String(), "", 0},
		{"a line of 10 MB", long, "bytes, longer than any line of a message is read", 3},
	} {
		r, err := Read(tc.name, []byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != 10e9 || r.Claims[0].After.Median != 12e9 {
			t.Errorf("%s: claims %+v, want only the result after it (10 -> 12 Gbit/s)", tc.name, r.Claims)
		}
		said := slices.ContainsFunc(r.Unparsed, func(u Unparsed) bool {
			return strings.Contains(u.Reason, tc.reason) && slices.Contains(u.Lines, tc.line)
		})
		if tc.reason != "" && !said {
			t.Errorf("%s: not said (line %d, %q): %+v", tc.name, tc.line, tc.reason, r.Unparsed)
		}
		if tc.reason == "" && len(r.Unparsed) > 0 {
			t.Errorf("%s: said as not read: %+v", tc.name, r.Unparsed)
		}
	}
}

// TestNumbersPastFloatRange: a stated change whose percentage is past float64's range (400
// digits before the %, or before "x faster"), and two figures whose change is past it (from
// 1e-321 to 10 Gbit/s), are said as not read with their line, never kept as +Inf% or NaN: the
// table has no Inf or NaN and JSON encodes the report. The claim the stated change would have
// joined stays, without it.
func TestNumbersPastFloatRange(t *testing.T) {
	huge := "1" + strings.Repeat("0", 400)
	tiny := "0." + strings.Repeat("0", 320) + "1"
	for _, tc := range []struct {
		name, text string
		claims     int // the claims kept, none with a stated change
		reason     string
		line       int
	}{
		{"stated percent", "Subject: x\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n\nThis improves throughput by " + huge + "%.\n", 1, "a stated change too large for a number", 6},
		{"stated per family", "Subject: x\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n\nThroughput rises " + huge + "% for IPv4.\n", 1, "a stated change too large for a number", 6},
		{"stated times", "Subject: x\n\nThis is " + huge + "x faster\n\nBefore: 1 Gbps\nAfter: 2 Gbps\n", 1, "a stated change too large for a number", 3},
		{"change of two figures", "Subject: x\n\nThroughput goes from " + tiny + " Gbps to 10 Gbps.\n", 0, "figures too far apart for their change to be a number", 3},
	} {
		r, err := Read(tc.name, []byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(r.Claims) != tc.claims || slices.ContainsFunc(r.Claims, func(c Claim) bool { return c.Stated != nil }) {
			t.Errorf("%s: claims %+v, want %d without a stated change", tc.name, r.Claims, tc.claims)
		}
		if !slices.ContainsFunc(r.Unparsed, func(u Unparsed) bool {
			return strings.Contains(u.Reason, tc.reason) && slices.Contains(u.Lines, tc.line)
		}) {
			t.Errorf("%s: not read %+v, want line %d: %q", tc.name, r.Unparsed, tc.line, tc.reason)
		}
		var text strings.Builder
		if err := r.Text(&text); err != nil || strings.Contains(text.String(), "Inf") || strings.Contains(text.String(), "NaN") {
			t.Errorf("%s: the table (%v):\n%s", tc.name, err, text.String())
		}
		if data, err := json.Marshal(r); err != nil || strings.Contains(string(data), "Inf") || strings.Contains(string(data), "NaN") {
			t.Errorf("%s: JSON: %v %s", tc.name, err, data)
		}
	}
}

// TestRoundTiny: a figure below 1e-299 keeps its value where the scale that rounds it to 10
// digits overflows, rather than turning into NaN.
func TestRoundTiny(t *testing.T) {
	for _, v := range []float64{1e-300, 5e-324, -1e-310, 1e308, 1.7976931348623157e308, 0} {
		if got := round(v); math.IsNaN(got) || math.IsInf(got, 0) || (got != v && math.Abs(got/v-1) > 1e-9) {
			t.Errorf("round(%g) = %g", v, got)
		}
	}
}

// TestNetperfBanners: a classic block's test is its banner's, as netperf prints it, with no
// command above it to say; the rate is a transaction rate for every request/response kind.
func TestNetperfBanners(t *testing.T) {
	for banner, want := range map[string]string{
		"MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":                           "TCP_STREAM",
		"MIGRATED UDP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET6 to 2001:db8::2 () port 0 AF_INET6":                       "UDP_STREAM",
		"MIGRATED TCP MAERTS TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":                           "TCP_MAERTS",
		"TCP SENDFILE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":                                  "TCP_SENDFILE",
		"MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET : first burst 0": "TCP_RR",
		"MIGRATED UDP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET : first burst 0": "UDP_RR",
		"MIGRATED TCP Connect/Request/Response TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":         "TCP_CRR",
		"TCP Connect/Close TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":                             "TCP_CC",
		"TCP Transactional/Request/Response TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET":            "TCP_TRR",
		"Some prose that mentions a TEST of TCP": "",
	} {
		if got := bannerTest(banner); got != want {
			t.Errorf("%q: %q, want %q", banner, got, want)
		}
	}
	block := func(rate string) string {
		return "MIGRATED TCP Connect/Request/Response TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 192.0.2.2 () port 0 AF_INET\n" +
			"Local /Remote\nSocket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate\n" +
			"bytes  Bytes  bytes    bytes   secs.    per sec\n\n16384  131072 1        1       30.00    " + rate + "\n16384  131072\n"
	}
	r, err := Read("crr", []byte("Subject: x\n\nBefore:\n"+block("16019.31")+"\nAfter:\n"+block("17150.92")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 || r.Claims[0].Options["test"] != "TCP_CRR" || r.Claims[0].Metric != "transaction_rate" || r.Claims[0].Before.Median != 16019.31 {
		t.Errorf("a TCP_CRR block without its command: %+v", r.Claims)
	}
	// An author who cuts the banner and "Local /Remote" leaves the row under them, which is
	// a request/response test's alone; a heading may name which.
	cut := func(rate string) string {
		return "Socket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate\n" +
			"bytes  Bytes  bytes    bytes   secs.    per sec\n\n16384  131072 1        1       30.00    " + rate + "\n16384  131072\n"
	}
	for heading, want := range map[string]string{"": "TCP_RR", "SCTP_RR ": "SCTP_RR", "UDP_RR, ": "UDP_RR"} {
		r, err = Read("rr", []byte("Subject: x\n\n"+heading+"before:\n"+cut("21004.50")+"\n"+heading+"after:\n"+cut("21877.25")))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Options["test"] != want || r.Claims[0].Metric != "transaction_rate" || r.Claims[0].After.Median != 21877.25 {
			t.Errorf("an RR block from its socket row under %q: %+v, want %s", heading, r.Claims, want)
		}
	}
	// A script's selectors with a colon ("TRANSACTION_RATE:  9120.5  (per CPU: ...)") under a
	// heading that names the test, the command giving none.
	script := func(rate string) string {
		return "  # ./rr_per_cpu 192.0.2.2\n    MEAN_LATENCY:  110.250  (per CPU:  110.000  110.500 )\n" +
			"    TRANSACTION_RATE:  " + rate + "  (per CPU:  4500.000  4620.500 )\n"
	}
	r, err = Read("script", []byte("Subject: x\n\nUDP_RR before:\n\n"+script("9120.500")+"\nUDP_RR after:\n\n"+script("9846.250")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 2 || r.Claims[0].Options["test"] != "UDP_RR" || r.Claims[1].Metric != "transaction_rate" || r.Claims[1].After.Median != 9846.25 {
		t.Errorf("a script's selectors under a heading naming UDP_RR: %+v", r.Claims)
	}
}

// TestStatedChangeOfAnotherKind: a stated change whose sentence names the kind of figure it
// is of ("throughput improved by 6%") is not given to the text's one claim when that claim
// measures another kind (a CPU share from 38% to 31%); one that names none, or the same kind,
// is.
func TestStatedChangeOfAnotherKind(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		stated     float64 // 0: none attached
	}{
		{"another kind", "Subject: x\n\nBandwidth went up by 4%, and the busiest core's utilization dropped from 71% to 64%.\n", 0},
		{"another kind, latency", "Subject: x\n\nThe p99 latency is lower by 12%; the receiver's softirq load fell from 22.5% to 20.1%.\n", 0},
		{"the same kind", "Subject: x\n\nThroughput improved by 6%: from 10.0 Gbit/s to 10.6 Gbit/s.\n", 0.06},
		{"no kind named", "Subject: x\n\nThis gives an improvement of about 6%: from 10.0 Gbit/s to 10.6 Gbit/s.\n", 0.06},
	} {
		r, err := Read(tc.name, []byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(r.Claims) != 1 {
			t.Fatalf("%s: %d claims, want 1: %+v", tc.name, len(r.Claims), r.Claims)
		}
		switch c := r.Claims[0]; {
		case tc.stated == 0 && c.Stated != nil:
			t.Errorf("%s: the claim of %s took the stated change %v", tc.name, c.Metric, *c.Stated)
		case tc.stated != 0 && (c.Stated == nil || *c.Stated != tc.stated):
			t.Errorf("%s: stated %v, want %v", tc.name, c.Stated, tc.stated)
		}
	}
}

// TestEventRatesAreNoPackets: a rate that names no thing it counts ("210k/s"), or names
// events, after a clause that counts events other than packets (interrupts, IPIs, context
// switches) is a rate of those events, not a packet rate; the same rate after packets, or a
// packet rate beside it, stays one.
func TestEventRatesAreNoPackets(t *testing.T) {
	for _, tc := range []struct {
		text, quantity, unit string
	}{
		{"The receiving CPU takes far fewer interrupts: from 210k/s to 64k/s at line rate.", "interrupts_rate", "/s"},
		{"Rescheduling IPIs per second go from 88k/s to 12k/s.", "ipis_rate", "/s"},
		{"It cuts the wakeups from 31k wakeups/s to 9k wakeups/s.", "wakeups_rate", "/s"},
		{"The forwarded packets went from 210k/s to 264k/s.", "", "pps"},
		{"The packet rate goes from 1.9 Mpps to 2.2 Mpps, though interrupts stay high.", "", "pps"},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.text+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 {
			t.Fatalf("%q: %d claims", tc.text, len(r.Claims))
		}
		if c := r.Claims[0]; c.Quantity != tc.quantity && !(tc.quantity == "" && c.Metric == "packet_rate") || c.Unit != tc.unit {
			t.Errorf("%q: metric %q quantity %q unit %q, want quantity %q unit %q", tc.text, c.Metric, c.Quantity, c.Unit, tc.quantity, tc.unit)
		}
	}
}

// TestStatedChangeBesideItsFigure: a change the text states in words of movement ("went up
// by 12%", "goes down by 20%"), or as a signed percentage in parentheses right after a figure
// ("26,877,040 pps (+11.5%)"), is the stated change of the claim whose line it is on; an
// unsigned percentage in parentheses is no change.
func TestStatedChangeBesideItsFigure(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		stated     []float64 // per claim; 0: none attached
	}{
		{"went up", "Subject: x\n\nThroughput went up by 12% (from 8.1 to 9.07 Gbit/s).\n", []float64{0.12}},
		{"goes down", "Subject: x\n\nThe p99 latency goes down by 20%, from 50 us to 40 us.\n", []float64{-0.2}},
		{"grows", "Subject: x\n\nThe throughput of one flow grows by ~15%,\nfrom 3.2 to 3.7 Gbps.\n", []float64{0.15}},
		{"falls", "Subject: x\n\nThe forwarding rate falls by 5% (from 2.0 to 1.9 Mpps).\n", []float64{-0.05}},
		{"parentheses on the after lines", "Subject: x\n\ndrop:\n  before: 24,102,331 pps\n  after:  26,877,040 pps (+11.5%)\n\npass:\n  before: 8.91 Mpps\n  after:  9.02 Mpps (+1.2%)\n",
			[]float64{0.115, 0.012}},
		{"an arrow", "Subject: x\n\nrx: 3.1 -> 3.4 Mpps (+9.7%)\n", []float64{0.097}},
		{"a share in parentheses", "Subject: x\n\nbefore: 9.1 Gbit/s\nafter: 9.6 Gbit/s (5% of a core)\n\ntx: 1.1 -> 1.2 Mpps\n", []float64{0, 0}},
	} {
		r, err := Read(tc.name, []byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(r.Claims) != len(tc.stated) {
			t.Errorf("%s: %d claims, want %d:\n%s", tc.name, len(r.Claims), len(tc.stated), claimsText(r))
			continue
		}
		for i, c := range r.Claims {
			switch want := tc.stated[i]; {
			case want == 0 && c.Stated != nil:
				t.Errorf("%s: claim %d took the stated change %v", tc.name, i+1, *c.Stated)
			case want != 0 && (c.Stated == nil || math.Abs(*c.Stated-want) > 1e-9):
				t.Errorf("%s: claim %d stated %v, want %v", tc.name, i+1, c.Stated, want)
			}
		}
	}
}

// TestStatedWholePercentAgreesWithinAPoint: "+10%" beside figures 10.6% apart is the author's
// rounding or cutting off, no mismatch; "+6.5%" beside them is one, and so is "+32%" beside a
// change of 48%.
func TestStatedWholePercentAgreesWithinAPoint(t *testing.T) {
	for _, tc := range []struct {
		text     string
		mismatch bool
	}{
		{"Subject: x\n\nbefore: 9.75 Mpps\nafter: 10.78 Mpps (+10%)\n", false},
		{"Subject: x\n\nbefore: 9.75 Mpps\nafter: 10.78 Mpps (+6.5%)\n", true},
		{"Subject: x\n\nbefore: 16.6 Mpps\nafter: 24.6 Mpps (+32%)\n", true},
	} {
		r, err := Read("x", []byte(tc.text))
		if err != nil || len(r.Claims) != 1 || r.Claims[0].Stated == nil {
			t.Fatalf("%q: %v %+v", tc.text, err, r)
		}
		if r.Claims[0].Mismatch != tc.mismatch {
			t.Errorf("%q: mismatch %v, want %v", tc.text, r.Claims[0].Mismatch, tc.mismatch)
		}
	}
}

// TestUndecidedTableIsSaid: a long table of three states under a two-row header, where no
// word says which of the two others is the change, pairs nothing, and the report says so
// (its lines not read, a table whose states could not be told) instead of "no numbers".
func TestUndecidedTableIsSaid(t *testing.T) {
	text := `Subject: [PATCH net-next] net: rework the receive path

Request/response over two hosts, varying flows:

Kernel         Flows   Rate          Latency (us)
                       (trans/s)     P50    P99
stock          16      50211         31.4   66.2
stock          64      90876         40.8   81.9
ring wake      16      53120         29.9   62.0
ring wake      64      95410         38.1   77.4
idle poll      16      51004         30.6   64.8
idle poll      64      92015         39.9   80.1
`
	r, err := Read("undecided", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 0 {
		t.Errorf("claims %s, want none: no word says which state is the change", claimsText(r))
	}
	said := slices.ContainsFunc(r.Unparsed, func(u Unparsed) bool {
		return strings.Contains(u.Reason, "a table whose states could not be told") && slices.Contains(u.Lines, 5) && slices.Contains(u.Lines, 12)
	})
	if !said || r.summary() != "figures, but none of one measurement before and after a change" {
		t.Errorf("the table is not said: summary %q, not read %+v", r.summary(), r.Unparsed)
	}
	// The Subject naming one of them decides it.
	named := strings.Replace(text, "rework the receive path", "wake the ring before polling", 1)
	if r, err := Read("named", []byte(named)); err != nil || len(r.Claims) != 6 {
		t.Errorf("with the Subject naming 'ring wake': %v, claims\n%s", err, claimsText(r))
	}
}

// TestSettingColumnsBeforeStates: a column of settings between a table's labels and its
// states' columns (the streams beside the MTU) is each row's condition, so two rows of one
// label stay two measurements; a column of a third state's figures is no condition.
func TestSettingColumnsBeforeStates(t *testing.T) {
	read := func(name string) *Report { return readSeed(t, "families/"+name) }
	seen := map[string]bool{}
	for _, c := range read("units-row-under-some-columns.txt").Claims {
		if c.Conditions["streams"] == "" {
			t.Errorf("line %v: conditions %v lack the streams", c.Lines, c.Conditions)
		}
		key := fmt.Sprint(c.Conditions)
		if seen[key] {
			t.Errorf("two claims under the same conditions %s", key)
		}
		seen[key] = true
	}
	for _, c := range read("three-trees-one-glued-plus.txt").Claims {
		for k := range c.Conditions {
			if _, ok := kernelVersion(k); ok {
				t.Errorf("a third tree's column %q read as a condition: %v", k, c.Conditions)
			}
		}
	}
}

// TestCaptionUnitOverGroups: bare figures under numbered groups take the unit of the caption
// over the groups (kpps, written as pps), not only those of the first group.
func TestCaptionUnitOverGroups(t *testing.T) {
	r := readSeed(t, "families/caption-unit-over-numbered-groups.txt")
	if len(r.Claims) != 3 {
		t.Fatalf("%d claims, want 3", len(r.Claims))
	}
	for _, c := range r.Claims {
		if c.Unit != "pps" || c.Before.Median < 1e6 {
			t.Errorf("line %v: %v %s, want the caption's kpps", c.Lines, c.Before.Median, c.Unit)
		}
	}
}

// TestCellSecondShares: a share in parentheses in both states' cells is a second measurement;
// a baseline's "(0.00%)" or "(100%)" and a signed change are notes, no share.
func TestCellSecondShares(t *testing.T) {
	for _, c := range []struct {
		before, after string
		want          bool
	}{
		{"2341 Mbps (61%)", "2350 Mbps (47%)", true},
		{"6803.96 (0.00%)", "6427.55 (5.53%)", false},
		{"1.00 (100%)", "1.21 (121%)", false},
		{"9.1 Mpps (+3%)", "9.4 Mpps (+6%)", false},
		{"2341 Mbps", "2350 Mbps (47%)", false},
	} {
		b, a, ok := cellSecondShares(c.before, c.after)
		if ok != c.want {
			t.Errorf("%q, %q: %v, want %v", c.before, c.after, ok, c.want)
		}
		if ok && (b.unit.kind != "percent" || a.unit.kind != "percent") {
			t.Errorf("%q, %q: units %v, %v", c.before, c.after, b.unit, a.unit)
		}
	}
}

// TestChangesAgainstAThirdColumn: percents in parentheses in both states' cells, one of them
// signed, are each cell's change against a reference column: neither a share read as a
// claim of its own nor a change stated between the two states.
func TestChangesAgainstAThirdColumn(t *testing.T) {
	r := readSeed(t, "families/percents-against-a-reference-column.txt")
	if len(r.Claims) != 3 {
		t.Errorf("%d claims, want the 3 rows' throughputs:\n%s", len(r.Claims), claimsText(r))
	}
	for _, c := range r.Claims {
		if c.Stated != nil {
			t.Errorf("line %v: stated %v, a change against the reference column", c.Lines, *c.Stated)
		}
	}
}

// TestSharesAName: a column's name shares a word with the other states' names, however short
// ("zc" of "non-zc"); a reference named apart shares none.
func TestSharesAName(t *testing.T) {
	for _, c := range []struct {
		name   string
		others []string
		want   bool
	}{
		{"zc", []string{"non-zc", "zc + batch"}, true},
		{"batched", []string{"unbatched", "batched + prefetch"}, true},
		{"plain TCP", []string{"origin", "with patches"}, false},
		{"the reference", []string{"the base", "with the series"}, false},
	} {
		if got := sharesAName(c.name, c.others); got != c.want {
			t.Errorf("sharesAName(%q, %q) = %v, want %v", c.name, c.others, got, c.want)
		}
	}
}
