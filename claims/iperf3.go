package claims

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/iperf3"
	"github.com/nsperf/nsperf/scenarios"
)

// iperf3Options reads what an iperf3 client command says it measured: the length (-t), the
// omitted start (-O), parallel streams (-P), UDP (-u), the reverse direction (-R), the
// buffer length (-l) and zero copy (-Z).
func iperf3Options(cmd string) map[string]string {
	out := map[string]string{}
	f := strings.Fields(cmd)
	for i := 0; i < len(f); i++ {
		next := func() string {
			if i+1 < len(f) {
				i++
				return f[i]
			}
			return ""
		}
		switch f[i] {
		case "-t", "--time":
			out["duration"] = next() + "s"
		case "-O", "--omit":
			out["omit"] = next() + "s"
		case "-P", "--parallel":
			out["streams"] = next()
		case "-l", "--length":
			out["length"] = next()
		case "-u", "--udp":
			out["protocol"] = "UDP"
		case "-R", "--reverse":
			out["direction"] = "reverse"
		case "-Z", "--zerocopy":
			out["zerocopy"] = "yes"
		case "--bidir":
			out["direction"] = "both"
		}
	}
	return out
}

var (
	// iperf3's summary starts after its dashed line with the column header again.
	iperf3SepRe = regexp.MustCompile(`^\s*(- ){8,}-?\s*$`)
	// An author may cut the stream's ID column off the header and its rows ("Interval
	// Transfer Bitrate" over "0.00-10.00  sec  ...  receiver"): a row still ends in its role.
	iperf3HeaderRe = regexp.MustCompile(`^\s*(?:\[ ID\](?:\[Role\])?\s+)?Interval\s+Transfer\s+(Bitrate|Bandwidth)`)
	// [  5]   0.00-2.00   sec  2.03 GBytes  8.74 Gbits/sec        receiver; [SUM] for -P N;
	// --bidir's role after the ID: "[  5][TX-C]", "[SUM][RX-C]" (the client sending, receiving).
	iperf3RowRe = regexp.MustCompile(`^\s*(?:\[\s*(\d+|SUM)\](?:\[([TR]X)-[CS]\])?\s+)?[\d.]+-[\d.]+\s+sec\s+[\d.]+\s+\S+\s+([\d.]+\s+[KMG]?bits/sec)\b.*\b(sender|receiver)\s*$`)
	// A UDP row's jitter and loss (-u): "0.004 ms  198123/1771223 (11%)".
	iperf3LossRe = regexp.MustCompile(`bits/sec\s+[\d.]+\s+ms\s+\d+/\d+\s+\(([\d.]+(?:e[-+]?\d+)?)%\)`)
)

// iperf3Summary reads iperf3's text summary whose column header is lines[header] and which
// starts at lines[start] (its dashed line, or the header itself where the summary was
// pasted without the intervals above it, or its first row where the header was left out too): the receiver's bitrate, what arrived (the
// sender's where no receiver row is), of the [SUM] rows when there are several streams, and
// for UDP the receiver's loss. A summary without such a row is a reason, not a claim.
func iperf3Summary(lines []line, start, header int, ctx context) ([]measurement, int, string) {
	if header >= len(lines) {
		return nil, start, ""
	}
	j := header + 1
	switch {
	case iperf3HeaderRe.MatchString(lines[header].text):
	case iperf3RowRe.MatchString(lines[header].text):
		j = header // the sender and receiver rows pasted without their header
	default:
		return nil, start, ""
	}
	rows, roles, j := iperf3SummaryRows(lines, j)
	var out []measurement
	add := func(metric, unitName, role string, vs []float64) {
		m := measurement{tool: "iperf3", metric: metric, unit: unitName, values: vs, state: ctx.state,
			conditions: ctx.conditions, lines: spanLines(lines, start, j)}
		if role != "" {
			m.conditions = copyConds(ctx.conditions)
			m.conditions["direction"] = map[string]string{"TX": "client sends", "RX": "client receives"}[role]
		}
		if strings.HasPrefix(ctx.command, "iperf3") {
			m.command, m.options = ctx.command, iperf3Options(ctx.command)
		}
		out = append(out, m)
	}
	for _, role := range roles {
		runs := rows[role+"receiver"]
		if len(runs) == 0 {
			runs = rows[role+"sender"]
		}
		var rates, losses []float64
		var rateUnit unit
		for _, row := range runs {
			if m := iperf3RowRe.FindStringSubmatch(row); m != nil {
				if v, u, ok := parseValue(m[3]); ok && (len(rates) == 0 || u.norm == rateUnit.norm) {
					rates, rateUnit = append(rates, round(v)), u
				}
			}
		}
		for _, row := range rows[role+"receiver"] {
			if m := iperf3LossRe.FindStringSubmatch(row); m != nil {
				if v, ok := parseNumber(m[1]); ok {
					losses = append(losses, round(v))
				}
			}
		}
		if len(rates) > 0 {
			add(metricOf(rateUnit), rateUnit.norm, role, rates)
		}
		if len(losses) > 0 {
			add(scenarios.MetricPacketLoss, "%", role, losses)
		}
	}
	if len(out) == 0 {
		return nil, j, "an iperf3 summary without its sender or receiver row"
	}
	return out, j, ""
}

