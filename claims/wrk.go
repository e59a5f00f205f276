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
	time := func(v, u string) float64 {
		n, _ := parseNumber(v)
		return n * map[string]float64{"us": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}[u]
	}
	j := i + 1
	for ; j < len(lines); j++ {
		t := lines[j].text
		if m := wrkLatencyRe.FindStringSubmatch(t); m != nil {
			figs = append(figs, figure{"mean_latency", "us", time(m[1], m[2])}, figure{"max_latency", "us", time(m[3], m[4])})
		} else if m := wrkPctRe.FindStringSubmatch(t); m != nil {
			figs = append(figs, figure{"p" + m[1] + "_latency", "us", time(m[2], m[3])})
		} else if m := wrkTotalRe.FindStringSubmatch(t); m != nil {
			n, _ := parseNumber(m[2])
			if m[1] == "Requests" {
				figs = append(figs, figure{"transaction_rate", "trans/s", n})
			} else {
				scale := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}[m[3]]
				figs = append(figs, figure{"throughput", "bit/s", 8 * n * scale})
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
