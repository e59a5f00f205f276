package htmlreport

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/history/changepoint"
	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// testResult is a run of two cases, states off and on, throughput and RTT.
func testResult() *results.Result {
	r := &results.Result{Schema: results.Schema, RunID: "nsp0001", Label: "base", Complete: true,
		Scenario:    results.ScenarioInfo{Name: "veth-bigtcp", File: "veth-bigtcp.yaml", SHA256: "abcdef0123456789"},
		Start:       time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		End:         time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC),
		Settings:    results.Settings{Runs: 6, Order: "alternate", Policy: results.Policy{Alpha: 0.05, CVLimit: 0.05}},
		Environment: results.Environment{KernelRelease: "6.18.44", KernelVersion: "#1 SMP", CPUModel: "test", CPUs: 2, Hostname: "box", Tools: map[string]string{"iperf3": "3.12"}},
	}
	for _, label := range []string{"mtu=1500", "mtu=8000"} {
		c := results.Case{Label: label, States: []results.StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}}
		for round := 1; round <= 6; round++ {
			f := 1 + 0.01*float64(round%3)
			for _, st := range []string{"off", "on"} {
				tput := map[string]float64{"off": 10e9, "on": 13e9}[st]
				c.Samples = append(c.Samples, results.Sample{Round: round, State: st, Workload: "tcp4", Tool: "iperf3",
					Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: tput * f}, {Name: results.RTTMean, Unit: "us", Value: 60 / f}}})
			}
		}
		r.Cases = append(r.Cases, c)
	}
	r.Recompute()
	return r
}

var (
	headingRE = regexp.MustCompile(`<h[12]>([^<]*)</h[12]>`)
	titleRE   = regexp.MustCompile(`font-size:12px">([^<]*)</text>`)
)

// structure is what a reader sees of a page's layout: headings, the number of plots under
// each, and the plots' titles and axis labels.
func structure(page string) string {
	var b strings.Builder
	sections := strings.Split(page, "<h2>")
	for i, s := range sections {
		if i > 0 {
			s = "<h2>" + s
		}
		for _, h := range headingRE.FindAllStringSubmatch(s, -1) {
			fmt.Fprintf(&b, "%s\n", h[1])
		}
		if n := strings.Count(s, "<svg"); n > 0 {
			fmt.Fprintf(&b, "  %d svg\n", n)
		}
		for _, t := range titleRE.FindAllStringSubmatch(s, -1) {
			fmt.Fprintf(&b, "  text: %s\n", t[1])
		}
	}
	return b.String()
}

// selfContained fails on anything a page would fetch: a URL, a script, a stylesheet link.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

func TestResultGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Result(&b, testResult()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	selfContained(t, page)
	// One plot of samples and one in measuring order per case, workload and metric.
	if n := strings.Count(page, "<svg"); n != 2*2*2 {
		t.Errorf("%d plots, want 8", n)
	}
	golden.Check(t, filepath.Join("testdata", "result.structure.golden"), structure(page))
}

func TestCompareHTML(t *testing.T) {
	a, b := testResult(), testResult()
	b.RunID, b.Label = "nsp0002", "patched"
	rep, err := compare.New([]compare.Side{{Source: "a.json", Result: a}, {Source: "b.json", Result: b}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Compare(&out, rep); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	selfContained(t, page)
	if !strings.Contains(page, "off@B vs off@A") || !strings.Contains(page, "label differs: A base, B patched") {
		t.Errorf("comparison page lacks the comparison or the environment")
	}
	// One colour per result: off@A and on@A are drawn in the same colour.
	stroke := regexp.MustCompile(`stroke:(#[0-9A-F]{6})`)
	colours := map[string]bool{}
	for _, m := range stroke.FindAllStringSubmatch(page, -1) {
		colours[m[1]] = true
	}
	if !colours["#1F77B4"] || !colours["#D62728"] || colours["#2CA02C"] {
		t.Errorf("colours %v, want one per result", colours)
	}
}

// testSeries is a history series with a 20% drop at run 12 of 24.
func testSeries() history.Series {
	s := history.Series{Scenario: "veth-bigtcp", Workload: "tcp4", Metric: results.Throughput, State: "on", Unit: "bit/s"}
	for i := 0; i < 24; i++ {
		v := 10e9 * (1 + 0.01*float64(i%4))
		if i >= 12 {
			v *= 0.8
		}
		lo, hi := v*0.98, v*1.02
		s.Points = append(s.Points, history.Point{RunID: fmt.Sprintf("nsp%04d", i), Label: fmt.Sprintf("6.18.%d", i), Median: v, Lo: &lo, Hi: &hi,
			Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)})
	}
	xs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i] = p.Median
	}
	s.ChangePoints = changepoint.Detect(xs, changepoint.Options{})
	for _, cp := range s.ChangePoints {
		s.Findings = append(s.Findings, history.Finding{Before: s.Points[cp.Index-1], After: s.Points[cp.Index], Change: cp.Change, P: cp.P, Kind: history.Regression})
	}
	return s
}

