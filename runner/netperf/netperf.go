// Package netperf builds netperf and netserver command lines and parses netperf's output in
// its three forms (omni -O columns, -k key=value, the classic TCP_STREAM block); all pure.
package netperf

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/version"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// The programs run, as found on PATH.
const (
	Binary       = "netperf"
	ServerBinary = "netserver"
)

// ServerArgs is netserver in the foreground (-D) on the workload's control port.
func ServerArgs(w *scenarios.Netperf) []string {
	return []string{ServerBinary, "-D", "-p", strconv.Itoa(w.Port)}
}

// ClientArgs is the measuring netperf: test, length, the family of the server address, CPU
// binding of both sides (-T), then the test options: sizes, socket buffers, output selectors.
func ClientArgs(w *scenarios.Netperf) []string {
	length := strconv.Itoa(w.Duration.Seconds())
	if w.Bytes > 0 {
		length = "-" + strconv.FormatUint(uint64(w.Bytes), 10) // a negative length is bytes: a transfer of that size
	}
	args := []string{Binary, "-H", w.Server.Addr, "-p", strconv.Itoa(w.Port), w.Server.Family(), "-t", w.Test, "-l", length}
	if w.Client.CPU != nil || w.Server.CPU != nil {
		args = append(args, "-T", cpu(w.Client.CPU)+","+cpu(w.Server.CPU))
	}
	if w.Client.Addr != "" {
		args = append(args, "-L", w.Client.Addr)
	}
	var test []string
	if scenarios.Transactional(w.Test) && (w.Request > 0 || w.Response > 0) {
		test = append(test, "-r", fmt.Sprintf("%d,%d", w.Request, w.Response))
	}
	if w.MessageSize > 0 {
		test = append(test, "-m", strconv.Itoa(w.MessageSize))
	}
	if w.SendBuffer > 0 {
		test = append(test, "-s", strconv.Itoa(w.SendBuffer))
	}
	if w.RecvBuffer > 0 {
		test = append(test, "-S", strconv.Itoa(w.RecvBuffer))
	}
	if len(w.Outputs) > 0 {
		test = append(test, "-O", strings.Join(w.Outputs, ","))
	}
	if len(test) > 0 {
		args = append(append(args, "--"), test...)
	}
	return args
}

func cpu(c *int) string {
	if c == nil {
		return ""
	}
	return strconv.Itoa(*c)
}

// ErrTool is wrapped by errors that netperf itself reported.
var ErrTool = errors.New("netperf reported an error")

// Parse reads netperf's output into metrics, and returns the row of values as netperf printed
// it (what `| tail -1` shows). selectors are the -O selectors the run used (nil: the classic
// output). It recognises -k key=value output by itself.
func Parse(out, test string, selectors []string) ([]results.Metric, string, error) {
	values, row, err := parseValues(out, selectors)
	if err != nil {
		return nil, "", err
	}
	metrics, err := toMetrics(test, values)
	return metrics, row, err
}

// parseValues reads netperf's output into the values of its selectors, and the row of them.
func parseValues(out string, selectors []string) (values map[string]string, row string, err error) {
	if !strings.Contains(out, " TEST ") {
		return nil, "", fmt.Errorf("%w: %s", ErrTool, firstLines(out))
	}
	switch {
	case strings.Contains(out, "THROUGHPUT="):
		values, err = parseKeyValue(out)
	case len(selectors) > 0:
		values, row, err = parseColumns(out, selectors)
	default:
		values, row, err = parseClassicStream(out)
	}
	return values, row, err
}

// transferTime is how long a transfer of a fixed size took, in seconds: the bytes netperf
// sent (whole sends, so a little more than asked) over its throughput. Its elapsed time has
// two decimals, a percent of a second's transfer; the throughput has more digits.
func transferTime(values map[string]string) (results.Metric, error) {
	sent, err := strconv.ParseFloat(values["LOCAL_BYTES_SENT"], 64)
	if err != nil || sent <= 0 {
		return results.Metric{}, fmt.Errorf("netperf LOCAL_BYTES_SENT %q: want the bytes the transfer sent", values["LOCAL_BYTES_SENT"])
	}
	thr, err := toMetrics(scenarios.NetperfTCPStream, map[string]string{"THROUGHPUT": values["THROUGHPUT"], "THROUGHPUT_UNITS": values["THROUGHPUT_UNITS"]})
	if err != nil {
		return results.Metric{}, err
	}
	if thr[0].Unit != "bit/s" || thr[0].Value <= 0 {
		return results.Metric{}, fmt.Errorf("netperf THROUGHPUT %q %q: want a positive rate in bits or bytes per second", values["THROUGHPUT"], values["THROUGHPUT_UNITS"])
	}
	return results.Metric{Name: scenarios.MetricTransferTime, Unit: "s", Value: sent * 8 / thr[0].Value}, nil
}

