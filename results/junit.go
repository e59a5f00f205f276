package results

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit types, after the schema CI systems read (testsuites > testsuite > testcase >
// failure | system-out).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Timestamp  string           `xml:"timestamp,attr,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// vmProperties are the guest's QEMU and clock, for the testsuite of a run in a guest.
func vmProperties(r *Result) *junitProperties {
	v := r.guestInfo()
	if v == nil {
		return nil
	}
	return &junitProperties{Property: []junitProperty{{"vm.qemu", v.QEMU}, {"vm.clock", v.ClockName()}, {"vm.icount", v.Icount}}}
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes one testsuite per case, with one testcase per expectation and one per compared
// metric; a failure carries the figures. A compared metric fails when it regressed
// significantly and no expectation covers it, as for exit code 1.
func JUnit(w io.Writer, r *Result) error {
	doc := junitSuites{Name: "nsperf " + r.Scenario.Name}
	// An A/B run of two kernels: each kernel's own run, then kernel B against kernel A.
	for i, k := range r.Kernels {
		doc.addResult(k, fmt.Sprintf("kernel %c (%s): ", 'A'+i, k.Label))
	}
	prefix := ""
	if len(r.Kernels) > 0 {
		prefix = "kernel B vs kernel A: "
	}
	doc.addCapabilities(r, prefix)
	doc.addResult(r, prefix)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// addResult adds a suite per case of r, with prefix before each suite's name.
func (doc *junitSuites) addResult(r *Result, prefix string) {
	class := "nsperf." + r.Scenario.Name
	for _, c := range r.Cases {
		suite := junitSuite{Name: prefix + strings.TrimSpace(r.Scenario.Name+" "+c.Label), Properties: vmProperties(r)}
		if !r.Start.IsZero() {
			suite.Timestamp = r.Start.Format("2006-01-02T15:04:05")
		}
		covered := map[string]bool{}
		for _, e := range c.Expectations {
			covered[e.Workload+"/"+e.Metric+"/"+e.State] = true
			tc := junitCase{Name: "expect " + e.Expectation, Classname: class, SystemOut: "measured: " + e.Measured}
			if e.NotApplicable != "" {
				tc.SystemOut, tc.Skipped = "", &junitSkipped{Message: "not applicable: " + e.NotApplicable}
			}
			if e.Failed() {
				tc.Failure = &junitFailure{Message: "expectation failed: " + e.Expectation, Type: "expectation", Text: "measured: " + e.Measured}
			}
			suite.add(tc)
		}
		for _, s := range c.Summaries {
			cmp := s.Comparison
			if cmp == nil {
				continue
			}
			figures := fmt.Sprintf("%s vs %s: %s (n=%d; %s median %s, %s median %s)", s.State, cmp.Baseline, FormatComparison(*cmp), s.Stats.N,
				cmp.Baseline, FormatValue(medianOf(c, s.Workload, s.Metric, cmp.Baseline), s.Unit), s.State, FormatValue(s.Centre.Median, s.Unit))
			tc := junitCase{Name: fmt.Sprintf("%s %s %s vs %s", s.Workload, s.Metric, s.State, cmp.Baseline), Classname: class, SystemOut: figures}
			if cmp.Verdict == Regressed && cmp.Gated && !covered[s.Workload+"/"+s.Metric+"/"+s.State] {
				tc.Failure = &junitFailure{Message: fmt.Sprintf("%s %s regressed", s.Workload, s.Metric), Type: "regression", Text: figures}
			}
			suite.add(tc)
		}
		doc.Suites = append(doc.Suites, suite)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
	}
}

// addCapabilities adds a suite with a passing testcase per capability: information, like the
// line in the table, that a state applies on one side only.
func (doc *junitSuites) addCapabilities(r *Result, prefix string) {
	if len(r.Capabilities) == 0 {
		return
	}
	suite := junitSuite{Name: prefix + r.Scenario.Name + " capabilities"}
	for _, c := range r.Capabilities {
		suite.add(junitCase{Name: "capability " + c.State, Classname: "nsperf." + r.Scenario.Name, SystemOut: c.Line()})
	}
	doc.Suites = append(doc.Suites, suite)
	doc.Tests += suite.Tests
}

func (s *junitSuite) add(tc junitCase) {
	s.Cases = append(s.Cases, tc)
	s.Tests++
	if tc.Failure != nil {
		s.Failures++
	}
	if tc.Skipped != nil {
		s.Skipped++
	}
}

func medianOf(c Case, workload, metric, state string) float64 {
	for _, s := range c.Summaries {
		if s.Workload == workload && s.Metric == metric && s.State == state {
			return s.Centre.Median
		}
	}
	return 0
}

// Benchstat writes the samples in the Go benchmark format, one configuration per state (and
// per case), so that `benchstat -col state FILE` compares the states with benchstat itself.
// Each metric has its own unit, named metric-unit, so that benchstat keeps them apart.
func Benchstat(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "goos: linux\npkg: nsperf/%s\n", r.Scenario.Name)
	if r.Environment.CPUModel != "" {
		fmt.Fprintf(w, "cpu: %s\n", r.Environment.CPUModel)
	}
	if r.Environment.KernelRelease != "" {
		fmt.Fprintf(w, "kernel: %s\n", r.Environment.KernelRelease)
	}
	for _, c := range r.Cases {
		if c.Label != "" {
			fmt.Fprintf(w, "case: %s\n", c.Label)
		}
		for _, st := range c.States {
			fmt.Fprintf(w, "state: %s\n", st.Name)
			for _, s := range c.Samples {
				if s.State != st.Name || s.Error != "" {
					continue
				}
				var b strings.Builder
				fmt.Fprintf(&b, "BenchmarkNsperf/workload=%s 1", s.Workload)
				for _, m := range s.Metrics {
					fmt.Fprintf(&b, " %g %s-%s", m.Value, m.Name, strings.ReplaceAll(m.Unit, " ", ""))
				}
				fmt.Fprintln(w, b.String())
			}
		}
	}
	return nil
}
