// Package coverage counts how often a kernel calls the functions a patch changes: which
// symbols stand for them in the running kernel (from /proc/kallsyms), and kprobe events on
// those symbols whose hit counts tracefs keeps (kprobe_profile). The reading of kallsyms is
// pure; the counting needs root and a kernel with KPROBE_EVENTS (a guest's).
package coverage

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/patches"
)

// Target is a function to count: the name the patch's hunks give, the file, and the module
// the file is built into ("" for the kernel image, or when not known).
type Target struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Module   string `json:"module,omitempty"`
}

// Resolved is where a target is in a running kernel: the symbols to probe (written as a
// kprobe event takes them: MODULE:SYMBOL or SYMBOL), or why it cannot be counted.
type Resolved struct {
	Target
	Probes []string
	// NotCounted: no probe can stand for the target, and why.
	NotCounted string
	// Absent: the function cannot have run, because its module is not loaded.
	Absent string
}

// clone matches the names GCC gives a function's copies (tcp_foo.isra.0, .constprop.0,
// .part.0): their entry is the function's code. A .cold part is not an entry.
var clone = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\.(isra|constprop|part)(\.[0-9]+)+$`)

// symbolName is what a symbol or module name of kallsyms is made of.
var symbolName = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

// symbol is one text symbol of kallsyms.
type symbol struct{ name, module string }

// maxKallsyms bounds the lines read: a kernel with every module has a few hundred thousand.
const maxKallsyms = 4 << 20

// Resolve finds each target's symbols in kallsyms ("ADDR TYPE NAME [MODULE]" lines): a
// function of a module is probed in that module only (another file may have a static function
// of the same name); one of the kernel image must be the only text symbol of its name there,
// or its compiler clones are. A function that is not there was inlined into its callers or
// not built; a module that is not loaded cannot have run.
func Resolve(kallsyms io.Reader, targets []Target) ([]Resolved, error) {
	want := map[string]bool{}
	for _, t := range targets {
		want[t.Function] = true
	}
	found := map[string][]symbol{} // function -> its symbols (exact names and clones)
	loaded := map[string]bool{}
	sc := bufio.NewScanner(kallsyms)
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	for n := 0; sc.Scan(); n++ {
		if n == maxKallsyms {
			return nil, fmt.Errorf("kallsyms: more than %d lines", maxKallsyms)
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		mod := ""
		if len(fields) >= 4 {
			mod = strings.Trim(fields[3], "[]")
			loaded[mod] = true
		}
		if typ := fields[1]; typ != "t" && typ != "T" {
			continue
		}
		name := fields[2]
		if !symbolName.MatchString(name) || (mod != "" && !symbolName.MatchString(mod)) {
			continue // not a name a kprobe event can take
		}
		base := name
		if m := clone.FindStringSubmatch(name); m != nil {
			base = m[1]
		}
		if want[base] {
			found[base] = append(found[base], symbol{name: name, module: mod})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kallsyms: %w", err)
	}
	out := make([]Resolved, len(targets))
	for i, t := range targets {
		out[i] = resolve(t, found[t.Function], loaded[t.Module])
	}
	return out, nil
}

// resolve picks a target's symbols among those of its name.
func resolve(t Target, syms []symbol, moduleLoaded bool) Resolved {
	r := Resolved{Target: t}
	if t.Module != "" && !moduleLoaded {
		r.Absent = t.Module + ".ko is not loaded"
		return r
	}
	inModule := func(s symbol) bool { return s.module == t.Module }
	if t.Module == "" && !slices.ContainsFunc(syms, inModule) {
		// Not in the image: a kernel whose config builds the file as a module (a --config of
		// one's own) has it in one, and any module's symbol of the name will do if it is the
		// only one.
		inModule = func(symbol) bool { return true }
	}
	var exact, clones []string
	for _, s := range syms {
		if !inModule(s) {
			continue
		}
		probe := s.name
		if s.module != "" {
			probe = s.module + ":" + s.name
		}
		if s.name == t.Function {
			exact = append(exact, probe)
		} else {
			clones = append(clones, probe)
		}
	}
	where := "the kernel or its modules"
	if t.Module != "" {
		where = t.Module + ".ko"
	}
	switch {
	case len(exact) == 1:
		r.Probes = exact
	case len(exact) > 1:
		r.NotCounted = fmt.Sprintf("%d functions named %s in %s: which is %s's is not known", len(exact), t.Function, where, t.File)
	case len(clones) > 0 && len(slices.Compact(slices.Sorted(slices.Values(clones)))) == len(clones):
		r.Probes = clones
	case len(clones) > 0:
		r.NotCounted = fmt.Sprintf("several functions named %s in %s (their compiler copies): which is %s's is not known", t.Function, where, t.File)
	default:
		r.NotCounted = fmt.Sprintf("no symbol %s in %s: inlined into its callers, or not built", t.Function, where)
	}
	return r
}

// Targets are the functions a series changes, as targets without their module.
func Targets(series []patches.Patch) []Target {
	fns, _ := patches.Functions(series)
	out := make([]Target, len(fns))
	for i, f := range fns {
		out[i] = Target{Function: f.Name, File: f.File}
	}
	return out
}
