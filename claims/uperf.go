package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// uperf's summary lines (uperf, src/print.c print_summary): a name (Total, a transaction
// Txn1, a group Group0, a strand), the data moved with its binary unit, the seconds, the rate
// in bits (decimal prefixes, "Gb/s") and the operations per second:
//
//	Total     41.73GB /  60.02(s) =      5.97Gb/s       91093op/s
//	Txn1      41.70GB /  60.02(s) =      5.97Gb/s       91091op/s
//
// The rate is the result; a message's Total line is the run's, each other name a part of it.
var uperfSummaryRe = regexp.MustCompile(`^\s*(Total|Txn\d+|Group\d+|Strand\d+)\s+[\d.]+[KMGTPEZ]?B\s*/\s*[\d.]+\(s\)\s*=\s*([\d.]+)([KMGTPEZ]?)b/s(?:\s+([\d.]+)op/s)?\s*$`)

// uperfRatePrefix is the factor of each decimal prefix uperf prints a rate in bits with.
var uperfRatePrefix = map[string]float64{"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21}

// maxUperfLines bounds a block of summary lines: every transaction, group and strand.
const maxUperfLines = 200

// uperfSummary reads uperf's summary lines at lines[i]: each line's rate in bits/s and its
// operations per second, keyed by its name (Total is the run's).
func uperfSummary(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !uperfSummaryRe.MatchString(lines[i].text) || i > 0 && uperfSummaryRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	var out []measurement
	j := i
	for ; j < len(lines) && j-i < maxUperfLines; j++ {
		m := uperfSummaryRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		conditions := copyConds(ctx.conditions)
		if m[1] != "Total" {
			conditions["part"] = strings.ToLower(m[1])
		}
		if v, ok := parseNumber(m[2]); ok {
			out = append(out, measurement{tool: "uperf", metric: scenarios.MetricThroughput, unit: "bit/s", values: []float64{v * uperfRatePrefix[m[3]]},
				state: ctx.state, label: m[1], conditions: conditions, lines: spanLines(lines, j, j+1)})
		}
		if v, ok := parseNumber(m[4]); ok && m[4] != "" {
			out = append(out, measurement{tool: "uperf", quantity: "operation_rate", unit: "op/s", values: []float64{v},
				state: ctx.state, label: m[1], conditions: copyConds(conditions), lines: spanLines(lines, j, j+1)})
		}
	}
	if len(out) == 0 {
		return nil, j, "uperf's summary lines without a rate"
	}
	return out, j, ""
}
