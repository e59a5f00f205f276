package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/safefile"
)

// maxIndexSize bounds the index files of a module tree (modules.dep, .alias, ...): Debian's
// 6.12 modules.alias is about 1.5 MiB.
const maxIndexSize = 64 << 20

// BootModules are what the guest needs to mount the host root: virtio PCI and 9p over virtio.
// Their dependencies come from modules.dep.
var BootModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// Tree is a kernel's module directory: lib/modules/RELEASE of a `make modules_install
// INSTALL_MOD_PATH=DIR` tree or of an extracted Debian package.
type Tree struct {
	Dir     string              // .../lib/modules/RELEASE
	deps    map[string][]string // module name -> its file and its dependencies' files, relative to Dir
	files   map[string]string   // module name -> its file, relative to Dir
	builtin map[string]bool
	softPre map[string][]string // module -> what modules.softdep says to load before it
	aliases map[string][]string // exact alias -> modules (modules.alias)
}

// ModName is a module's name as the kernel knows it: the file name without .ko (and
// compression suffix), with '-' read as '_'.
func ModName(file string) string {
	base := filepath.Base(file)
	for _, suffix := range []string{".xz", ".zst", ".gz"} {
		base = strings.TrimSuffix(base, suffix)
	}
	return strings.ReplaceAll(strings.TrimSuffix(base, ".ko"), "-", "_")
}

// FindTree finds the module directory of release under dir, which may be the
// INSTALL_MOD_PATH (holding lib/modules/RELEASE), lib/modules, or lib/modules/RELEASE itself.
// A tree without modules.dep gets one from `depmod -b`.
func FindTree(dir, release string) (*Tree, error) {
	candidates := []string{filepath.Join(dir, "lib", "modules", release), filepath.Join(dir, release), dir}
	var found string
	for _, c := range candidates {
		if st, err := os.Stat(filepath.Join(c, "kernel")); err == nil && st.IsDir() && filepath.Base(c) == release {
			found = c
			break
		}
	}
	if found == "" {
		others, _ := filepath.Glob(filepath.Join(dir, "lib", "modules", "*"))
		hint := ""
		if len(others) > 0 {
			hint = fmt.Sprintf(" (it has %s: modules of another kernel?)", strings.Join(others, ", "))
		}
		return nil, fmt.Errorf("--modules %s: no modules of %s (looked for lib/modules/%s/kernel)%s", dir, release, release, hint)
	}
	if _, err := os.Stat(filepath.Join(found, "modules.dep")); errors.Is(err, os.ErrNotExist) {
		// Debian's package ships no modules.dep; depmod writes it (depmod -b BASE RELEASE).
		base := filepath.Dir(filepath.Dir(filepath.Dir(found)))
		if filepath.Base(filepath.Dir(found)) != "modules" || filepath.Base(filepath.Dir(filepath.Dir(found))) != "lib" {
			return nil, fmt.Errorf("--modules %s: no modules.dep in %s, and it is not in a lib/modules/%s tree that depmod -b could index", dir, found, release)
		}
		if out, err := exec.Command("depmod", "-b", base, release).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("--modules %s: no modules.dep, and depmod -b %s %s failed: %v: %s", dir, base, release, err, strings.TrimSpace(string(out)))
		}
	}
	t := &Tree{Dir: found}
	// Regular files only, of bounded size and beneath the tree: a FIFO or a device here would
	// hang the run, a link out of it would read another file.
	read := func(name string) ([]byte, error) {
		return safefile.ReadFileInTree(found, name, maxIndexSize)
	}
	dep, err := read("modules.dep")
	if err != nil {
		return nil, fmt.Errorf("--modules %s: %w", dir, err)
	}
	if err := t.readDep(bytes.NewReader(dep)); err != nil {
		return nil, fmt.Errorf("--modules %s: %s: %w", dir, filepath.Join(found, "modules.dep"), err)
	}
	for name, parse := range map[string]func(io.Reader){"modules.builtin": t.readBuiltin, "modules.softdep": t.readSoftdep, "modules.alias": t.readAliases} {
		data, err := read(name)
		switch {
		case err == nil:
			parse(bytes.NewReader(data))
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("--modules %s: %w", dir, err)
		}
	}
	return t, nil
}

