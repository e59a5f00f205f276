package kbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
)

// A --source other than DebianSource is a kernel source tree (git or not) or a source
// tarball. It has no packaged image, headers or module tree to build modules against, so both
// kernels are built whole from it.

// treeBase takes a directory or a tarball as the base.
func treeBase(ctx context.Context, cache, src string, progress io.Writer) (*base, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w (give %s, a kernel tree or a source tarball)", src, err, DebianSource)}
	}
	if !st.IsDir() {
		return tarballBase(ctx, cache, src, progress)
	}
	// The tree where it is: a link to it (--source linux -> ~/src/linux-6.12) is followed
	// once, here, so that what is walked, linked and patched is the tree itself.
	abs, err := filepath.Abs(src)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", src, err)}
	}
	if err := looksLikeKernel(abs); err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", src, err)}
	}
	b := &base{Tree: abs}
	if files, id, ok, err := gitIdentity(ctx, abs); err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", src, err)}
	} else if ok {
		b.Identity, b.Files = "tree "+abs+" "+id, files
		return b, nil
	}
	if _, err := os.Stat(filepath.Join(abs, ".config")); err == nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: the tree was configured or built in place (it has .config), and nsperf builds out of it (make O=): give a clean tree (make mrproper in a copy), a git tree (only its tracked files are taken) or --config with that .config", src)}
	}
	id, err := statIdentity(abs)
	if err != nil {
		return nil, err
	}
	b.Identity = "tree " + abs + " files " + id
	return b, nil
}

// looksLikeKernel refuses a directory that is not a kernel source tree.
func looksLikeKernel(dir string) error {
	for _, f := range []string{"Makefile", "Kconfig", "scripts/kconfig/merge_config.sh", "arch/x86/Kconfig"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("not a Linux source tree for x86 (no %s)", f)
		}
	}
	return nil
}

// gitIdentity names a git tree by its commit and, when its tracked files differ from it, by
// the sha256 of `git diff HEAD`; files are its tracked files (git ls-files), the ones a build
// takes. ok is false outside git.
func gitIdentity(ctx context.Context, dir string) (files []string, id string, ok bool, err error) {
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != dir {
		return nil, "", false, nil
	}
	head, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return nil, "", false, fmt.Errorf("a git tree without a commit: %w", err)
	}
	id = "git " + strings.TrimSpace(string(head))
	// A submodule is a repository of its own, with a configuration of its own that git would
	// obey inside it (its filters, fsmonitor, diff commands) when diff looks at it: refused
	// before anything looks, from the index alone (`git ls-files -s`, mode 160000).
	staged, err := git(ctx, dir, "ls-files", "-s", "-z")
	if err != nil {
		return nil, "", false, fmt.Errorf("git ls-files -s: %w", err)
	}
	for _, entry := range bytes.Split(staged, []byte{0}) {
		if mode, rest, ok := bytes.Cut(entry, []byte(" ")); ok && string(mode) == "160000" {
			_, path, _ := bytes.Cut(rest, []byte("\t"))
			return nil, "", false, fmt.Errorf("the tree has a submodule %s: a kernel tree has none, and nsperf neither builds a submodule's files nor lets git run in one; give a tree without it", path)
		}
	}
	diff, err := git(ctx, dir, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "HEAD", "--binary")
	if err != nil {
		return nil, "", false, fmt.Errorf("git diff HEAD: %w", err)
	}
	if len(diff) > 0 {
		sum := sha256.Sum256(diff)
		id += " with uncommitted changes " + hex.EncodeToString(sum[:])[:12]
	}
	list, err := git(ctx, dir, "ls-files", "-z")
	if err != nil {
		return nil, "", false, fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range bytes.Split(list, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return files, id, true, nil
}

// git runs git on a user's tree without letting the tree's configuration run a command: a
// repository's .git/config is the tree owner's, and git runs what some of its keys name
// (core.fsmonitor before reading the index, a filter driver's clean command on every file it
// hashes, an external diff or textconv program, a pager). Those are turned off on the command
// line, which overrides every configuration file (`git -c core.fsmonitor=false -c
// filter.NAME.clean= ...`); the system's and the user's files are not read at all. git never
// goes into a submodule (a tree with one is refused, gitIdentity).
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	base := []string{"-C", dir, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat",
		"-c", "diff.external=", "-c", "core.untrackedCache=false", "-c", "diff.ignoreSubmodules=all", "-c", "submodule.recurse=false", "--no-pager"}
	// Every filter driver the repository's configuration defines (reading it runs nothing).
	// A required one without its command would fail every file: it is not required then.
	names, _ := gitCommand(ctx, append(slices.Clone(base), "config", "--name-only", "--get-regexp", `^filter\..*\.(clean|smudge|process|required)$`)...).Output()
	for _, key := range strings.Fields(string(names)) {
		if strings.HasSuffix(key, ".required") {
			base = append(base, "-c", key+"=false")
		} else {
			base = append(base, "-c", key+"=")
		}
	}
	return gitCommand(ctx, append(base, args...)...).Output()
}

// gitCommand is git with only the repository's own configuration, never a prompt.
func gitCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	return cmd
}

// statIdentity hashes a plain tree's paths, sizes and modification times: any change to a
// file makes another base (reading 1.5 GB of source on every call would take longer than
// the cached build it saves).
func statIdentity(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %d %d %v\n", rel, info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

// tarballBase unpacks a source tarball once into cache/sources/tarball-SHA (unpackTarball:
// nsperf's own modes, bounded, nothing out of the tree), renamed into place only when whole
// and a kernel tree: a refused tarball leaves nothing in the cache. Its one top directory is
// the tree.
func tarballBase(ctx context.Context, cache, file string, progress io.Writer) (*base, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w (%s): give a tarball or a directory", safefile.ErrNotRegular, fi.Mode().Type())
	}
	h := sha256.New()
	if err == nil {
		_, err = io.Copy(h, f)
	}
	f.Close()
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(cache, "sources", "tarball-"+sum[:16])
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		unlock, err := lockFor(ctx, cache, "source-tarball-"+sum[:16], progress)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		fmt.Fprintf(progress, "build: unpacking %s into %s\n", file, dir)
		tmp, err := tempBeside(dir)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := unpackTarball(file, tmp); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputerr.Error{Err: fmt.Errorf("--source %s: refused, nothing kept: %w", file, err)}
		}
		if _, err := kernelTop(tmp, file); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
			return nil, err
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	tree, err := kernelTop(dir, file)
	if err != nil {
		return nil, err
	}
	return &base{Identity: "tarball " + filepath.Base(file) + " sha256 " + sum, Tree: tree}, nil
}

// kernelTop is the one top directory of an unpacked tarball, a kernel tree.
func kernelTop(dir, file string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var tops []string
	for _, e := range entries {
		if e.IsDir() {
			tops = append(tops, e.Name())
		}
	}
	if len(tops) != 1 {
		return "", inputerr.Error{Err: fmt.Errorf("--source %s: a kernel tarball holds one top directory (linux-6.12/), this one %d", file, len(tops))}
	}
	tree := filepath.Join(dir, tops[0])
	if err := looksLikeKernel(tree); err != nil {
		return "", inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	return tree, nil
}

// treeCompiler is the compiler a tree is built with: gcc, as make would take it.
func treeCompiler() (string, error) {
	out, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		return "", errors.New("no gcc here to build the tree with (Debian: apt-get install gcc)")
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return first, nil
}
