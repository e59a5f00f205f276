package claims

import (
	"regexp"
	"strings"
)

// The BPF selftests' bench (tools/testing/selftests/bpf/bench.c and benchs/*.c) prints a
// line an iteration, "Iter %3d (%7.3lfus): " (the iteration's number and how far its second
// ran over or under one second) and then the benchmark's own report: figures each after its
// name and before its unit, separated by "..." or commas, with secondary figures in
// parentheses ("Rate 812.5 MB/s (40.1 calls/s)"). The iterations of one run are a
// series of each named figure.
var (
	benchIterRe  = regexp.MustCompile(`^\s*Iter\s+\d+\s+\(\s*-?\d+(?:\.\d+)?us\):\s+(\S.*)$`)
	benchItemRe  = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z _/-]*?)\s+(-?\d+(?:\.\d+)?)\s*([A-Za-z%][\w/%]*)?\s*$`)
	benchParenRe = regexp.MustCompile(`\([^()]*\)`)
)

// benchIterations reads the iterations of one bench run starting at lines[i].
func benchIterations(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !benchIterRe.MatchString(lines[i].text) || i > 0 && benchIterRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	var names []string
	series := map[string][]float64{}
	units := map[string]unit{}
	j := i
	for ; j < len(lines); j++ {
		m := benchIterRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		report := benchParenRe.ReplaceAllString(m[1], " ")
		for _, part := range strings.FieldsFunc(strings.ReplaceAll(report, "...", ","), func(r rune) bool { return r == ',' }) {
			item := benchItemRe.FindStringSubmatch(part)
			if item == nil {
				continue
			}
			name := strings.Join(strings.Fields(item[1]), " ")
			v, u, ok := parseValue(item[2] + " " + item[3])
			if !ok {
				if v, ok = parseNumber(item[2]); !ok {
					continue
				}
			}
			if _, seen := series[name]; !seen {
				names = append(names, name)
			} else if units[name].norm != u.norm {
				return nil, j + 1, "a bench iteration whose figure changes its unit"
			}
			series[name], units[name] = append(series[name], v), u
		}
	}
	var out []measurement
	for _, name := range names {
		conds := copyConds(ctx.conditions)
		conds["figure"] = strings.ToLower(name)
		out = append(out, measurement{tool: "bench", command: ctx.command, metric: metricOf(units[name]), unit: units[name].norm, values: series[name], state: ctx.state,
			conditions: conds, lines: spanLines(lines, i, j)})
	}
	if len(out) == 0 {
		return nil, j, "bench iterations without a named figure"
	}
	return out, j, ""
}
