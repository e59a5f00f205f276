// Package layers holds the test that keeps nsperf's imports pointing down: every package of
// the module sits in one layer, and imports only packages of lower layers. A new package
// must be given its layer here, which is where its place in the design is decided.
package layers

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

const module = "github.com/nsperf/nsperf/"

// layers are nsperf's packages, lowest first. A package imports only from layers below its
// own: the bounds of waits and make test's reader of go test; helpers; the knob registry; the scenario model; the pure plan and the result model;
// OVS, run state, the tool interface, comparison, change points, counting a patch's calls and the seam between the
// engine and the machine; the live topology, the guests, the history and the tools' drivers;
// the engine, HTML and the host machine; the A/B of two kernels; a message's claims made the
// run that measures them; the command line.
var layers = [][]string{
	{"internal/waitlimit", "internal/inputerr", "internal/exitcode", "kconfig", "scripts/testlanes"},
	{"internal/capability", "internal/csvtext", "internal/golden", "internal/envinfo", "internal/mwu", "internal/netnsx", "internal/netstat", "topo/tcptrace", "internal/proc", "patches", "internal/procstat", "internal/safefile", "internal/sandbox", "internal/shellq", "internal/version", "topo/ovs/vswitchd"},
	{"knobs", "internal/syscheck", "internal/spawn"},
	{"scenarios"},
	{"results", "topo/plan"},
	{"topo/ovs", "topo/runstate", "runner/tool", "compare", "history/changepoint", "machine", "testkit/fixture", "coverage"},
	{"topo", "vm", "history", "testkit/testenv"}, // and every tool's driver, runner/TOOL (toolDrivers)
	// claims reads tool output with the drivers' own readers (one model of each tool);
	// kbuild builds kernels and programs and knows nothing of how a run uses them.
	{"claims", "kbuild", "cleanup", "runner/pktgen/sender"},
	{"reproduce", "runner", "htmlreport", "machine/host"},
	{"runner/kernels", "render"},
	{"reproduce/measuring"},
	{"cmd/nsperf", "testkit/clitest", "cmd/nsperf/guesttest", "cmd/nsperf/buildtest"},
}

// apart are packages kept apart from others a layer alone would let them import: kbuild
// builds kernels and programs, and what a run makes of them (runner/tool's types) is the
// caller's to convert.
var apart = map[string][]string{"kbuild": {"runner"}}

// toolDriversLayer is the layer of the tools' drivers: the live topology's.
var toolDriversLayer = slices.IndexFunc(layers, func(l []string) bool { return slices.Contains(l, "topo") })

