package runner

import (
	"fmt"
	"path/filepath"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/runner/iperf3"
	"github.com/nsperf/nsperf/runner/netperf"
	"github.com/nsperf/nsperf/runner/pktgen"
	"github.com/nsperf/nsperf/runner/sockperf"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/runner/udpgso"
	"github.com/nsperf/nsperf/scenarios"
)

// drivers are the tools' drivers by the YAML key a workload names its tool with. A new tool is
// one line here, its package under runner/, and its settings in package scenarios.
var drivers = map[string]tool.Driver{
	"iperf3":   iperf3.Driver{},
	"netperf":  netperf.Driver{},
	"pktgen":   pktgen.Driver{},
	"sockperf": sockperf.Driver{},
	"udpgso":   udpgso.Driver{},
}

// driver returns the driver of a (validated) workload's tool.
func driver(w scenarios.Workload) tool.Driver {
	d, ok := drivers[w.Tool()]
	if !ok {
		panic(fmt.Sprintf("workload %s: no driver for tool %q", w.Name, w.Tool()))
	}
	return d
}

// serverName names a server for messages: its program, not the taskset that pins it.
func serverName(s tool.Server) string {
	argv := s.Argv
	if len(argv) > 3 && argv[0] == "taskset" && argv[1] == "-c" {
		argv = argv[3:]
	}
	return filepath.Base(argv[0])
}

// Programs returns every program of every tool, with how to ask each for its version, for
// `nsperf probe`.
func Programs() []envinfo.Tool {
	var out []envinfo.Tool
	for _, name := range scenarios.ToolNames() {
		out = append(out, versionedPrograms(drivers[name].Programs()...)...)
	}
	return out
}

// versionedPrograms are the programs whose version can be asked, with how.
func versionedPrograms(ps ...tool.Program) []envinfo.Tool {
	var out []envinfo.Tool
	for _, p := range ps {
		if p.Version != nil {
			out = append(out, envinfo.Tool{Name: p.Name, Argv: p.Version, Parse: p.ParseVersion})
		}
	}
	return out
}

// missingProgram says how to install a program that is not on PATH, with what its tool says
// installing it takes besides.
func missingProgram(p tool.Program) string {
	hint := ""
	if p.Hint != "" {
		hint = "; " + p.Hint
	}
	return fmt.Sprintf("%s is not installed (Debian: apt-get install %s%s)", p.Binary, p.Package, hint)
}
