package claims

import (
	"regexp"

	"github.com/nsperf/nsperf/scenarios"
)

// pktgen's result, as net/core/pktgen.c prints it into /proc/net/pktgen/DEV after a run
// (pktgen_finalize_skb's caller, show_results):
//
//	Result: OK: 10271354(c10271176+d177) usec, 50000000 (64byte,0frags)
//	  4867961pps 2492Mb/sec (2492396032bps) errors: 0
//
// The second line is the rate; the first says the packet size, a condition of the rate.
var (
	pktgenResultRe = regexp.MustCompile(`^\s*(?:Result: )?OK: \d+\(c\d+\+d\d+\) usec, \d+ \((\d+)byte,\d+frags\)\s*$`)
	pktgenRateRe   = regexp.MustCompile(`^\s*(\d+)pps \d+Mb/sec \(\d+bps\) errors: \d+\s*$`)
)

// pktgenResult reads pktgen's result at lines[i]: its packet rate, keyed by the packet size;
// next is i when lines[i] does not start one.
func pktgenResult(lines []line, i int, ctx context) ([]measurement, int, string) {
	head := pktgenResultRe.FindStringSubmatch(lines[i].text)
	if head == nil || i+1 >= len(lines) {
		return nil, i, ""
	}
	rate := pktgenRateRe.FindStringSubmatch(lines[i+1].text)
	if rate == nil {
		return nil, i + 1, "pktgen's result without its rate line (PPS pps MB Mb/sec (BPS bps) errors: N)"
	}
	v, ok := parseNumber(rate[1])
	if !ok {
		return nil, i + 2, "pktgen's rate is not a number"
	}
	conditions := map[string]string{}
	for k, c := range ctx.conditions {
		conditions[k] = c
	}
	conditions["packet size"] = head[1] + "B"
	return []measurement{{tool: "pktgen", metric: scenarios.MetricPacketRate, unit: "pps", values: []float64{v}, state: ctx.state,
		conditions: conditions, lines: spanLines(lines, i, i+2)}}, i + 2, ""
}
