package results

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// FormatValue prints a value in its unit the way commit messages do (65.567 Gbps).
func FormatValue(v float64, unit string) string {
	switch unit {
	case "bit/s":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.3f Gbps", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.3f Mbps", v/1e6)
		default:
			return fmt.Sprintf("%.3f kbps", v/1e3)
		}
	case "count":
		return fmt.Sprintf("%.1f", v)
	case "%":
		return fmt.Sprintf("%.1f%%", v)
	case "us":
		return fmt.Sprintf("%.1f us", v)
	}
	return strings.TrimSpace(fmt.Sprintf("%.3f %s", v, unit))
}

func formatCV(s Stats) string {
	if s.N < 2 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", 100*s.CV)
}

// Table writes the summaries in the layout of shared/seeds/ovs-internal-port-tso.md: one row
// per workload and metric, the mean of each state, the CV of each state, and each state's
// change against the baseline.
func Table(w io.Writer, r *Result) error {
	states := stateNames(r)
	fmt.Fprintf(w, "%s  run %s  %d runs per state, %s order", r.Scenario.Name, r.RunID, r.Settings.Runs, r.Settings.Order)
	if r.Environment.KernelRelease != "" {
		fmt.Fprintf(w, "  kernel %s", r.Environment.KernelRelease)
	}
	fmt.Fprintln(w)
	for _, c := range r.Cases {
		if len(c.Matrix) > 0 {
			fmt.Fprintf(w, "\n[%s]\n", matrixLabel(c.Matrix))
		}
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		head := []string{"workload", "metric"}
		head = append(head, states...)
		head = append(head, "CV "+strings.Join(states, " / "))
		for _, st := range states[1:] {
			head = append(head, st+" vs "+states[0])
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		rows := map[[2]string]map[string]Summary{}
		var order [][2]string
		for _, s := range c.Summaries {
			key := [2]string{s.Workload, s.Metric}
			if rows[key] == nil {
				rows[key] = map[string]Summary{}
				order = append(order, key)
			}
			rows[key][s.State] = s
		}
		for _, key := range order {
			row := []string{key[0], key[1]}
			var cvs, changes []string
			for _, st := range states {
				s, ok := rows[key][st]
				switch {
				case !ok || s.Stats.N == 0:
					row = append(row, "-")
					cvs = append(cvs, "-")
				default:
					row = append(row, FormatValue(s.Stats.Mean, s.Unit))
					cvs = append(cvs, formatCV(s.Stats))
				}
				if st == states[0] {
					continue
				}
				if ok && s.Change != nil {
					changes = append(changes, fmt.Sprintf("%+.1f%%", 100*s.Change.Relative))
				} else {
					changes = append(changes, "-")
				}
			}
			row = append(row, strings.Join(cvs, " / "))
			row = append(row, changes...)
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		failed := 0
		for _, s := range c.Samples {
			if s.Error != "" {
				failed++
			}
		}
		if failed > 0 {
			fmt.Fprintf(w, "%d of %d runs failed and are left out of the statistics (samples[].error in the result)\n", failed, len(c.Samples))
		}
	}
	fmt.Fprintln(w, "means over runs; CV = sample standard deviation / mean; change = difference of means")
	if !r.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the run was interrupted; the figures cover the runs that finished")
	}
	return nil
}

func stateNames(r *Result) []string {
	var names []string
	if len(r.Cases) > 0 {
		for _, s := range r.Cases[0].States {
			names = append(names, s.Name)
		}
	}
	return names
}

func matrixLabel(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}
