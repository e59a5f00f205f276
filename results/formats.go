package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/csvtext"
	"github.com/nsperf/nsperf/internal/shellq"
)

// Netdev writes, per case and state, what a patch author pastes into a commit message: the
// commands that put the devices in the state, then per workload the tool's command and one
// row per run in the tool's own layout (netperf's -O columns, as `| tail -1` shows them, or
// its classic block); then a summary line per metric.
func Netdev(w io.Writer, r *Result) error {
	for _, c := range r.Capabilities {
		fmt.Fprintf(w, "# capability: %s\n\n", c.Line())
	}
	for _, c := range r.Cases {
		if c.Label != "" {
			fmt.Fprintf(w, "[%s]\n\n", c.Label)
		}
		for _, st := range c.States {
			fmt.Fprintf(w, "# state %s", st.Name)
			if st.CompareTo != "" {
				fmt.Fprintf(w, " (compared with %s)", st.CompareTo)
			}
			fmt.Fprintln(w)
			if st.Unavailable != "" {
				fmt.Fprintf(w, "unavailable: %s\n\n", st.Unavailable)
				continue
			}
			for _, cmd := range st.Commands {
				fmt.Fprintln(w, cmd)
			}
			for _, wl := range workloadsOf(c) {
				runs := samplesOf(c, st.Name, wl)
				if len(runs) == 0 {
					continue
				}
				netdevRuns(w, runs)
			}
			fmt.Fprintln(w)
		}
		for _, line := range summaryLines(c) {
			fmt.Fprintln(w, line)
		}
		fmt.Fprintln(w)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintln(w, "WARNING: "+warning)
	}
	return nil
}

func netdevRuns(w io.Writer, runs []Sample) {
	first := runs[0]
	cmd := shellq.Join(first.Argv)
	columns := first.Tool == "netperf" && strings.Contains(cmd, " -O ")
	if columns {
		cmd += "|tail -1"
	}
	fmt.Fprintf(w, "for i in {1..%d}; do %s; done\n", len(runs), cmd)
	if first.Tool == "netperf" && !columns && first.Output != "" {
		// The classic block: its header once, then each run's row.
		lines := strings.Split(strings.TrimRight(first.Output, "\n "), "\n")
		fmt.Fprintln(w, strings.Join(lines[:len(lines)-1], "\n"))
	}
	for _, s := range runs {
		switch {
		case s.Error != "":
			fmt.Fprintf(w, "FAILED: %s\n", s.Error)
		case s.Invalid != "":
			fmt.Fprintf(w, "INVALID (left out): %s\n", s.Invalid)
		case s.Row != "":
			fmt.Fprintln(w, s.Row)
		default:
			var parts []string
			for _, m := range s.Metrics {
				parts = append(parts, m.Name+" "+FormatValue(m.Value, m.Unit))
			}
			fmt.Fprintln(w, strings.Join(parts, "  "))
		}
	}
}

// summaryLines says per workload and metric each state's mean and CV, and the changes.
func summaryLines(c Case) []string {
	var out []string
	order, rows := summaryRows(c)
	for _, key := range order {
		var parts []string
		for _, st := range c.States {
			s, ok := rows[key][st.Name]
			if !ok || s.Stats.N == 0 {
				continue
			}
			p := fmt.Sprintf("%s %s (n=%d, CV %s)", s.State, formatCentre(s), s.Stats.N, formatCV(s.Stats))
			if c := s.Comparison; c != nil {
				p += fmt.Sprintf(" vs %s: %s", c.Baseline, FormatComparison(*c))
			}
			parts = append(parts, p)
		}
		out = append(out, fmt.Sprintf("%s %s: %s", key[0], key[1], strings.Join(parts, "; ")))
	}
	return out
}

func workloadsOf(c Case) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range c.Samples {
		if !seen[s.Workload] {
			seen[s.Workload] = true
			out = append(out, s.Workload)
		}
	}
	return out
}

func samplesOf(c Case, state, workload string) []Sample {
	var out []Sample
	for _, s := range c.Samples {
		if s.State == state && s.Workload == workload {
			out = append(out, s)
		}
	}
	return out
}

// Markdown writes the summaries as a markdown table per case.
func Markdown(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "**%s** (run %s, %d runs per state, %s order", r.Scenario.Name, r.RunID, r.Settings.Runs, r.Settings.Order)
	if r.Environment.KernelRelease != "" {
		fmt.Fprintf(w, ", kernel %s", r.Environment.KernelRelease)
	}
	fmt.Fprintln(w, ")")
	for _, c := range r.Capabilities {
		fmt.Fprintf(w, "\ncapability: %s\n", c.Line())
	}
	for _, c := range r.Cases {
		fmt.Fprintln(w)
		if c.Label != "" {
			fmt.Fprintf(w, "*%s*\n\n", c.Label)
		}
		head := []string{"workload", "metric"}
		for _, st := range c.States {
			head = append(head, st.Name+" (CV)")
		}
		for _, st := range c.States {
			if st.CompareTo != "" {
				head = append(head, st.Name+" vs "+st.CompareTo)
			}
		}
		fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(head)))
		order, rows := summaryRows(c)
		for _, key := range order {
			cells := []string{key[0], key[1]}
			var changes []string
			for _, st := range c.States {
				s, ok := rows[key][st.Name]
				switch {
				case st.Unavailable != "":
					cells = append(cells, "unavailable")
				case !ok || s.Stats.N == 0:
					cells = append(cells, "-")
				default:
					cells = append(cells, fmt.Sprintf("%s (%s)", formatCentre(s), formatCV(s.Stats)))
				}
				if st.CompareTo != "" {
					if ok && s.Comparison != nil {
						changes = append(changes, FormatComparison(*s.Comparison))
					} else {
						changes = append(changes, "-")
					}
				}
			}
			fmt.Fprintln(w, "| "+strings.Join(append(cells, changes...), " | ")+" |")
		}
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "\n**Warning:** %s\n", warning)
	}
	return nil
}

func optional(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// CSV writes one line per case, workload, metric and state.
func CSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"case", "workload", "metric", "unit", "state", "n", "mean", "median", "median_lo", "median_hi", "stddev", "cv", "min", "max",
		"compare_to", "change", "change_lo", "change_hi", "p", "verdict"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, c := range r.Cases {
		for _, s := range c.Summaries {
			var cmp []string
			if c := s.Comparison; c != nil {
				cmp = []string{csvtext.Text(c.Baseline), f(c.Change), f(c.ChangeLo), f(c.ChangeHi), f(c.P), c.Verdict}
				if c.FromZero {
					cmp[1], cmp[2], cmp[3] = "", "", "" // from 0: no ratio, and 0 would say no change
				}
			} else {
				cmp = []string{"", "", "", "", "", ""}
			}
			st := s.Stats
			// Every name is text a stored result may carry: none starts a formula.
			cw.Write(append([]string{csvtext.Text(c.Label), csvtext.Text(s.Workload), csvtext.Text(s.Metric), csvtext.Text(s.Unit), csvtext.Text(s.State), strconv.Itoa(st.N), f(st.Mean), f(st.Median),
				optional(s.Centre.Lo), optional(s.Centre.Hi), f(st.Stddev), f(st.CV), f(st.Min), f(st.Max)}, cmp...))
		}
	}
	cw.Flush()
	return cw.Error()
}
