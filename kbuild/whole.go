package kbuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/sandbox"
	"github.com/nsperf/nsperf/kconfig"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// ConfigMinimal names the config of a whole kernel built small: `make tinyconfig`, then
// vm.MinimalFragment merged in (scripts/kconfig/merge_config.sh -m), then `make
// olddefconfig`. Everything it needs is built in: the kernel has no modules.
const ConfigMinimal = "minimal"

// wholeTree is a lasting build directory of one base, config and compiler, in
// cache/trees/KEY: src is the base's source as hard links (a patched file replaces its link,
// so the fetched source is never written) and obj its objects (make O=obj). The base and the
// patched build of a series, and the builds of later series on the same base, reuse its
// objects: make recompiles only what changed since the base's build, and ccache what it saw
// before in any tree.
//
// No build writes obj or ccache's directory as the next build finds them, but the base's
// own: every make runs on an overlay of obj (a phase) whose upper directory takes what it
// writes. A build of the base as it is (no patched file) is the tree's, and its upper
// directory is merged into obj; a patched or reverted build's is thrown away once its kernel
// is copied out, so that nothing one patch's build writes (a planted object) reaches
// another's kernels. ccache adds to its cache only in builds of Debian's packaged source as
// it is with the minimal config, and reads it in the others (CCACHE_READONLY). trees/ is
// root's alone: the objects are nobody's, who built them, and no one else's to reach.
type wholeTree struct {
	dir, src, obj string
	// cache is the kernel cache (hidden from the build but for the tree), ccache ccache's
	// directory in it; extraWrite more directories the next run writes (modules_install's).
	cache, ccache string
	extraWrite    []string
	// packaged: the base is Debian's packaged source (fetched with apt), whose build as it is
	// with the minimal config may add to ccache's cache.
	packaged bool
	// journal lists the files of src a patched build replaced, until they are restored: a
	// build that was killed leaves it behind, and the next one restores them first.
	journal string
	cc      string // the compiler, after "ccache " when ccache is installed
	env     []string
}

// configInput is what decides a whole kernel's config, hashed into the cache key before the
// config is made: the minimal fragment's text (for req.Scenarios, else every shipped one), or
// the bytes of the --config file.
func configInput(req BuildRequest) (string, []byte, error) {
	if req.Config == ConfigMinimal {
		ss := req.Scenarios
		if len(ss) == 0 {
			shipped, err := scenarios.Shipped()
			if err != nil {
				return "", nil, err
			}
			ss = shipped
		}
		on, off := vm.MinimalFragment(ss)
		var frag bytes.Buffer
		kconfig.WriteFragment(&frag, vm.Groups(on), "what a kernel built small leaves out", off)
		return ConfigMinimal, frag.Bytes(), nil
	}
	data := req.configFile
	if data == nil {
		var err error
		if data, err = readConfigFile(req.Config); err != nil {
			return "", nil, err
		}
	}
	return req.Config, data, nil
}

// readConfigFile reads a --config file: regular, bounded, with a CONFIG_ line.
func readConfigFile(path string) ([]byte, error) {
	data, err := safefile.ReadRegular(path, kconfig.MaxSize)
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--config: %w", err)}
	}
	if !bytes.Contains(data, []byte("CONFIG_")) {
		return nil, inputerr.Error{Err: fmt.Errorf("--config %s: not a kernel config (no CONFIG_ line); give a .config or %s", path, ConfigMinimal)}
	}
	return data, nil
}

// openWholeTree finds or makes the tree of the base, config and compiler in cache/trees,
// and restores what a killed build left patched in it.
func openWholeTree(ctx context.Context, cache string, b *base, m *Manifest, progress io.Writer) (*wholeTree, error) {
	trees := filepath.Join(cache, "trees")
	if err := os.MkdirAll(trees, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(trees, 0o700); err != nil { // made 0755 by an nsperf before this one
		return nil, err
	}
	dir := filepath.Join(trees, treeKey(b, m))
	cc := strings.Fields(m.Compiler)[0]
	t := &wholeTree{dir: dir, src: filepath.Join(dir, "src"), obj: filepath.Join(dir, "obj"), journal: filepath.Join(dir, "patched-files.json"), cc: cc,
		cache: cache, ccache: filepath.Join(trees, "ccache"), packaged: b.Packaged && m.Config == ConfigMinimal,
		env: []string{"CCACHE_DIR=" + filepath.Join(trees, "ccache"), "KBUILD_BUILD_USER=nsperf", "KBUILD_BUILD_HOST=nsperf"}}
	if _, err := exec.LookPath("ccache"); err == nil {
		t.cc = "ccache " + cc
	}
	for _, d := range []string{t.obj, t.ccache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(t.src, "Makefile")); err != nil {
		fmt.Fprintf(progress, "build: linking the base's source into %s\n", t.src)
		tmp, err := tempBeside(t.src)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := linkSource(b.Tree, tmp, b.Files); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, t.src); err != nil {
			return nil, err
		}
	}
	return t, t.restore(b)
}

