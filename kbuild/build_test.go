package kbuild

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/results"

	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/scenarios"
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
	m := Manifest{Build: results.Build{Source: "debian 1", Compiler: "gcc 12", Patches: []results.BuildPatch{{SHA256: "p", Applied: []string{"f hunk 1: exact"}}}}, configKey: "c"}
	key := m.cacheKey()
	for name, change := range map[string]func(*Manifest){
		"source":   func(m *Manifest) { m.Source = "debian 2" },
		"config":   func(m *Manifest) { m.configKey = "d" },
		"mode":     func(m *Manifest) { m.Mode, m.Config = ModeWhole, ConfigMinimal },
		"compiler": func(m *Manifest) { m.Compiler = "gcc 13" },
		"patch":    func(m *Manifest) { m.Patches = []results.BuildPatch{{SHA256: "q", Applied: m.Patches[0].Applied}} },
		"fuzz": func(m *Manifest) {
			m.Patches = []results.BuildPatch{{SHA256: "p", Applied: []string{"f hunk 1: fuzz 1"}}}
		},
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

// TestCacheKeyPlainDiffs: two plain diffs of one shape (one file, one hunk, the same line
// counts, both applying exactly) that add different text are two builds: each records the
// sha256 of its file, and the keys differ. A second build of the edited diff would otherwise
// answer "cached" with the first one's kernels.
func TestCacheKeyPlainDiffs(t *testing.T) {
	const diff = "--- a/net/core/dev.c\n+++ b/net/core/dev.c\n@@ -1,2 +1,3 @@\n a\n+%s\n c\n"
	tree := fstest.MapFS{"net/core/dev.c": {Data: []byte("a\nc\n")}}
	var keys []string
	for _, added := range []string{"b", "system(\"x\")"} {
		data := []byte(fmt.Sprintf(diff, added))
		series, err := readSeries([]string{"fix.diff"}, map[string][]byte{"fix.diff": data})
		if err != nil {
			t.Fatal(err)
		}
		checked, err := patches.Check(tree, series, patches.Options{})
		if err != nil || len(checked.Problems) > 0 {
			t.Fatalf("%q: %v %+v", data, err, checked)
		}
		m := newManifest(&base{Identity: "tree 1"}, series, checked, patches.BuildPlan{}, nil, BuildRequest{})
		if want := fmt.Sprintf("%x", sha256.Sum256(data)); len(m.Patches) != 1 || m.Patches[0].SHA256 != want {
			t.Errorf("%q: recorded %+v, want the file's sha256 %s", data, m.Patches, want)
		}
		keys = append(keys, m.cacheKey())
	}
	if keys[0] == keys[1] {
		t.Errorf("two different diffs of one shape share the key %s", keys[0])
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
		var ie inputerr.Error
		if _, err := readSeries(files, nil); !errors.As(err, &ie) {
			t.Errorf("%v: %v, want an inputerr.Error", files, err)
		}
	}
}

// TestWholeTreePatchRestore: a patched build replaces the series' files in the tree (never
// writing through the link to the fetched source), journalled; restoring puts the base's
// bytes back with a time newer than the patched objects, removes what the series created, and
// a tree left patched by a killed build is restored when it is opened again.
func TestWholeTreePatchRestore(t *testing.T) {
	root := t.TempDir()
	b := &base{Tree: filepath.Join(root, "fetched")}
	for path, text := range map[string]string{"Makefile": "VERSION = 6\n", "net/core/dev.c": "base\n", "scripts/x": "x\n", "scripts/run.sh": "#!/bin/sh\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(b.Tree, path)), 0o755)
		os.WriteFile(filepath.Join(b.Tree, path), []byte(text), 0o644)
	}
	os.Chmod(filepath.Join(b.Tree, "scripts/run.sh"), 0o755)
	os.Symlink("x", filepath.Join(b.Tree, "scripts", "link"))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(b.Tree, "net/core/dev.c"), old, old)
	tr := &wholeTree{dir: filepath.Join(root, "tree"), src: filepath.Join(root, "tree", "src"), journal: filepath.Join(root, "tree", "patched-files.json")}
	if err := linkSource(b.Tree, tr.src, nil); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(tr.src, "scripts", "link")); err != nil || target != "x" {
		t.Errorf("symlink: %q %v", target, err)
	}
	// A script the series changes keeps its mode; a new one gets the series' (git's new file
	// mode 100755), as git apply gives them.
	if err := tr.patch(map[string][]byte{"net/core/dev.c": []byte("patched\n"), "net/core/new.c": []byte("new\n"), "scripts/x": nil,
		"scripts/run.sh": []byte("#!/bin/sh\necho\n"), "scripts/new.sh": []byte("#!/bin/sh\n")}, map[string]fs.FileMode{"scripts/new.sh": 0o755}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{"net/core/dev.c": 0o644, "net/core/new.c": 0o644, "scripts/run.sh": 0o755, "scripts/new.sh": 0o755} {
		if fi, err := os.Stat(filepath.Join(tr.src, path)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", path, fi.Mode().Perm(), want, err)
		}
	}
	read := func(dir, p string) string { data, _ := os.ReadFile(filepath.Join(dir, p)); return string(data) }
	if read(tr.src, "net/core/dev.c") != "patched\n" || read(b.Tree, "net/core/dev.c") != "base\n" || read(b.Tree, "scripts/x") != "x\n" {
		t.Fatalf("patching wrote the fetched source: %q %q", read(b.Tree, "net/core/dev.c"), read(b.Tree, "scripts/x"))
	}
	// A killed build: the tree is opened again with the journal left behind.
	if err := tr.restore(b); err != nil {
		t.Fatal(err)
	}
	if read(tr.src, "net/core/dev.c") != "base\n" || read(tr.src, "scripts/x") != "x\n" {
		t.Errorf("not restored: %q %q", read(tr.src, "net/core/dev.c"), read(tr.src, "scripts/x"))
	}
	if _, err := os.Stat(filepath.Join(tr.src, "net/core/new.c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the series' new file is still there: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(tr.src, "net/core/dev.c")); !st.ModTime().After(old.Add(30 * time.Minute)) {
		t.Errorf("restored with the source's old time %v: make would keep the patched objects", st.ModTime())
	}
	if _, err := os.Stat(tr.journal); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal left: %v", err)
	}
	if err := tr.restore(b); err != nil {
		t.Errorf("restoring a clean tree: %v", err)
	}
}

