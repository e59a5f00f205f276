package claims

import (
	"regexp"
	"strings"
)

// neper's summary (google/neper: the PRINT calls of its stream.c, rr.c and common code, and
// its README's "Output format"): after the options it echoes, one `key=value` a line, the
// keys in lower case with underscores (throughput_Mbps aside). The result is throughput: a stream test's in the unit of
// the throughput_units line that follows it (Mbit/s unless -O/--throughput-opt says another;
// throughput_Mbps also gives it in Mbit/s), a request/response test's in transactions per
// second. A request/response test adds its latency, in seconds: latency_min, _mean, _max,
// _stddev and the percentiles asked for (latency_p99, latency_p99.9). The rest (time_start,
// utime_end, local_throughput, the options) describe the run, not its result; so does
// num_transactions beside a throughput, and without one (a summary cut to its latencies) it
// is the run's count of transactions.
var (
	neperLineRe = regexp.MustCompile(`^\s*([a-z][A-Za-z0-9_]*(?:\.\d+)?)=(\S*)\s*$`)
	// neperTestRe is the test a neper command names: its binary, tcp_rr, udp_stream, ...
	neperTestRe = regexp.MustCompile(`\b(?:tcp|udp|psp)_(?:rr|crr|stream)\b`)
)

// neperResultKeys are the keys only neper's summary prints together with its throughput: a
// block of key=value lines with one of them is neper's.
var neperResultKeys = []string{"num_transactions", "correlation_coefficient", "throughput_units", "throughput_Mbps", "local_throughput", "total_run_time"}

// neperOutput reads neper's summary that starts at lines[i].
func neperOutput(lines []line, i int, ctx context) ([]measurement, int, string) {
	if i > 0 && neperLineRe.MatchString(lines[i-1].text) {
		return nil, i, "" // inside a summary whose first line declined
	}
	keys := map[string]string{}
	var order []string
	j := i
	for ; j < len(lines) && neperLineRe.MatchString(lines[j].text); j++ {
		m := neperLineRe.FindStringSubmatch(lines[j].text)
		if _, seen := keys[m[1]]; !seen {
			keys[m[1]], order = m[2], append(order, m[1])
		}
	}
	neper := false
	for _, k := range neperResultKeys {
		_, has := keys[k]
		neper = neper || has
	}
	if j-i < 3 || !neper {
		return nil, i, ""
	}
	_, stream := keys["throughput_units"]
	_, mbps := keys["throughput_Mbps"]
	stream = stream || mbps || strings.HasSuffix(neperTestRe.FindString(ctx.command), "_stream")
	conds := copyConds(ctx.conditions)
	var options map[string]string
	if test := neperTestRe.FindString(ctx.command); test != "" {
		options = map[string]string{"test": test}
	}
	mk := func(metric, unitName string, v float64) measurement {
		return measurement{tool: "neper", command: ctx.command, options: options, metric: metric, unit: unitName, values: []float64{v}, state: ctx.state,
			conditions: conds, lines: spanLines(lines, i, j)}
	}
	var out []measurement
	switch rate, hasRate := keys["throughput"]; {
	case stream:
		text := rate + " " + keys["throughput_units"]
		switch {
		case hasRate && keys["throughput_units"] == "":
			text = rate + " Mbit/s" // neper's default unit
		case !hasRate:
			text = keys["throughput_Mbps"] + " Mbit/s"
		}
		v, u, ok := parseValue(text)
		if !ok || u.kind == "percent" {
			return nil, j, "neper's throughput is not a rate of a unit it prints"
		}
		out = append(out, mk("throughput", u.norm, v))
	case hasRate:
		v, ok := parseNumber(rate)
		if !ok {
			return nil, j, "neper's throughput is not a number"
		}
		out = append(out, mk("transaction_rate", "trans/s", v))
	case keys["num_transactions"] != "":
		if v, ok := parseNumber(keys["num_transactions"]); ok {
			out = append(out, mk("transactions", "count", v))
		}
	}
	for _, k := range order {
		stat, ok := strings.CutPrefix(k, "latency_")
		if !ok {
			continue
		}
		if v, ok := parseNumber(keys[k]); ok {
			// neper prints seconds; us is the unit claims keeps times in.
			out = append(out, mk(neperLatencyMetric(stat), "us", v*1e6))
		}
	}
	if len(out) == 0 {
		return nil, j, "neper's summary without its throughput"
	}
	return out, j, ""
}

// neperLatencyMetric names neper's latency statistic as nsperf's tools name theirs where
// they have one (min_latency, p99_latency), else as neper does.
func neperLatencyMetric(stat string) string {
	switch {
	case stat == "min", stat == "max", stat == "mean":
		return stat + "_latency"
	case strings.HasPrefix(stat, "p"):
		return stat + "_latency"
	}
	return "latency_" + stat
}
