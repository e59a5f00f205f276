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

// The lines the XDP sample programs print every interval (xdp_sample.c's stats_print): a
// name padded to 23 columns, "Summary" or "FROM->TO" when the program redirects between two
// devices, then one column a counter, each a rate and its unit:
//
//	Summary                24,613,208 rx/s                  0 err,drop/s
//	eth0->eth1              8,104,772 rx/s                  0 err,drop/s    8,104,770 xmit/s
//
// Indented lines under them (the default log level's "receive total", "cpu:N") break the
// counters down: not read. The consecutive lines of one name are one run's samples; each
// rate is a series of them. Errors and drops are no result.
var (
	xdpSampleLineRe   = regexp.MustCompile(`^(Summary|[\w.@-]+->[\w.@-]+)\s+((?:\s*\d[\d,]*\s+[a-z,_-]+/s)+)\s*$`)
	xdpSampleColumnRe = regexp.MustCompile(`(\d[\d,]*)\s+([a-z,_-]+/s)`)
	// xdpSampleRates are the columns that are rates, by the direction they measure.
	xdpSampleRates = map[string]string{"rx/s": "rx", "redir/s": "redirect", "xmit/s": "tx"}
)

// xdpBenchModeRe is xdp-bench's command and its mode (drop, pass, tx, redirect, ...).
var xdpBenchModeRe = regexp.MustCompile(`\bxdp-bench\s+([a-z][a-z-]*)`)

// xdpSampleLines reads the per-interval lines starting at lines[i]: a measurement of each
// rate over the samples.
func xdpSampleLines(lines []line, i int, ctx context) ([]measurement, int, string) {
	first := xdpSampleLineRe.FindStringSubmatch(lines[i].text)
	if first == nil {
		return nil, i, ""
	}
	series := map[string][]float64{}
	var order []string
	j, last := i, i
	for ; j < len(lines); j++ {
		m := xdpSampleLineRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			if strings.HasPrefix(lines[j].text, " ") && strings.Contains(lines[j].text, "/s") {
				continue // a breakdown of the line above
			}
			break
		}
		if m[1] != first[1] {
			break
		}
		for _, c := range xdpSampleColumnRe.FindAllStringSubmatch(m[2], -1) {
			if xdpSampleRates[c[2]] == "" {
				continue
			}
			v, ok := parseNumber(strings.ReplaceAll(c[1], ",", ""))
			if !ok {
				continue
			}
			if _, seen := series[c[2]]; !seen {
				order = append(order, c[2])
			}
			series[c[2]] = append(series[c[2]], v)
		}
		last = j
	}
	var out []measurement
	for _, u := range order {
		direction := xdpSampleRates[u]
		conditions := copyConds(ctx.conditions)
		conditions["direction"] = direction
		if m := xdpBenchModeRe.FindStringSubmatch(ctx.command); m != nil {
			conditions["test"] = m[1] // "xdp-bench drop" and "xdp-bench redirect" are two tests
		}
		if first[1] != "Summary" {
			conditions["devices"] = first[1]
		}
		metric := scenarios.MetricPacketRate
		if direction == "rx" {
			metric = scenarios.MetricXDPRxRate
		}
		out = append(out, measurement{tool: "xdp-bench", command: ctx.command, metric: metric, unit: "pps", values: series[u], state: ctx.state,
			label: first[1], conditions: conditions, lines: spanLines(lines, i, last+1)})
	}
	return out, last + 1, ""
}
