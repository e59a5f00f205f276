package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsperf/nsperf/results"
)

// directions says which way each compared metric is better: "throughput higher, rtt_mean
// lower, cpu_sender neither".
func (rep *Report) directions() string {
	if rep.Result == nil {
		return ""
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range rep.Result.Cases {
		for _, s := range c.Summaries {
			if seen[s.Metric] {
				continue
			}
			seen[s.Metric] = true
			way := "higher"
			switch results.DirectionOf(s.Metric) {
			case results.LowerIsBetter:
				way = "lower"
			case results.NoDirection:
				way = "neither" // raw CPU, or a metric no tool declares
			}
			out = append(out, s.Metric+" "+way)
		}
	}
	return strings.Join(out, ", ")
}

// WriteHeader writes who is compared and how their circumstances differ.
func (rep *Report) WriteHeader(w io.Writer, markdown bool) {
	item, indent := "", "  "
	if markdown {
		item, indent = "- ", "  - "
	}
	fmt.Fprintln(w, item+"compared: each result against "+rep.Sides[0].Name)
	for _, h := range rep.Header {
		fmt.Fprintln(w, indent+h)
	}
	fmt.Fprintln(w, item+"environment:")
	for _, e := range rep.Environment {
		fmt.Fprintln(w, indent+e)
	}
	if d := rep.directions(); d != "" {
		fmt.Fprintln(w, item+"better: "+d)
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintln(w, item+"WARNING: "+warning)
	}
	if rep.ScenarioDiff != "" {
		if markdown {
			fmt.Fprintf(w, "\nscenario texts differ:\n\n```diff\n%s```\n", rep.ScenarioDiff)
		} else {
			fmt.Fprintf(w, "scenario texts differ:\n%s", rep.ScenarioDiff)
		}
	}
	fmt.Fprintln(w)
}
