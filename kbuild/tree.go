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
	"strings"

	"github.com/nsperf/nsperf/internal/inputerr"
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
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
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
	top, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != dir {
		return nil, "", false, nil
	}
	head, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return nil, "", false, fmt.Errorf("a git tree without a commit: %w", err)
	}
	id = "git " + strings.TrimSpace(string(head))
	diff, err := exec.CommandContext(ctx, "git", "-C", dir, "diff", "HEAD", "--binary").Output()
	if err != nil {
		return nil, "", false, fmt.Errorf("git diff HEAD: %w", err)
	}
	if len(diff) > 0 {
		sum := sha256.Sum256(diff)
		id += " with uncommitted changes " + hex.EncodeToString(sum[:])[:12]
	}
	list, err := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "-z").Output()
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

// tarballBase unpacks a source tarball once into cache/sources/tarball-SHA (tar picks the
// compression), renamed into place when whole; its one top directory is the tree.
func tarballBase(ctx context.Context, cache, file string, progress io.Writer) (*base, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(cache, "sources", "tarball-"+sum[:16])
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		fmt.Fprintf(progress, "build: unpacking %s into %s\n", file, dir)
		tmp, err := tempBeside(dir)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := runIn(ctx, tmp, "tar", "-xf", file, "--no-same-owner"); err != nil {
			return nil, inputerr.Error{Err: fmt.Errorf("--source %s: not a source tarball tar can read: %w", file, err)}
		}
		if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
			return nil, err
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var tops []string
	for _, e := range entries {
		if e.IsDir() {
			tops = append(tops, e.Name())
		}
	}
	if len(tops) != 1 {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: a kernel tarball holds one top directory (linux-6.12/), this one %d", file, len(tops))}
	}
	tree := filepath.Join(dir, tops[0])
	if err := looksLikeKernel(tree); err != nil {
		return nil, inputerr.Error{Err: fmt.Errorf("--source %s: %w", file, err)}
	}
	return &base{Identity: "tarball " + filepath.Base(file) + " sha256 " + sum, Tree: tree}, nil
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
