package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// The summary the XDP sample programs print on exit (xdp-tools' xdp-bench and the
// samples/bpf xdp_redirect* programs, xdp_sample.c's sample_summary_print), after their
// per-interval lines, "Totals" over it in older versions and the run's length first in
// newer ones:
//
//	Duration            : 60.0s
//	Packets received    : 611,234,990
//	Average packets/s   : 10,187,250
//	Rx dropped          : 611,234,990
//	Packets transmitted : 611,230,112
//	Average transmit/s  : 10,187,169
//
// The averages are the run's rates, one per direction (received, redirected, transmitted);
// the counts grow with the run's length and the duration is a setting: neither is a result.
var (
	xdpSummaryRowRe = regexp.MustCompile(`^\s*(Duration|Packets received|Average packets/s|Packets redirected|Average redir/s|Rx dropped|Tx dropped|Packets dropped|Errors recorded|Packets transmitted|Average transmit/s)\s*:\s*(\d[\d,]*(?:\.\d+)?)s?\s*$`)
	// xdpSummaryRates are the rows that are rates, by the direction they measure.
	xdpSummaryRates = map[string]string{"Average packets/s": "rx", "Average redir/s": "redirect", "Average transmit/s": "tx"}
)

// xdpSampleSummary reads the summary starting at lines[i]: a measurement of each rate in it.
func xdpSampleSummary(lines []line, i int, ctx context) ([]measurement, int, string) {
	j := i
	var rows [][]string
	for ; j < len(lines) && j-i < 16; j++ {
		m := xdpSummaryRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		rows = append(rows, m)
	}
	// Two rows at least, one of them a rate: a line "Duration: 60s" alone is no summary.
	rate := false
	for _, m := range rows {
		rate = rate || xdpSummaryRates[m[1]] != ""
	}
	if len(rows) < 2 || !rate {
		return nil, i, ""
	}
	var out []measurement
	for k, m := range rows {
		direction := xdpSummaryRates[m[1]]
		if direction == "" {
			continue
		}
		v, ok := parseNumber(strings.ReplaceAll(m[2], ",", ""))
		if !ok {
			continue
		}
		conditions := copyConds(ctx.conditions)
		conditions["direction"] = direction
		// What its program received is xdp-bench's own rate, as nsperf's pktgen workloads
		// with xdp_bench measure it; what it redirected or sent is a packet rate.
		metric := scenarios.MetricPacketRate
		if direction == "rx" {
			metric = scenarios.MetricXDPRxRate
		}
		out = append(out, measurement{tool: "xdp-bench", metric: metric, unit: "pps", values: []float64{v}, state: ctx.state,
			label: m[1], conditions: conditions, lines: spanLines(lines, i+k, i+k+1)})
	}
	return out, j, ""
}
