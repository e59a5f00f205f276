// Package layers holds the test that keeps nsperf's imports pointing down: every package of
// the module sits in one layer, and imports only packages of lower layers. A new package
// must be given its layer here, which is where its place in the design is decided.
package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/nsperf/nsperf/"

// layers are nsperf's packages, lowest first. A package imports only from layers below its
// own: the bounds of waits; helpers; the knob registry; the scenario model; the pure plan and the result model;
// OVS, run state, the tool interface, comparison and change points; the live topology, the
// guests, the history and the tools' drivers; the engine and HTML; the A/B of two kernels;
// the command line.
var layers = [][]string{
	{"internal/waitlimit"},
	{"internal/csvtext", "internal/envinfo", "internal/mwu", "internal/netnsx", "internal/netstat", "internal/proc", "internal/procstat", "internal/safefile", "internal/shellq", "internal/version", "topo/ovs/vswitchd"},
	{"knobs", "internal/testenv", "internal/syscheck"},
	{"scenarios"},
	{"results", "topo/plan"},
	{"topo/ovs", "topo/runstate", "runner/tool", "compare", "history/changepoint"},
	{"topo", "vm", "history", "runner/iperf3", "runner/netperf"},
	{"runner", "htmlreport"},
	{"runner/kernels"},
	{"cmd/nsperf"},
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layer := map[string]int{}
	for i, pkgs := range layers {
		for _, p := range pkgs {
			layer[p] = i
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		if name == "internal/layers" {
			continue
		}
		own, ok := layer[name]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers", name)
			continue
		}
		seen++
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if l, ok := layer[dep]; ok && l >= own {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point to a lower layer", name, own, dep, l)
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d packages listed: is go list looking at the module?", seen)
	}
}
