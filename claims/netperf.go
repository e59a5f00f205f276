package claims

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/netperf"
)

// netperfOptions reads what a netperf command says it measured: the test (-t), the length
// (-l), the request/response sizes (-r), the output selectors (-O/-o) and CPU measuring
// (-c/-C).
func netperfOptions(cmd string) map[string]string {
	out := map[string]string{}
	f := strings.Fields(cmd)
	for i := 0; i < len(f); i++ {
		val := func() string {
			if v := f[i][2:]; v != "" {
				return strings.TrimPrefix(v, ",")
			}
			if i+1 < len(f) {
				i++
				return f[i]
			}
			return ""
		}
		switch {
		case strings.HasPrefix(f[i], "-t"):
			out["test"] = val()
		case strings.HasPrefix(f[i], "-l"):
			out["duration"] = val() + "s"
		case strings.HasPrefix(f[i], "-r"):
			out["sizes"] = val()
		case strings.HasPrefix(f[i], "-O"), strings.HasPrefix(f[i], "-o"):
			sel, _, _ := strings.Cut(val(), "|") // `-O A,B|tail -1`: the pipe is the shell's
			out["selectors"] = strings.TrimRight(sel, ";")
		case f[i] == "-c" || f[i] == "-C":
			out["cpu"] = "measured"
		}
	}
	if out["test"] == "" {
		out["test"] = "TCP_STREAM" // netperf's default
	}
	return out
}

// netperfBanners name the test a classic block is of by its banner, as netperf's own sources
// print it (nettest_bsd.c, nettest_omni.c): "MIGRATED TCP Connect/Request/Response TEST from
// ...". The banner is the output's own word; the command above it may be cut or absent.
var netperfBanners = []struct {
	re   *regexp.Regexp
	test string // with PROTO for the protocol the banner names
}{
	{regexp.MustCompile(`(?i)\b(TCP|UDP|SCTP)\s+STREAM\s+TEST\b`), "PROTO_STREAM"},
	{regexp.MustCompile(`(?i)\bTCP\s+MAERTS\s+TEST\b`), "TCP_MAERTS"},
	{regexp.MustCompile(`(?i)\bTCP\s+SENDFILE\s+TEST\b`), "TCP_SENDFILE"},
	{regexp.MustCompile(`(?i)\b(TCP|UDP|SCTP)\s+REQUEST/RESPONSE\s+TEST\b`), "PROTO_RR"},
	{regexp.MustCompile(`(?i)\bTCP\s+Connect/Request/Response\s+TEST\b`), "TCP_CRR"},
	{regexp.MustCompile(`(?i)\bTCP\s+Connect/Close\s+TEST\b`), "TCP_CC"},
	{regexp.MustCompile(`(?i)\bTCP\s+Transactional/Request/Response\s+TEST\b`), "TCP_TRR"},
	// Where the banner was left out, the first header row of a datagram stream: its columns
	// of messages sent ("Okay") and lost ("Errors") are UDP_STREAM's alone.
	{regexp.MustCompile(`^\s*Socket\s+Message\s+Elapsed\s+Messages\b`), "UDP_STREAM"},
	// Or the first header row of a request/response test, "Local /Remote" (nettest_bsd.c's
	// and the omni tests' classic RR output): the command names which, else netperf's TCP_RR.
	{rrHeaderRe, "RR"},
	// Or, with "Local /Remote" cut too, the row under it: "Socket Size   Request  Resp.
	// Elapsed  Trans." is a request/response test's alone.
	{regexp.MustCompile(`^\s*Socket\s+Size\s+Request\s+Resp\.\s`), "RR"},
}

// rrHeaderRe is the first header row of a request/response test's classic output.
var rrHeaderRe = regexp.MustCompile(`^\s*Local\s+/\s*Remote\s*$`)

// headingRRTestRe is a request/response test by netperf's name for it, as a heading names the test
// of the block under it ("UDP_RR, baseline:").
var headingRRTestRe = regexp.MustCompile(`\b(?:TCP|UDP|SCTP)_C?RR\b`)

