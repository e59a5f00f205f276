package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// xdpsock's statistics (samples/bpf/xdpsock_user.c, xdp-tools' xdpsock), printed each
// interval under the socket's line:
//
//	 sock0@eth0:0 rxdrop xdp-drv
//	                   pps            pkts           1.00
//	rx                 14,364,574     14,366,208
//	tx                 0              0
//
// The header's last figure is the interval in seconds; each row gives a direction's packet
// rate and its running count of packets (a total that grows with the run: no measurement of
// its own). With -x, more rows follow ("rx dropped", "fill ring empty", ...): counts too.
var (
	xdpsockHeaderRe = regexp.MustCompile(`^\s+pps\s+pkts\s+\d+(?:\.\d+)?\s*$`)
	xdpsockRowRe    = regexp.MustCompile(`^\s*(rx|tx)\s+(\d[\d,]*)\s+\d[\d,]*\s*$`)
	// xdpsockModeRe is the benchmark xdpsock ran, as its socket line or a heading names it.
	xdpsockModeRe = regexp.MustCompile(`\b(rxdrop|txonly|l2fwd)\b`)
)

// xdpsockStats reads xdpsock's statistics at lines[i], its header: the packet rate of each
// direction, keyed by the direction and the benchmark (rxdrop, txonly, l2fwd) the lines above
// name; next is i when lines[i] does not start them.
func xdpsockStats(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !xdpsockHeaderRe.MatchString(lines[i].text) {
		return nil, i, ""
	}
	mode := ""
	for k := i - 1; k >= 0 && k >= i-3 && mode == ""; k-- {
		if m := xdpsockModeRe.FindStringSubmatch(lines[k].text); m != nil {
			mode = m[1]
		}
	}
	var out []measurement
	j := i + 1
	for ; j < len(lines); j++ {
		m := xdpsockRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		v, ok := parseNumber(strings.ReplaceAll(m[2], ",", ""))
		if !ok || v == 0 {
			continue // a direction the benchmark does not use (tx in rxdrop)
		}
		conditions := copyConds(ctx.conditions)
		conditions["direction"] = m[1]
		if mode != "" {
			conditions["test"] = mode
		}
		out = append(out, measurement{tool: "xdpsock", metric: scenarios.MetricPacketRate, unit: "pps", values: []float64{v}, state: ctx.state,
			label: m[1], conditions: conditions, lines: spanLines(lines, j, j+1)})
	}
	if len(out) == 0 {
		return nil, j, "xdpsock's statistics header without its rx and tx rows"
	}
	return out, j, ""
}
