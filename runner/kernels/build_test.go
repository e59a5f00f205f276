package kernels

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/patches"
)

// TestWriteKbuild: the generated Kbuild includes the directory's own makefile and keeps only
// the named modules; a directory with a Kbuild of its own keeps it, renamed and included.
func TestWriteKbuild(t *testing.T) {
	dir := t.TempDir()
	if err := writeKbuild(dir, []string{"veth"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "Kbuild"))
	for _, want := range []string{"include $(src)/Makefile\n", "obj-m := $(filter veth.o,$(obj-m))\n", "obj-y :=\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("Kbuild lacks %q:\n%s", want, got)
		}
	}
	if err := writeKbuild(dir, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "Kbuild"))
	if !strings.Contains(string(got), "include $(src)/Kbuild.nsperf-orig\n") || !strings.Contains(string(got), "$(filter a.o b.o,") {
		t.Errorf("a directory's own Kbuild:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "Kbuild.nsperf-orig")); err != nil {
		t.Error(err)
	}
}

// TestModuleTreeCopy: the copy of a module tree is hard links, without the index files depmod
// rewrites (modules.dep...) but with modules.order and modules.builtin*; the built module
// replaces the shipped compressed one, and the original tree is untouched.
func TestModuleTreeCopy(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	for path, text := range map[string]string{
		"kernel/net/openvswitch/openvswitch.ko.xz": "shipped", "kernel/net/openvswitch/vport-gre.ko.xz": "gre",
		"modules.dep": "dep", "modules.order": "order", "modules.builtin": "builtin", "modules.builtin.modinfo": "modinfo",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, path)), 0o755)
		if err := os.WriteFile(filepath.Join(src, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := linkTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "modules.dep")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("modules.dep copied: %v", err)
	}
	for _, kept := range []string{"modules.order", "modules.builtin", "modules.builtin.modinfo", "kernel/net/openvswitch/vport-gre.ko.xz"} {
		a, _ := os.Stat(filepath.Join(src, kept))
		b, err := os.Stat(filepath.Join(dst, kept))
		if err != nil || !os.SameFile(a, b) {
			t.Errorf("%s: not a hard link of the original: %v", kept, err)
		}
	}
	built := filepath.Join(t.TempDir(), "openvswitch.ko")
	os.WriteFile(built, []byte("built"), 0o644)
	if err := installModule(dst, "net/openvswitch", "openvswitch", built); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dst, "kernel/net/openvswitch/openvswitch.ko")); string(data) != "built" {
		t.Errorf("installed module: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dst, "kernel/net/openvswitch/openvswitch.ko.xz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the shipped module is still there: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "kernel/net/openvswitch/openvswitch.ko.xz")); string(data) != "shipped" {
		t.Errorf("the original tree changed: %q", data)
	}
}

// TestFirstError: a failed build is told by the compiler's first error, else make's last line.
func TestFirstError(t *testing.T) {
	out := "  CC [M]  /x/veth.o\n/x/veth.c:12:2: error: expected ';' before '}' token\n/x/veth.c:20:1: error: another\nmake[2]: *** Error 1\n"
	if got := firstError([]byte(out), errors.New("exit status 2")); got != "/x/veth.c:12:2: error: expected ';' before '}' token" {
		t.Errorf("first error %q", got)
	}
	if got := firstError([]byte("make: *** No rule to make target 'modules'.  Stop.\n"), errors.New("exit status 2")); !strings.Contains(got, "No rule") {
		t.Errorf("no compiler error: %q", got)
	}
}

// TestCacheKey: the build's name changes with anything that changes its output: the base,
// a patch's bytes, how it applied, the config and the compiler.
func TestCacheKey(t *testing.T) {
	m := Manifest{Source: "debian 1", ConfigSHA256: "c", Compiler: "gcc 12", Patches: []PatchProvenance{{SHA256: "p", Applied: []string{"f hunk 1: exact"}}}}
	key := m.cacheKey()
	for name, change := range map[string]func(*Manifest){
		"source":   func(m *Manifest) { m.Source = "debian 2" },
		"config":   func(m *Manifest) { m.ConfigSHA256 = "d" },
		"compiler": func(m *Manifest) { m.Compiler = "gcc 13" },
		"patch":    func(m *Manifest) { m.Patches = []PatchProvenance{{SHA256: "q", Applied: m.Patches[0].Applied}} },
		"fuzz":     func(m *Manifest) { m.Patches = []PatchProvenance{{SHA256: "p", Applied: []string{"f hunk 1: fuzz 1"}}} },
	} {
		c := m
		change(&c)
		if c.cacheKey() == key {
			t.Errorf("a change of the %s keeps the key", name)
		}
	}
	if again := m; again.cacheKey() != key {
		t.Error("the key is not stable")
	}
}

// TestReadSeriesRefuses: no patch, a missing file and a file over the bound are input errors
// (exit 2), before the base is fetched.
func TestReadSeriesRefuses(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.mbox")
	f, _ := os.Create(huge)
	f.Truncate(patches.MaxInputSize + 1)
	f.Close()
	for _, files := range [][]string{nil, {"/no/such.mbox"}, {huge}} {
		var ie InputError
		if _, err := readSeries(files); !errors.As(err, &ie) {
			t.Errorf("%v: %v, want an InputError", files, err)
		}
	}
}
