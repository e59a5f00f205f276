package kbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nsperf/nsperf/internal/sandbox"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// stubTree is a kernel tree with a Makefile's version and one selftest program.
func stubTree(t *testing.T, program string) string {
	t.Helper()
	tree := t.TempDir()
	for name, text := range map[string]string{
		"Makefile":                            "# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\nEXTRAVERSION =\n",
		"tools/testing/selftests/kselftest.h": "#define KSFT_PASS 0\n",
		"tools/testing/selftests/net/hello.c": program,
	} {
		path := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// TestSelftest: a selftest program is compiled from the tree (kselftest.h on the include
// path, as the selftests' Makefile has it), cached by its source and compiler, its provenance
// names the tree, its version and the source's hash; another source is another build; a
// source that is no selftest file, or does not compile, is refused with why.
func TestSelftest(t *testing.T) {
	testenv.RequireTool(t, "cc")
	cache := t.TempDir()
	tree := stubTree(t, "#include <stdio.h>\n#include \"../kselftest.h\"\nint main(void) { printf(\"hello %d\\n\", KSFT_PASS); return 0; }\n")
	b, err := Selftest(context.Background(), cache, tree, "tools/testing/selftests/net/hello.c")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(b.Path).Output(); err != nil || string(out) != "hello 0\n" {
		t.Fatalf("%s: %q %v", b.Path, out, err)
	}
	for _, want := range []string{"built from " + tree, "(Linux 6.12.118)", "tools/testing/selftests/net/hello.c sha256 ", " by "} {
		if !strings.Contains(b.Provenance, want) {
			t.Errorf("provenance %q lacks %q", b.Provenance, want)
		}
	}
	fi, _ := os.Stat(b.Path)
	again, err := Selftest(context.Background(), cache, tree, "tools/testing/selftests/net/hello.c")
	if fi2, _ := os.Stat(again.Path); err != nil || again != b || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("not taken from the cache: %+v %v", again, err)
	}
	other := stubTree(t, "int main(void) { return 3; }\n")
	b2, err := Selftest(context.Background(), cache, other, "tools/testing/selftests/net/hello.c")
	if err != nil || b2.Path == b.Path {
		t.Errorf("another source: %+v %v", b2, err)
	}
	for source, want := range map[string]string{
		"tools/testing/selftests/../../../etc/passwd.c": "not a single C file under tools/testing/selftests",
		"net/ipv4/udp.c":                        "not a single C file under tools/testing/selftests",
		"tools/testing/selftests/net/missing.c": "missing.c",
	} {
		if _, err := Selftest(context.Background(), cache, tree, source); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", source, err, want)
		}
	}
	broken := stubTree(t, "int main(void) { return undeclared; }\n")
	if _, err := Selftest(context.Background(), cache, broken, "tools/testing/selftests/net/hello.c"); err == nil || !strings.Contains(err.Error(), "undeclared") {
		t.Errorf("a source that does not compile: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "selftests", "*.tmp-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestSelftestSwapped: the program nsperf keeps to run as root is root's and writable by root
// alone; one put in its place (as nobody could when builds left it nobody's, or with another
// content under root's name) is never handed out: it is built again, and the provenance says
// why.
func TestSelftestSwapped(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "cc")
	cache := t.TempDir()
	tree := stubTree(t, "#include <stdio.h>\nint main(void) { printf(\"genuine\\n\"); return 0; }\n")
	const source = "tools/testing/selftests/net/hello.c"
	b, err := Selftest(context.Background(), cache, tree, source)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Dir(b.Path), b.Path, b.Path + ".sha256"} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: %d:%d %v, want root's and writable by root alone", p, st.Uid, st.Gid, fi.Mode())
		}
	}
	swap := map[string]func(){
		// What the old cache left: nobody's directory, nobody's program replaced by a script.
		"nobody's": func() {
			os.Lchown(filepath.Dir(b.Path), sandbox.NobodyUID, sandbox.NobodyGID)
			os.Remove(b.Path)
			os.WriteFile(b.Path, []byte("#!/bin/sh\necho swapped\n"), 0o755)
			os.Lchown(b.Path, sandbox.NobodyUID, sandbox.NobodyGID)
		},
		"root's, another content": func() {
			os.WriteFile(b.Path, []byte("#!/bin/sh\necho swapped\n"), 0o755)
		},
		"a link": func() {
			os.Remove(b.Path)
			os.Symlink("/bin/true", b.Path)
		},
	}
	for name, do := range swap {
		do()
		again, err := Selftest(context.Background(), cache, tree, source)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out, err := exec.Command(again.Path).Output(); err != nil || string(out) != "genuine\n" {
			t.Errorf("%s: the program handed out says %q %v", name, out, err)
		}
		if !strings.Contains(again.Provenance, "built again: the cached one was not as nsperf left it") {
			t.Errorf("%s: the provenance does not say it was built again: %s", name, again.Provenance)
		}
	}
}
