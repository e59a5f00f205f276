package kbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/sandbox"
	"github.com/nsperf/nsperf/runner/tool"
)

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
func Selftest(ctx context.Context, cache, tree, source string) (tool.Built, error) {
	m := selftestName.FindStringSubmatch(source)
	if m == nil {
		return tool.Built{}, fmt.Errorf("selftest %q: not a single C file under tools/testing/selftests", source)
	}
	name := m[1]
	src, err := safefile.ReadRegular(filepath.Join(tree, source), maxSelftestSource)
	if err != nil {
		return tool.Built{}, fmt.Errorf("build %s from %s: %w (a kernel source tree has it from Linux 4.18 on)", name, tree, err)
	}
	header, err := safefile.ReadRegular(filepath.Join(tree, "tools/testing/selftests/kselftest.h"), maxSelftestSource)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return tool.Built{}, fmt.Errorf("build %s from %s: %w", name, tree, err)
	}
	cc, err := exec.CommandContext(ctx, "cc", "--version").Output()
	if err != nil {
		return tool.Built{}, fmt.Errorf("build %s from %s: no C compiler (cc --version: %v); Debian: apt-get install gcc", name, tree, err)
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
	built := tool.Built{Path: filepath.Join(dir, name),
		Provenance: fmt.Sprintf("built from %s (%s), %s sha256 %s, by %s", tree, treeVersion(tree), source, hex.EncodeToString(sum[:])[:16], compiler)}
	if fi, err := os.Stat(built.Path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return built, nil
	}
	// Built in a directory of this process's, then renamed into place: two runs building the
	// same program at once each get a whole one.
	tmp, err := tempBeside(dir)
	if err != nil {
		return tool.Built{}, err
	}
	defer os.RemoveAll(tmp)
	// The tree may be a stranger's (--source): compiled as nobody, seeing the tree and its own
	// directory only (package sandbox).
	cmd, err := sandbox.Command(ctx, sandbox.Spec{Hide: []string{cache}, Read: []string{tree}, Write: []string{tmp}, Dir: tmp},
		"cc", "-O2", "-Wall", "-I", filepath.Join(tree, "tools/testing/selftests"), "-o", filepath.Join(tmp, name), filepath.Join(tree, source))
	if err != nil {
		return tool.Built{}, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return tool.Built{}, fmt.Errorf("build %s from %s: %s: %v\n%s", name, tree, strings.Join(cmd.Args, " "), err, tailOf(out.String(), 2000))
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run's rename won (EEXIST, ENOTEMPTY): its program is the same one.
		if fi, statErr := os.Stat(built.Path); statErr != nil || !fi.Mode().IsRegular() {
			return tool.Built{}, fmt.Errorf("build %s: %w", name, err)
		}
	}
	return built, nil
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
