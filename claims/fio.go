package claims

import "regexp"

// fio's report (axboe/fio, stat.c show_ddir_status and show_run_stats): a line a direction,
// "read: IOPS=412k, BW=1609MiB/s (1687MB/s)(94.3GiB/60001msec)", the IOPS with fio's k/M
// scale and the bandwidth in binary units then decimal ones; under it the latencies,
// "clat (usec): min=41, max=8123, avg=309.52, stdev=88.31" in the unit in parentheses; and the
// group's "READ: bw=1609MiB/s (1687MB/s), ... io=..., run=..." line. The result is the IOPS,
// the bandwidth and the mean of each latency; min, max and stdev describe the spread.
var (
	fioStatusRe = regexp.MustCompile(`^\s*(read|write|trim)\s*:\s*IOPS=(\d+(?:\.\d+)?)([kMG]?),\s*BW=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s)\b`)
	fioLatRe    = regexp.MustCompile(`^\s*(clat|slat|lat)\s*\((nsec|usec|msec)\):\s*min=\s*[\d.]+[kKM]?,\s*max=\s*[\d.]+[kKM]?,\s*avg=\s*(\d+(?:\.\d+)?),`)
	fioGroupRe  = regexp.MustCompile(`^\s*(READ|WRITE|TRIM):\s*bw=(\d+(?:\.\d+)?)\s*([KMGT]i?B/s)\b`)
)

// fioReport reads fio's lines starting at lines[i]: a direction's status and the latencies
// under it, or the group's line.
func fioReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	mk := func(metric, unit, dir string, v float64, j int) measurement {
		conds := copyConds(ctx.conditions)
		conds["direction"] = dir
		return measurement{tool: "fio", command: ctx.command, metric: metric, unit: unit, values: []float64{v}, state: ctx.state,
			conditions: conds, lines: spanLines(lines, i, j)}
	}
	rate := func(v, u string) float64 { // fio's KiB/s and kB/s as the reader's units read them
		f, _, _ := parseValue(v + " " + u)
		return f
	}
	if m := fioGroupRe.FindStringSubmatch(lines[i].text); m != nil {
		return []measurement{mk("throughput", "bit/s", "group "+m[1], rate(m[2], m[3]), i+1)}, i + 1, ""
	}
	m := fioStatusRe.FindStringSubmatch(lines[i].text)
	if m == nil {
		return nil, i, ""
	}
	iops, _ := parseNumber(m[2])
	iops *= map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[3]]
	var lat []measurement
	j := i + 1
	for ; j < len(lines); j++ {
		l := fioLatRe.FindStringSubmatch(lines[j].text)
		if l == nil {
			break
		}
		if avg, u, ok := parseValue(l[3] + " " + l[2]); ok && u.norm == "us" {
			lat = append(lat, mk("mean_"+l[1], "us", m[1], avg, j+1))
		}
	}
	out := []measurement{mk("transaction_rate", "trans/s", m[1], iops, i+1), mk("throughput", "bit/s", m[1], rate(m[4], m[5]), i+1)}
	return append(out, lat...), j, ""
}