// treeKey names the lasting tree of a base, config and compiler.
func treeKey(b *base, m *Manifest) string {
	h := sha256.New()
	// 2: the objects are the base's build alone (trees of nsperf before it hold patched builds').
	fmt.Fprintf(h, "nsperf tree 2\n%s\n%s\n%s\n", b.Identity, m.configKey, m.Compiler)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// linkSource copies a source tree as hard links, its symlinks as symlinks (`cp -al`): all
// of it, or the files listed.
func linkSource(src, dst string, files []string) error {
	if files != nil {
		return linkFiles(src, dst, files)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		return linkOrCopy(p, target)
	})
}

// linkFiles links the listed files of src (a git tree's tracked files) into dst.
func linkFiles(src, dst string, files []string) error {
	for _, rel := range files {
		p, target := filepath.Join(src, rel), filepath.Join(dst, rel)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			var link string
			if link, err = os.Readlink(p); err == nil {
				err = os.Symlink(link, target)
			}
		case st.Mode().IsRegular():
			err = linkOrCopy(p, target)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// patch replaces the series' files in src (nil: the series deletes it), journalled first.
// Each is a new file, never a write through the link to the fetched source. src is reached
// through an os.Root: a link in the tree that leads out of it is an error, never followed.
func (t *wholeTree) patch(files map[string][]byte, modes map[string]fs.FileMode) error {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	data, _ := json.Marshal(paths)
	if err := os.WriteFile(t.journal, data, 0o644); err != nil {
		return err
	}
	src, err := os.OpenRoot(t.src)
	if err != nil {
		return err
	}
	defer src.Close()
	for p, text := range files {
		mode := fileMode(modes, p, filepath.Join(t.src, p)) // the series', else the linked file's own
		if err := src.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("patch %s: %w", p, err)
		}
		if text == nil {
			continue
		}
		if err := src.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("patch %s: %w", p, err)
		}
		if err := src.WriteFile(p, text, mode); err != nil {
			return fmt.Errorf("patch %s: %w", p, err)
		}
	}
	return nil
}

// restore puts back the base's version of every file the journal names, as a copy written
// now: its time is newer than the patched file's objects, so the next make recompiles them
// (a hard link would carry the source's old time, and make would keep the patched objects).
// The journal is a file of the cache, not trusted further than that: a path in it that is not
// inside the tree is refused, and both trees are reached through an os.Root.
func (t *wholeTree) restore(b *base) error {
	data, err := safefile.ReadRegular(t.journal, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var paths []string
	if err := json.Unmarshal(data, &paths); err != nil {
		return fmt.Errorf("%s: %w (remove %s: its objects are then built anew)", t.journal, err, t.dir)
	}
	for _, p := range paths {
		if !filepath.IsLocal(p) {
			return fmt.Errorf("%s names %q, not a path inside the tree (remove %s: its objects are then built anew)", t.journal, p, t.dir)
		}
	}
	src, err := os.OpenRoot(t.src)
	if err != nil {
		return err
	}
	defer src.Close()
	fetched, err := os.OpenRoot(b.Tree)
	if err != nil {
		return err
	}
	defer fetched.Close()
	now := time.Now()
	for _, p := range paths {
		if err := src.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore %s: %w", p, err)
		}
		orig, err := fetched.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the series created it
		}
		if err != nil {
			return fmt.Errorf("restore %s: %w", p, err)
		}
		mode := fs.FileMode(0o644)
		if fi, err := fetched.Stat(p); err == nil && fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755 // a script the build runs
		}
		if err := src.WriteFile(p, orig, mode); err != nil {
			return fmt.Errorf("restore %s: %w", p, err)
		}
		if err := src.Chtimes(p, now, now); err != nil {
			return err
		}
	}
	return os.Remove(t.journal)
}

