package claims

import (
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/runner/sockperf"
)

// sockperf's client prints every line of its report with its name first ("sockperf: ---> percentile
// 99.000 = 35.596"), a target line ("[ 0] IP = 192.0.2.2  PORT = 11111 # UDP") and an empty
// line or two among them. The report is read by nsperf's own sockperf driver, so that a
// claim's figures are the ones a run here records: the latency's mean and percentiles in µs
// (half the round trip, as sockperf prints them), or the message rate and the bandwidth.
var (
	sockperfLineRe   = regexp.MustCompile(`^\s*sockperf(?:\[\w+\][^:]*)?:`) // "sockperf[CLIENT] send on:" too
	sockperfTargetRe = regexp.MustCompile(`^\s*\[\s*\d+\]\s+IP\s+=`)
	sockperfModeRe   = regexp.MustCompile(`\bsockperf\s+(ping-pong|pp|throughput|tp|under-load|ul)\b`)
)

// sockperfModes are sockperf's subcommands, short and long, by their long name.
var sockperfModes = map[string]string{"pp": "ping-pong", "ping-pong": "ping-pong", "tp": "throughput", "throughput": "throughput", "ul": "under-load", "under-load": "under-load"}

// sockperfReport reads the sockperf client report that starts at lines[i]; next is i where
// none starts there, or where the report has neither its mean latency nor its rate (a summary
// line pasted alone is the generic reader's).
func sockperfReport(lines []line, i int, ctx context) ([]measurement, int, string) {
	if !sockperfLineRe.MatchString(lines[i].text) || i > 0 && sockperfLineRe.MatchString(lines[i-1].text) {
		return nil, i, ""
	}
	var text strings.Builder
	j := i
	for ; j < len(lines); j++ {
		t := lines[j].text
		if sockperfLineRe.MatchString(t) || sockperfTargetRe.MatchString(t) {
			text.WriteString(t + "\n")
			continue
		}
		if strings.TrimSpace(t) == "" && j+1 < len(lines) && (sockperfLineRe.MatchString(lines[j+1].text) || sockperfTargetRe.MatchString(lines[j+1].text)) {
			continue
		}
		break
	}
	report := text.String()
	// "avg-latency=", before 3.7 "avg-lat="; an excerpt may show only the percentiles' and
	// the extremes' lines ("---> percentile 99.000 =", "---> <MAX> observation =").
	latency := strings.Contains(report, "avg-lat") || strings.Contains(report, "---> percentile") || strings.Contains(report, "observation =")
	// What the message shows of the report: the whole of it, or the lines of its latency.
	metrics, err := sockperf.ParseExcerpt(latency, []byte(report))
	if err != nil {
		return nil, i, ""
	}
	opts := map[string]string{}
	if m := sockperfModeRe.FindStringSubmatch(ctx.command); m != nil {
		opts["mode"] = sockperfModes[m[1]]
	}
	var out []measurement
	for _, m := range metrics {
		if m.Name == "stddev_latency" {
			continue // the spread of the samples, not a result of the test
		}
		ms := measurement{tool: "sockperf", metric: m.Name, unit: m.Unit, values: []float64{round(m.Value)}, state: ctx.state,
			conditions: ctx.conditions, options: opts, lines: spanLines(lines, i, j)}
		if strings.Contains(ctx.command, "sockperf") {
			ms.command = ctx.command
		}
		out = append(out, ms)
	}
	return out, j, ""
}