// headingRRTest is the request/response test the headings in effect name, innermost first; ""
// where none does.
func headingRRTest(ctx context) string {
	if t := headingRRTestRe.FindString(ctx.stateHeading); t != "" {
		return t
	}
	for k := len(ctx.path) - 1; k >= 0; k-- {
		if t := headingRRTestRe.FindString(ctx.path[k].text); t != "" {
			return t
		}
	}
	return ""
}

// bannerTest is the test a classic banner names, "" where no banner of the table matches.
func bannerTest(banner string) string {
	for _, b := range netperfBanners {
		if m := b.re.FindStringSubmatch(banner); m != nil {
			if len(m) > 1 {
				return strings.Replace(b.test, "PROTO", strings.ToUpper(m[1]), 1)
			}
			return b.test
		}
	}
	return ""
}

// unitsRowRe is the last header line of a classic block, the units: "bytes  bytes  secs.
// 10^6bits/s", UDP_STREAM's "bytes   bytes   secs  #  #  10^6bits/sec".
var unitsRowRe = regexp.MustCompile(`^\s*bytes\s.*\bsecs\b`)

var (
	// netperfInterimRe is demo mode's (-D) line of progress: "Interim result: 23890.12
	// 10^6bits/s over 1.000 seconds ending at 1700000001.002", the last after the ^C that
	// stopped the run; a mail may wrap it before its timestamp (netperfInterimEndRe).
	netperfInterimRe    = regexp.MustCompile(`^\s*(?:\^C)?Interim result:`)
	netperfInterimEndRe = regexp.MustCompile(`^\s*\d+(?:\.\d+)?\s*$`)
)

// maxInterimLines bounds the interim results between a banner and its header: a run of an
// hour at one a second.
const maxInterimLines = 8000

// netperfClassic reads netperf's classic output from its banner at lines[i]: the header
// lines down to the units line, then the data rows. It returns the measurements (throughput
// or transaction rate, and with -c/-C the CPU utilisation and service demand) and the index
// after the block; a block without its data row is a reason, not a claim.
func netperfClassic(lines []line, i int, ctx context) ([]measurement, int, string) {
	opts := netperfOptions(ctx.command)
	test, headed := bannerTest(lines[i].text), headingRRTest(ctx)
	switch {
	case test == "RR" && strings.Contains(opts["test"], "RR"):
		test = opts["test"] // TCP_RR, UDP_RR, TCP_CRR as the command says
	case test == "RR" && headed != "":
		test = headed // "UDP_RR, baseline:" over a block without its command
	case test == "RR":
		test = "TCP_RR"
	case test == "":
		test = opts["test"]
	}
	j := i + 1
	unitsLine := ""
	for header := 0; j < len(lines) && header < 7 && j-i < maxInterimLines; j++ {
		if netperfInterimRe.MatchString(lines[j].text) || netperfInterimEndRe.MatchString(lines[j].text) && netperfInterimRe.MatchString(lines[j-1].text) {
			continue // demo mode's (-D) interim results, the run's progress, before its header
		}
		if unitsRowRe.MatchString(lines[j].text) {
			unitsLine = lines[j].text
			j++
			break
		}
		header++
	}
	if unitsLine == "" {
		return nil, j, "a netperf banner without its header (cut?)"
	}
	for j < len(lines) && strings.TrimSpace(lines[j].text) == "" {
		j++
	}
	if j >= len(lines) {
		return nil, j, "a netperf header without its data row (cut?)"
	}
	opts["test"] = test
	base := measurement{tool: "netperf", command: ctx.command, options: opts, state: ctx.state, conditions: ctx.conditions,
		lines: []int{lines[i].n}}
	if ctx.command != "" {
		base.lines = append([]int{ctx.cmdLine}, base.lines...)
	}
	if _, ok := rowsHeading(lines, j, test); !ok && len(numbers(lines[j].text)) <= rateColumn(test) {
		return nil, j + 1, "a netperf block whose data row is cut or not numbers"
	}
	var out []measurement
	for {
		// Under one header, the rows of each state after a heading of its own ("--- eth0:
		// Before"), as an author lays several runs out.
		if h, ok := rowsHeading(lines, j, test); ok {
			side, _, rest := stateOf(h)
			base.state, base.conditions = side, ctx.conditions
			if rest = strings.Trim(rest, " -=#*:,"); rest != "" && side != "" {
				base.conditions = copyConds(ctx.conditions)
				base.conditions["setup"] = rest
			}
			j = nextFilled(lines, j+1)
		}
		ms, next, ok := netperfDataRow(lines, j, test, lastField(unitsLine), base)
		if !ok {
			return out, j, ""
		}
		out = append(out, ms...)
		j = next
		if _, more := rowsHeading(lines, nextFilled(lines, j), test); !more || j > i+maxNetperfRows {
			return out, j, ""
		}
		j = nextFilled(lines, j)
	}
}