// configure makes obj/.config once per tree: the minimal config (make tinyconfig, the fragment
// merged, make olddefconfig), or the --config file completed by olddefconfig. Every option of
// the minimal fragment must survive olddefconfig, which drops an option whose dependencies
// are not met.
func (t *wholeTree) configure(ctx context.Context, m *Manifest, input []byte, logs, tmp string) error {
	done := filepath.Join(t.dir, "configured")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	log := filepath.Join(logs, "config.log")
	p := t.newPhase(tmp, "config", true)
	defer p.discard()
	if m.Config == ConfigMinimal {
		frag := filepath.Join(t.dir, "minimal.config")
		if err := os.WriteFile(frag, input, 0o644); err != nil {
			return err
		}
		if err := t.make(ctx, p, log, "config", "tinyconfig"); err != nil {
			return err
		}
		// merge_config.sh -m: merge only, the olddefconfig below completes it.
		if err := t.run(ctx, p, log, "config", filepath.Join(t.src, "scripts", "kconfig", "merge_config.sh"), "-m", "-O", t.obj, filepath.Join(t.obj, ".config"), frag); err != nil {
			return err
		}
	} else if err := os.WriteFile(filepath.Join(t.obj, ".config"), input, 0o644); err != nil {
		return err
	}
	if err := t.make(ctx, p, log, "config", "olddefconfig"); err != nil {
		return err
	}
	if err := t.keep(p); err != nil {
		return err
	}
	if m.Config == ConfigMinimal {
		got, err := safefile.ReadRegular(filepath.Join(t.obj, ".config"), kconfig.MaxSize)
		if err != nil {
			return err
		}
		cfg := kconfig.Parse(".config", got)
		var dropped []string
		for name, value := range kconfig.Parse("fragment", input).Values() {
			if value == "y" && !cfg.Has(name) {
				dropped = append(dropped, "CONFIG_"+name)
			}
		}
		slices.Sort(dropped)
		if len(dropped) > 0 {
			return fmt.Errorf("the minimal config lost %s in make olddefconfig (their dependencies are not met in %s); see %s", strings.Join(dropped, ", "), m.Source, log)
		}
	}
	return os.WriteFile(done, nil, 0o644)
}

// make runs make in the tree (make -C src O=obj CC=... TARGET...), appending to log.
func (t *wholeTree) make(ctx context.Context, p *phase, log, label string, targets ...string) error {
	args := append([]string{"-C", t.src, "O=" + t.obj, "CC=" + t.cc, fmt.Sprintf("-j%d", runtime.NumCPU())}, targets...)
	return t.run(ctx, p, log, label, "make", args...)
}

// phase is one build's view of the tree's objects: obj under an overlay whose upper
// directory, in the build's own directory, takes everything the build writes there.
type phase struct {
	dir string // upper/ and work/
	// compilerCache: ccache may add to its cache (the packaged base as it is), else it only
	// reads it.
	compilerCache bool
}

// newPhase is the phase LABEL of a build whose directory is tmp (root's alone: the
// overlay's upper directory is reached only through the overlay).
func (t *wholeTree) newPhase(tmp, label string, asItIs bool) *phase {
	return &phase{dir: filepath.Join(tmp, "phase-"+label), compilerCache: asItIs && t.packaged}
}

func (p *phase) overlay(obj string) *sandbox.Overlay {
	return &sandbox.Overlay{Lower: obj, Upper: filepath.Join(p.dir, "upper"), Work: filepath.Join(p.dir, "work")}
}

// discard throws away what the phase wrote.
func (p *phase) discard() error { return os.RemoveAll(p.dir) }

// keep merges what a build of the base as it is wrote into the tree's objects, for the
// builds after it.
func (t *wholeTree) keep(p *phase) error {
	if err := sandbox.MergeUpper(p.overlay(t.obj).Upper, t.obj); err != nil {
		return fmt.Errorf("keep the base's objects in %s: %w", t.obj, err)
	}
	return p.discard()
}

// objFile is where the phase's view of the object rel is: in its upper directory when the
// phase wrote it, else in the tree's objects.
func (t *wholeTree) objFile(p *phase, rel string) string {
	up := filepath.Join(p.overlay(t.obj).Upper, rel)
	if fi, err := os.Lstat(up); err == nil && !sandbox.Whiteout(fi) {
		return up
	}
	return filepath.Join(t.obj, rel)
}

// sandbox is the view a program of the tree runs in (package sandbox), as nobody: the
// tree's directory read-only, its objects through the phase's overlay, ccache's directory
// (read-only unless the phase may add to it) and more directories read-write.
func (t *wholeTree) sandbox(p *phase, write ...string) sandbox.Spec {
	// Dir: merge_config.sh makes its temporary files in the working directory.
	spec := sandbox.Spec{Hide: []string{t.cache}, Read: []string{t.dir}, Write: write, Overlay: p.overlay(t.obj), Dir: t.obj, Env: t.env}
	if p.compilerCache {
		spec.CompilerCache = t.ccache
	} else {
		// ccache's temporary files go to the sandbox's /tmp, not its read-only directory.
		spec.Read = append(spec.Read, t.ccache)
		spec.Env = append(slices.Clone(t.env), "CCACHE_READONLY=1", "CCACHE_TEMPDIR=/tmp/ccache")
	}
	return spec
}

