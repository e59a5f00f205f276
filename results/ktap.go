package results

import (
	"fmt"
	"io"
	"strings"
)

// KTAP writes a result as KTAP version 1 (the kernel's Documentation/dev-tools/ktap.rst), the
// output kselftest and KUnit print and NIPA reads: one test per gated comparison and per
// expectation, `ok` or `not ok`, an unavailable state as `ok ... # SKIP` with the reason, and
// the figures as `#` diagnostic lines before each result. A gated regression fails its test
// unless an expectation covers it (as in JUnit); the exit codes agree with kselftest's: 0
// pass, 1 fail, 4 skip.
func KTAP(w io.Writer, r *Result) error {
	var lines []ktapTest
	for i, k := range r.Kernels {
		lines = append(lines, ktapTests(k, fmt.Sprintf("kernel_%c_", 'A'+i))...)
	}
	prefix := ""
	if len(r.Kernels) > 0 {
		prefix = "B_vs_A_"
	}
	lines = append(lines, ktapTests(r, prefix)...)
	var b strings.Builder
	b.WriteString("KTAP version 1\n")
	fmt.Fprintf(&b, "# nsperf %s, run %s", ktapText(r.Scenario.Name), ktapText(r.RunID))
	if r.Environment.KernelRelease != "" {
		fmt.Fprintf(&b, ", kernel %s", ktapText(r.Environment.KernelRelease))
	}
	b.WriteString("\n")
	if v := r.guestInfo(); v != nil {
		fmt.Fprintf(&b, "# vm: QEMU %s, %s\n", ktapText(v.QEMU), ktapText(DescribeClock(v)))
	}
	fmt.Fprintf(&b, "1..%d\n", len(lines))
	for i, t := range lines {
		for _, d := range t.diagnostics {
			fmt.Fprintf(&b, "# %s\n", ktapText(d))
		}
		result := "ok"
		if t.failed {
			result = "not ok"
		}
		fmt.Fprintf(&b, "%s %d %s", result, i+1, t.name)
		if t.skip != "" {
			fmt.Fprintf(&b, " # SKIP %s", ktapText(t.skip))
		}
		b.WriteString("\n")
	}
	fails, skips := 0, 0
	for _, t := range lines {
		if t.failed {
			fails++
		}
		if t.skip != "" {
			skips++
		}
	}
	fmt.Fprintf(&b, "# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", len(lines)-fails-skips, fails, skips)
	_, err := io.WriteString(w, b.String())
	return err
}

type ktapTest struct {
	name        string
	failed      bool
	skip        string
	diagnostics []string
}

// ktapTests are a result's tests: per case, its expectations, its gated comparisons, and a
// skipped test per unavailable state.
func ktapTests(r *Result, prefix string) []ktapTest {
	var out []ktapTest
	for _, c := range r.Cases {
		casePrefix := prefix
		if c.Label != "" {
			casePrefix += ktapName(c.Label) + "_"
		}
		warnings := map[string][]string{} // the evidence's, by state: diagnostics of its tests
		for _, e := range c.Evidence {
			if e.Warning {
				warnings[e.State] = append(warnings[e.State], "evidence: "+e.Text)
			}
		}
		covered := map[string]bool{}
		for _, e := range c.Expectations {
			covered[e.Workload+"/"+e.Metric+"/"+e.State] = true
			t := ktapTest{name: casePrefix + "expect_" + ktapName(e.Expectation), failed: e.Failed(), diagnostics: []string{"expect " + e.Expectation + ": measured " + e.Measured}}
			if e.NotApplicable != "" {
				t.skip, t.diagnostics = "not applicable: "+e.NotApplicable, nil
			}
			out = append(out, t)
		}
		for _, s := range c.Summaries {
			cmp := s.Comparison
			if cmp == nil || !cmp.Gated {
				continue
			}
			out = append(out, ktapTest{
				name:        casePrefix + ktapName(fmt.Sprintf("%s %s %s vs %s", s.Workload, s.Metric, s.State, cmp.Baseline)),
				failed:      cmp.Verdict == Regressed && !covered[s.Workload+"/"+s.Metric+"/"+s.State],
				diagnostics: append([]string{fmt.Sprintf("%s %s %s vs %s: %s (n=%d)", s.Workload, s.Metric, s.State, cmp.Baseline, FormatComparison(*cmp), s.Stats.N)}, warnings[s.State]...),
			})
			delete(warnings, s.State) // said once, before the state's first test
		}
		for _, st := range c.States {
			if st.Unavailable != "" {
				out = append(out, ktapTest{name: casePrefix + "state_" + ktapName(st.Name), skip: "unavailable: " + st.Unavailable})
			}
		}
	}
	return out
}

// ktapName makes a test name of text: words joined by underscores, no '#' (which would start
// a directive), printable.
func ktapName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '#':
			return -1
		case r <= ' ' || r == 0x7f:
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), "_")
}

// ktapText keeps a diagnostic or directive on one line.
func ktapText(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)), " ")
}