// toolDrivers are the tools' driver packages, runner/TOOL for each tool a scenario can name:
// pure, and in toolDriversLayer, so that a new tool needs no line here.
func toolDrivers() []string {
	var out []string
	for _, name := range scenarios.ToolNames() {
		out = append(out, "runner/"+name)
	}
	return out
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
	for _, p := range toolDrivers() {
		layer[p] = toolDriversLayer
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
			for _, prefix := range apart[name] {
				if dep == prefix || strings.HasPrefix(dep, prefix+"/") {
					t.Errorf("%s imports %s: it must know nothing of %s", name, dep, prefix)
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d packages listed: is go list looking at the module?", seen)
	}
}

// goPackage is a package of the module with its production files.
type goPackage struct {
	ImportPath, Dir string
	GoFiles         []string
}

// goFiles lists the module's packages with their production files (`go list`).
func goFiles(t *testing.T) []goPackage {
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// namespaceSwitches are the calls that move a thread into another network namespace.
var namespaceSwitches = map[string][]string{
	"github.com/vishvananda/netns": {"Set", "Setns"},
	"golang.org/x/sys/unix":        {"Setns", "Unshare"},
}

// TestOnlyNetnsxSwitchesNamespaces: every switch of a thread's network namespace goes through
// internal/netnsx, which runs it on a thread of its own and never leaves a thread in the
// wrong namespace. Production code anywhere else that calls netns.Set, unix.Setns or
// unix.Unshare fails here.
func TestOnlyNetnsxSwitchesNamespaces(t *testing.T) {
	files := 0
	for _, p := range goFiles(t) {
		for _, name := range p.GoFiles {
			files++
			path := filepath.Join(p.Dir, name)
			for _, call := range switchCalls(t, path) {
				if p.ImportPath != module+"internal/netnsx" {
					t.Errorf("%s: %s switches a network namespace: use netnsx.Do", call, strings.TrimPrefix(p.ImportPath, module))
				}
			}
		}
	}
	if files < 50 {
		t.Errorf("only %d files read: is go list looking at the module?", files)
	}
}

// switchCalls are the positions and names of the namespace switches a file makes.
func switchCalls(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := map[string][]string{} // the name a file gives an import -> its switch functions
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		fns, ok := namespaceSwitches[p]
		if !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = fns
	}
	// unix.Unshare(unix.CLONE_NEWNS) gives a thread mounts of its own (internal/sandbox's
	// overlay), not another network namespace.
	mountsOnly := map[*ast.SelectorExpr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 1 {
			fn, ok1 := call.Fun.(*ast.SelectorExpr)
			arg, ok2 := call.Args[0].(*ast.SelectorExpr)
			if ok1 && ok2 && fn.Sel.Name == "Unshare" && arg.Sel.Name == "CLONE_NEWNS" {
				mountsOnly[fn] = true
			}
		}
		return true
	})
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || mountsOnly[sel] {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(local[x.Name], sel.Sel.Name) {
			out = append(out, fmt.Sprintf("%s: %s.%s", fset.Position(sel.Pos()), x.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}

// pure are the packages that must run without root and touch no kernel: parsing, validation,
// planning, statistics, rendering, comparison, and the engine, which reaches the machine only
// through the machine package's interfaces.
var pure = []string{"reproduce", "knobs", "kconfig", "internal/inputerr", "patches", "claims", "scenarios", "results", "topo/plan", "compare", "history/changepoint", "machine", "runner", "runner/tool", "htmlreport", "render", "internal/mwu", "internal/csvtext", "internal/shellq", "internal/capability"}

// privileged are what a pure package must not reach, even through another package: the
// kernel's network interfaces, namespace switches, and nsperf's packages that hold them. And
// no nsperf package it depends on may run processes (os/exec); a library's own use of it (the
// SQLite driver's libc) is not nsperf starting programs.
var privileged = []string{"github.com/vishvananda/netlink", "github.com/vishvananda/netns", "github.com/google/nftables", "github.com/safchain/ethtool",
	module + "topo", module + "vm", module + "internal/netnsx", module + "internal/spawn", module + "topo/ovs", module + "topo/runstate", module + "machine/host"}

// TestPurePackagesTouchNoKernel: the pure packages do not depend, directly or through another
// package, on netlink, netns, nftables or ethtool, nor on the packages that use them, and none
// of nsperf's packages among their dependencies imports os/exec. No production package
// imports testkit/testenv.
func TestPurePackagesTouchNoKernel(t *testing.T) {
	for _, p := range append(slices.Clone(pure), toolDrivers()...) {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			dep := fields[0]
			if slices.Contains(privileged, dep) {
				t.Errorf("%s depends on %s: a pure package must not touch the kernel", p, dep)
			}
			if strings.HasPrefix(dep, module) && slices.Contains(fields[1:], "os/exec") {
				t.Errorf("%s depends on %s, which runs processes (os/exec)", p, dep)
			}
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	testOnly := []string{"testkit/testenv", "internal/golden", "testkit/fixture", "testkit/clitest"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || slices.Contains(testOnly, strings.TrimPrefix(fields[0], module)) {
			continue // a test helper may build on another
		}
		for _, testOnly := range testOnly {
			if slices.Contains(fields[1:], module+testOnly) {
				t.Errorf("%s imports %s, which only tests may", fields[0], testOnly)
			}
		}
	}
}

// TestNoCommandConstructsAnother: in cmd/nsperf a command's constructor (a function that
// returns *cobra.Command) is called only as an argument of AddCommand, where the tree is
// assembled, and only the process's entry point runs a command (Execute, SetArgs): a command
// that needs another's work calls the code both share (kernels.Execute), never the other
// command through an argv.
func TestNoCommandConstructsAnother(t *testing.T) {
	dir := filepath.Join("..", "..", "cmd", "nsperf")
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if files[name], err = parser.ParseFile(fset, name, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	constructors := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Type.Results != nil && len(fd.Type.Results.List) == 1 {
				if star, ok := fd.Type.Results.List[0].Type.(*ast.StarExpr); ok {
					if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
						constructors[fd.Name.Name] = true
					}
				}
			}
		}
	}
	if len(constructors) < 10 {
		t.Fatalf("found %d command constructors in %s: the test no longer sees them", len(constructors), dir)
	}
	for name, f := range files {
		allowed := map[ast.Node]bool{} // the constructor calls that are AddCommand's arguments
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "AddCommand" {
					for _, a := range call.Args {
						allowed[a] = true
					}
				}
			}
			return true
		})
		var inFunc string
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				inFunc = fd.Name.Name
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				if constructors[fun.Name] && !allowed[call] && inFunc != "run" && inFunc != "main" {
					t.Errorf("%s: %s calls the command constructor %s: call the code the commands share instead", fset.Position(call.Pos()), inFunc, fun.Name)
				}
			case *ast.SelectorExpr:
				// cobra's Execute and ExecuteC take no argument (kernels.Execute takes a plan).
				runs := (fun.Sel.Name == "Execute" || fun.Sel.Name == "ExecuteC") && len(call.Args) == 0 || fun.Sel.Name == "SetArgs"
				if runs && inFunc != "run" && inFunc != "main" {
					t.Errorf("%s: %s runs a command (%s): only the entry point does", filepath.Base(name), inFunc, fun.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestStateSettingKindsStayInTheirFiles: a state's setting kind (devices, offloads, qdiscs,
// xdp, sysctls, routes: scenarios.Setting) is named only in its own files,
// scenarios/setting_*.go and topo/setting_*.go: a production file elsewhere that names a
// kind's type (scenarios.Sysctls) or asks a state for a kind by its key (Settings.Of("xdp"),
// Settings["xdp"]) fails here; it walks the registry (scenarios.SettingKinds) instead.
func TestStateSettingKindsStayInTheirFiles(t *testing.T) {
	types, keys := map[string]bool{}, map[string]bool{}
	for _, kind := range scenarios.SettingKinds() {
		types[reflect.TypeOf(kind).Name()] = true
		keys[strconv.Quote(kind.Key())] = true
	}
	if len(types) < 6 {
		t.Fatalf("only %d setting kinds registered", len(types))
	}
	for _, p := range goFiles(t) {
		pkg := strings.TrimPrefix(p.ImportPath, module)
		for _, name := range p.GoFiles {
			if (pkg == "scenarios" || pkg == "topo") && strings.HasPrefix(name, "setting_") {
				continue
			}
			for _, use := range kindUses(t, filepath.Join(p.Dir, name), pkg == "scenarios", types, keys) {
				t.Errorf("%s names the setting kind %s outside its files (scenarios/setting_KIND.go, topo/setting_KIND.go): walk scenarios.SettingKinds() instead", use.pos, use.what)
			}
		}
	}
}

type kindUse struct{ pos, what string }

// kindUses are the places a file names a setting kind: its type (as scenarios.T, or T within
// package scenarios), or its key as the index of Settings or the argument of Of.
func kindUses(t *testing.T, path string, inScenarios bool, types, keys map[string]bool) []kindUse {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"scenarios" {
			local = "scenarios"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	fields := map[*ast.Ident]bool{} // names of fields, not of types: Topology.Sysctls
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			fields[n.Sel] = true
		case *ast.Field:
			for _, name := range n.Names {
				fields[name] = true
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				fields[k] = true
			}
		}
		return true
	})
	var out []kindUse
	keyed := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && keys[lit.Value] {
			out = append(out, kindUse{fset.Position(lit.Pos()).String(), lit.Value})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && local != "" && x.Name == local && types[n.Sel.Name] {
				out = append(out, kindUse{fset.Position(n.Pos()).String(), n.Sel.Name})
			}
		case *ast.Ident:
			if inScenarios && types[n.Name] && !fields[n] {
				out = append(out, kindUse{fset.Position(n.Pos()).String(), n.Name})
			}
		case *ast.IndexExpr:
			if sel, ok := n.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Settings" {
				keyed(n.Index)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Of" && len(n.Args) == 1 {
				keyed(n.Args[0])
			}
		}
		return true
	})
	return out
}