func TestHistoryGolden(t *testing.T) {
	s := testSeries()
	if len(s.ChangePoints) != 1 || s.ChangePoints[0].Index != 12 {
		t.Fatalf("change points %+v", s.ChangePoints)
	}
	var b bytes.Buffer
	if err := History(&b, "nsperf history analyze", []history.Series{s}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	selfContained(t, page)
	for _, want := range []string{"change point", "segment level", "Gbit/s", "higher is better", "6.18.12", "between run nsp0011"} {
		if !strings.Contains(page, want) {
			t.Errorf("history page lacks %q", want)
		}
	}
	golden.Check(t, filepath.Join("testdata", "history.structure.golden"), structure(page))
}

// TestRendersInBrowser: a real browser (Debian's chromium-headless-shell, installed when
// missing) renders a report offline to a PNG of the window's size that is not blank.
func TestRendersInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	for name, write := range map[string]func(*bytes.Buffer) error{
		"result":  func(b *bytes.Buffer) error { return Result(b, testResult()) },
		"history": func(b *bytes.Buffer) error { return History(b, "history", []history.Series{testSeries()}) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		page, shot := filepath.Join(dir, name+".html"), filepath.Join(dir, name+".png")
		if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		// No network: the proxy goes nowhere, so a page that fetched anything would show it.
		out, err := exec.Command(browser, "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9", "--window-size=1200,1600",
			"--screenshot="+shot, "file://"+page).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, out)
		}
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
			t.Errorf("%s: screenshot %v, want 1200x1600", name, b)
		}
		if frac := inked(img); frac < 0.01 {
			t.Errorf("%s: only %.3f%% of the screenshot is not white", name, 100*frac)
		} else {
			t.Logf("%s: %.1f%% of the screenshot is drawn", name, 100*frac)
		}
	}
}

// inked is the fraction of pixels that are not white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// chromium finds Debian's chromium-headless-shell, installing it as root when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	const name = "chromium-headless-shell"
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", name).CombinedOutput(); err != nil {
			t.Logf("apt-get install %s: %v\n%s", name, err, out)
		}
	}
	testenv.RequireTool(t, name) // fails in CI, skips elsewhere
	path, _ := exec.LookPath(name)
	return path
}

// BenchmarkMatrixHTML: the HTML report of a run of 64 matrix cases (2 states, 2 workloads,
// iperf3's 7 metrics, 6 runs each): 1,792 plots.
func BenchmarkMatrixHTML(b *testing.B) {
	r := testResult()
	one := r.Cases[0]
	r.Cases = nil
	metrics := []string{results.Throughput, results.Retransmits, results.CPUSender, results.CPUReceiver, results.RTTMean, results.RTTMin, results.RTTMax}
	for i := 0; i < 64; i++ {
		c := results.Case{Label: fmt.Sprintf("case=%d", i), States: one.States}
		for _, s := range one.Samples {
			for _, w := range []string{"tcp4", "tcp6"} {
				s2 := s
				s2.Workload = w
				s2.Metrics = nil
				for k, m := range metrics {
					s2.Metrics = append(s2.Metrics, results.Metric{Name: m, Unit: "count", Value: s.Metrics[0].Value * float64(k+1) / 1e9})
				}
				c.Samples = append(c.Samples, s2)
			}
		}
		r.Cases = append(r.Cases, c)
	}
	r.Recompute()
	for b.Loop() {
		var out bytes.Buffer
		if err := Result(&out, r); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(out.Len())/1e6, "MB")
	}
}

