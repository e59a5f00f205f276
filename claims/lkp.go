package claims

import (
	"regexp"
	"strings"
)

// The kernel test robot's (LKP's) comparison table: two commits' means of each metric,
// the first the base, the second the commit tested, with their %stddev and the %change
// between them (a percentage, or a difference for metrics that are percentages):
//
//	    %stddev     %change         %stddev
//	        \          |                \
//	41230 ±  2%      +6.2%      43786        netperf.Throughput_Mbps
//
// A row's metric name is its last word, whatever it holds (meminfo.Active(anon),
// sched_debug.cfs_rq:/.load.avg): a row that does not read ends the table.
//
// The robot's report names the metric it is about ("a 6.2% improvement of
// netperf.Throughput_Mbps"); the table's rows of the same benchmark (netperf.*) are its
// claims, and the many system statistics below them (vmstat, perf-stat, ...) are not.
var (
	lkpHeaderRe   = regexp.MustCompile(`^\s*%stddev\s+%change\s+%stddev\s*$`)
	lkpArrowsRe   = regexp.MustCompile(`^\s*\\\s+\|\s+\\\s*$`)
	lkpRowRe      = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?:\s*±\s*\d+%)?\s+(?:[-+]?\d+(?:\.\d+)?%?\s+)?(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?:\s*±\s*\d+%)?\s+([A-Za-z]\S*)\s*$`)
	lkpHeadlineRe = regexp.MustCompile(`(?i)\b(?:improvement|regression)\s+of\s+([a-z][\w-]*)\.`)
	lkpTestcaseRe = regexp.MustCompile(`^[a-z][\w-]*$`)
)

// maxLKPRows bounds a robot's table: its reports have a few hundred rows.
const maxLKPRows = 2000

// lkpTable reads the robot's table whose header is lines[i], keeping the rows of the
// benchmark the report's headline names (ctx carries nothing of it: the headline is looked
// for in the lines above).
func lkpTable(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !lkpHeaderRe.MatchString(lines[i].text) {
		return nil, i, ""
	}
	bench := ""
	for k := i - 1; k >= 0 && k >= i-200; k-- {
		if m := lkpHeadlineRe.FindStringSubmatch(lines[k].text); m != nil {
			bench = m[1] + "."
			break
		}
		// The parameters' line over the table names the testcase second: under
		// "tbox_group/testcase/rootfs/...:", "lkp-host/netperf/debian-.../...".
		if strings.HasPrefix(strings.TrimSpace(lines[k].text), "tbox_group/testcase/") && k+1 < len(lines) && bench == "" {
			if f := strings.Split(strings.TrimSpace(lines[k+1].text), "/"); len(f) > 2 && lkpTestcaseRe.MatchString(f[1]) {
				bench = f[1] + "."
			}
		}
	}
	j := i + 1
	if j < len(lines) && lkpArrowsRe.MatchString(lines[j].text) {
		j++
	}
	var out []measurement
	for ; j < len(lines) && j-i < maxLKPRows; j++ {
		m := lkpRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			if strings.TrimSpace(lines[j].text) == "" {
				continue
			}
			break
		}
		if bench == "" || !strings.HasPrefix(m[3], bench) {
			continue
		}
		b, ok1 := parseNumber(m[1])
		a, ok2 := parseNumber(m[2])
		if !ok1 || !ok2 {
			continue
		}
		name := strings.TrimPrefix(m[3], bench)
		// The name ends in its unit: netperf.Throughput_Mbps, netperf.Throughput_total_tps.
		metric, unitName, factor := metricName(name), "", 1.0
		if k := strings.LastIndex(name, "_"); k > 0 {
			if u, ok := lookupUnit(name[k+1:]); ok {
				metric, unitName, factor = metricOf(u), u.norm, u.factor
			}
		}
		conds := copyConds(ctx.conditions)
		for _, side := range []struct {
			state string
			v     float64
		}{{"before", b}, {"after", a}} {
			out = append(out, measurement{tool: "lkp", metric: metric, unit: unitName, values: []float64{round(side.v * factor)},
				state: side.state, label: m[3], conditions: conds, lines: []int{lines[j].n}})
		}
	}
	if bench == "" {
		return nil, j, "the kernel test robot's table without the headline or the parameters' line that names its benchmark (\"improvement of netperf.Throughput_Mbps\", \"tbox_group/testcase/...\"): not read"
	}
	return out, j, ""
}
