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
	"regexp"
	"strings"
	"syscall"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/sandbox"
)

// Program is a program built from a kernel tree's selftests: where it is, and how it was
// built (the tree, its version, the source's sha256, the compiler), for the result to record.
type Program struct {
	Path, Provenance string
}

// maxSelftestSource bounds a selftest's source file (udpgso_bench_tx.c is 20 KB).
const maxSelftestSource = 1 << 20

// selftestName is what a program built from a tree's selftests may be called.
var selftestName = regexp.MustCompile(`^tools/testing/selftests/[a-z0-9_/-]+/([a-z0-9_-]+)\.c$`)

// Selftest builds a program of a kernel tree's selftests (source, relative to the tree, e.g.
// tools/testing/selftests/net/udpgso_bench_tx.c) with the system's C compiler, as the
// selftests' Makefile does for a single-file program (`cc -O2 -Wall -o NAME FILE`, the
// tree's tools/testing/selftests on the include path for kselftest.h). The program is kept
// in the cache under the hash of its source, kselftest.h and the compiler's version, so that
// the same source is built once and another one (the base's of another tree) is built anew.
func Selftest(ctx context.Context, cache, tree, source string) (Program, error) {
	m := selftestName.FindStringSubmatch(source)
	if m == nil {
		return Program{}, fmt.Errorf("selftest %q: not a single C file under tools/testing/selftests", source)
	}
	name := m[1]
	src, err := safefile.ReadRegular(filepath.Join(tree, source), maxSelftestSource)
	if err != nil {
		return Program{}, fmt.Errorf("build %s from %s: %w (a kernel source tree has it from Linux 4.18 on)", name, tree, err)
	}
	header, err := safefile.ReadRegular(filepath.Join(tree, "tools/testing/selftests/kselftest.h"), maxSelftestSource)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Program{}, fmt.Errorf("build %s from %s: %w", name, tree, err)
	}
	cc, err := exec.CommandContext(ctx, "cc", "--version").Output()
	if err != nil {
		return Program{}, fmt.Errorf("build %s from %s: no C compiler (cc --version: %v); Debian: apt-get install gcc", name, tree, err)
	}
	compiler := strings.TrimSpace(strings.SplitN(string(cc), "\n", 2)[0])
	key := sha256.New()
	for _, part := range [][]byte{[]byte(name), src, header, []byte(compiler)} {
		fmt.Fprintf(key, "%d\n", len(part))
		key.Write(part)
	}
	digest := hex.EncodeToString(key.Sum(nil))[:16]
	dir := filepath.Join(cache, "selftests", digest)
	sum := sha256.Sum256(src)
	built := Program{Path: filepath.Join(dir, name),
		Provenance: fmt.Sprintf("built from %s (%s), %s sha256 %s, by %s", tree, treeVersion(tree), source, hex.EncodeToString(sum[:])[:16], compiler)}
	// The program is run as root: one in the cache is used only as nsperf left it (root's,
	// writable by root alone, its recorded sha256), else built again, and the provenance says so.
	if _, err := os.Lstat(dir); err == nil {
		why := trustedProgram(dir, name)
		if why == nil {
			return built, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return Program{}, fmt.Errorf("build %s: remove the untrusted %s: %w", name, dir, err)
		}
		built.Provenance += fmt.Sprintf(" (built again: the cached one was not as nsperf left it: %v)", why)
	}
	// Built in a directory of this process's, then renamed into place: two runs building the
	// same program at once each get a whole one.
	tmp, err := privateTempBeside(dir)
	if err != nil {
		return Program{}, err
	}
	defer os.RemoveAll(tmp)
	// The tree may be a stranger's (--source): compiled as nobody, seeing the tree and its own
	// directory only (package sandbox).
	cmd, err := sandbox.Command(ctx, sandbox.Spec{Hide: []string{cache}, Read: []string{tree}, Write: []string{tmp}, Dir: tmp},
		"cc", "-O2", "-Wall", "-I", filepath.Join(tree, "tools/testing/selftests"), "-o", filepath.Join(tmp, name), filepath.Join(tree, source))
	if err != nil {
		return Program{}, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Program{}, fmt.Errorf("build %s from %s: %s: %v\n%s", name, tree, strings.Join(cmd.Args, " "), err, tailOf(out.String(), 2000))
	}
	if err := keepProgram(tmp, name); err != nil {
		return Program{}, fmt.Errorf("build %s: %w", name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run's rename won (EEXIST, ENOTEMPTY): its program is the same one.
		if trustedProgram(dir, name) != nil {
			return Program{}, fmt.Errorf("build %s: %w", name, err)
		}
	}
	return built, nil
}

// keepProgram makes a program built as nobody in dir root's (`chown -R root:root DIR`,
// `chmod 0755`), with nothing else of nobody's beside it, and records its sha256 in
// NAME.sha256.
func keepProgram(dir, name string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != name {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	prog := filepath.Join(dir, name)
	fi, err := os.Lstat(prog)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("the compiler left %s as %s, not a program", prog, fi.Mode().Type())
	}
	sum, err := fileSHA256(prog)
	if err != nil {
		return err
	}
	for _, p := range []string{dir, prog} {
		if err := os.Lchown(p, 0, 0); err != nil {
			return err
		}
		if err := os.Chmod(p, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(prog+".sha256", []byte(sum+"\n"), 0o644)
}

// trustedProgram says why the program NAME in dir is not one nsperf may run as root: the
// directory, the program and its recorded sha256 must be root's and writable by root alone
// (nobody, who built it, could otherwise put another in its place), the program a regular
// file whose sha256 is the recorded one.
func trustedProgram(dir, name string) error {
	prog := filepath.Join(dir, name)
	for _, p := range []string{filepath.Dir(dir), dir, prog, prog + ".sha256"} {
		if err := rootsAlone(p); err != nil {
			return err
		}
	}
	if fi, err := os.Lstat(prog); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", prog)
	}
	recorded, err := safefile.ReadRegular(prog+".sha256", 128)
	if err != nil {
		return err
	}
	sum, err := fileSHA256(prog)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(recorded)) != sum {
		return fmt.Errorf("%s's sha256 is %s, not the %s recorded when it was built", prog, sum[:16], strings.TrimSpace(string(recorded)))
	}
	return nil
}

// rootsAlone checks p (not followed) is root's and writable by no one else.
func rootsAlone(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%s: no owner", p)
	case st.Uid != 0 || st.Gid != 0:
		return fmt.Errorf("%s is owned by %d:%d, not root", p, st.Uid, st.Gid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others than root (%v)", p, fi.Mode().Perm())
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a link", p)
	}
	return nil
}

// fileSHA256 is `sha256sum FILE`.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// treeVersion is a tree's kernel version from its Makefile ("Linux 6.12.118"), or "a kernel
// tree" when it has none.
func treeVersion(tree string) string {
	data, err := safefile.ReadRegular(filepath.Join(tree, "Makefile"), 1<<20)
	if err != nil {
		return "a kernel tree"
	}
	v := map[string]string{}
	for _, line := range strings.SplitN(string(data), "\n", 8) {
		if k, val, ok := strings.Cut(line, "="); ok {
			v[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	}
	if v["VERSION"] == "" || v["PATCHLEVEL"] == "" {
		return "a kernel tree"
	}
	version := "Linux " + v["VERSION"] + "." + v["PATCHLEVEL"]
	if v["SUBLEVEL"] != "" {
		version += "." + v["SUBLEVEL"]
	}
	return version
}

// tailOf is the last n bytes of s.
func tailOf(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