// TestMeasuringOrderFollowsTheTurns: the "in measuring order" plot of an A/B run of two
// kernels follows the turns (A B, B A), not all of A's samples before B's; and the header
// names the policy's defaults, not 0.
func TestMeasuringOrderFollowsTheTurns(t *testing.T) {
	var samples []results.Sample
	for _, side := range []string{"A", "B"} { // as compare.Kernels merges them: A's first
		for round := 1; round <= 3; round++ {
			samples = append(samples, results.Sample{State: "off@" + side, SideOf: results.SideOf{Side: side, Of: "off"}, Round: round})
		}
	}
	turns := []results.Turn{{Gate: 1, Kernel: "A"}, {Gate: 1, Kernel: "B"}, {Gate: 2, Kernel: "B"}, {Gate: 2, Kernel: "A"}, {Gate: 3, Kernel: "A"}, {Gate: 3, Kernel: "B"}}
	var got []string
	for _, s := range measuringOrder(samples, turns, 0) {
		got = append(got, fmt.Sprintf("%s%d", strings.TrimPrefix(s.State, "off@"), s.Round))
	}
	if strings.Join(got, " ") != "A1 B1 B2 A2 A3 B3" {
		t.Errorf("measuring order %v, want A1 B1 B2 A2 A3 B3", got)
	}
	// A second case's rounds come after the first's gates.
	got = nil
	for _, s := range measuringOrder(samples[:2], []results.Turn{{Gate: 4, Kernel: "A"}, {Gate: 3, Kernel: "A"}}, 2) {
		got = append(got, fmt.Sprint(s.Round))
	}
	if strings.Join(got, " ") != "2 1" {
		t.Errorf("second case: %v", got)
	}
	if plain := measuringOrder(samples, nil, 0); !slices.EqualFunc(plain, samples, func(a, b results.Sample) bool { return a.State == b.State && a.Round == b.Round }) {
		t.Error("a result without turns is reordered")
	}

	r := testResult()
	r.Settings.Policy = results.Policy{}
	var b bytes.Buffer
	if err := Result(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "alpha 0.05, CV limit 5%") {
		t.Errorf("the header does not name the default policy")
	}
}

// withCounters gives every sample of a result device counters: client/eth0 sends 170 KB
// packets in "on" (64 KB in "off"), and, when segs is set, server's TcpExtTCPOFOQueue moves
// three times as much in "on".
func withCounters(r *results.Result, ofo map[string]uint64) {
	for ci := range r.Cases {
		c := &r.Cases[ci]
		c.BigPackets = "counted (test)"
		c.States[0].Devices = map[string]map[string]uint64{"client/eth0": {"gso_max_size": 65536}}
		c.States[1].Devices = map[string]map[string]uint64{"client/eth0": {"gso_max_size": 185000}}
		for si := range c.Samples {
			s := &c.Samples[si]
			size, big := uint64(64000), uint64(0)
			if s.State == "on" {
				size, big = 170000, 1000
			}
			s.Counters = &results.Counters{
				Devices:    map[string]results.DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 1000 * size, BigTx: &big}},
				Namespaces: map[string]map[string]uint64{"server": {"TcpExtTCPOFOQueue": ofo[s.State] + uint64(s.Round)}},
			}
		}
	}
	r.Recompute()
}