// run runs a build program, its output appended to log; a failure is a BuildError with the
// compiler's first error. On interruption make gets SIGINT, as from a terminal, so that it
// deletes the targets it was writing: a cut object must not look built to the next make.
func (t *wholeTree) run(ctx context.Context, p *phase, log, label, name string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "$ %s %s\n", name, strings.Join(args, " "))
	cmd, err := sandbox.Command(ctx, t.sandbox(p, t.extraWrite...), append([]string{name}, args...)...)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log)
		return &BuildError{Label: label, First: firstError(out, err), Log: log}
	}
	return nil
}

// buildWhole builds the base and the patched kernel in the tree, each copied out as a small
// built tree (arch/x86/boot/bzImage and .config, what --kernel DIR reads) into tmp/LABEL, with
// its modules installed into tmp/LABEL-modules when the config has any. The kernel of the
// base as it is (the base, or for a series in the base the patched one) is built first and
// its objects kept in the tree; the other's are thrown away.
func (m *Manifest) buildWhole(ctx context.Context, t *wholeTree, b *base, tmp string, progress io.Writer) error {
	labels := []string{"base", "patched"}
	if m.files["base"] != nil && m.files["patched"] == nil {
		labels = []string{"patched", "base"}
	}
	for _, label := range labels {
		start := time.Now()
		log := filepath.Join(m.Dir+".logs", label+".log")
		files := m.files[label]
		p := t.newPhase(tmp, label, files == nil)
		if files != nil {
			if err := t.patch(files, m.modes[label]); err != nil {
				return err
			}
		}
		fmt.Fprintf(progress, "build: %s: make bzImage in %s (log: %s)\n", label, t.obj, log)
		stop := t.progress(log, label, progress)
		err := t.make(ctx, p, log, label, "bzImage", "modules")
		stop()
		if err == nil && files == nil {
			err = t.builtTouched(p, m.Touched)
		}
		if err == nil {
			err = t.collect(ctx, p, filepath.Join(tmp, label), log, label)
		}
		if files != nil {
			if rerr := t.restore(b); rerr != nil && err == nil {
				err = rerr
			}
		}
		if err == nil && files == nil {
			err = t.keep(p)
		}
		if derr := p.discard(); derr != nil && err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		k := BuiltKernel{Label: label, Image: filepath.Join(m.Dir, label), BuildSeconds: time.Since(start).Seconds()}
		if _, err := os.Stat(filepath.Join(tmp, label+"-modules")); err == nil {
			k.Modules = filepath.Join(m.Dir, label+"-modules")
		}
		m.Kernels = append(m.Kernels, k)
	}
	slices.SortFunc(m.Kernels, func(a, b BuiltKernel) int { return strings.Compare(a.Label, b.Label) }) // base, patched
	return nil
}

// builtTouched checks the config compiles the series' C files: a patch to a file the config
// leaves out would be measured as no change at all.
func (t *wholeTree) builtTouched(p *phase, touched []string) error {
	var notBuilt []string
	for _, f := range touched {
		if !strings.HasSuffix(f, ".c") {
			continue
		}
		if _, err := os.Stat(t.objFile(p, strings.TrimSuffix(f, ".c")+".o")); err != nil {
			notBuilt = append(notBuilt, f)
		}
	}
	if len(notBuilt) > 0 {
		return inputerr.Error{Err: fmt.Errorf("the config does not build %s: the patched kernel would not differ there; give --config with a config that builds it", strings.Join(notBuilt, ", "))}
	}
	return nil
}

// collect copies the image and the config out of the tree into dst, and installs the
// modules (make modules_install) into dst-modules when the config builds any.
func (t *wholeTree) collect(ctx context.Context, p *phase, dst, log, label string) error {
	if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(vm.BuildTreeImage)), 0o755); err != nil {
		return err
	}
	for _, f := range []string{vm.BuildTreeImage, ".config"} {
		if err := copyFile(t.objFile(p, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	cfg, err := safefile.ReadRegular(t.objFile(p, ".config"), kconfig.MaxSize)
	if err != nil {
		return err
	}
	if !kconfig.Parse(".config", cfg).Has("MODULES") {
		return nil
	}
	if err := os.MkdirAll(dst+"-modules", 0o755); err != nil {
		return err
	}
	t.extraWrite = []string{dst + "-modules"}
	defer func() { t.extraWrite = nil }()
	return t.make(ctx, p, log, label, "modules_install", "INSTALL_MOD_PATH="+dst+"-modules", "INSTALL_MOD_STRIP=1")
}

// progress prints, every half minute, how many files make has compiled so far (its "  CC"
// lines in the log), until stop is called.
func (t *wholeTree) progress(log, label string, w io.Writer) (stop func()) {
	done := make(chan struct{})
	start := time.Now()
	go func() {
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(w, "build: %s: %d files compiled in %s\n", label, countCompiled(log), time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// countCompiled counts make's "  CC      path.o" lines in a log.
func countCompiled(log string) int {
	f, err := os.Open(log)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "  CC ") {
			n++
		}
	}
	return n
}
