package claims

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nsperf/nsperf/results"
)

// WriteLayout writes what was measured for the claims in the layout the message gave them, so
// that the two read side by side: a table with a header row (the OVS seed's "protocol  BIG TCP
// off  BIG TCP on  CV off / on") as the same table of measured medians and CVs; netperf -O
// rows (the BIG TCP merge's ten runs per state) as the measured runs' rows in the selectors'
// order; any other claim as "before: X / after: Y". r is the result the checks were matched
// in (an A/B's own, whose comparisons name STATE@A and STATE@B).
func WriteLayout(w io.Writer, rep *Report, r *results.Result, checks []results.ClaimCheck) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	tableHeader := ""
	for i, ch := range checks {
		if i >= len(rep.Claims) || ch.Measured == nil {
			continue
		}
		c := rep.Claims[i]
		before, after := summaryOf(r, ch, ch.Baseline), summaryOf(r, ch, ch.State)
		if before == nil || after == nil {
			continue
		}
		switch {
		case c.Before.Label != "" && c.After.Label != "" && c.Before.CV != nil:
			header := fmt.Sprintf("  %s\t%s\t%s\tCV %s / %s", "measured", c.Before.Label, c.After.Label, shortLabel(c.Before.Label), shortLabel(c.After.Label))
			if header != tableHeader {
				fmt.Fprintln(tw, header)
				tableHeader = header
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%.2f%% / %.2f%%\n", rowName(c), human(before.Stats.Median, c.Unit), human(after.Stats.Median, c.Unit),
				100*before.Stats.CV, 100*after.Stats.CV)
		case c.Options["selectors"] != "":
			if err := tw.Flush(); err != nil {
				return err
			}
			writeRows(w, c, r, ch)
		default:
			fmt.Fprintf(tw, "  claim %d\tbefore: %s (%s)\tafter: %s (%s)\t%+.1f%%\n", ch.Claim, human(before.Stats.Median, c.Unit), ch.Baseline,
				human(after.Stats.Median, c.Unit), ch.State, 100*(after.Stats.Median/before.Stats.Median-1))
		}
	}
	return tw.Flush()
}

// rowName is a table row's name as the message wrote it (its family or its label).
func rowName(c Claim) string {
	if v := c.Conditions["row"]; v != "" {
		return v
	}
	if v := c.Conditions["family"]; v != "" {
		return v
	}
	return c.Metric
}

// shortLabel is a column label's last word: "BIG TCP off" -> "off", as the message's CV column.
func shortLabel(l string) string {
	f := strings.Fields(l)
	if len(f) == 0 {
		return l
	}
	return f[len(f)-1]
}

// summaryOf finds the summary of the check's case, workload and metric in state.
func summaryOf(r *results.Result, ch results.ClaimCheck, state string) *results.Summary {
	metric := nsperfMetric(ch.Metric)
	for _, cs := range r.Cases {
		if cs.Label != ch.Case {
			continue
		}
		for k := range cs.Summaries {
			s := &cs.Summaries[k]
			if s.Workload == ch.Workload && s.Metric == metric && s.State == state {
				return s
			}
		}
	}
	return nil
}

// writeRows writes the measured runs of the check's workload in its baseline and its state,
// one row per run with the values of the claim's netperf -O selectors, as the message did;
// only the first claim of a block of selectors writes them.
func writeRows(w io.Writer, c Claim, r *results.Result, ch results.ClaimCheck) {
	sels := strings.Split(c.Options["selectors"], ",")
	first, _, _, _ := selectorMetric(sels[0], c.Options["test"])
	if c.Metric != first {
		return
	}
	for _, state := range []string{ch.Baseline, ch.State} {
		fmt.Fprintf(w, "  measured, %s (%s):\n", state, strings.Join(sels, ","))
		for _, cs := range r.Cases {
			if cs.Label != ch.Case {
				continue
			}
			for _, s := range cs.Samples {
				if s.Workload != ch.Workload || s.State != state || s.Error != "" {
					continue
				}
				var cells []string
				for _, sel := range sels {
					m, _, _, _ := selectorMetric(sel, c.Options["test"])
					cells = append(cells, sampleValue(s, nsperfMetric(m)))
				}
				fmt.Fprintf(w, "  %s\n", strings.TrimRight(strings.Join(cells, " "), " "))
			}
		}
	}
}

// sampleValue is a run's value of a metric as netperf printed it, "-" where there is none.
func sampleValue(s results.Sample, metric string) string {
	for _, m := range s.Metrics {
		if m.Name == metric {
			return fmt.Sprintf("%-12.2f", m.Value) // netperf's columns, left aligned
		}
	}
	return fmt.Sprintf("%-12s", "-")
}