// lastLine is the last non-empty line.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

func firstLines(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return "no output"
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 2 {
		lines = lines[:2]
	}
	return strings.Join(lines, " ")
}

// parseColumns reads -O output: headers, then one row of values, one per selector.
func parseColumns(out string, selectors []string) (map[string]string, string, error) {
	row := lastLine(out)
	fields := strings.Fields(row)
	if len(fields) != len(selectors) {
		return nil, "", fmt.Errorf("netperf -O output: %d values in the last line %q, want %d (%s): truncated?", len(fields), row, len(selectors), strings.Join(selectors, ","))
	}
	values := map[string]string{}
	for i, s := range selectors {
		values[s] = fields[i]
	}
	return values, row, nil
}

// parseKeyValue reads -k output: KEY=value lines.
func parseKeyValue(out string) (map[string]string, error) {
	values := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && k != "" && strings.ToUpper(k) == k {
			values[k] = v
		}
	}
	if len(values) == 0 {
		return nil, errors.New("netperf -k output: no KEY=value lines")
	}
	return values, nil
}

// parseClassicStream reads the classic TCP_STREAM block: five header lines ending with the
// units, then "recv-socket send-socket message elapsed throughput".
func parseClassicStream(out string) (map[string]string, string, error) {
	lines := strings.Split(out, "\n")
	units := ""
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "bytes" {
			units = f[len(f)-1]
		}
	}
	row := lastLine(out)
	f := strings.Fields(row)
	numeric := len(f) == 5
	for _, x := range f {
		if _, err := strconv.ParseFloat(x, 64); err != nil {
			numeric = false
		}
	}
	if units == "" || !numeric {
		return nil, "", fmt.Errorf("netperf TCP_STREAM output: no units line and 5-value row (last line %q): truncated?", row)
	}
	return map[string]string{"RECV_SOCKET_SIZE": f[0], "SEND_SOCKET_SIZE": f[1], "SEND_SIZE": f[2],
		"ELAPSED_TIME": f[3], "THROUGHPUT": f[4], "THROUGHPUT_UNITS": units}, row, nil
}

// throughputScale converts netperf's throughput units to bits/s.
var throughputScale = map[string]float64{
	"bits/s": 1, "10^3bits/s": 1e3, "10^6bits/s": 1e6, "10^9bits/s": 1e9,
	"Bytes/s": 8, "10^3Bytes/s": 8e3, "2^10Bytes/s": 8 * 1024, "10^6Bytes/s": 8e6, "2^20Bytes/s": 8 * 1024 * 1024,
	"10^9Bytes/s": 8e9, "2^30Bytes/s": 8 * 1024 * 1024 * 1024,
}

// SelectorMetrics turns the values of netperf's output selectors (-O/-o names, as netperf
// prints them) into nsperf's metrics: the one model of netperf's output, for runs nsperf
// makes and for rows a commit message shows.
func SelectorMetrics(test string, values map[string]string) ([]results.Metric, error) {
	return toMetrics(test, values)
}

// ThroughputScale is the factor from a netperf throughput unit ("10^6bits/s",
// "10^6bits/sec", "Trans/s" has none) to bit/s.
func ThroughputScale(units string) (float64, bool) {
	f, ok := throughputScale[strings.Replace(units, "/sec", "/s", 1)]
	return f, ok
}

