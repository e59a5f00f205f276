// Package tool is the interface between the runner and the programs it measures with. Each
// tool (runner/iperf3, runner/netperf) implements Driver: what it needs installed, its server,
// its client's argv, the ports it binds again every run, and how to read its output. The
// runner starts, waits for, times and records every tool the same way, and never asks which
// tool a workload uses.
package tool

import (
	"regexp"
	"strconv"
	"time"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// Driver drives one tool. Its methods are given the workload's settings of that tool
// (scenarios.Workload.Spec), and are pure.
type Driver interface {
	// Programs are what must be installed to run the tool.
	Programs() []Program
	// Server is the server a workload's client talks to.
	Server(spec scenarios.ToolSpec) Server
	// Client is the measuring client's argv, run in the client's namespace.
	Client(spec scenarios.ToolSpec) []string
	// FixedPorts are the sockets every run binds again: TIME_WAIT leftovers of the previous
	// run on them are cleared first.
	FixedPorts(spec scenarios.ToolSpec) []Port
	// Parse reads the client's output into metrics, and the row of values as the tool
	// printed it ("" if it has none); an error says why the run measured nothing.
	Parse(spec scenarios.ToolSpec, stdout, stderr []byte) ([]results.Metric, string, error)
}

// InKernel is a driver whose tool is the kernel's own (pktgen): Available says why the
// running kernel lacks it, nil when it has it.
type InKernel interface {
	Available() error
}

// Server.None reports a tool without a server (pktgen's packets go to an address nothing
// answers on): none is started or waited for.
func (s Server) None() bool { return len(s.Argv) == 0 }

// Preparer is a driver with a command to run in the client's namespace before each run's
// servers start, to completion (pktgen resolves its destination's MAC before xdp-bench's
// program, which drops every frame, ARP's too, is attached).
type Preparer interface {
	Prepare(spec scenarios.ToolSpec) []string
}

// ServerGrace is how long an interrupted server (Server.Interrupt) may take to end.
const ServerGrace = 10 * time.Second

// SpecPrograms is a driver whose workloads need only some of its programs: ProgramsOf are
// those one workload runs (pktgen's receiver, xdp-bench, only when it is asked for).
type SpecPrograms interface {
	ProgramsOf(spec scenarios.ToolSpec) []Program
}

// ServerParser is a driver whose one-off server measures too (xdp-bench counting what the
// generator sent): ParseServer reads the server's output after it ended, given the client's
// metrics, into more metrics.
type ServerParser interface {
	ParseServer(spec scenarios.ToolSpec, client []results.Metric, stdout []byte, stderr string) ([]results.Metric, error)
}

// Program is one program a tool needs.
type Program struct {
	Name    string // e.g. "netserver"
	Binary  string // what is run: the name on PATH, or a path
	Package string // the Debian package that installs it
	// Hint is what else installing it takes, said when it is missing ("netperf is in Debian's
	// non-free component, which scripts/deps.sh enables"); "" for nothing.
	Hint    string
	Version []string // argv that prints its version; nil: not recorded
	// ParseVersion reads the version out of what Version prints.
	ParseVersion func(output string) string
	// Source is the file of a kernel source tree the program is built from, for a program no
	// package has (tools/testing/selftests/net/udpgso_bench_tx.c): nsperf compiles it from the
	// base's tree, caches it and records where it came from (Built); Binary is its name.
	Source string
}

// Built is a program nsperf compiled from a kernel tree (Program.Source).
type Built struct {
	Path string `json:"path"`
	// Provenance is where it came from, recorded as its version: "built from TREE (Linux
	// 6.12.118), FILE sha256 HEX, by gcc 12.2.0".
	Provenance string `json:"provenance"`
}

// Server is a tool's server: argv in a namespace, ready when it listens on Port, or when its
// output matches Ready.
type Server struct {
	NS   string
	Argv []string
	Port int
	// Ready, when set, is the line a server that binds no port prints once it is ready
	// (xdp-bench's "Dropping packets on eth0 ..."); Port is then not waited for.
	Ready *regexp.Regexp
	// Interrupt: the server is stopped with SIGINT, to undo what it set up and print its
	// summary, and killed only if it has not ended after ServerGrace.
	Interrupt bool
	// PerRun: a one-off server, started before each run and gone after it (iperf3 -s -1).
	// Otherwise the server lives through a case and serves every workload with the same Key
	// (netserver, one per namespace and control port).
	PerRun bool
	Key    string
}

// Port is a socket in a namespace.
type Port struct {
	NS   string
	Port int
}

// Taskset is argv run on a CPU with taskset (util-linux, `taskset -c N PROGRAM ...`), for a
// program without an affinity option of its own; argv itself when cpu is nil.
func Taskset(cpu *int, argv []string) []string {
	if cpu == nil {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(*cpu)}, argv...)
}
