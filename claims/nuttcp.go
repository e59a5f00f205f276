package claims

import (
	"regexp"

	"github.com/nsperf/nsperf/scenarios"
)

// nuttcp's report (nuttcp.c): the run's line, and with -i one line per interval, each the
// megabytes moved, the seconds, and the rate they give, then the CPU shares and the
// retransmits and RTT where the transmitter can read them:
//
//	28223.6875 MB /  30.00 sec = 7891.5912 Mbps 12 %TX 41 %RX 0 retrans 0.23 msRTT
//	   1.1875 MB /   1.00 sec =    9.9604 Mbps     0 retrans
//
// The rate is the result; the megabytes and seconds are what gave it. An interval's line
// has no %TX/%RX: the run's line (the last) is the run's figure.
var nuttcpLineRe = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s+MB\s*/\s*(\d+(?:\.\d+)?)\s+sec\s*=\s*(\d+(?:\.\d+)?)\s+Mbps\b(.*)$`)

// nuttcpTotalRe is what only the run's line carries after its rate: the CPU shares.
var nuttcpTotalRe = regexp.MustCompile(`\d+\s+%TX\s+\d+\s+%RX`)

// maxNuttcpLines bounds a report: an hour of one-second intervals.
const maxNuttcpLines = 4000

// nuttcpReport reads nuttcp's lines starting at lines[i]: the rate of the run's line, or
// where only intervals were pasted, their rates as the run's series.
func nuttcpReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !nuttcpLineRe.MatchString(lines[i].text) || i > 0 && nuttcpLineRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	var intervals, totals []float64
	j := i
	for ; j < len(lines) && j-i < maxNuttcpLines; j++ {
		m := nuttcpLineRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		v, ok := parseNumber(m[3])
		if !ok {
			return nil, j + 1, "nuttcp's rate is not a number"
		}
		if nuttcpTotalRe.MatchString(m[4]) {
			totals = append(totals, v*1e6)
		} else {
			intervals = append(intervals, v*1e6)
		}
	}
	values := totals
	if len(values) == 0 {
		values = intervals
	}
	return []measurement{{tool: "nuttcp", metric: scenarios.MetricThroughput, unit: "bit/s", values: values, state: ctx.state,
		conditions: copyConds(ctx.conditions), lines: spanLines(lines, i, j)}}, j, ""
}
