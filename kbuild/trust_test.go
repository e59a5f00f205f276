package kbuild

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/sandbox"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestManifestTrusted: a manifest read from the cache is used only when it is of the key and
// base looked up and names two kernels inside the cache; a foreign or edited one (a kernel of
// /etc/shadow, another key's, one kernel) is refused, so that its paths are never booted.
func TestManifestTrusted(t *testing.T) {
	testenv.RequireRoot(t)
	cache := t.TempDir()
	dir := filepath.Join(cache, "builds", "k1")
	for _, p := range []string{"base", "patched"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"base/bzImage", "patched/bzImage"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept := &Manifest{}
	if err := kept.keepBuilt(dir); err != nil {
		t.Fatal(err)
	}
	want := &Manifest{Build: results.Build{Key: "k1", Source: "debian 1", Mode: ModeModules}}
	want.Dir = dir
	good := func() *Manifest {
		return &Manifest{Build: results.Build{Key: "k1", Source: "debian 1", Mode: ModeModules}, Kernels: []BuiltKernel{
			{Label: "base", Image: filepath.Join(dir, "base"), Modules: filepath.Join(dir, "base")},
			{Label: "patched", Image: filepath.Join(dir, "patched"), Modules: filepath.Join(dir, "patched")}}, Files: maps.Clone(kept.Files)}
	}
	if err := good().trusted(want, cache); err != nil {
		t.Fatalf("the build's own manifest: %v", err)
	}
	if len(kept.Files) != 2 {
		t.Errorf("recorded %v, want the two images", kept.Files)
	}
	for name, c := range map[string]struct {
		edit func(*Manifest)
		want string
	}{
		"another key":         {func(m *Manifest) { m.Key = "k2" }, `of key "k2"`},
		"another base":        {func(m *Manifest) { m.Source = "tarball x" }, "not debian 1"},
		"a kernel outside":    {func(m *Manifest) { m.Kernels[1].Image = "/etc/shadow" }, "/etc/shadow, outside the cache"},
		"up and out":          {func(m *Manifest) { m.Kernels[0].Modules = filepath.Join(cache, "..", "x") }, "outside the cache"},
		"one kernel":          {func(m *Manifest) { m.Kernels = m.Kernels[:1] }, "the two kernels"},
		"a kernel missing":    {func(m *Manifest) { m.Kernels[1].Image = filepath.Join(dir, "gone") }, "its patched kernel"},
		"labels swapped":      {func(m *Manifest) { m.Kernels[0], m.Kernels[1] = m.Kernels[1], m.Kernels[0] }, "the two kernels"},
		"no version fields":   {func(m *Manifest) { *m = Manifest{} }, `of key ""`},
		"no files recorded":   {func(m *Manifest) { m.Files = nil }, "records no files"},
		"a file not recorded": {func(m *Manifest) { delete(m.Files, "patched/bzImage") }, "not a file the build made"},
		"a file gone":         {func(m *Manifest) { m.Files["patched/vmlinux"] = "x" }, "1 of the 3 files the build made are gone"},
		"another content":     {func(m *Manifest) { m.Files["base/bzImage"] = strings.Repeat("0", 64) }, "is not the file the build made"},
	} {
		m := good()
		c.edit(m)
		if err := m.trusted(want, cache); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	// A kernel swapped by someone else than root (as nobody could when builds left their
	// files nobody's), its content the same: refused for its owner.
	os.Lchown(filepath.Join(dir, "patched", "bzImage"), sandbox.NobodyUID, sandbox.NobodyGID)
	if err := good().trusted(want, cache); err == nil || !strings.Contains(err.Error(), "owned by 65534:65534, not root") {
		t.Errorf("a kernel of nobody's: %v", err)
	}
}

// TestLockForEndsWithContext: a build waiting for the lock of a key another process holds says
// so and ends with its context (^C), rather than waiting on in flock; the lock of another key
// (a module build beside a whole kernel's) is not held up.
func TestLockForEndsWithContext(t *testing.T) {
	cache := t.TempDir()
	unlock, err := lockFor(context.Background(), cache, "build-one", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// flock locks are per open file: a second open in this process waits as another would.
	other, err := lockFor(context.Background(), cache, "build-another", io.Discard)
	if err != nil {
		t.Fatalf("another key's lock: %v", err)
	}
	other()
	ctx, cancel := context.WithCancel(context.Background())
	var said strings.Builder
	done := make(chan error, 1)
	go func() {
		unlock2, err := lockFor(ctx, cache, "build-one", &syncWriter{w: &said})
		if err == nil {
			unlock2()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the wait ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait for the lock did not end with its context")
	}
	if !strings.Contains(said.String(), "waiting for another nsperf process using build-one (lock "+filepath.Join(cache, "locks", "build-one")+")") {
		t.Errorf("the wait was not said: %q", said.String())
	}
}

// syncWriter is a writer a goroutine writes and the test reads after it ended.
type syncWriter struct{ w io.Writer }

func (s *syncWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// TestWholeTreeStaysInside: a tree's link that leads out of it is never followed by patching
// or restoring (a patch deleting net/x.c through net -> /elsewhere deleted the file there),
// and a journal naming paths outside the tree is refused.
func TestWholeTreeStaysInside(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "x.c")
	if err := os.WriteFile(victim, []byte("host file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &base{Tree: filepath.Join(root, "fetched")}
	os.MkdirAll(b.Tree, 0o755)
	os.WriteFile(filepath.Join(b.Tree, "Makefile"), []byte("VERSION = 6\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(b.Tree, "net")); err != nil {
		t.Fatal(err)
	}
	tr := &wholeTree{dir: filepath.Join(root, "tree"), src: filepath.Join(root, "tree", "src"), journal: filepath.Join(root, "tree", "patched-files.json")}
	if err := linkSource(b.Tree, tr.src, nil); err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string]map[string][]byte{
		"delete": {"net/x.c": nil},
		"write":  {"net/x.c": []byte("patched\n")},
		"create": {"net/new.c": []byte("new\n")},
	} {
		if err := tr.patch(files, nil); err == nil {
			t.Errorf("%s through a link out of the tree: no error", name)
		}
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "host file\n" {
		t.Fatalf("the file outside the tree: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the tree: %v", err)
	}
	for _, journal := range []string{`["../outside/x.c"]`, `["` + victim + `"]`, `["net/x.c"]`} {
		if err := os.WriteFile(tr.journal, []byte(journal), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := tr.restore(b); err == nil {
			t.Errorf("journal %s: restored", journal)
		}
		if data, err := os.ReadFile(victim); err != nil || string(data) != "host file\n" {
			t.Fatalf("journal %s: the file outside the tree: %q %v", journal, data, err)
		}
	}
}

// TestTreeThroughALink: --source given as a link to a tree takes the tree itself (its path is
// the base's), so that linking its files into the build's copy walks the tree, not the link
// (it failed with "file exists"); a tree's link that leads out of it is not read by the check.
func TestTreeThroughALink(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "linux-6.12")
	for _, f := range []string{"Makefile", "Kconfig", "scripts/kconfig/merge_config.sh", "arch/x86/Kconfig", "net/core/dev.c"} {
		os.MkdirAll(filepath.Join(tree, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(tree, f), []byte(f+"\n"), 0o644)
	}
	link := filepath.Join(root, "linux")
	if err := os.Symlink("linux-6.12", link); err != nil {
		t.Fatal(err)
	}
	b, err := treeBase(context.Background(), t.TempDir(), link, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if b.Tree != tree || !strings.Contains(b.Identity, tree) {
		t.Errorf("the base: %q (%s), want the tree %s", b.Tree, b.Identity, tree)
	}
	dst := filepath.Join(root, "copy")
	if err := linkSource(b.Tree, dst, nil); err != nil {
		t.Fatalf("linking the tree: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "net/core/dev.c")); err != nil || string(data) != "net/core/dev.c\n" {
		t.Errorf("the copy: %q %v", data, err)
	}
}
