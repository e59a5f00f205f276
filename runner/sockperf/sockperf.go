// Package sockperf builds sockperf command lines and parses what its client prints; both are
// pure.
package sockperf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// Binary is the program run, as found on PATH.
const Binary = "sockperf"

// ServerArgs is the server bound to the workload's address and port, serving every client of
// the case (`sockperf server -i ADDR -p PORT [--tcp]`), under taskset: sockperf has no
// affinity option.
func ServerArgs(w *scenarios.Sockperf) []string {
	args := []string{Binary, "server", "-i", w.Server.Addr, "-p", strconv.Itoa(w.Port)}
	if w.Protocol == "tcp" {
		args = append(args, "--tcp")
	}
	return tool.Taskset(w.Server.CPU, args)
}

// ClientArgs is the measuring client: the mode, the server, the time, the message size and,
// when set, the message rate.
func ClientArgs(w *scenarios.Sockperf) []string {
	args := []string{Binary, w.Mode, "-i", w.Server.Addr, "-p", strconv.Itoa(w.Port)}
	if w.Protocol == "tcp" {
		args = append(args, "--tcp")
	}
	args = append(args, "-t", strconv.Itoa(w.Duration.Seconds()), "-m", strconv.Itoa(w.MessageSize))
	if w.MPS > 0 {
		args = append(args, "--mps", strconv.Itoa(w.MPS))
	}
	return tool.Taskset(w.Client.CPU, args)
}

// Driver drives sockperf: one server per namespace, port and protocol for the case, the
// client in the mode the workload names.
type Driver struct{}

// Programs implements tool.Driver.
func (Driver) Programs() []tool.Program {
	return []tool.Program{{Name: "sockperf", Binary: Binary, Package: "sockperf", Version: []string{Binary, "--version"}, ParseVersion: Version}}
}

// Server implements tool.Driver: a server that lives through the case.
func (Driver) Server(spec scenarios.ToolSpec) tool.Server {
	w := spec.(*scenarios.Sockperf)
	return tool.Server{NS: w.Server.NS, Argv: ServerArgs(w), Port: w.Port, Key: fmt.Sprintf("sockperf %s/%s/%d", w.Server.NS, w.Protocol, w.Port)}
}

// Client implements tool.Driver.
func (Driver) Client(spec scenarios.ToolSpec) []string { return ClientArgs(spec.(*scenarios.Sockperf)) }

// FixedPorts implements tool.Driver: the client's ports are ephemeral, and the server's
// socket lives through the case.
func (Driver) FixedPorts(scenarios.ToolSpec) []tool.Port { return nil }

// Parse implements tool.Driver: the client's summary; the row is its summary line.
func (Driver) Parse(spec scenarios.ToolSpec, stdout, stderr []byte) ([]results.Metric, string, error) {
	return Parse(spec.(*scenarios.Sockperf).Latency(), append(append([]byte{}, stdout...), stderr...))
}

var (
	ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// Releases before 3.7 print "avg-lat=%7.3lf" (a padded figure) and their percentiles
	// with two decimals ("percentile  99.00"); 3.7 and later "avg-latency=" and three.
	// "(std-dev=1.244)" (3.7), or with more statistics after it: "(std-dev=1.244,
	// mean-ad=0.836, ..., 99.0% ci=[5.794, 5.810])" (later versions).
	meanRE      = regexp.MustCompile(`avg-lat(?:ency)?=\s*([0-9.]+)\s*\(std-dev=\s*([0-9.]+)[,)]`)
	percentile  = regexp.MustCompile(`---> percentile\s+([0-9.]+)\s*=\s*([0-9.]+)`)
	extremeRE   = regexp.MustCompile(`---> <(MAX|MIN)> observation\s*=\s*([0-9.]+)`)
	rateRE      = regexp.MustCompile(`Summary: Message Rate is ([0-9.]+) \[msg/sec\]`)
	bandwidthRE = regexp.MustCompile(`Summary: BandWidth is [0-9.]+ MBps \(([0-9.]+) Mbps\)`)
	summaryRE   = regexp.MustCompile(`Summary: (Latency is .*|Message Rate is .*|BandWidth is .*)`)
)

