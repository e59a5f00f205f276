package claims

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nsperf/nsperf/results"
)

// Text writes the report as a table: one row per claim, then the toggles, the setup words,
// what was not read and what the text says without numbers.
func (r *Report) Text(w io.Writer) error {
	p := results.Printable // everything here but nsperf's own words comes from a stranger's text
	fmt.Fprintf(w, "%s: %d claim(s)\n", p(r.Input), len(r.Claims))
	if len(r.Claims) == 0 {
		fmt.Fprintln(w, r.Summary)
	}
	if len(r.Claims) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tlines\ttool\ttest\tmetric\tconditions\tbefore\tafter\tchange\tstated")
		for i, c := range r.Claims {
			st := "-"
			if c.Stated != nil {
				st = pct(*c.Stated)
				if c.Mismatch {
					st += " (MISMATCH)"
				}
			}
			tool := c.Tool
			if tool == "" {
				tool = "-"
			}
			test := c.Options["test"]
			if test == "" {
				test = "-"
			}
			metric := c.Metric
			if metric == "" {
				metric = c.Quantity + " (nsperf measures none)"
				if Measurable(c) {
					metric = c.Quantity + " (a side metric)" // a counter or the connection's state
				}
				if c.Unit == "" {
					metric = c.Quantity + " (no unit)"
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, results.LineRanges(c.Lines), p(tool), p(test), p(metric), p(conds(c.Conditions)),
				p(side(c.Before, c.Unit)), p(side(c.After, c.Unit)), change(c), st)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, t := range r.Toggles {
		fmt.Fprintf(w, "toggle, line %d: %s\n", t.Line, p(t.Command))
	}
	if len(r.Setup) > 0 {
		fmt.Fprintln(w, "setup: "+p(strings.Join(r.Setup, ", ")))
	}
	for _, u := range r.Unparsed {
		fmt.Fprintf(w, "not read, lines %s: %s\n", results.LineRanges(u.Lines), p(u.Reason))
	}
	for _, d := range r.Describes {
		fmt.Fprintf(w, "says: %q\n", d)
	}
	for _, d := range r.DiffProblems {
		fmt.Fprintf(w, "diff not read: %s\n", p(d))
	}
	if r.Quoted > 0 {
		fmt.Fprintf(w, "%d quoted line(s) (\"> \") not read: someone else's words\n", r.Quoted)
	}
	return nil
}

// side is one side's figure: the value, or the median of many with their count and a CV.
func side(v Values, unit string) string {
	s := human(v.Median, unit)
	switch {
	case v.Printed:
		s = fmt.Sprintf("average %s of %d", s, len(v.Values))
	case len(v.Values) > 1:
		s = fmt.Sprintf("median %s of %d", s, len(v.Values))
	}
	if v.CV != nil {
		s += fmt.Sprintf(" (CV %.2f%%)", 100**v.CV)
	}
	return s
}

// scales are the larger units a normalised figure is written in, largest first.
var scales = map[string][]struct {
	factor float64
	name   string
}{
	"bit/s": {{1e9, "Gbit/s"}, {1e6, "Mbit/s"}},
	"pps":   {{1e6, "Mpps"}, {1e3, "kpps"}},
}

func human(v float64, unit string) string {
	for _, sc := range scales[unit] {
		if math.Abs(v) >= sc.factor {
			return fmt.Sprintf("%.4g %s", v/sc.factor, sc.name)
		}
	}
	return fmt.Sprintf("%.6g %s", v, unit)
}

func pct(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }

// change is a claim's change as the table shows it: a percentage, or "from 0" where before
// is 0 and no percentage exists.
func change(c Claim) string {
	if c.FromZero {
		return "from 0"
	}
	return pct(c.Change)
}

func conds(c map[string]string) string {
	if len(c) == 0 {
		return "-"
	}
	var out []string
	for k, v := range c {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
