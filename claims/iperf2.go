package claims

import (
	"regexp"
	"strconv"

	"github.com/nsperf/nsperf/scenarios"
)

// iperf 2's report: a header naming the columns (the stream's id, the interval, the bytes
// moved, the rate as "Bandwidth"), then a row each, its fields in that order: the id in
// brackets, START-END "sec", a size with its Bytes unit, a rate with its bits/sec unit.
// With -i a row each interval, then the whole run's, from 0.0 to its end; with -P, a [SUM]
// row of the streams. Unlike iperf3's rows these end at the rate, without "sender" or
// "receiver", or with -e (enhanced reports) the client's Write/Err, Rtry, Cwnd/RTT and NetPwr
// after it ("89412/0  0  1520K/120(30) us  9768421").
var iperf2RowRe = regexp.MustCompile(`^\s*\[\s*(\d+|SUM)\]\s+(\d+\.\d+)\s*-\s*(\d+\.\d+)\s+sec\s+[\d.]+\s+[KMG]?Bytes\s+([\d.]+\s*[KMG]?bits/sec)(?:\s+\d+/\d+(?:\s+\S+){0,6})?\s*$`)

// iperf2Report reads the rows of iperf 2's report at lines[i] (its header before them or
// not) where each is of the whole run: its throughput, the [SUM] row's where streams run in
// parallel.
func iperf2Report(lines []line, i int, ctx context) ([]measurement, int, string) {
	if i > 0 && iperf2RowRe.MatchString(lines[i-1].text) {
		return nil, i, "" // inside a report its first row declined
	}
	start := i
	tool := "iperf2"
	if iperf3HeaderRe.MatchString(lines[i].text) && i+1 < len(lines) && iperf2RowRe.MatchString(lines[i+1].text) {
		if iperf3HeaderRe.FindStringSubmatch(lines[i].text)[1] == "Bitrate" {
			tool = "iperf3" // iperf3's server prints these rows too, under its own header
		}
		i++
	}
	type row struct {
		id       string
		from, to float64
		rate     string
	}
	var rows []row
	j := i
	for ; j < len(lines); j++ {
		m := iperf2RowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		from, _ := strconv.ParseFloat(m[2], 64)
		to, _ := strconv.ParseFloat(m[3], 64)
		rows = append(rows, row{m[1], from, to, m[4]})
	}
	if len(rows) == 0 {
		return nil, start, ""
	}
	// The whole run: the rows from 0 to the last end, the [SUM] ones where there are some.
	// Several of one stream are runs of one measurement, one after another (each its own
	// "iperf -c" with the output alone pasted): a series.
	end := 0.0
	for _, r := range rows {
		end = max(end, r.to)
	}
	var runs []float64
	var unit unit
	ids := map[string]bool{}
	for _, r := range rows {
		if r.from != 0 || r.to != end {
			// A report of intervals (-i) is left to the generic reader, which reads the
			// rows as a run's series under the headings that name their states.
			return nil, start, ""
		}
		ids[r.id] = true
	}
	for _, r := range rows {
		if ids["SUM"] && r.id != "SUM" {
			continue
		}
		v, u, ok := parseValue(r.rate)
		if !ok {
			return nil, j, "iperf 2's rate is not a number"
		}
		runs, unit = append(runs, v), u
	}
	if len(ids) > 1 && !ids["SUM"] {
		return nil, j, "iperf 2 rows of parallel streams without their [SUM] row"
	}
	return []measurement{{tool: tool, metric: scenarios.MetricThroughput, unit: unit.norm, values: runs, state: ctx.state,
		conditions: copyConds(ctx.conditions), lines: spanLines(lines, start, j)}}, j, ""
}
