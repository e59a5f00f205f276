package claims

import "regexp"

// wrk's report (wg/wrk, src/wrk.c): "Running 30s test @ URL", "N threads and M
// connections", then the "Thread Stats" header over the Latency and Req/Sec rows (mean,
// stdev, max, and the share within one stdev, each with wrk's units: us/ms/s for times, k/M
// for counts), with --latency "Latency Distribution" and a line a percentile (50%, 75%, 90%,
// 99%), then "N requests in 30.02s, 2.95GB read", optional error lines, and the totals
// "Requests/sec: X" and "Transfer/sec: YMB" (binary prefixes, bytes). The test's duration and
// the share within one stdev are no results; the per-thread Req/Sec is the totals' part.
var (
	wrkStartRe   = regexp.MustCompile(`^\s*(?:Running \S+ test @ \S+|Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev)\s*$`)
	wrkLatencyRe = regexp.MustCompile(`^\s*Latency\s+(\d+(?:\.\d+)?)(us|ms|s|m|h)\s+\d+(?:\.\d+)?\w*\s+(\d+(?:\.\d+)?)(us|ms|s|m|h)\s+\d+(?:\.\d+)?%\s*$`)
	wrkPctRe     = regexp.MustCompile(`^\s*(\d+)%\s+(\d+(?:\.\d+)?)(us|ms|s|m|h)\s*$`)
	wrkTotalRe   = regexp.MustCompile(`^\s*(Requests|Transfer)/sec:\s+(\d+(?:\.\d+)?)([KMGTP]?)B?\s*$`)
	wrkOtherRe   = regexp.MustCompile(`^\s*(?:\d+ threads and \d+ connections|Req/Sec\s.*|Latency Distribution|\d+ requests in .*|Socket errors: .*|Non-2xx or 3xx responses: \d+)\s*$`)
)

// wrkReport reads wrk's report starting at lines[i].
func wrkReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !wrkStartRe.MatchString(lines[i].text) || i > 0 && wrkStartRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	type figure struct {
		metric, unit string
		v            float64
	}
	var figs []figure
	// wrk's times and its binary byte prefixes, as the reader's units read them ("3.21 ms",
	// "100.71 MiB/s"); a time of minutes or hours reads as none and is left out.
	time := func(v, u string) (float64, bool) {
		f, unit, ok := parseValue(v + " " + u)
		return f, ok && unit.norm == "us"
	}
	j := i + 1
	for ; j < len(lines); j++ {
		t := lines[j].text
		if m := wrkLatencyRe.FindStringSubmatch(t); m != nil {
			if v, ok := time(m[1], m[2]); ok {
				figs = append(figs, figure{"mean_latency", "us", v})
			}
			if v, ok := time(m[3], m[4]); ok {
				figs = append(figs, figure{"max_latency", "us", v})
			}
		} else if m := wrkPctRe.FindStringSubmatch(t); m != nil {
			if v, ok := time(m[2], m[3]); ok {
				figs = append(figs, figure{"p" + m[1] + "_latency", "us", v})
			}
		} else if m := wrkTotalRe.FindStringSubmatch(t); m != nil {
			if m[1] == "Requests" {
				n, _ := parseNumber(m[2])
				figs = append(figs, figure{"transaction_rate", "trans/s", n})
			} else if v, u, ok := parseValue(m[2] + " " + m[3] + "iB/s"); m[3] != "" && ok {
				figs = append(figs, figure{"throughput", u.norm, v})
			} else if n, ok := parseNumber(m[2]); m[3] == "" && ok {
				figs = append(figs, figure{"throughput", "bit/s", 8 * n})
			}
		} else if !wrkOtherRe.MatchString(t) && !wrkStartRe.MatchString(t) {
			break
		}
	}
	if len(figs) == 0 {
		return nil, i, ""
	}
	var out []measurement
	for _, f := range figs {
		out = append(out, measurement{tool: "wrk", command: ctx.command, metric: f.metric, unit: f.unit, values: []float64{f.v}, state: ctx.state,
			conditions: copyConds(ctx.conditions), lines: spanLines(lines, i, j)})
	}
	return out, j, ""
}