// toMetrics turns selector values into metrics with units: throughput in bit/s (streams) or
// trans/s (request/response), latencies in µs, CPU utilisation in %. Sizes and times that
// are not measurements are left out; CPU utilisation of -1 means it was not measured.
func toMetrics(test string, values map[string]string) ([]results.Metric, error) {
	var out []results.Metric
	for _, sel := range orderedKeys(values) {
		raw := values[sel]
		switch {
		case sel == "THROUGHPUT_UNITS", sel == "ELAPSED_TIME", strings.HasSuffix(sel, "_SIZE"),
			strings.HasSuffix(sel, "_BYTES_SENT"), strings.HasSuffix(sel, "_BYTES_RECVD"), strings.HasSuffix(sel, "_BYTES_XFERD"):
			continue // the test's parameters and counts, not its measurements
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("netperf %s: %q is not a number", sel, raw)
		}
		m := results.Metric{Name: strings.ToLower(sel), Value: v}
		switch {
		case sel == "THROUGHPUT":
			units := strings.Replace(values["THROUGHPUT_UNITS"], "/sec", "/s", 1)
			switch {
			case scenarios.Transactional(test) || strings.EqualFold(units, "Trans/s"):
				m.Unit = "trans/s"
			case units == "":
				m.Unit, m.Value = "bit/s", v*1e6 // netperf's default: 10^6bits/s
			default:
				scale, ok := throughputScale[units]
				if !ok {
					return nil, fmt.Errorf("netperf THROUGHPUT_UNITS %q: unknown unit", units)
				}
				m.Unit, m.Value = "bit/s", v*scale
			}
		case sel == "TRANSACTION_RATE":
			m.Unit = "trans/s"
		case strings.HasSuffix(sel, "_LATENCY"):
			m.Unit = "us"
		case strings.HasSuffix(sel, "_CPU_UTIL"):
			if v < 0 {
				continue
			}
			m.Unit = "%"
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("netperf output has no measurement")
	}
	return out, nil
}

// orderedKeys puts THROUGHPUT first, then the others in name order.
func orderedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		if k != "THROUGHPUT" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := m["THROUGHPUT"]; ok {
		keys = append([]string{"THROUGHPUT"}, keys...)
	}
	return keys
}

// Version extracts the version from `netperf -V` ("Netperf version 2.7.0").
func Version(out string) string { return version.LastField(out) }

// Driver drives netperf against one netserver per case, namespace and control port.
type Driver struct{}

// nonFree is what installing netperf takes besides the package: Debian ships it in non-free.
const nonFree = "netperf is in Debian's non-free component, which scripts/deps.sh enables"

// Programs implements tool.Driver.
func (Driver) Programs() []tool.Program {
	return []tool.Program{
		{Name: "netperf", Binary: Binary, Package: "netperf", Hint: nonFree, Version: []string{Binary, "-V"}, ParseVersion: Version},
		{Name: "netserver", Binary: ServerBinary, Package: "netperf", Hint: nonFree},
	}
}

// Server implements tool.Driver: netserver in the foreground, shared by the case's workloads
// that name the same namespace and control port.
func (Driver) Server(spec scenarios.ToolSpec) tool.Server {
	w := spec.(*scenarios.Netperf)
	return tool.Server{NS: w.Server.NS, Argv: ServerArgs(w), Port: w.Port, Key: fmt.Sprintf("%s/%d", w.Server.NS, w.Port)}
}

// Client implements tool.Driver.
func (Driver) Client(spec scenarios.ToolSpec) []string { return ClientArgs(spec.(*scenarios.Netperf)) }

// FixedPorts implements tool.Driver: netperf's data connections use ephemeral ports.
func (Driver) FixedPorts(scenarios.ToolSpec) []tool.Port { return nil }

// Parse implements tool.Driver: netperf prints its errors on either stream.
func (Driver) Parse(spec scenarios.ToolSpec, stdout, stderr []byte) ([]results.Metric, string, error) {
	w := spec.(*scenarios.Netperf)
	values, row, err := parseValues(string(stdout)+string(stderr), w.Outputs)
	if err != nil {
		return nil, "", err
	}
	metrics, err := toMetrics(w.Test, values)
	if err != nil || w.Bytes == 0 {
		return metrics, row, err
	}
	t, err := transferTime(values)
	if err != nil {
		return nil, "", err
	}
	return append([]results.Metric{t}, metrics...), row, nil
}
