package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// ntttcp's totals (ntttcp-for-linux, src/ntttcp.c): a banner, then one "name<tab>:value"
// line per figure, the sub-figures indented under the line that groups them, each line
// maybe led by the time and "INFO:" as its logger prints it:
//
//	#####  Totals:  #####
//	test duration	:60.02 seconds
//	total bytes	:84318928896
//		 throughput	:11.24Gbps
//		 retrans segs	:412
//	cpu cores	:8
//		 cycles/byte	:1.91
//	cpu busy (all)	:38.50%
//
// The throughput (Mbps or Gbps, bits) is the run's result; the retransmitted segments, the
// CPU's cycles per byte and busy share, and the packets per interrupt are its costs. The
// duration, the byte and packet totals and the CPU's description are what the run was.
var (
	ntttcpBannerRe = regexp.MustCompile(`#{3,}\s+Totals:\s+#{3,}`)
	ntttcpLineRe   = regexp.MustCompile(`^(?:\s*\d{1,2}:\d{2}:\d{2})?\s*(?:INFO:)?\s*([a-z][\w /()-]{0,30}?)\s*:\s*(\d[\d.]*)?\s*([A-Za-z%/]*)\s*$`)
)

// ntttcpFigures are the figures of the totals that are results, by their name: the metric
// or quantity, and the factor of each unit ntttcp prints to the unit the claim is in.
var ntttcpFigures = map[string]struct {
	metric, unit string
	factors      map[string]float64
}{
	"throughput":     {scenarios.MetricThroughput, "bit/s", map[string]float64{"Gbps": 1e9, "Mbps": 1e6, "Kbps": 1e3, "bps": 1}},
	"retrans segs":   {"retransmitted_segments", "", map[string]float64{"": 1}},
	"cycles/byte":    {"cycles_per_byte", "cycles", map[string]float64{"": 1}},
	"cpu busy (all)": {"cpu_busy", "%", map[string]float64{"%": 1}},
	"pkts/interrupt": {"packets_per_interrupt", "", map[string]float64{"": 1}},
}

// maxNtttcpLines bounds the totals: every figure ntttcp prints, with room for more.
const maxNtttcpLines = 60

// ntttcpTotals reads ntttcp's totals at lines[i], their banner.
func ntttcpTotals(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !ntttcpBannerRe.MatchString(lines[i].text) {
		return nil, i, ""
	}
	var out []measurement
	j := i + 1
	for ; j < len(lines) && j-i < maxNtttcpLines; j++ {
		m := ntttcpLineRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		name := strings.Join(strings.Fields(m[1]), " ")
		f, ok := ntttcpFigures[name]
		if !ok || m[2] == "" {
			continue // what the run was (its duration, bytes, cores), or a group's line
		}
		factor, ok := f.factors[m[3]]
		v, number := parseNumber(m[2])
		if !ok || !number {
			continue
		}
		out = append(out, measurement{tool: "ntttcp", metric: f.metric, unit: f.unit, values: []float64{v * factor}, state: ctx.state,
			label: name, conditions: copyConds(ctx.conditions), lines: spanLines(lines, j, j+1)})
	}
	if len(out) == 0 {
		return nil, j, "ntttcp's totals banner without its throughput"
	}
	return out, j, ""
}
