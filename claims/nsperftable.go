package claims

import (
	"regexp"
	"strings"
)

var (
	// nsperf's own table (results.Table): a title line, then "workload  metric  OFF  ON  CV
	// OFF / ON  ON vs OFF", then a row per workload and metric.
	nsperfTitleRe  = regexp.MustCompile(`^\s*(\S+)\s+run (nsp\w+)\s+(\d+) runs per state`)
	nsperfHeaderRe = regexp.MustCompile(`^\s*workload\s+metric\s+(\S+)\s+(\S+)\s+CV (\S+) / (\S+)\s+(\S+) vs (\S+)\s*$`)
	// tcp4  throughput  10.000 Gbps ±n/a  11.000 Gbps ±n/a  14.14% / 14.14%  +10.0% verdict...
	nsperfRowRe = regexp.MustCompile(`^\s*(\S+)\s+(\S+)\s+([\d.,]+ \S+) ±(?:n/a|[\d.]+%)\s+([\d.,]+ \S+) ±(?:n/a|[\d.]+%)\s+([\d.]+)% / ([\d.]+)%\s+(.*)$`)
)

// nsperfTable reads a table nsperf printed (`nsperf run`, `nsperf compare`) at lines[i], its
// title or header line: each row's two states as a claim's before and after, with their CVs,
// the row's workload as its condition, and nsperf's metric names (a request/response
// workload's throughput in trans/s is its transaction rate). The title names the scenario and
// the runs.
func nsperfTable(lines []line, i int, ctx context) ([]measurement, int) {
	opts := map[string]string{}
	cmd := ""
	h := i
	if m := nsperfTitleRe.FindStringSubmatch(lines[i].text); m != nil && i+1 < len(lines) {
		opts["scenario"], opts["runs"] = m[1], m[3]
		cmd = strings.TrimSpace(lines[i].text)
		h = i + 1
	}
	hm := nsperfHeaderRe.FindStringSubmatch(lines[h].text)
	if hm == nil || hm[5] != hm[2] || hm[6] != hm[1] {
		return nil, i
	}
	var out []measurement
	j := h + 1
	for ; j < len(lines); j++ {
		m := nsperfRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		before, ub, ok1 := parseValue(m[3])
		after, ua, ok2 := parseValue(m[4])
		cvb, ok3 := parseNumber(m[5])
		cva, ok4 := parseNumber(m[6])
		if !ok1 || !ok2 || !ok3 || !ok4 || ub.norm != ua.norm {
			break
		}
		metric := m[2]
		if metric == "throughput" && ub.kind == "trans" {
			metric = "transaction_rate"
		}
		cvB, cvA := round(cvb/100), round(cva/100)
		conds := map[string]string{"row": m[1]}
		for k, v := range ctx.conditions {
			conds[k] = v
		}
		side := func(v float64, label, state string, cv *float64) measurement {
			return measurement{tool: "nsperf", command: cmd, options: opts, metric: metric, unit: ub.norm, values: []float64{round(v)}, cv: cv,
				state: state, label: label, conditions: conds, lines: []int{lines[j].n}}
		}
		out = append(out, side(before, hm[1], "before", &cvB), side(after, hm[2], "after", &cvA))
	}
	if len(out) == 0 {
		return nil, i
	}
	return out, j
}
