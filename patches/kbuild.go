package patches

import (
	"fmt"
	"github.com/nsperf/nsperf/kconfig"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Module is a loadable kernel module that a build must remake: its directory in the source,
// its name (NAME.ko) and the config symbol that builds it (without CONFIG_).
type Module struct {
	Dir    string `json:"dir"`
	Name   string `json:"name"`
	Symbol string `json:"symbol"`
}

// BuildPlan is what building a series takes: only modules, out of tree against the base's
// headers, or, when any touched file is built in or is not a module's source, a whole kernel.
type BuildPlan struct {
	Modules []Module `json:"modules,omitempty"`
	// Whole are the reasons a whole kernel must be built; empty for a modules-only build.
	Whole []string `json:"whole,omitempty"`
}

// PlanBuild says how to build the touched files under the base's config (symbol -> "y", "m"):
// each .c file's module from its directory's Kbuild makefile (obj-$(CONFIG_X) += NAME.o,
// NAME-y/NAME-objs lists), a header in a module's directory as that directory's modules, and
// anything else (a Makefile, a Kconfig, a header of include/, a built-in file) as a whole
// kernel. A file the config does not build at all is an error: the patch changes nothing that
// would run.
func PlanBuild(src fs.FS, touched []string, config map[string]string) (BuildPlan, error) {
	var plan BuildPlan
	add := func(m Module) {
		if !slices.Contains(plan.Modules, m) {
			plan.Modules = append(plan.Modules, m)
		}
	}
	for _, file := range touched {
		base, dir := path.Base(file), path.Dir(file)
		switch {
		case strings.HasPrefix(file, "Documentation/"):
			continue
		case base == "Makefile" || base == "Kbuild" || strings.HasPrefix(base, "Kconfig"):
			plan.Whole = append(plan.Whole, file+": a change to the build's own files")
			continue
		case !strings.HasSuffix(file, ".c") && !strings.HasSuffix(file, ".h"):
			plan.Whole = append(plan.Whole, file+": not a C source or header")
			continue
		}
		mk, err := readKbuild(src, dir)
		if err != nil {
			plan.Whole = append(plan.Whole, fmt.Sprintf("%s: not in a directory with a Kbuild makefile (a shared header?)", file))
			continue
		}
		if strings.HasSuffix(file, ".h") {
			mods, why := mk.headerModules(config)
			if why != "" {
				plan.Whole = append(plan.Whole, file+": "+why)
			}
			for _, m := range mods {
				add(Module{Dir: dir, Name: m.name, Symbol: m.symbol})
			}
			continue
		}
		obj := strings.TrimSuffix(base, ".c") + ".o"
		m, ok := mk.moduleOf(obj)
		if !ok {
			plan.Whole = append(plan.Whole, fmt.Sprintf("%s: %s/Makefile does not say which module builds %s", file, dir, obj))
			continue
		}
		switch m.value(config) {
		case "m":
			add(Module{Dir: dir, Name: m.name, Symbol: m.symbol})
		case "y":
			plan.Whole = append(plan.Whole, fmt.Sprintf("%s: built in (%s)", file, m.says()))
		default:
			return BuildPlan{}, fmt.Errorf("%s: the base's config does not build it (CONFIG_%s is not set): the patch changes nothing that would run", file, m.symbol)
		}
	}
	return plan, nil
}

// kbuildMakefile is what a directory's Kbuild makefile says of its objects.
type kbuildMakefile struct {
	// objs are the obj-$(CONFIG_X) entries: NAME.o by symbol (an unconditional obj-y or
	// obj-m has symbol "y" or "m").
	objs []kbuildObj
	// parts are the composite objects' lists: NAME -> its objects (NAME-y, NAME-objs,
	// NAME-$(CONFIG_Y)).
	parts map[string][]string
}

type kbuildObj struct{ name, symbol string }

// value is how the config builds the object: "y", "m" or "" (not at all).
func (o kbuildObj) value(config map[string]string) string {
	if o.symbol == "y" || o.symbol == "m" {
		return o.symbol // obj-y, obj-m
	}
	return config[o.symbol]
}

// says names what builds the object: CONFIG_X=v, or obj-y.
func (o kbuildObj) says() string {
	if o.symbol == "y" || o.symbol == "m" {
		return "obj-" + o.symbol
	}
	return kconfig.Set(o.symbol, "y")
}

var (
	objLine  = regexp.MustCompile(`^obj-(\$\(CONFIG_([A-Za-z0-9_]+)\)|y|m)\s*(?::=|\+=|=)\s*(.*)$`)
	partLine = regexp.MustCompile(`^([A-Za-z0-9_]+)-(y|objs|\$\(CONFIG_[A-Za-z0-9_]+\))\s*(?::=|\+=|=)\s*(.*)$`)
)

// readKbuild reads dir's Kbuild, else its Makefile, with continuation lines joined.
func readKbuild(src fs.FS, dir string) (kbuildMakefile, error) {
	data, err := fs.ReadFile(src, path.Join(dir, "Kbuild"))
	if err != nil {
		if data, err = fs.ReadFile(src, path.Join(dir, "Makefile")); err != nil {
			return kbuildMakefile{}, err
		}
	}
	mk := kbuildMakefile{parts: map[string][]string{}}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if m := objLine.FindStringSubmatch(line); m != nil {
			symbol := m[2]
			if symbol == "" {
				symbol = m[1]
			}
			for _, o := range strings.Fields(m[3]) {
				if strings.HasSuffix(o, ".o") {
					mk.objs = append(mk.objs, kbuildObj{strings.TrimSuffix(o, ".o"), symbol})
				}
			}
			continue
		}
		if m := partLine.FindStringSubmatch(line); m != nil && m[1] != "obj" && m[1] != "ccflags" && m[1] != "subdir" {
			mk.parts[m[1]] = append(mk.parts[m[1]], strings.Fields(m[3])...)
		}
	}
	return mk, nil
}

// moduleOf finds the object that contains obj: itself, or the composite that lists it.
func (mk kbuildMakefile) moduleOf(obj string) (kbuildObj, bool) {
	name := strings.TrimSuffix(obj, ".o")
	for _, o := range mk.objs {
		if o.name == name {
			return o, true
		}
	}
	for _, o := range mk.objs {
		if slices.Contains(mk.parts[o.name], obj) {
			return o, true
		}
	}
	return kbuildObj{}, false
}

// headerModules are the modules of a directory whose header changed: all of them when the
// directory builds only modules, else nothing and the reason a whole kernel is needed.
func (mk kbuildMakefile) headerModules(config map[string]string) ([]kbuildObj, string) {
	var out []kbuildObj
	for _, o := range mk.objs {
		switch o.value(config) {
		case "y":
			return nil, fmt.Sprintf("a header of a directory with built-in objects (%s.o)", o.name)
		case "m":
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, "a header of a directory that builds no module"
	}
	return out, ""
}

// ModuleOf is the module the config builds a .c file into, as the kernel names it
// (openvswitch; a "-" of the object's name is "_"), or "" when the file is built in or its
// directory's makefile does not say.
func ModuleOf(src fs.FS, file string, config map[string]string) string {
	mk, err := readKbuild(src, path.Dir(file))
	if err != nil {
		return ""
	}
	m, ok := mk.moduleOf(strings.TrimSuffix(path.Base(file), ".c") + ".o")
	if !ok || m.value(config) != "m" {
		return ""
	}
	return strings.ReplaceAll(m.name, "-", "_")
}
