package results

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/scenarios"
)

func cond(t *testing.T, s string) *scenarios.Condition {
	t.Helper()
	var c scenarios.Condition
	if err := c.UnmarshalScalar(s); err != nil {
		t.Fatal(err)
	}
	return &c
}

func yes() *bool { b := true; return &b }

// expectResult is benchstatResult (throughput +10% improved, min_latency +20% regressed, p90
// no significant change) with device attributes and expectations evaluated.
func expectResult(t *testing.T, exps []scenarios.Expectation) *Result {
	r := benchstatResult()
	c := &r.Cases[0]
	c.States[0].Devices = map[string]map[string]uint64{"client/eth0": {"tso_max_size": 524280, "gso_max_size": 65536}}
	c.States[1].Devices = map[string]map[string]uint64{"client/eth0": {"tso_max_size": 524280, "gso_max_size": 185000}}
	r.DecideFamily() // no gates recorded: every metric is gated, as in results before gates
	c.Expectations = Evaluate(*c, exps)
	return r
}

func TestExpectations(t *testing.T) {
	exps := []scenarios.Expectation{
		{Workload: "tcp4", Metric: Throughput, Change: cond(t, ">= +5%"), Significant: yes()},   // pass
		{Workload: "tcp4", Metric: Throughput, State: "on", Change: cond(t, ">= +20%")},         // fail: +10%
		{Workload: "tcp4", Metric: "p90_latency", Significant: yes()},                           // fail: not significant
		{Workload: "tcp4", Metric: Throughput, CV: cond(t, "<= 5%")},                            // pass
		{Workload: "tcp4", Metric: "min_latency", CV: cond(t, "<= 1%")},                         // fail: ~1.6%
		{Device: "client/eth0", Attr: "tso_max_size", Value: cond(t, ">= 524280")},              // pass
		{Device: "client/eth0", Attr: "gso_max_size", State: "on", Value: cond(t, "== 185000")}, // pass
		{Device: "client/eth0", Attr: "gso_max_size", Value: cond(t, ">= 100000")},              // fail in off
		{Workload: "tcp4", Metric: "nonexistent", Change: cond(t, "> 0%")},                      // fail: no measurement
	}
	want := []bool{true, false, false, true, false, true, true, false, false}
	r := expectResult(t, exps)
	for i, e := range r.Cases[0].Expectations {
		if e.Pass != want[i] {
			t.Errorf("%s: pass %v, want %v (measured %s)", e.Expectation, e.Pass, want[i], e.Measured)
		}
	}
	if got := r.Cases[0].Expectations[0].Measured; !strings.Contains(got, "+10.0%") || !strings.Contains(got, "improved") {
		t.Errorf("measured figure %q", got)
	}
	failures := r.Failures()
	// Five failed expectations; min_latency regressed but an expectation (its cv) covers it.
	if len(failures) != 5 {
		t.Errorf("failures:\n%s", strings.Join(failures, "\n"))
	}
	// Without expectations, the uncovered significant regression fails the result by itself.
	plain := expectResult(t, nil)
	if f := plain.Failures(); len(f) != 1 || !strings.Contains(f[0], "min_latency regressed in on vs off") {
		t.Errorf("failures without expectations: %v", f)
	}
}

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		text string
		x    float64
		want bool
	}{{">= +10%", 0.10, true}, {">= +10%", 0.0999, false}, {"<= -5%", -0.06, true}, {"> 0%", 0, false}, {"< 5%", 0.049, true}, {"== 524280", 524280, true}, {">= 524280", 65536, false}} {
		if got := cond(t, tc.text).Holds(tc.x); got != tc.want {
			t.Errorf("%q holds for %v: %v", tc.text, tc.x, got)
		}
	}
	var c scenarios.Condition
	for _, bad := range []string{"10%", ">= lots", ""} {
		if err := c.UnmarshalScalar(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// JUnit: one testcase per expectation and per compared metric; the counts add up; failures
// carry the figures. Checked against the structure of the JUnit schema (testsuites >
// testsuite{name,tests,failures,errors,skipped} > testcase{name,classname} > failure{message,type}).
func TestJUnit(t *testing.T) {
	exps := []scenarios.Expectation{
		{Workload: "tcp4", Metric: Throughput, Change: cond(t, ">= +5%"), Significant: yes()},
		{Workload: "tcp4", Metric: Throughput, Change: cond(t, ">= +20%")},
	}
	var b bytes.Buffer
	if err := JUnit(&b, expectResult(t, exps)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    *int   `xml:"tests,attr"`
			Failures *int   `xml:"failures,attr"`
			Errors   *int   `xml:"errors,attr"`
			Skipped  *int   `xml:"skipped,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Tests == nil || doc.Suites[0].Errors == nil || doc.Suites[0].Skipped == nil {
		t.Fatalf("testsuite attributes missing:\n%s", b.String())
	}
	s := doc.Suites[0]
	failures := 0
	for _, c := range s.Cases {
		if c.Name == "" || c.Classname == "" {
			t.Errorf("testcase without name or classname: %+v", c)
		}
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" || c.Failure.Type == "" || !strings.Contains(c.Failure.Text, "%") {
				t.Errorf("failure without figures: %+v", c.Failure)
			}
		}
	}
	// 2 expectations + 4 compared metrics; failures: the +20% expectation and the uncovered
	// min_latency regression.
	if len(s.Cases) != 6 || *s.Tests != 6 || doc.Tests != 6 || failures != 2 || *s.Failures != 2 || doc.Failures != 2 {
		t.Errorf("tests %d/%d/%d failures %d/%d/%d:\n%s", len(s.Cases), *s.Tests, doc.Tests, failures, *s.Failures, doc.Failures, b.String())
	}
	golden.Check(t, filepath.Join("testdata", "junit.golden"), b.String())
}

// TestStoredExpectationsAreNeverDropped: a result whose stored scenario text no longer
// validates (here: a knob this nsperf does not know) keeps its expect: list, evaluated as
// when it ran; one whose expect: cannot be read is refused as input (exit 2), never read as a
// result without expectations.
func TestStoredExpectationsAreNeverDropped(t *testing.T) {
	data, err := os.ReadFile("testdata/stored-invalid.yaml") // a knob this nsperf does not know
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if _, err := scenarios.Parse("stored", []byte(text), scenarios.Options{}); err == nil {
		t.Fatal("the stored text validates: the test needs one that does not")
	}
	r := benchstatResult()
	r.Scenario.Text = text
	var b bytes.Buffer
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	got, _, err := Parse("r.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Cases[0].Expectations; len(e) != 1 || e[0].Pass {
		t.Fatalf("expectations %+v: want the stored one, failed (+10%% is below +20%%)", e)
	}
	if f := got.Failures(); len(f) == 0 {
		t.Error("a failed stored expectation does not fail the result")
	}

	r.Scenario.Text = strings.Replace(text, `change: ">= +20%"`, `change: "about twice"`, 1)
	b.Reset()
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	_, _, err = Parse("r.json", b.Bytes())
	var input *InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), "expect") {
		t.Errorf("unreadable stored expectations: %v, want an input error naming expect", err)
	}
}

// TestTableNamesTheEffectivePolicy: a result that stored no alpha or CV limit (a kernel of an
// A/B run whose compared state was unavailable decided nothing) says the defaults it would
// decide with, not "alpha 0".
func TestTableNamesTheEffectivePolicy(t *testing.T) {
	r := benchstatResult()
	r.Settings.Policy = Policy{MinChange: 0.02}
	r.Settings.Gates = map[string][]string{"tcp4": {Throughput}}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(Holm) at alpha 0.05;") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestEvidenceExpectation: expect: can assert on the evidence, so that a state that silently
// did nothing fails CI.
func TestEvidenceExpectation(t *testing.T) {
	c := evidenceCase(func(state string, round int) map[string]DeviceCounters {
		big := uint64(0)
		if state == "on" {
			big = 900
		}
		return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000, BigTx: u(big)}}
	}, nil)
	for _, tc := range []struct {
		state, evidence, value string
		pass                   bool
		measured               string
	}{
		{"on", "big_tx", "> 0", true, "900 in on"},
		{"off", "big_tx", "> 0", false, "0 in off"},
		{"on", "big_rx", "> 0", false, "not counted in on"},
		{"", "tx_bytes_per_packet", ">= 60000", true, "64000 in off, 64000 in on"},
	} {
		var cond scenarios.Condition
		if err := cond.UnmarshalScalar(tc.value); err != nil {
			t.Fatal(err)
		}
		got := Evaluate(c, []scenarios.Expectation{{State: tc.state, Device: "client/eth0", Evidence: tc.evidence, Value: &cond}})[0]
		if got.Pass != tc.pass || got.Measured != tc.measured {
			t.Errorf("%s %s %s: pass %v measured %q, want %v %q", tc.state, tc.evidence, tc.value, got.Pass, got.Measured, tc.pass, tc.measured)
		}
	}
}

// An expectation on a state the run did not measure is not applicable: no failure, a skipped
// testcase in JUnit, a SKIP in KTAP, N/A in the table.
func TestExpectationNotApplicable(t *testing.T) {
	r := expectResult(t, []scenarios.Expectation{{Device: "client/eth0", Evidence: "big_tx", State: "big", Value: cond(t, "> 0")}})
	e := r.Cases[0].Expectations[0]
	if e.NotApplicable == "" || e.Failed() || e.Verdict() != "N/A" {
		t.Fatalf("an expectation on a state not in the run: %+v", e)
	}
	if f := r.ExpectationFailures(); len(f) != 0 {
		t.Errorf("failures: %v", f)
	}
	var junit, ktap, table bytes.Buffer
	if err := JUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	if err := KTAP(&ktap, r); err != nil {
		t.Fatal(err)
	}
	if err := Table(&table, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `skipped="1"`) || !strings.Contains(junit.String(), `<skipped message="not applicable: this run did not measure state big`) {
		t.Errorf("JUnit:\n%s", junit.String())
	}
	if !strings.Contains(ktap.String(), "# SKIP not applicable: this run did not measure state big") {
		t.Errorf("KTAP:\n%s", ktap.String())
	}
	if !strings.Contains(table.String(), "big_tx > 0: N/A") {
		t.Errorf("table:\n%s", table.String())
	}
}
