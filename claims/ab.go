package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// ApacheBench's report (ab.c, output_results): after the server's and the test's lines, the
// results one per line, each a label, a colon, the figure and its unit in brackets:
//
//	Requests per second:    41234.56 [#/sec] (mean)
//	Time per request:       1.552 [ms] (mean)
//	Time per request:       0.024 [ms] (mean, across all concurrent requests)
//	Transfer rate:          10234.11 [Kbytes/sec] received
//
// The rate of requests, the mean time of one, and the bytes received each second are the
// results; the time per request across all concurrent requests is the rate's inverse, and
// the counts above (Complete requests, Time taken for tests) describe the run.
var (
	abLineRe = regexp.MustCompile(`^\s*(Requests per second|Time per request|Transfer rate):\s+(\d+(?:\.\d+)?)\s+\[([^\]]+)\]\s*(.*)$`)
	abRunRe  = regexp.MustCompile(`^\s*(?:Concurrency Level|Time taken for tests|Complete requests|Failed requests|Total transferred|HTML transferred|Non-2xx responses|Write errors|Keep-Alive requests)\s*:`)
)

// abReport reads ab's results starting at lines[i] (the first of its result or run lines).
func abReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	start := func(k int) bool { return abLineRe.MatchString(lines[k].text) || abRunRe.MatchString(lines[k].text) }
	if !start(i) || i > 0 && start(i-1) {
		return nil, i, ""
	}
	var out []measurement
	j := i
	for ; j < len(lines) && j-i < 40 && start(j); j++ {
		m := abLineRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			continue
		}
		v, ok := parseNumber(m[2])
		if !ok {
			continue
		}
		metric, unitName := "", ""
		switch {
		case m[1] == "Requests per second" && m[3] == "#/sec":
			metric, unitName = "transaction_rate", "trans/s"
		case m[1] == "Time per request" && !strings.Contains(m[4], "across all"):
			u, ok := lookupUnit(m[3])
			if !ok || u.norm != "us" {
				continue
			}
			metric, unitName, v = "mean_latency", "us", v*u.factor
		case m[1] == "Transfer rate" && m[3] == "Kbytes/sec":
			// ab's kilobytes are 1024 bytes (it divides what it read by 1024).
			metric, unitName, v = scenarios.MetricThroughput, "bit/s", v*8*1024
		default:
			continue
		}
		out = append(out, measurement{tool: "ab", metric: metric, unit: unitName, values: []float64{round(v)}, state: ctx.state,
			label: m[1], conditions: copyConds(ctx.conditions), lines: []int{lines[j].n}})
	}
	if len(out) == 0 {
		return nil, i, ""
	}
	return out, j, ""
}