// percentiles are the ones nsperf records, by sockperf's label.
var percentiles = map[string]string{"25.000": "p25_latency", "50.000": "p50_latency", "75.000": "p75_latency",
	"90.000": "p90_latency", "99.000": "p99_latency", "99.900": "p999_latency", "99.990": "p9999_latency", "99.999": "p99999_latency"}

// threeDecimals is a percentile's label as 3.7 prints it: "99.00" is "99.000".
func threeDecimals(label string) string {
	v, err := strconv.ParseFloat(label, 64)
	if err != nil {
		return label
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Parse reads what the client printed: for a latency mode, the mean and spread and the
// percentiles of the one-way latency (µs, half the round trip as sockperf reports it); for
// throughput, bits/s and messages per second. A mode whose figures are missing (a run cut
// short, a server that was not there) is an error that says so.
func Parse(latency bool, out []byte) ([]results.Metric, string, error) {
	text := ansi.ReplaceAllString(string(out), "")
	ms, rows, err := figures(latency, text)
	if err != nil {
		return nil, "", err
	}
	want := []string{"mean_latency", "p99_latency"}
	if !latency {
		want = []string{scenarios.MetricThroughput, "message_rate"}
	}
	for _, name := range want {
		if !hasMetric(ms, name) {
			return nil, "", fmt.Errorf("sockperf output has no %s (last line %q): cut short, or no server?", name, lastLine(text))
		}
	}
	return ms, strings.Join(rows, "; "), nil
}

// ParseExcerpt reads what part of a client's report a message shows: the figures of its
// lines, at least one latency (its mean, a percentile or an extreme: a latency mode) or a rate
// (throughput).
func ParseExcerpt(latency bool, out []byte) ([]results.Metric, error) {
	ms, _, err := figures(latency, ansi.ReplaceAllString(string(out), ""))
	if err == nil && !slices.ContainsFunc(ms, func(m results.Metric) bool { return m.Unit == "us" }) && !hasMetric(ms, scenarios.MetricThroughput) && !hasMetric(ms, "message_rate") {
		err = errors.New("sockperf report without a latency or its rate")
	}
	return ms, err
}

// figures are the metrics of the report's lines, and its summary lines.
func figures(latency bool, text string) ([]results.Metric, []string, error) {
	var ms []results.Metric
	var rows []string
	add := func(name, unit, raw string) error {
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("sockperf %s: %q is not a number", name, raw)
		}
		ms = append(ms, results.Metric{Name: name, Unit: unit, Value: v})
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader([]byte(text)))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := summaryRE.FindStringSubmatch(line); m != nil {
			rows = append(rows, m[1])
		}
		var err error
		switch {
		case !latency:
			if m := rateRE.FindStringSubmatch(line); m != nil {
				err = add("message_rate", "msg/s", m[1])
			} else if m := bandwidthRE.FindStringSubmatch(line); m != nil {
				var mbps float64
				if mbps, err = strconv.ParseFloat(m[1], 64); err == nil {
					ms = append(ms, results.Metric{Name: scenarios.MetricThroughput, Unit: "bit/s", Value: mbps * 1e6})
				}
			}
		case meanRE.MatchString(line):
			m := meanRE.FindStringSubmatch(line)
			if err = add("mean_latency", "us", m[1]); err == nil {
				err = add("stddev_latency", "us", m[2])
			}
		case percentile.MatchString(line):
			m := percentile.FindStringSubmatch(line)
			if name, ok := percentiles[threeDecimals(m[1])]; ok {
				err = add(name, "us", m[2])
			}
		case extremeRE.MatchString(line):
			m := extremeRE.FindStringSubmatch(line)
			err = add(strings.ToLower(m[1])+"_latency", "us", m[2])
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return ms, rows, nil
}

func hasMetric(ms []results.Metric, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

var versionRE = regexp.MustCompile(`version ([0-9][0-9.]*)`)

// Version reads `sockperf --version`: "sockperf, version 3.7-no.git" is 3.7.
func Version(out string) string {
	if m := versionRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}
