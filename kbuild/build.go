// Package kbuild builds the kernels of a patch: the base (Debian's 6.12 source fetched with its
// image and headers, a tree, or a tarball) as it is and with the series applied, as modules
// out of tree against the base's headers or as whole kernels in a lasting tree with ccache,
// cached by base, patches, config and compiler, each with how it was built (provenance).
// Running the kernels is package runner/kernels'; a kernel config is read by package kconfig.
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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/sandbox"
	"github.com/nsperf/nsperf/kconfig"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// BuildRequest is what `nsperf build` (and `run --patch`) is asked to build.
type BuildRequest struct {
	Patches []string // patch files (mbox, format-patch, plain diff), applied in this order
	// Inputs are the patch files' bytes by name where the caller read them already (reproduce
	// reads its message once); the others are read here.
	Inputs map[string][]byte
	Source string // DebianSource (default) or a directory holding a fetched base
	Fuzz   int    // context lines a hunk may miss at each end
	// Config makes the build a whole kernel's with this config: ConfigMinimal or a .config
	// file. Empty: modules only where the base's config builds every touched file as a
	// module, else a whole kernel with ConfigMinimal.
	Config string
	// Scenarios are what the minimal config must run (default: every shipped scenario).
	Scenarios []*scenarios.Scenario
	// Cache holds the fetched sources and the builds (default CacheDir()).
	Cache    string
	Progress io.Writer
	// configFile is the --config file's bytes, read with the patches before anything else.
	configFile []byte
}

// CacheDir is where builds and fetched sources are kept: $NSPERF_KERNEL_CACHE, else
// /var/cache/nsperf/kernels.
func CacheDir() string {
	if d := os.Getenv("NSPERF_KERNEL_CACHE"); d != "" {
		return d
	}
	return "/var/cache/nsperf/kernels"
}

// ManifestVersion is the version of Manifest's JSON.
// 2: the files a build made are recorded with their sha256 (Files), and checked on every use.
const ManifestVersion = 2

// Manifest is what a build made, manifest.json in its directory: the two kernels as
// --kernel/--modules pairs and how they came to be.
type Manifest struct {
	Version int `json:"version"`
	// Build is how the pair was built, as each kernel's result records it. Its Mode is
	// "modules": only Modules were rebuilt, out of tree against the base's headers, into
	// copies of its module tree; both kernels boot the base's image. Or "whole": both kernels
	// were built whole with Config (ConfigMinimal or the file given), each a built tree
	// (bzImage and .config). Its Source is the base's identity.
	results.Build
	Release  string           `json:"release"` // uname -r of both kernels
	Modules  []patches.Module `json:"modules"`
	Touched  []string         `json:"touched"` // the files the series changes
	Make     []string         `json:"make"`    // the command both builds ran, with M= the module's copy
	Kernels  []BuiltKernel    `json:"kernels"`
	Warnings []string         `json:"warnings,omitempty"`
	// Files are the sha256 of each file the build made in its directory (not the links to
	// the fetched base's files a module tree is made of), by path in it: a cached build is
	// used only when they are unchanged, and everything in it is root's (trusted).
	Files map[string]string `json:"files"`
	// Cached is set when the build was found in the cache, not made now (not stored).
	Cached bool   `json:"-"`
	Dir    string `json:"-"`
	// Count are the functions the series changes, each with the module it is built into,
	// whose calls a guest counts (not stored: taken from the series on every call).
	Count []coverage.Target `json:"-"`
	// CountTruncated: the series changes more functions than Count holds.
	CountTruncated bool `json:"-"`
	// Tree is the base's source tree (not stored: found on every call), from which the
	// programs of the kernel's selftests a tool runs are built (Selftest).
	Tree string `json:"-"`
	// configKey is what the cache key takes of the config: the base config's sha256 for
	// modules, the whole build's config input's (the fragment or the file) before make.
	configKey   string
	configInput []byte
	// files are what each kernel builds with, by label: the patched files, or for a series
	// in the base, its revert's (nil: the base as it is).
	files map[string]map[string][]byte
	// modes are the modes the series gives files, by label and path (0: the base's, 0644).
	modes map[string]map[string]fs.FileMode
}

