package claims

import (
	"reflect"
	"testing"
)

func TestHeadingParts(t *testing.T) {
	for h, want := range map[string][]string{
		"6.18-rc4 [base+v1] [drop, one queue]": {"6.18-rc4", "base+v1", "drop", "one queue"},
		"6.18-rc4 [base] [tx]:":                {"6.18-rc4", "base", "tx"},
		"stock kernel; 4 streams":              {"stock kernel", "4 streams"},
	} {
		if got := headingParts(h); !reflect.DeepEqual(got, want) {
			t.Errorf("headingParts(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestBaselineOf(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{[]string{"base", "base+v1", "base+v2"}, "base"},
		{[]string{"rc4+fix", "rc4"}, "rc4"},
		{[]string{"vanilla", "patched"}, "vanilla"},
		{[]string{"64B", "1500B"}, ""},     // sizes: no state
		{[]string{"drop", "tx"}, ""},       // modes: no state
		{[]string{"base"}, ""},             // one value compares nothing
		{[]string{"base", "baseline"}, ""}, // two baselines, nothing after
	} {
		if got := baselineOf(c.values); got != c.want {
			t.Errorf("baselineOf(%q) = %q, want %q", c.values, got, c.want)
		}
	}
}

// TestHeadingFactors: runs under headings of a state and a setting pair per setting, the
// baseline with the last state; where neither part is told a state nothing changes.
func TestHeadingFactors(t *testing.T) {
	run := func(heading string, v float64, line int) measurement {
		return measurement{tool: "xdp-bench", metric: "packet_rate", unit: "pps", values: []float64{v}, heading: heading, lines: []int{line}}
	}
	ms := []measurement{
		run("t (base) (64B)", 10, 1), run("t (base) (1500B)", 5, 2),
		run("t (base+v1) (64B)", 9, 3), run("t (base+v1) (1500B)", 4, 4),
		run("t (base+v2) (64B)", 12, 5), run("t (base+v2) (1500B)", 6, 6),
	}
	out, between := headingFactors(ms)
	if len(out) != 4 || len(between) != 2 {
		t.Fatalf("kept %d, between %d; want 4 and 2", len(out), len(between))
	}
	want := map[float64]string{10: "before|64b", 5: "before|1500b", 12: "after|64b", 6: "after|1500b"}
	for _, m := range out {
		if got := m.state + "|" + m.conditions["setting"]; got != want[m.values[0]] {
			t.Errorf("%v under %q: %s, want %s", m.values, m.heading, got, want[m.values[0]])
		}
	}
	r := &Report{}
	r.pair(append([]measurement{}, ms...), nil)
	if len(r.Claims) != 2 {
		t.Fatalf("claims %+v, want 2", r.Claims)
	}
	for _, c := range r.Claims {
		if !(c.Before.Median == 10 && c.After.Median == 12 || c.Before.Median == 5 && c.After.Median == 6) {
			t.Errorf("claim %v -> %v: not a baseline with the last state of one setting", c.Before.Median, c.After.Median)
		}
	}

	undecided := []measurement{run("t (a) (64B)", 10, 1), run("t (a) (1500B)", 5, 2), run("t (b) (64B)", 9, 3), run("t (b) (1500B)", 4, 4)}
	out, between = headingFactors(append([]measurement{}, undecided...))
	if !reflect.DeepEqual(out, undecided) || len(between) != 0 {
		t.Errorf("headings no word or extension tells a state were changed: %+v", out)
	}
}

// TestRuledHeadings: a line between two rules is a heading; a table's header between rules
// (columns apart by several spaces, or bars) stays as it is.
func TestRuledHeadings(t *testing.T) {
	lines := []line{{1, "====="}, {2, "Baseline (net-next)"}, {3, "====="}, {4, "------"}, {5, " size    before    after"}, {6, "------"}, {7, "-----"}, {8, "| a | b |"}, {9, "-----"}}
	ruledHeadings(lines)
	want := []string{"=====", "Baseline (net-next):", "=====", "------", " size    before    after", "------", "-----", "| a | b |", "-----"}
	for k, l := range lines {
		if l.text != want[k] {
			t.Errorf("line %d: %q, want %q", l.n, l.text, want[k])
		}
	}
}

// TestPathNestsByIndentation: a bullet nests under the banner above it, an indented bullet
// under both, and a heading at a level ends the ones at that level and deeper; a list item
// wrapped before its colon is one heading.
func TestPathNestsByIndentation(t *testing.T) {
	lines := []line{{1, "Before:"}, {2, "- TCP, a 4K buffer (the smallest"}, {3, "  without loss):"}, {4, "    - no load:"}, {5, "    - with load:"}, {6, "- UDP:"}, {7, "After:"}}
	var c context
	var got []string
	for k, l := range lines {
		m := headingRe.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		c.enterPath(wrappedHeading(lines, k, m[1]))
		got = append(got, c.pathText())
	}
	want := []string{"Before", "Before; TCP, a 4K buffer (the smallest without loss)", "Before; TCP, a 4K buffer (the smallest without loss); no load",
		"Before; TCP, a 4K buffer (the smallest without loss); with load", "Before; UDP", "After"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths %q\nwant %q", got, want)
	}
}