// readDep reads modules.dep: "kernel/a/b.ko: kernel/c.ko kernel/d.ko", the dependencies in
// the order modprobe unloads them (the last is loaded first).
func (t *Tree) readDep(r io.Reader) error {
	t.deps, t.files = map[string][]string{}, map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		file, rest, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("line %d: no colon in %q", n, line)
		}
		name := ModName(file)
		t.files[name] = file
		t.deps[name] = strings.Fields(rest)
	}
	return sc.Err()
}

// readBuiltin reads modules.builtin: one kernel/.../name.ko per built-in module.
func (t *Tree) readBuiltin(r io.Reader) {
	t.builtin = map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if f := strings.TrimSpace(sc.Text()); f != "" {
			t.builtin[ModName(f)] = true
		}
	}
}

// readSoftdep reads modules.softdep: "softdep libcrc32c pre: crc32c" (libcrc32c asks the
// crypto API for crc32c when it loads; without a modprobe in the guest it must be there
// first).
func (t *Tree) readSoftdep(r io.Reader) {
	t.softPre = map[string][]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "softdep" {
			continue
		}
		pre := false
		for _, w := range f[2:] {
			switch w {
			case "pre:":
				pre = true
			case "post:":
				pre = false
			default:
				if pre {
					t.softPre[ModName(f[1])] = append(t.softPre[ModName(f[1])], w)
				}
			}
		}
	}
}

// readAliases reads the exact aliases of modules.alias ("alias crc32c crc32c_generic"); the
// patterns (pci:v..., with *) name hardware and are not needed here.
func (t *Tree) readAliases(r io.Reader) {
	t.aliases = map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "alias" && !strings.ContainsAny(f[1], "*?[") {
			t.aliases[f[1]] = append(t.aliases[f[1]], ModName(f[2]))
		}
	}
}

// provider is the module (or built-in) that provides name, a module name or an alias. Of
// several, the generic implementation is taken: a CPU-specific one (crc32c_intel) may refuse
// the guest's CPU.
func (t *Tree) provider(name string) (string, bool) {
	if n := ModName(name); t.files[n] != "" || t.builtin[n] {
		return n, true
	}
	cands := t.aliases[name]
	for _, c := range cands {
		if t.builtin[c] {
			return c, true
		}
	}
	for _, c := range cands {
		if strings.HasSuffix(c, "_generic") && t.files[c] != "" {
			return c, true
		}
	}
	for _, c := range cands {
		if t.files[c] != "" {
			return c, true
		}
	}
	return "", false
}

// Resolve orders the modules to load for the wanted ones, dependencies first, each once, as
// files relative to t.Dir. Built-in modules need no loading. A required module that is
// neither a module of the tree nor built in is an error naming every such module; an
// optional one is left out and named in skipped.
func (t *Tree) Resolve(required, optional []string) (files, skipped []string, err error) {
	var missing []string
	seen := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		if t.files[name] == "" {
			return // built in
		}
		for _, pre := range t.softPre[name] {
			if p, ok := t.provider(pre); ok {
				visit(p)
			}
		}
		deps := t.deps[name]
		// Each entry lists every dependency, the one to load first last.
		for i := len(deps) - 1; i >= 0; i-- {
			visit(ModName(deps[i]))
		}
		files = append(files, t.files[name])
	}
	want := func(name string, need bool) {
		name = ModName(name)
		switch {
		case t.files[name] != "":
			visit(name)
		case t.builtin[name]:
		case need:
			missing = append(missing, name)
		default:
			skipped = append(skipped, name)
		}
	}
	for _, m := range required {
		want(m, true)
	}
	for _, m := range optional {
		want(m, false)
	}
	if len(missing) > 0 {
		return nil, skipped, &MissingModulesError{Dir: t.Dir, Modules: missing}
	}
	return slices.Clip(files), skipped, nil
}

// MissingModulesError names the modules a guest needs that the kernel has neither as modules
// nor built in (exit 4: a capability is missing).
type MissingModulesError struct {
	Dir     string
	Modules []string
}

// Is makes a MissingModulesError a capability.ErrMissing.
func (e *MissingModulesError) Is(target error) bool { return target == capability.ErrMissing }

func (e *MissingModulesError) Error() string {
	return fmt.Sprintf("--modules %s: missing modules %s: neither in modules.dep nor built in (modules.builtin); build them (=m or =y in .config) and run make modules_install again", e.Dir, strings.Join(e.Modules, ", "))
}