// iperf3SummaryRows are the summary's rows from lines[j] on, by role and sender/receiver
// ([SUM] rows winning over the streams'), the roles in print order (--bidir's directions; one
// "" without it), and the index past the last row. The same stream's row again is one run
// after another, pasted in a row: its rows are the runs.
func iperf3SummaryRows(lines []line, j int) (map[string][]string, []string, int) {
	rows := map[string][]string{}
	var roles []string
	sum := map[string]bool{}
	ids := map[string]string{} // role and sender/receiver -> the stream of its last row
	for ; j < len(lines); j++ {
		m := iperf3RowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		role := m[2]
		if !slices.Contains(roles, role) {
			roles = append(roles, role)
		}
		if m[1] == "SUM" && !sum[role] {
			sum[role] = true
			delete(rows, role+"sender")
			delete(rows, role+"receiver")
		}
		if m[1] == "SUM" || !sum[role] {
			key := role + m[4]
			if ids[key] != m[1] {
				rows[key] = nil // another stream's row: the last stream's stands
			}
			rows[key], ids[key] = append(rows[key], lines[j].text), m[1]
		}
	}
	return rows, roles, j
}

// maxJSONLines bounds an iperf3 -J block: a 60 s run with -P 128 is far below it.
const maxJSONLines = 200000

// iperf3JSONBlock reads iperf3 -J output that starts at lines[i] ("{", with "start" within
// its first lines): the object to its closing brace, the receiver's bitrate (the sender's
// without one; UDP's sum). A block that does not parse, or holds iperf3's error, is a reason.
func iperf3JSONBlock(lines []line, i int, ctx context) ([]measurement, int, string) {
	if strings.TrimSpace(lines[i].text) != "{" || !startsIperf3JSON(lines[i+1:]) {
		return nil, i, ""
	}
	var text strings.Builder
	depth, inString, escaped := 0, false, false
	j := i
	for ; j < len(lines) && j < i+maxJSONLines; j++ {
		for _, c := range lines[j].text {
			switch {
			case escaped:
				escaped = false
			case c == '\\' && inString:
				escaped = true
			case c == '"':
				inString = !inString
			case c == '{' && !inString:
				depth++
			case c == '}' && !inString:
				depth--
			}
		}
		text.WriteString(lines[j].text + "\n")
		if depth == 0 {
			j++
			break
		}
	}
	if depth != 0 {
		return nil, j, "an iperf3 -J object cut before its closing brace"
	}
	run, err := iperf3.ParseRun([]byte(text.String()))
	if err != nil {
		return nil, j, "iperf3 -J output nsperf's iperf3 driver does not read: " + err.Error()
	}
	bps := 0.0
	for _, m := range run.Metrics {
		if m.Name == results.Throughput {
			bps = m.Value
		}
	}
	if bps <= 0 || math.IsInf(bps, 0) || math.IsNaN(bps) {
		return nil, j, "an iperf3 -J object without a bitrate in end"
	}
	opts := map[string]string{"output": "json"}
	if run.Protocol != "" {
		opts["protocol"] = run.Protocol
	}
	if run.Streams > 1 {
		opts["streams"] = strconv.Itoa(run.Streams)
	}
	if run.Duration > 0 {
		opts["duration"] = strconv.FormatFloat(run.Duration, 'f', -1, 64) + "s"
	}
	if run.Omit > 0 {
		opts["omit"] = strconv.FormatFloat(run.Omit, 'f', -1, 64) + "s"
	}
	if run.Reverse {
		opts["direction"] = "reverse"
	}
	m := measurement{tool: "iperf3", options: opts, metric: "throughput", unit: "bit/s", values: []float64{round(bps)}, state: ctx.state,
		conditions: ctx.conditions, lines: spanLines(lines, i, j)}
	if strings.HasPrefix(ctx.command, "iperf3") {
		m.command = ctx.command
	}
	return []measurement{m}, j, ""
}

// startsIperf3JSON: iperf3 -J's object opens with "start" (a line or two in).
func startsIperf3JSON(rest []line) bool {
	for k := 0; k < len(rest) && k < 3; k++ {
		if strings.HasPrefix(strings.TrimSpace(rest[k].text), `"start"`) {
			return true
		}
	}
	return false
}