// maxNetperfRows bounds the lines of one header's rows: a mail's blocks, not a log.
const maxNetperfRows = 200

// nextFilled is the index of the first line at or after j that is not empty.
func nextFilled(lines []line, j int) int {
	for j < len(lines) && strings.TrimSpace(lines[j].text) == "" {
		j++
	}
	return j
}

// rowsHeading: lines[j] names the state of the netperf rows below it (the next line that is
// not empty is a data row): a short line that is not numbers. The heading's text.
func rowsHeading(lines []line, j int, test string) (string, bool) {
	if j >= len(lines) {
		return "", false
	}
	t := strings.TrimSpace(lines[j].text)
	if t == "" || numbers(t) != nil || len(strings.Fields(t)) > 8 {
		return "", false
	}
	k := nextFilled(lines, j+1)
	return t, k < len(lines) && len(numbers(lines[k].text)) > rateColumn(test)
}

// netperfDataRow reads a classic data row at lines[j] and, for a datagram stream, the
// receiver's row under it: the measurements, the index past them; false where lines[j] is no
// data row.
func netperfDataRow(lines []line, j int, test, unitsName string, base measurement) ([]measurement, int, bool) {
	if j >= len(lines) {
		return nil, j, false
	}
	row := numbers(lines[j].text)
	if len(row) <= rateColumn(test) {
		return nil, j, false
	}
	base.lines = append(slices.Clone(base.lines), lines[j].n)
	if datagramStream(test) && j+1 < len(lines) {
		if recv := numbers(lines[j+1].text); len(recv) == 4 || len(recv) == 6 && len(row) == 8 {
			base.lines = append(base.lines, lines[j+1].n)
			return datagramRows(row, recv, test, unitsName, base), j + 2, true
		}
	}
	return netperfRow(row, test, unitsName, base), j + 1, true
}

// datagramRows are the measurements of a datagram stream's two rows: the sender's (socket,
// message size, time, messages, errors, throughput, and with -c/-C its CPU utilisation and
// service demand) and the receiver's (socket, time, messages, throughput, and with -c/-C the
// remote CPU's). What arrived is the throughput; what was sent is a figure beside it.
func datagramRows(send, recv []float64, test, unitsName string, base measurement) []measurement {
	rateCol := rateColumn(test)
	row := append(append([]float64{}, send[:rateCol]...), recv[3])
	if len(recv) == 6 {
		row = append(row, send[rateCol+1], recv[4], send[rateCol+2], recv[5]) // netperfRow's order
	}
	out := netperfRow(row, test, unitsName, base)
	if row[rateCol] == 0 {
		return out
	}
	sent := out[0]
	sent.metric, sent.quantity = "", "send_throughput"
	sent.values = []float64{round(send[rateCol] * sent.values[0] / row[rateCol])} // the same scale
	return append(out, sent)
}

// rateColumn is the column of a classic netperf data row that holds the rate: a stream test's
// throughput after its three sizes and the time (a datagram stream's after its two sizes, the
// time, the messages and the errors), a request/response test's transaction rate after its
// four sizes and the time.
func rateColumn(test string) int {
	if transactional(test) || datagramStream(test) {
		return 5
	}
	return 4
}

// datagramStream: a stream test of a protocol other than TCP (UDP_STREAM), which prints the
// sender's row and the receiver's.
func datagramStream(test string) bool {
	return strings.HasSuffix(test, "_STREAM") && !strings.HasPrefix(test, "TCP")
}