// TestEvidenceHTML: the report has a section per case with the evidence lines, a plot of the
// packet size per state and device, and the side metrics.
func TestEvidenceHTML(t *testing.T) {
	r := testResult()
	withCounters(r, map[string]uint64{"off": 100, "on": 300})
	var out bytes.Buffer
	if err := Result(&out, r); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	selfContained(t, page)
	for _, want := range []string{"[mtu=1500] evidence: packet sizes per state and device", "on: client/eth0 tx 170 KB per packet, 100% above 64 KiB",
		"bytes per packet, in the direction that carried the data", "side metrics tcp4 on vs off", "ns server TcpExtTCPOFOQueue"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 2*2*2+2 {
		t.Errorf("%d plots, want the 8 of the metrics and one evidence plot per case", n)
	}
}

// TestVerdictComesFirst: the page opens with what the run decided, before its metadata and
// plots: the outcome, then a row per gated comparison (and expectation, capability).
func TestVerdictComesFirst(t *testing.T) {
	for _, tc := range []struct {
		name      string
		on        float64 // on's throughput against off's 10 Gbit/s
		outcome   string
		rowClass  string
		rowVerdit string
	}{
		{"improved", 13e9, `<div class="pass">the result passes`, `<tr class="pass">`, "improved"},
		{"regressed", 6e9, `<div class="fail">the result fails (2):`, `<tr class="fail">`, "regressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testResult()
			r.Settings.Gates = map[string][]string{"tcp4": {results.Throughput}}
			for ci := range r.Cases {
				for si, s := range r.Cases[ci].Samples {
					if s.State == "on" {
						r.Cases[ci].Samples[si].Metrics[0].Value = tc.on * (s.Metrics[0].Value / 13e9)
					}
				}
			}
			r.Recompute()
			var b bytes.Buffer
			if err := Result(&b, r); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			headings := headingRE.FindAllStringSubmatch(page, 3)
			if len(headings) < 3 || headings[1][1] != "Verdict" || headings[2][1] != "Run" {
				t.Fatalf("the page does not open with the verdict, then the run: %v", headings)
			}
			verdict := page[strings.Index(page, "<h2>Verdict"):strings.Index(page, "<h2>Run")]
			if !strings.Contains(verdict, tc.outcome) {
				t.Errorf("the verdict section lacks %q:\n%s", tc.outcome, verdict)
			}
			// One row per case's gated comparison (throughput); RTT is not gated.
			if n := strings.Count(verdict, tc.rowClass+"<td>gated comparison</td>"); n != 2 {
				t.Errorf("%d gated rows of class %s, want 2:\n%s", n, tc.rowClass, verdict)
			}
			if strings.Contains(verdict, "rtt") || !strings.Contains(verdict, "<td>[mtu=8000] tcp4 throughput: on vs off</td>") || !strings.Contains(verdict, "<td>"+tc.rowVerdit+"</td>") {
				t.Errorf("verdict rows:\n%s", verdict)
			}
		})
	}
}

