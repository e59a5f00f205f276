// Package udpgso builds the command lines of the kernel's UDP GSO benchmark (udpgso_bench_tx
// and udpgso_bench_rx, built from the base's tools/testing/selftests/net) and parses what the
// sender prints; both are pure.
package udpgso

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// The two programs, by name, and the files of a kernel tree they are built from.
const (
	Sender         = "udpgso_bench_tx"
	Receiver       = "udpgso_bench_rx"
	SenderSource   = "tools/testing/selftests/net/udpgso_bench_tx.c"
	ReceiverSource = "tools/testing/selftests/net/udpgso_bench_rx.c"
)

// family is the programs' address family flag.
func family(w *scenarios.UDPGSO) string {
	if w.IPv6() {
		return "-6"
	}
	return "-4"
}

// ServerArgs is the receiver, bound to the server's address and port (`udpgso_bench_rx [-4]
// -b ADDR -p PORT [-G]`): it counts what arrives until it is stopped. Both programs are
// pinned with taskset: the receiver has no affinity option, the sender's -C ignores CPU 0.
func ServerArgs(w *scenarios.UDPGSO) []string {
	args := []string{Receiver}
	if !w.IPv6() {
		args = append(args, "-4") // the receiver's default is IPv6
	}
	args = append(args, "-b", w.Server.Addr, "-p", strconv.Itoa(w.Port))
	if w.ReceiverGRO {
		args = append(args, "-G")
	}
	return tool.Taskset(w.Server.CPU, args)
}

// ClientArgs is the sender: the family, the destination, the time, the send size, UDP GSO
// and zerocopy when asked, and -a for its summary over the whole run (`udpgso_bench_tx -4 -D
// ADDR -p PORT -l SECS -s LEN [-S GSO] [-z] -a`).
func ClientArgs(w *scenarios.UDPGSO) []string {
	args := []string{Sender, family(w), "-D", w.Server.Addr, "-p", strconv.Itoa(w.Port), "-l", strconv.Itoa(w.Duration.Seconds()), "-s", strconv.Itoa(w.SendSize)}
	if w.GSO {
		args = append(args, "-S", strconv.Itoa(w.GSOSize))
	}
	if w.Zerocopy {
		args = append(args, "-z")
	}
	return tool.Taskset(w.Client.CPU, append(args, "-a"))
}

// Driver drives the UDP GSO benchmark: a receiver per run, the sender in the client.
type Driver struct{}

// Programs implements tool.Driver: both are built from the base's source tree (no package
// has them); taskset, which pins them, is util-linux's, on every Debian system.
func (Driver) Programs() []tool.Program {
	return []tool.Program{
		{Name: Sender, Binary: Sender, Source: SenderSource},
		{Name: Receiver, Binary: Receiver, Source: ReceiverSource},
	}
}

// Server implements tool.Driver: a receiver for each run, bound before the sender starts
// (a sender to a closed port fails with ECONNREFUSED).
func (Driver) Server(spec scenarios.ToolSpec) tool.Server {
	w := spec.(*scenarios.UDPGSO)
	return tool.Server{NS: w.Server.NS, Argv: ServerArgs(w), Port: w.Port, PerRun: true}
}

// Client implements tool.Driver.
func (Driver) Client(spec scenarios.ToolSpec) []string { return ClientArgs(spec.(*scenarios.UDPGSO)) }

// FixedPorts implements tool.Driver: UDP has no TIME_WAIT.
func (Driver) FixedPorts(scenarios.ToolSpec) []tool.Port { return nil }

// Parse implements tool.Driver: the sender prints on stderr.
func (Driver) Parse(spec scenarios.ToolSpec, stdout, stderr []byte) ([]results.Metric, string, error) {
	return Parse(spec.(*scenarios.UDPGSO).SendSize, append(append([]byte{}, stdout...), stderr...))
}

var (
	summaryRE = regexp.MustCompile(`^Summary over ([0-9]+)\.([0-9]{3}) seconds\.\.\.$`)
	sumRE     = regexp.MustCompile(`^sum udp tx:\s+([0-9]+) MB/s\s+([0-9]+) calls \(([0-9]+)/s\)\s+([0-9]+) msgs \(([0-9]+)/s\)$`)
)

// Parse reads the sender's summary of the whole run (-a): its length and the buffers of
// sendSize bytes and the calls it sent, into the payload's bits per second and the calls per
// second. The row is the summary line.
func Parse(sendSize int, out []byte) ([]results.Metric, string, error) {
	var millis uint64
	var row string
	var calls, msgs uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var last []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" {
			last = append(last, line)
			if len(last) > 3 {
				last = last[1:]
			}
		}
		if m := summaryRE.FindStringSubmatch(line); m != nil {
			s, _ := strconv.ParseUint(m[1], 10, 32)
			ms, _ := strconv.ParseUint(m[2], 10, 32)
			millis = s*1000 + ms
			continue
		}
		if m := sumRE.FindStringSubmatch(line); m != nil && millis > 0 {
			var err1, err2 error
			calls, err1 = strconv.ParseUint(m[2], 10, 64)
			msgs, err2 = strconv.ParseUint(m[4], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, "", fmt.Errorf("udpgso_bench_tx summary: %q has numbers out of range", line)
			}
			row = line
		}
	}
	if row == "" {
		return nil, "", fmt.Errorf("udpgso_bench_tx printed no summary (Summary over ... / sum udp tx: ...): %s", strings.Join(last, " | "))
	}
	seconds := float64(millis) / 1000
	return []results.Metric{
		{Name: scenarios.MetricThroughput, Unit: "bit/s", Value: float64(msgs) * float64(sendSize) * 8 / seconds},
		{Name: scenarios.MetricSendCalls, Unit: "calls/s", Value: float64(calls) / seconds},
	}, row, nil
}