// transactional: the test's rate is of transactions (request/response, a connection per
// transaction, connect/close).
func transactional(test string) bool {
	return strings.HasSuffix(test, "_RR") || strings.HasSuffix(test, "_CRR") || strings.HasSuffix(test, "_CC") || strings.HasSuffix(test, "_TRR")
}

// netperfRow makes the measurements of a classic data row: the rate, and with -c/-C the
// CPU utilisations and service demands after it (netperf's -1 is one not measured). unitsName
// is the throughput's unit as the header's last line says it ("10^6bits/s"; "" for netperf's
// default).
func netperfRow(row []float64, test, unitsName string, base measurement) []measurement {
	rateCol := rateColumn(test)
	var out []measurement
	m := base
	if transactional(test) {
		m.metric, m.unit, m.values = "transaction_rate", "trans/s", []float64{row[rateCol]}
	} else {
		factor := 1e6 // netperf's default unit, 10^6bits/s
		if f, ok := netperf.ThroughputScale(unitsName); ok {
			factor = f
		}
		m.metric, m.unit, m.values = "throughput", "bit/s", []float64{round(row[rateCol] * factor)}
	}
	out = append(out, m)
	if len(row) >= rateCol+5 { // -c/-C: utilisation send/recv (%), service demand send/recv (us/KB or us/Tr)
		for k, name := range []string{"local_cpu_util", "remote_cpu_util", "local_service_demand", "remote_service_demand"} {
			if row[rateCol+1+k] < 0 {
				continue // -1: that side's CPU was not measured
			}
			c := base
			c.metric, c.values = name, []float64{row[rateCol+1+k]}
			if k >= 2 {
				c.metric, c.quantity = "", name // nsperf measures no service demand
			}
			c.unit = "%"
			if k >= 2 {
				c.unit = "us/KB"
				if transactional(test) {
					c.unit = "us/trans"
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// bareRowRe is netperf's -P 0 (no banner, no headers) option in a command.
var bareRowRe = regexp.MustCompile(`\s-P\s*0\b`)

// netperfBare reads the data row a netperf command run with -P 0 printed at lines[i]: the
// classic row without its banner and headers (a request/response test's second line, the
// remote socket sizes, after it).
func netperfBare(lines []line, i int, ctx context) ([]measurement, int) {
	if !strings.Contains(ctx.command, "netperf") || !bareRowRe.MatchString(ctx.command) || selectorRe.MatchString(ctx.command) {
		return nil, i
	}
	opts := netperfOptions(ctx.command)
	test := opts["test"]
	if !transactional(test) && !strings.HasPrefix(test, "TCP_") {
		return nil, i // UDP_STREAM prints two rows of other shapes
	}
	// A state's label before the row ("without: 87380 16384 1 1 20.00 41205.31"): the row's
	// state, as a heading's would be.
	state, text := ctx.state, lines[i].text
	if label, rest, ok := strings.Cut(text, ":"); ok && numbers(rest) != nil {
		side, _, _ := stateOf(label)
		side, _ = wholeLabel(label, side, false)
		if side == "" && !contrastWord(label) {
			return nil, i
		}
		state, text = cmp.Or(side, contrastSide(strings.ToLower(strings.TrimSpace(label)))), rest
	}
	row := numbers(text)
	if len(row) != rateColumn(test)+1 && len(row) != rateColumn(test)+5 {
		return nil, i
	}
	base := measurement{tool: "netperf", command: ctx.command, options: opts, state: state, conditions: ctx.conditions,
		lines: []int{ctx.cmdLine, lines[i].n}}
	next := i + 1
	if transactional(test) && next < len(lines) && len(numbers(lines[next].text)) == 2 {
		next++
	}
	return netperfRow(row, test, "", base), next
}

// contrastWord: label is a word of contrastPairs alone ("with", "w/").
func contrastWord(label string) bool {
	l := strings.ToLower(strings.TrimSpace(label))
	for _, c := range contrastPairs {
		if l == c[0] || l == c[1] {
			return true
		}
	}
	return false
}

func lastField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// selectorMetric maps a netperf -O selector to the metric the netperf driver makes of it
// (one model of netperf's output): a request/response test's THROUGHPUT is its transaction
// rate. ok is false for a selector that is no measurement (sizes, units).
func selectorMetric(sel, test string) (metric, unit string, factor float64, ok bool) {
	ms, err := netperf.SelectorMetrics(test, map[string]string{sel: "1"})
	if err != nil || len(ms) != 1 {
		return "", "", 0, false
	}
	m := ms[0]
	if m.Name == results.Throughput && m.Unit == "trans/s" {
		m.Name = "transaction_rate"
	}
	return m.Name, m.Unit, m.Value, true
}

// selectorRe is -o/-O and its selectors, which netperf reads in either case.
var selectorRe = regexp.MustCompile(`(?:^|\s)-[Oo]\s*([A-Za-z_0-9,]+)`)

// netperfRows reads the rows a netperf -O or -o command printed (one per run: `for i in ...;
// do netperf ... -O A,B|tail -1; done`) after lines[i]: one measurement per selector with every
// row's value. -o prints its rows as comma separated values; a THROUGHPUT_UNITS cell scales
// its row's THROUGHPUT.
func netperfRows(lines []line, i int, ctx context) ([]measurement, int) {
	m := selectorRe.FindStringSubmatch(ctx.command)
	if m == nil || !strings.Contains(ctx.command, "netperf") {
		return nil, i
	}
	sels := strings.Split(strings.ToUpper(m[1]), ",")
	opts := netperfOptions(ctx.command)
	var rows [][]float64
	var rowLines []int
	j := i
	if j < len(lines) && strings.Count(lines[j].text, ",") == len(sels)-1 && len(sels) > 1 && !strings.Contains(ctx.command, "-P 0") {
		if _, ok := selectorRow(lines[j].text, sels, opts["test"]); !ok {
			j++ // -o's header, the selectors' long names ("Mean Latency Microseconds,...")
		}
	}
	for ; j < len(lines); j++ {
		row, ok := selectorRow(lines[j].text, sels, opts["test"])
		if !ok {
			break
		}
		rows, rowLines = append(rows, row), append(rowLines, lines[j].n)
	}
	if len(rows) == 0 {
		return nil, i
	}
	var out []measurement
	for k, sel := range sels {
		metric, unit, _, ok := selectorMetric(sel, opts["test"])
		if !ok {
			continue
		}
		vals := make([]float64, len(rows))
		for r, row := range rows {
			vals[r] = row[k]
		}
		out = append(out, measurement{tool: "netperf", command: ctx.command, options: opts, metric: metric, unit: unit, values: vals,
			state: ctx.state, conditions: ctx.conditions, lines: append([]int{ctx.cmdLine}, rowLines...)})
	}
	return out, j
}

// isSelectorRow: text is a row of the values of the command's -O or -o selectors.
func isSelectorRow(text, command string) bool {
	m := selectorRe.FindStringSubmatch(command)
	if m == nil {
		return false
	}
	_, ok := selectorRow(text, strings.Split(m[1], ","), netperfOptions(command)["test"])
	return ok
}

// selectorRow reads one row of selector values, -O's columns or -o's comma separated values,
// each measurement in its metric's unit (NaN for a selector that is none, such as
// THROUGHPUT_UNITS); ok is false for a line that is no such row.
func selectorRow(text string, sels []string, test string) ([]float64, bool) {
	cells := strings.Fields(rowValues(text))
	if t := strings.TrimSpace(text); !strings.ContainsAny(t, " \t") && strings.Contains(t, ",") {
		cells = strings.Split(t, ",")
	}
	if len(cells) != len(sels) {
		return nil, false
	}
	units := ""
	if k := slices.Index(sels, "THROUGHPUT_UNITS"); k >= 0 {
		units = strings.TrimSpace(cells[k])
	}
	row := make([]float64, len(sels))
	for k, sel := range sels {
		_, _, factor, ok := selectorMetric(sel, test)
		v, isNumber := parseNumber(strings.TrimSpace(cells[k]))
		switch {
		case !ok:
			row[k] = math.NaN()
			continue
		case !isNumber:
			return nil, false
		case sel == "THROUGHPUT" && units != "" && !transactional(test):
			if f, known := netperf.ThroughputScale(units); known {
				factor = f
			}
		}
		row[k] = round(v * factor)
	}
	return row, true
}

// rowValues is a row of values without a label before them ("run 1:", "#3"): what is left
// for the numbers of a -O row.
func rowValues(text string) string {
	f := strings.Fields(text)
	for len(f) > 0 {
		if _, ok := parseNumber(f[0]); ok {
			break
		}
		f = f[1:]
		if len(f) > 0 && strings.HasSuffix(f[0], ":") {
			f = f[1:]
		}
	}
	return strings.Join(f, " ")
}

// netperfKeyvalRe is a line of netperf's -k output: an output selector, "=", its value
// (THROUGHPUT=41234.55, THROUGHPUT_UNITS=Trans/s, P99_LATENCY=41).
// Scripts that run netperf once per CPU and sum (percpu_netperf, super_netperf's kin) print a
// selector with a colon, its figure and the CPUs' own in parentheses: "MEAN_LATENCY:
// 58.920  (per CPU: 58.700 59.110 ...)"; the name has an underscore or is one netperf
// measures by, so a heading in capitals ("RESULTS: 3") is none.
var netperfKeyvalRe = regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*)=(\S*)\s*$|^\s*([A-Z][A-Z0-9]*_[A-Z0-9_]+|THROUGHPUT):\s+(\d+(?:\.\d+)?)\s*(?:\(per\s+CPU:[\d.\s]*\))?\s*$`)

// keyval is a netperfKeyvalRe line's selector and value, ok false for any other line.
func keyval(text string) (name, value string, ok bool) {
	m := netperfKeyvalRe.FindStringSubmatch(text)
	switch {
	case m == nil:
		return "", "", false
	case m[1] != "":
		return m[1], m[2], true
	}
	return m[3], m[4], true
}

// netperfKeyval reads netperf's -k output starting at lines[i]: one measurement per
// selector that measures, converted as the netperf driver converts them (THROUGHPUT in its
// THROUGHPUT_UNITS, a request/response test's as its transaction rate, latencies in us).
func netperfKeyval(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !netperfKeyvalRe.MatchString(lines[i].text) || i > 0 && netperfKeyvalRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	values := map[string]string{}
	j := i
	for ; j < len(lines); j++ {
		if strings.TrimSpace(lines[j].text) == "" && j+1 < len(lines) && netperfKeyvalRe.MatchString(lines[j+1].text) {
			continue // a blank line the script prints between its latencies and its rate
		}
		name, value, ok := keyval(lines[j].text)
		if !ok {
			break
		}
		values[name] = value
	}
	measures := false
	for k := range values {
		measures = measures || k == "THROUGHPUT" || k == "TRANSACTION_RATE" || strings.HasSuffix(k, "_LATENCY")
	}
	if j-i < 2 || !measures {
		return nil, i, ""
	}
	test := netperfOptions(ctx.command)["test"]
	_, rate := values["TRANSACTION_RATE"]
	headed := headingRRTest(ctx)
	switch {
	case slices.ContainsFunc(strings.Fields(ctx.command), func(f string) bool { return strings.HasPrefix(f, "-t") }):
		// the command names its test
	case headed != "":
		test = headed // "Baseline, UDP_RR:" over a script's output
	case rate || test == "" && strings.EqualFold(values["THROUGHPUT_UNITS"], "Trans/s"):
		test = "TCP_RR"
	}
	ms, err := netperf.SelectorMetrics(test, values)
	if err != nil {
		return nil, j, "netperf's -k output: " + err.Error()
	}
	var out []measurement
	for _, m := range ms {
		name := m.Name
		if name == results.Throughput && m.Unit == "trans/s" {
			name = "transaction_rate"
		}
		out = append(out, measurement{tool: "netperf", command: ctx.command, options: map[string]string{"test": test}, metric: name, unit: m.Unit,
			values: []float64{m.Value}, state: ctx.state, conditions: copyConds(ctx.conditions), lines: spanLines(lines, i, j)})
	}
	return out, j, ""
}