// TestLegendBesideTheData: a legend is drawn to the right of the axes, never over a data point.
// The point at the top right of the data is where gonum/plot puts a legend by default.
func TestLegendBesideTheData(t *testing.T) {
	p := newPlot("corner", "value")
	corner, err := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	corner.GlyphStyle = glyph(color.RGBA{0x12, 0x34, 0x56, 0xff}, draw.CircleGlyph{})
	p.Add(corner)
	thumb, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	thumb.LineStyle.Width = 0
	p.Legend.Add("a long legend entry", thumb)
	out, err := svg(p, 4*vg.Inch, 3*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	// A circle glyph is a path that starts at its rightmost point: "M x,y A...".
	circle := regexp.MustCompile(`<path d="M([0-9.]+),([0-9.]+)A[^"]*" style="fill:#123456"`)
	legend := regexp.MustCompile(`<text x="([0-9.]+)" y="[^"]*"[^>]*>a long legend entry</text>`)
	var right float64
	for _, m := range circle.FindAllStringSubmatch(string(out), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		right = max(right, x)
	}
	m := legend.FindStringSubmatch(string(out))
	if right == 0 || m == nil {
		t.Fatalf("no data point or no legend in:\n%s", out)
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x <= right {
		t.Errorf("the legend starts at x=%g, left of the data's rightmost point at x=%g: it covers the data", x, right)
	}
}

// TestAxisSaysTheDeclaredDirection: an axis says which way is better as the metric's tool
// declares it, and says neither for raw CPU utilisation or a metric no tool declares.
func TestAxisSaysTheDeclaredDirection(t *testing.T) {
	for metric, want := range map[string]string{
		results.Throughput: "Gbit/s, higher is better", "p99_latency": "µs, lower is better",
		results.CPUSender: "%, neither way is better", "bogus": "x, neither way is better",
	} {
		unit := map[string]string{results.Throughput: "bit/s", "p99_latency": "us", results.CPUSender: "%", "bogus": "x"}[metric]
		if got := axisLabel(metric, unit); got != want {
			t.Errorf("axisLabel(%s) = %q, want %q", metric, got, want)
		}
	}
}

// TestBuildProvenanceInHeader: an A/B result of kernels nsperf built from a patch names, for
// each kernel, how it was built and the patch's subject.
func TestBuildProvenanceInHeader(t *testing.T) {
	r := testResult()
	build := func(patched bool) *results.KernelBuild {
		return &results.KernelBuild{Patched: patched, Modules: []string{"openvswitch"}, Build: results.Build{Source: "debian linux-source-6.12 6.12.118-1~deb12u1", Mode: "modules",
			Patches: []results.BuildPatch{{Subject: "[PATCH net-next v2] openvswitch: raise internal port TSO limit", SHA256: strings.Repeat("ab", 32), Applied: []string{"net/openvswitch/vport-internal_dev.c hunk 1: exact"}}}}}
	}
	a, b := testResult(), testResult()
	a.Label, a.Build = "base", build(false)
	b.Label, b.Build = "patched", build(true)
	r.Kernels = []*results.Result{a, b}
	var out bytes.Buffer
	if err := Result(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kernel A: built by nsperf from debian linux-source-6.12 6.12.118-1~deb12u1, modules rebuilt (openvswitch), without &#34;[PATCH net-next v2] openvswitch: raise internal port TSO limit&#34;",
		"kernel B: built by nsperf from debian linux-source-6.12 6.12.118-1~deb12u1, modules rebuilt (openvswitch), with &#34;[PATCH net-next v2] openvswitch: raise internal port TSO limit&#34; (sha256 abababababab; net/openvswitch/vport-internal_dev.c hunk 1: exact)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the header lacks %q", want)
		}
	}
	var table bytes.Buffer
	if err := results.TableWith(&table, r, results.DefaultTableOptions); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "kernel B: patched\n  built by nsperf from debian linux-source-6.12") {
		t.Errorf("the table's header:\n%s", table.String())
	}
}

// TestClaimsInHeader: a reproduced run's report says, for each claim, what was claimed beside
// what was measured, and its outcome.
func TestClaimsInHeader(t *testing.T) {
	r := testResult()
	stated := 0.181
	r.Reproduction = &results.Reproduction{Source: "ovs.mbox", SHA256: strings.Repeat("cd", 32), Scenario: "ovs-internal-tso", Claims: []results.ClaimCheck{
		{Claim: 1, Metric: "throughput", Lines: []int{34}, ClaimedChange: 0.181, StatedChange: &stated, Workload: "tcp4", State: "on@B", Baseline: "off@A",
			Measured: &results.Comparison{Change: 0.243, ChangeLo: 0.2, ChangeHi: 0.3}, Outcome: results.Reproduced}}}
	var out bytes.Buffer
	if err := Result(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"claimed by ovs.mbox (sha256 cdcdcdcdcdcd), measured with ovs-internal-tso:",
		"claim 1 (lines 34) throughput: claimed +18.1% (stated +18.1%); measured +24.3% [+20.0%, +30.0%] (tcp4 on@B vs off@A): reproduced"} {
		if !strings.Contains(out.String(), strings.ReplaceAll(html.EscapeString(want), "+", "&#43;")) { // html/template writes + as &#43;
			t.Errorf("the report lacks %q", want)
		}
	}
}