// fileMode is the mode a patched file is written with: the series', else 0644 (a source
// file's), or the base's own when it is there.
func fileMode(modes map[string]fs.FileMode, path, base string) fs.FileMode {
	if m := modes[path]; m != 0 {
		return m
	}
	if fi, err := os.Stat(base); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return 0o644
}

// Mode values.
const (
	ModeModules = "modules"
	ModeWhole   = "whole"
)

// BuiltKernel is one of the two kernels.
type BuiltKernel struct {
	Label        string  `json:"label"` // base, patched
	Image        string  `json:"image"`
	Modules      string  `json:"modules"`
	BuildSeconds float64 `json:"build_seconds"`
}

// BuildError is a build that failed: the compiler's first error and the log (exit 3).
type BuildError struct {
	Label, First, Log string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build of %s failed: %s (log: %s)", e.Label, e.First, e.Log)
}

// Build builds the base and the patched kernel, or finds them in the cache: the patches are
// read and checked against the base's source first, with nothing written.
func Build(ctx context.Context, req BuildRequest) (*Manifest, error) {
	if req.Cache == "" {
		req.Cache = CacheDir()
	}
	if req.Progress == nil {
		req.Progress = io.Discard
	}
	if req.Fuzz < 0 {
		return nil, inputerr.Error{Err: fmt.Errorf("--fuzz %d: want 0 or more context lines", req.Fuzz)}
	}
	if _, err := sandbox.DefaultLimits(); err != nil { // NSPERF_BUILD_TIMEOUT, _SPACE: before anything is fetched
		return nil, inputerr.Error{Err: err}
	}
	series, err := readSeries(req.Patches, req.Inputs)
	if err != nil {
		return nil, err
	}
	if req.Config != "" && req.Config != ConfigMinimal {
		if req.configFile, err = readConfigFile(req.Config); err != nil {
			return nil, err
		}
	}
	b, err := resolveBase(ctx, req)
	if err != nil {
		return nil, err
	}
	// The tree is read through an os.Root: a link in a stranger's tree that leads out of it
	// (net -> /etc) is an error, never a way to read, or patch, the host's files.
	treeRoot, err := os.OpenRoot(b.Tree)
	if err != nil {
		return nil, err
	}
	defer treeRoot.Close()
	tree := treeRoot.FS()
	checked, err := patches.Check(tree, series, patches.Options{Fuzz: req.Fuzz})
	if err != nil {
		return nil, inputerr.Error{Err: err}
	}
	for _, w := range checked.Warnings {
		fmt.Fprintln(req.Progress, "warning: "+w)
	}
	files, err := sides(tree, series, checked, req, b.Identity)
	if err != nil {
		return nil, err
	}
	plan, config, err := planBuild(tree, series, b)
	if err != nil {
		return nil, err
	}
	m := newManifest(b, series, files.checked, plan, config, req)
	m.Applied, m.files, m.modes = files.applied, files.byLabel, files.modes
	if err := m.setCompiler(b); err != nil {
		return nil, err
	}
	if req.Config != "" || len(plan.Whole) > 0 {
		why := "--config " + req.Config
		if req.Config == "" {
			req.Config, why = ConfigMinimal, strings.Join(plan.Whole, "; ")
		}
		if err := m.setWhole(req); err != nil {
			return nil, err
		}
		fmt.Fprintf(req.Progress, "build: whole kernels, config %s: %s\n", m.Config, why)
	}
	m.Count, m.CountTruncated = countTargets(tree, series, m.Mode, kconfig.Parse(b.Config, config).Values())
	m.Key = m.cacheKey()
	m.Dir = filepath.Join(req.Cache, "builds", m.Key)
	unlock, err := lockFor(ctx, req.Cache, "build-"+m.Key, req.Progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cached, err := m.fromCache(req, b); cached != nil || err != nil {
		return cached, err
	}
	m.Tree = b.Tree
	return m, m.build(ctx, b, req.Cache, checked, req.Progress)
}

// fromCache is the build of m's key in the cache, when it is one nsperf made and left as it
// was (trusted); nil otherwise, with whatever stood in its place removed and said (the key's
// lock is held).
func (m *Manifest) fromCache(req BuildRequest, b *base) (*Manifest, error) {
	cached, err := readManifest(m.Dir)
	if err == nil {
		err = cached.trusted(m, req.Cache)
	}
	if err == nil {
		cached.Cached, cached.Dir, cached.Touched = true, m.Dir, m.Touched
		cached.Count, cached.CountTruncated, cached.Tree = m.Count, m.CountTruncated, b.Tree
		return cached, nil
	}
	if _, statErr := os.Lstat(m.Dir); statErr == nil {
		// Not a build this nsperf finished, or changed since (a foreign or damaged
		// manifest.json, a file swapped): its paths are never used, and it makes way.
		fmt.Fprintf(req.Progress, "build: %s is not a build of this key (%v); building it again\n", m.Dir, err)
		if err := os.RemoveAll(m.Dir); err != nil {
			return nil, fmt.Errorf("build: remove the untrusted %s: %w", m.Dir, err)
		}
	}
	return nil, nil
}

// planBuild is how the series is built on the base: modules where the base's config (read
// here, and returned) builds every touched file as one, else whole kernels; a tree as
// --source, without a packaged module tree, is always built whole.
func planBuild(tree fs.FS, series []patches.Patch, b *base) (patches.BuildPlan, []byte, error) {
	if b.Headers == "" {
		return patches.BuildPlan{Whole: []string{"--source is a tree, without the packaged image, headers and module tree that modules are built against"}}, nil, nil
	}
	config, err := safefile.ReadRegular(b.Config, kconfig.MaxSize)
	if err != nil {
		return patches.BuildPlan{}, nil, inputerr.Error{Err: fmt.Errorf("the base has no config: %w", err)}
	}
	plan, err := patches.PlanBuild(tree, patches.Touched(series), kconfig.Parse(b.Config, config).Values())
	if err != nil {
		return patches.BuildPlan{}, nil, inputerr.Error{Err: err}
	}
	return plan, config, nil
}

// countTargets are the functions the series changes, with the module the base's config builds
// each into in a modules build (a whole kernel built small has them built in).
func countTargets(src fs.FS, series []patches.Patch, mode string, config map[string]string) ([]coverage.Target, bool) {
	_, truncated := patches.Functions(series)
	out := coverage.Targets(series)
	for i := range out {
		if mode == ModeModules {
			out[i].Module = patches.ModuleOf(src, out[i].File, config)
		}
	}
	return out, truncated
}

// buildSides is what the two kernels are built with.
type buildSides struct {
	checked *patches.Result              // how the hunks applied: forward, or reverted
	applied string                       // "" (forward) or AppliedReverse
	byLabel map[string]map[string][]byte // base and patched: the files each builds with
	// modes are the modes the series gives those files, by label (git's new file mode and
	// new mode: 0644 or 0755).
	modes map[string]map[string]fs.FileMode
}

// AppliedReverse marks a build of a series the base has already: kernel A (base) is the base
// with the series reverted, kernel B (patched) the base as it is.
const AppliedReverse = "reverse"

// sides checks how the series goes onto the base: forward (base as it is against patched),
// or, for a series the base has already (a merged commit), in reverse (the base with it
// reverted against the base as it is: `git apply -R`). Forward wins where it applies
// exactly; a revert that applies with less fuzz than the forward needs wins over it (fuzz can
// put a hunk of a merged commit a second time somewhere near). A series partly in the base is
// refused with the hunks that are there named.
func sides(src fs.FS, series []patches.Patch, checked *patches.Result, req BuildRequest, identity string) (buildSides, error) {
	forward := buildSides{checked: checked, byLabel: map[string]map[string][]byte{"patched": checked.Files}, modes: map[string]map[string]fs.FileMode{"patched": checked.Modes}}
	err := checked.Err()
	if err == nil && totalFuzz(checked) == 0 {
		return forward, nil
	}
	rev, rerr := patches.Check(src, patches.Reverse(series), patches.Options{Fuzz: req.Fuzz})
	if rerr != nil {
		return buildSides{}, inputerr.Error{Err: rerr}
	}
	if rev.Err() == nil && (err != nil || totalFuzz(rev) < totalFuzz(checked)) {
		fmt.Fprintf(req.Progress, "build: the series is in %s already (it applies in reverse): kernel A is the base with it reverted, kernel B the base as it is\n", identity)
		return buildSides{checked: rev, applied: AppliedReverse, byLabel: map[string]map[string][]byte{"base": rev.Files}, modes: map[string]map[string]fs.FileMode{"base": rev.Modes}}, nil
	}
	if err == nil {
		return forward, nil
	}
	switch whole, in := checked.InBase(); {
	case whole:
		return buildSides{}, inputerr.Error{Err: fmt.Errorf("the series is in %s already (it applies in reverse), but its revert does not apply (--fuzz N accepts context lines missing at each end):\n%w", identity, rev.Err())}
	case len(in) > 0:
		return buildSides{}, inputerr.Error{Err: fmt.Errorf("%s: %w", identity, patches.PartlyInBase(in, err))}
	}
	return buildSides{}, inputerr.Error{Err: fmt.Errorf("the patches do not apply to %s:\n%w", identity, err)}
}

// totalFuzz is the context lines fuzz left out over a check's hunks.
func totalFuzz(r *patches.Result) int {
	n := 0
	for _, a := range r.Applied {
		n += a.Fuzz
	}
	return n
}

// lockFor holds one thing of the cache for one nsperf process at a time: the fetch of one
// base (source-NAME), the build of one key (build-KEY), the lasting tree of one base and config
// (tree-KEY). Two builds of one key, or two fetches of one base, would otherwise race to
// rename their work into place, and two builds in one tree patch each other's files; builds
// of other keys go on meanwhile (a whole kernel's build does not hold up a module build of
// another series). The lock is a file of cache/locks held with flock(2): the kernel lets it go
// when its process dies. The wait says so and ends with ctx (^C).
func lockFor(ctx context.Context, cache, name string, progress io.Writer) (func(), error) {
	dir := filepath.Join(cache, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	for said := false; ; said = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("cache lock %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(progress, "build: waiting for another nsperf process using %s (lock %s)\n", name, path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("build: waiting for another nsperf process using %s (lock %s): %w", name, path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// lockPoll is how often a process waiting for a lock of the cache tries it.
const lockPoll = 250 * time.Millisecond

// readSeries reads every patch file, in order.
func readSeries(files []string, inputs map[string][]byte) ([]patches.Patch, error) {
	if len(files) == 0 {
		return nil, inputerr.Error{Err: errors.New("no patch given: --patch FILE (an mbox, git format-patch output or a diff)")}
	}
	var series []patches.Patch
	for _, f := range files {
		// Bounded and regular: /dev/zero, a FIFO or a 10 GB file is refused at once.
		data, ok := inputs[f]
		var err error
		if !ok {
			data, err = safefile.ReadRegular(f, patches.MaxInputSize)
		}
		if err != nil {
			return nil, inputerr.Error{Err: fmt.Errorf("--patch: %w (a patch series is a regular file of at most %s)", err, safefile.Size(patches.MaxInputSize))}
		}
		ps, err := patches.Read(f, data)
		if err != nil {
			return nil, inputerr.Error{Err: err}
		}
		series = append(series, ps...)
	}
	return series, nil
}

// resolveBase finds or fetches the base kernel the request names.
func resolveBase(ctx context.Context, req BuildRequest) (*base, error) {
	switch src := req.Source; {
	case src == "" || src == DebianSource:
		return debianBase(ctx, req.Cache, req.Progress)
	case strings.HasPrefix(src, "debian:"):
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: nsperf fetches %s only", src, DebianSource)}
	default:
		return treeBase(ctx, req.Cache, src, req.Progress)
	}
}

func newManifest(b *base, series []patches.Patch, checked *patches.Result, plan patches.BuildPlan, config []byte, req BuildRequest) *Manifest {
	sum := sha256.Sum256(config)
	m := &Manifest{Version: ManifestVersion, Build: results.Build{Source: b.Identity, Mode: ModeModules, ConfigSHA256: hex.EncodeToString(sum[:])},
		Release: b.Release, Modules: plan.Modules, Touched: patches.Touched(series), Warnings: checked.Warnings}
	m.configKey = m.ConfigSHA256
	for i, p := range series {
		if !p.HasDiff() {
			continue
		}
		pp := results.BuildPatch{Input: p.Input, Subject: p.Subject, Author: p.Author, MessageID: p.MessageID, SHA256: p.SHA256}
		for _, a := range checked.Applied {
			if a.Patch == i {
				pp.Applied = append(pp.Applied, fmt.Sprintf("%s hunk %d: %s", a.File, a.Hunk, a.How()))
			}
		}
		m.Patches = append(m.Patches, pp)
	}
	return m
}

// setCompiler takes the compiler the base was built with (CONFIG_CC_VERSION_TEXT of its
// headers), which both builds use, and checks it is installed as that version.
func (m *Manifest) setCompiler(b *base) error {
	if b.Headers == "" {
		text, err := treeCompiler()
		if err != nil {
			return capability.Missing(err.Error())
		}
		m.Compiler = text
		return nil
	}
	cfg, err := safefile.ReadRegular(filepath.Join(b.Headers, ".config"), kconfig.MaxSize)
	if err != nil {
		return inputerr.Error{Err: fmt.Errorf("the base's headers have no .config: %w", err)}
	}
	text := kconfig.Parse(".config", cfg).Value("CC_VERSION_TEXT")
	if strings.TrimSpace(text) == "" {
		return inputerr.Error{Err: errors.New("the base's headers do not say which compiler built it (CONFIG_CC_VERSION_TEXT)")}
	}
	cc := strings.Fields(text)[0]
	out, err := exec.Command(cc, "--version").Output()
	if err != nil {
		return capability.Missing(fmt.Sprintf("the base was built with %s, which is not installed here (Debian: apt-get install %s)", text, strings.TrimPrefix(cc, "x86_64-linux-gnu-")))
	}
	if got, _, _ := strings.Cut(string(out), "\n"); got != text {
		return capability.Missing(fmt.Sprintf("the base was built with %q, this machine's %s is %q: modules built here would not be the base's", text, cc, got))
	}
	m.Compiler = text
	m.Make = []string{"make", "-C", b.Headers, "CC=" + cc, "M=<the module's copy>", "modules"}
	return nil
}

// cacheKey names the build by what decides its output: the base, the patches' bytes, the
// fuzz they were applied with, the config and the compiler.
func (m *Manifest) cacheKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "nsperf build %d\n%s\n%s\n%s\n", ManifestVersion, m.Source, m.configKey, m.Compiler)
	if m.Mode == ModeWhole {
		fmt.Fprintf(h, "whole %s\n", m.Config)
	}
	for _, p := range m.Patches {
		fmt.Fprintf(h, "%s %s\n", p.SHA256, strings.Join(p.Applied, ";"))
	}
	if m.Applied != "" {
		fmt.Fprintf(h, "applied %s\n", m.Applied)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// maxManifest bounds a manifest: a few KiB of paths, patches and their provenance.
const maxManifest = 4 << 20

func readManifest(dir string) (*Manifest, error) {
	data, err := safefile.ReadRegular(filepath.Join(dir, "manifest.json"), maxManifest)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Version != ManifestVersion {
		return nil, fmt.Errorf("%s: not a manifest of this nsperf", dir)
	}
	return &m, nil
}

// trusted checks a manifest read from the cache against the build that looks it up: the same
// key and base, and the two kernels (base, patched) inside the cache. A manifest nsperf did not
// write, or one of another key copied in, is refused: its paths could name any file
// (--kernel /etc/shadow).
func (cached *Manifest) trusted(want *Manifest, cache string) error {
	switch {
	case cached.Key != want.Key:
		return fmt.Errorf("its manifest is of key %q", cached.Key)
	case cached.Source != want.Source || cached.Mode != want.Mode:
		return fmt.Errorf("its manifest is of %s (%s), not %s (%s)", cached.Source, cached.Mode, want.Source, want.Mode)
	case len(cached.Kernels) != 2 || cached.Kernels[0].Label != "base" || cached.Kernels[1].Label != "patched":
		return errors.New("its manifest does not name the two kernels, base and patched")
	}
	for _, k := range cached.Kernels {
		for _, p := range []string{k.Image, k.Modules} {
			if p == "" {
				continue
			}
			rel, err := filepath.Rel(cache, p)
			if err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("its manifest names %s, outside the cache %s", p, cache)
			}
			if _, err := os.Lstat(p); err != nil {
				return fmt.Errorf("its %s kernel: %w", k.Label, err)
			}
		}
	}
	return checkBuiltFiles(want.Dir, cached.Files)
}

// keepBuilt makes a build's directory root's and writable by root alone (what make
// modules_install wrote as nobody included), and records the sha256 of the files it made.
func (m *Manifest) keepBuilt(dir string) error {
	m.Files = map[string]string{}
	err := walkFiles(dir, func(p string, fi fs.FileInfo) (err error) {
		if err := os.Lchown(p, 0, 0); err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 {
			if err := os.Chmod(p, fi.Mode().Perm()&^0o022); err != nil {
				return err
			}
		}
		if made(fi) {
			rel, _ := filepath.Rel(dir, p)
			if m.Files[rel], err = fileSHA256(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep the build: %w", err)
	}
	return os.Chmod(dir, 0o755)
}

// walkFiles calls fn with every path under dir, dir included, and its own file information
// (links not followed).
func walkFiles(dir string, fn func(p string, fi fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		return fn(p, fi)
	})
}

// made is a file the build made: regular, and not a link to a file of the fetched base.
func made(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return fi.Mode().IsRegular() && ok && st.Nlink == 1
}

// checkBuiltFiles says why a cached build's directory is not as nsperf left it: everything
// in it must be root's and writable by root alone, and the files it made those recorded,
// with their sha256.
func checkBuiltFiles(dir string, recorded map[string]string) error {
	if recorded == nil {
		return errors.New("its manifest records no files")
	}
	seen := 0
	err := walkFiles(dir, func(p string, fi fs.FileInfo) error {
		if fi.Mode()&fs.ModeSymlink != 0 { // a link's mode means nothing: its owner only
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 {
				return fmt.Errorf("%s is a link that is not root's", p)
			}
		} else if err := rootsAlone(p); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "manifest.json" || !made(fi) {
			return nil
		}
		want, ok := recorded[rel]
		if !ok {
			return fmt.Errorf("%s is not a file the build made", p)
		}
		if got, err := fileSHA256(p); err != nil || got != want {
			return fmt.Errorf("%s is not the file the build made (sha256 %.16s, recorded %.16s)", p, got, want)
		}
		seen++
		return nil
	})
	if err == nil && seen != len(recorded) {
		err = fmt.Errorf("%d of the %d files the build made are gone", len(recorded)-seen, len(recorded))
	}
	return err
}

// build makes both kernels in a working directory of this process, renamed into the cache
// when both are whole: an interrupted or failed build leaves nothing the cache would take.
func (m *Manifest) build(ctx context.Context, b *base, cache string, checked *patches.Result, progress io.Writer) error {
	tmp, err := privateTempBeside(m.Dir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if m.Mode == ModeWhole {
		err = m.whole(ctx, b, cache, tmp, checked, progress)
	} else {
		err = m.modules(ctx, b, tmp, checked, progress)
	}
	if err != nil {
		return buildFailure(ctx, err, filepath.Dir(m.Dir))
	}
	os.RemoveAll(filepath.Join(tmp, "work"))
	if err := m.keepBuilt(tmp); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, m.Dir)
}

// modules builds the plan's modules for the base and the patched kernel.
func (m *Manifest) modules(ctx context.Context, b *base, tmp string, checked *patches.Result, progress io.Writer) error {
	for _, label := range []string{"base", "patched"} {
		start := time.Now()
		fmt.Fprintf(progress, "build: %s: %s\n", label, moduleNames(m.Modules))
		if err := m.buildModules(ctx, b, tmp, label, m.files[label], m.modes[label]); err != nil {
			return err
		}
		m.Kernels = append(m.Kernels, BuiltKernel{Label: label, Image: b.Image, Modules: filepath.Join(m.Dir, label), BuildSeconds: time.Since(start).Seconds()})
	}
	return nil
}

// whole builds both kernels whole in the base's lasting tree, configured first.
func (m *Manifest) whole(ctx context.Context, b *base, cache, tmp string, checked *patches.Result, progress io.Writer) error {
	unlock, err := lockFor(ctx, cache, "tree-"+treeKey(b, m), progress)
	if err != nil {
		return err
	}
	defer unlock()
	t, err := openWholeTree(ctx, cache, b, m, progress)
	if err != nil {
		return err
	}
	if err := t.configure(ctx, m, m.configInput, m.Dir+".logs", tmp); err != nil {
		return err
	}
	cfg, err := os.ReadFile(filepath.Join(t.obj, ".config"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(cfg)
	m.ConfigSHA256 = hex.EncodeToString(sum[:])
	if err := m.buildWhole(ctx, t, b, tmp, progress); err != nil {
		return err
	}
	var release bytes.Buffer
	p := t.newPhase(tmp, "kernelrelease", false)
	defer p.discard()
	cmd, err := sandbox.Command(ctx, t.sandbox(p), "make", "-s", "-C", t.src, "O="+t.obj, "kernelrelease")
	if err != nil {
		return err
	}
	cmd.Stdout = &release
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make kernelrelease: %w", err)
	}
	m.Release = strings.TrimSpace(release.String())
	return nil
}

// setWhole makes m a whole build with req's config, read now: its input is in the cache key.
func (m *Manifest) setWhole(req BuildRequest) error {
	name, input, err := configInput(req)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(input)
	m.Mode, m.Config, m.Modules, m.configInput = ModeWhole, name, nil, input
	m.configKey = name + " " + hex.EncodeToString(sum[:])
	m.Make = []string{"make", "-C", "<the base's source>", "O=<its objects>", "CC=" + strings.Fields(m.Compiler)[0], "bzImage", "modules"}
	return nil
}

// Provenance is what a result records of kernel i (0: base, 1: patched).
func (m *Manifest) Provenance(i int) *results.KernelBuild {
	b := &results.KernelBuild{Patched: i == 1, Build: m.Build}
	for _, mod := range m.Modules {
		b.Modules = append(b.Modules, mod.Name)
	}
	if i < len(m.Kernels) {
		b.BuildSeconds = m.Kernels[i].BuildSeconds
	}
	return b
}

// buildFailure says why a build stopped: interrupted, or a full disk (the caller can free
// space or move the cache), else the error as it is. Nothing was added to the cache.
func buildFailure(ctx context.Context, err error, builds string) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted; nothing was added to the cache: %w", ctx.Err())
	case errors.Is(err, syscall.ENOSPC):
		return inputerr.Error{Err: fmt.Errorf("no space left in %s: free some, or set NSPERF_KERNEL_CACHE to a larger file system; nothing was added to the cache (%w)", builds, err)}
	}
	return err
}

func moduleNames(ms []patches.Module) string {
	var names []string
	for _, mod := range ms {
		names = append(names, mod.Name+".ko")
	}
	return strings.Join(names, " ")
}

// buildModules builds every module of the plan from a copy of its directory (with the patched
// files when files is set) and installs them into a copy of the base's module tree, made of
// hard links: only the rebuilt modules differ from the image's.
func (m *Manifest) buildModules(ctx context.Context, b *base, tmp, label string, files map[string][]byte, modes map[string]fs.FileMode) error {
	byDir := map[string][]string{}
	for _, mod := range m.Modules {
		byDir[mod.Dir] = append(byDir[mod.Dir], mod.Name)
	}
	tree := filepath.Join(tmp, label, "lib", "modules", b.Release)
	if err := linkTree(filepath.Join(b.ModRoot, "lib", "modules", b.Release), tree); err != nil {
		return err
	}
	for dir, names := range byDir {
		work := filepath.Join(tmp, "work", label, dir)
		if err := copyDir(filepath.Join(b.Tree, dir), work); err != nil {
			return err
		}
		for path, data := range files {
			if rel, ok := strings.CutPrefix(path, dir+"/"); ok && !strings.Contains(rel, "/") {
				dst := filepath.Join(work, rel)
				mode := fileMode(modes, path, filepath.Join(b.Tree, path))
				os.Remove(dst) // WriteFile keeps an existing file's mode
				if err := os.WriteFile(dst, data, mode); err != nil {
					return err
				}
			}
		}
		if err := writeKbuild(work, names); err != nil {
			return err
		}
		logPath := filepath.Join(m.Dir+".logs", label+"-"+strings.ReplaceAll(dir, "/", "_")+".log")
		if err := runMake(ctx, b, m, filepath.Dir(filepath.Dir(m.Dir)), work, logPath, label); err != nil {
			return err
		}
		for _, name := range names {
			if err := installModule(tree, dir, name, filepath.Join(work, name+".ko")); err != nil {
				return err
			}
		}
	}
	return runIn(ctx, tmp, "depmod", "-b", filepath.Join(tmp, label), b.Release)
}

// writeKbuild makes the copied directory build only the named modules: Kbuild takes
// precedence over Makefile, includes it (its conditionals and object lists intact) and then
// narrows obj-m, so that a directory of many modules (drivers/net) builds one.
func writeKbuild(dir string, names []string) error {
	orig := "Makefile"
	if _, err := os.Stat(filepath.Join(dir, "Kbuild")); err == nil {
		orig = "Kbuild.nsperf-orig"
		if err := os.Rename(filepath.Join(dir, "Kbuild"), filepath.Join(dir, orig)); err != nil {
			return err
		}
	}
	objs := make([]string, len(names))
	for i, n := range names {
		objs[i] = n + ".o"
	}
	text := fmt.Sprintf("# nsperf build: only %s from this directory\ninclude $(src)/%s\nobj-m := $(filter %s,$(obj-m))\nobj-y :=\n", strings.Join(objs, " "), orig, strings.Join(objs, " "))
	return os.WriteFile(filepath.Join(dir, "Kbuild"), []byte(text), 0o644)
}

// runMake builds the modules of work against the base's headers, logging to logPath; a
// failure is a BuildError with the compiler's first error.
func runMake(ctx context.Context, b *base, m *Manifest, cache, work, logPath, label string) error {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	args := []string{"make", "-C", b.Headers, "CC=" + strings.Fields(m.Compiler)[0], "M=" + work, "modules"}
	// The patch's code is compiled as nobody, seeing the base's tree and headers and its own
	// directory only (package sandbox).
	cmd, err := sandbox.Command(ctx, sandbox.Spec{Hide: []string{cache}, Read: baseDirs(cache, b), Write: []string{work}, Dir: work}, args...)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if werr := os.WriteFile(logPath, out.Bytes(), 0o644); werr != nil && err == nil {
		return werr
	}
	if err != nil {
		return &BuildError{Label: label, First: firstError(out.Bytes(), err), Log: logPath}
	}
	return nil
}

// firstError is why the sandbox stopped the build (a limit), else the compiler's first
// "error:" line, else make's last line.
func firstError(out []byte, err error) string {
	var limit *sandbox.LimitError
	if errors.As(err, &limit) {
		return limit.Error()
	}
	last := err.Error()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.Contains(strings.ToLower(line), "error:") { // gcc's "error:", the assembler's "Error:"
			return line
		}
		if line != "" {
			last = line
		}
	}
	return last
}

// installModule replaces the tree's NAME.ko* (compressed as shipped) in kernel/DIR with the
// one built.
func installModule(tree, dir, name, built string) error {
	dest := filepath.Join(tree, "kernel", dir)
	old, _ := filepath.Glob(filepath.Join(dest, name+".ko*"))
	for _, o := range old {
		if err := os.Remove(o); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	return copyFile(built, filepath.Join(dest, name+".ko"))
}

// linkTree copies a directory tree as hard links (`cp -al`), except the modules.* index files
// depmod rewrites, which are left out.
func linkTree(src, dst string) error {
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
			return nil // build/ and source/ point at the build machine's tree
		case filepath.Dir(rel) == "." && strings.HasPrefix(d.Name(), "modules."):
			if d.Name() == "modules.order" || d.Name() == "modules.builtin" || strings.HasPrefix(d.Name(), "modules.builtin.") {
				return linkOrCopy(p, target)
			}
			return nil
		}
		return linkOrCopy(p, target)
	})
}

// linkOrCopy hard-links a file, or copies it where the two paths are on different file
// systems (a cache whose builds are mounted apart from its sources).
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if errors.Is(err, syscall.EXDEV) {
		return copyFile(src, dst)
	}
	return err
}

// copyDir copies a directory tree's regular files.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// baseDirs are what a build of the base reads: its tree and headers, each whole fetched
// base they are part of (Debian's headers link to their -common and kbuild siblings).
func baseDirs(cache string, b *base) []string {
	var out []string
	for _, p := range []string{b.Tree, b.Headers} {
		if p == "" {
			continue
		}
		if rel, err := filepath.Rel(filepath.Join(cache, "sources"), p); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.Join(cache, "sources", strings.Split(rel, string(filepath.Separator))[0])
		}
		// Both the path and where its links lead: the headers' Makefile names the real one.
		real, err := filepath.EvalSymlinks(p)
		for _, q := range []string{p, real} {
			if q != "" && (q == p || err == nil) && !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}