// TestBuiltTouched: a series whose C file the config does not compile is refused before the
// patched build (it would measure no change); headers and built files pass.
func TestBuiltTouched(t *testing.T) {
	tr := &wholeTree{obj: t.TempDir()}
	p := tr.newPhase(t.TempDir(), "base", true)
	// One object in the tree's objects, one the phase built (in its upper directory).
	os.MkdirAll(filepath.Join(tr.obj, "net/ipv4"), 0o755)
	os.WriteFile(filepath.Join(tr.obj, "net/ipv4/tcp_output.o"), nil, 0o644)
	up := p.overlay(tr.obj).Upper
	os.MkdirAll(filepath.Join(up, "net/core"), 0o755)
	os.WriteFile(filepath.Join(up, "net/core/dev.o"), nil, 0o644)
	if err := tr.builtTouched(p, []string{"net/ipv4/tcp_output.c", "net/core/dev.c", "include/net/tcp.h"}); err != nil {
		t.Errorf("built: %v", err)
	}
	err := tr.builtTouched(p, []string{"net/ipv4/tcp_output.c", "drivers/net/wireguard/send.c"})
	var in inputerr.Error
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "does not build drivers/net/wireguard/send.c") || strings.Contains(err.Error(), "tcp_output") {
		t.Errorf("not built: %v", err)
	}
}

// TestConfigInput: the minimal config's input is the fragment (every option built in, the
// guest's userland among them, the virtual terminal left out) of every shipped scenario, or of the scenarios
// given; a --config that is not a kernel config is refused.
func TestConfigInput(t *testing.T) {
	name, frag, err := configInput(BuildRequest{Config: ConfigMinimal})
	if err != nil || name != ConfigMinimal {
		t.Fatal(name, err)
	}
	for _, want := range []string{"CONFIG_VETH=y\n", "CONFIG_OPENVSWITCH=y\n", "CONFIG_NET_9P_VIRTIO=y\n", "CONFIG_64BIT=y\n", "CONFIG_ACPI=y\n", "# CONFIG_VT is not set\n", "CONFIG_SMP=y\n", "CONFIG_NET_SCHED=y\n"} {
		if !strings.Contains(string(frag), want) {
			t.Errorf("fragment lacks %q", want)
		}
	}
	veth, err := scenarios.Load("veth-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, vethOnly, err := configInput(BuildRequest{Config: ConfigMinimal, Scenarios: []*scenarios.Scenario{veth}})
	if err != nil || !strings.Contains(string(vethOnly), "CONFIG_VETH=y\n") || strings.Contains(string(vethOnly), "OPENVSWITCH") {
		t.Errorf("the fragment of veth-bigtcp alone: %v\n%s", err, vethOnly)
	}
	bad := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(bad, []byte("hello\n"), 0o644)
	if _, _, err := configInput(BuildRequest{Config: bad}); err == nil || !strings.Contains(err.Error(), "not a kernel config") {
		t.Errorf("not a config: %v", err)
	}
	if _, _, err := configInput(BuildRequest{Config: filepath.Join(t.TempDir(), "absent")}); err == nil {
		t.Error("an absent --config was taken")
	}
}

// TestReadSeriesTakesInputs: a patch whose bytes the caller read already (reproduce reads its
// message once) is not read again: a name that no file has is taken from Inputs.
func TestReadSeriesTakesInputs(t *testing.T) {
	data, err := os.ReadFile("../patches/testdata/ovs-internal-port-tso-v2.mbox")
	if err != nil {
		t.Fatal(err)
	}
	series, err := readSeries([]string{"/no/such.mbox"}, map[string][]byte{"/no/such.mbox": data})
	if err != nil || len(series) != 1 || series[0].Subject != "[PATCH net-next v2] openvswitch: raise internal port TSO limit" {
		t.Errorf("series %+v, %v", series, err)
	}
}
