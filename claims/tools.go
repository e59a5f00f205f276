package claims

import (
	"regexp"
	"slices"
	"strings"
)

// otherTools are benchmark programs a message may name that no nsperf tool drives, each
// with how a message names it (a command, a binary): what a reproduction here lacks. A
// program a tool of the registry runs (scenarios.ToolProcesses) is never among them
// (TestOtherToolsAreNotDriven).
var otherTools = []struct {
	name string
	re   *regexp.Regexp
}{
	{"xdpsock", regexp.MustCompile(`\bxdpsock\b`)},
	{"xdp_redirect (samples/bpf)", regexp.MustCompile(`\bxdp_redirect\w*`)},
	{"trafgen", regexp.MustCompile(`\b(?:trafgen|xdp-trafficgen)\b`)},
	{"TRex", regexp.MustCompile(`\bT-?Rex\b`)},
	{"MoonGen", regexp.MustCompile(`\bMoonGen\b`)},
	{"neper", regexp.MustCompile(`\bneper\b|(?:^|[\s/])tcp_(?:rr|crr|stream)\s+-`)},
	{"iperf (iperf2)", regexp.MustCompile(`\biperf\s+-[cs]\b`)},
	{"uperf", regexp.MustCompile(`\buperf\b`)},
	{"qperf", regexp.MustCompile(`\bqperf\b`)},
	{"wrk", regexp.MustCompile(`\bwrk\s+-`)},
	{"memtier_benchmark", regexp.MustCompile(`\bmemtier_benchmark\b`)},
	{"redis-benchmark", regexp.MustCompile(`\bredis-benchmark\b`)},
	{"perf (a CPU profile)", regexp.MustCompile(`\bperf\s+(?:top|record|report)\b`)},
	{"bpftrace", regexp.MustCompile(`\bbpftrace\b`)},
	{"nuttcp", regexp.MustCompile(`\bnuttcp\b`)},
	{"ntttcp", regexp.MustCompile(`\bntttcp\b`)},
	{"ab (ApacheBench)", regexp.MustCompile(`(?:^|[\s$#])ab\s+-[nckt]\b`)},
	{"mmtests", regexp.MustCompile(`\bmmtests\b`)},
	{"fio", regexp.MustCompile(`\bfio\b`)},
	{"tbench", regexp.MustCompile(`\btbench\b`)},
}

// toolsNamed are the programs of otherTools the text names, in the table's order.
func toolsNamed(lines []line) []string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	text := b.String()
	var out []string
	for _, t := range otherTools {
		if t.re.MatchString(text) && !slices.Contains(out, t.name) {
			out = append(out, t.name)
		}
	}
	return out
}