// iperf3Output reads iperf3's output at lines[i], its text summary or its -J object; next is
// i when there is none.
func iperf3Output(lines []line, i int, ctx context) ([]measurement, int, string) {
	if ms, next, why := iperf3Intervals(lines, i, ctx); next > i {
		return ms, next, why
	}
	switch {
	case iperf3SepRe.MatchString(lines[i].text):
		return iperf3Summary(lines, i, i+1, ctx)
	case iperf3HeaderRe.MatchString(lines[i].text) && i+1 < len(lines) && iperf3RowRe.MatchString(lines[i+1].text),
		iperf3RowRe.MatchString(lines[i].text):
		// the summary alone: its header (or not), then sender and receiver rows, no intervals
		return iperf3Summary(lines, i, i, ctx)
	}
	return iperf3JSONBlock(lines, i, ctx)
}

var (
	// iperf3IntervalRowRe is a row of iperf3's report of each interval (-i), as the client or
	// the server prints it: ID, interval, transfer, bitrate, then the client's TCP retransmits
	// and congestion window, or UDP's datagrams, or the server's UDP jitter and loss; no
	// sender or receiver tag (those are the summary's).
	iperf3IntervalRowRe = regexp.MustCompile(`^\s*\[\s*(\d+|SUM)\](?:\[[TR]X-[CS]\])?\s+(\d+\.\d+)\s*-\s*(\d+\.\d+)\s+sec\s+[\d.]+\s+[KMG]?Bytes\s+([\d.]+\s*[KMG]?bits/sec)(\s+\d+(?:\s+[\d.]+\s+[KMG]?Bytes)?|\s+[\d.]+\s+ms\s+\d+/\d+\s+\([^)]*\))?\s*$`)
)

// maxIntervalRows bounds a report of intervals: an hour's run at one per second.
const maxIntervalRows = 4000

// iperf3Intervals reads iperf3's report of each interval at lines[i] (its header, or its
// first row): where the summary follows it, the intervals are passed over (the summary is
// the run's figure); where it was not pasted, the intervals' bitrates are the run's series,
// the [SUM] rows' where several streams ran, or the row of the whole run where one is among
// them. Rows each of the whole run with nothing after
// the bitrate are left to iperf 2's reader, whose rows they are as much as iperf3's.
func iperf3Intervals(lines []line, i int, ctx context) ([]measurement, int, string) {
	first := i
	if iperf3HeaderRe.MatchString(lines[i].text) {
		first = i + 1
	} else if i > 0 && iperf3IntervalRowRe.MatchString(lines[i-1].text) {
		return nil, i, "" // inside a report whose first row declined
	}
	type row struct {
		id, rate, tail string
		from, to       float64
	}
	var rows []row
	j := first
	for ; j < len(lines) && j-first < maxIntervalRows; j++ {
		m := iperf3IntervalRowRe.FindStringSubmatch(lines[j].text)
		if m == nil {
			break
		}
		from, _ := strconv.ParseFloat(m[2], 64)
		to, _ := strconv.ParseFloat(m[3], 64)
		rows = append(rows, row{m[1], m[4], m[5], from, to})
	}
	if len(rows) == 0 {
		return nil, i, ""
	}
	whole, plain := true, true
	for _, r := range rows {
		whole = whole && r.from == 0 && r.to == rows[0].to
		plain = plain && r.tail == ""
	}
	bitrate := first > i && iperf3HeaderRe.FindStringSubmatch(lines[i].text)[1] == "Bitrate"
	if whole && plain || plain && !bitrate {
		// Rows each of the whole run are iperf 2's report as much as iperf3's (its reader
		// takes them); iperf 2's intervals (under "Bandwidth", nothing after the rate) are
		// left to the generic reader, which reads the run under the words that name its state.
		return nil, i, ""
	}
	k := j
	for k < len(lines) && strings.TrimSpace(lines[k].text) == "" && k-j < 2 {
		k++
	}
	if k < len(lines) && (iperf3SepRe.MatchString(lines[k].text) || iperf3HeaderRe.MatchString(lines[k].text) || iperf3RowRe.MatchString(lines[k].text)) {
		return nil, j, "" // the summary follows: it is the run's figure
	}
	// A row of the whole run among the intervals ("0.00-60.00 sec" last) is the run's figure.
	end := 0.0
	for _, r := range rows {
		end = max(end, r.to)
	}
	var wholeRun []row
	for _, r := range rows {
		if r.from == 0 && r.to == end {
			wholeRun = append(wholeRun, r)
		}
	}
	if len(wholeRun) > 0 && len(wholeRun) < len(rows) {
		rows = wholeRun
	}
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.id] = true
	}
	if len(ids) > 1 && !ids["SUM"] {
		return nil, j, "iperf3 intervals of parallel streams without their [SUM] rows or the summary: not read"
	}
	var values []float64
	var u unit
	for _, r := range rows {
		if ids["SUM"] && r.id != "SUM" {
			continue
		}
		v, vu, ok := parseValue(r.rate)
		if !ok {
			return nil, j, "iperf3's bitrate is not a number"
		}
		values, u = append(values, round(v)), vu
	}
	return []measurement{{tool: "iperf3", metric: metricOf(u), unit: u.norm, values: values, state: ctx.state,
		conditions: copyConds(ctx.conditions), lines: spanLines(lines, i, j)}}, j, ""
}
