package kbuild

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/vm"
)

// standInMakefile is a kernel tree's Makefile reduced to the targets a whole build runs:
// each object is "compiled" by running its source as a shell script in the object
// directory (its output is the object), and bzImage is the objects one after the other.
const standInMakefile = `VERSION = 6
PATCHLEVEL = 12
SUBLEVEL = 0
EXTRAVERSION = -standin
OBJS := $(O)/a.o $(O)/b.o
tinyconfig:
	echo CONFIG_STANDIN=y > $(O)/.config
olddefconfig:
	true
kernelrelease:
	@echo 6.12.0-standin
bzImage: $(OBJS)
	mkdir -p $(O)/arch/x86/boot
	cat $(OBJS) > $(O)/arch/x86/boot/bzImage
modules:
	true
modules_install:
	mkdir -p $(INSTALL_MOD_PATH)
$(O)/%.o: %.c
	cd $(O) && sh $(CURDIR)/$< > $*.o
.PHONY: tinyconfig olddefconfig kernelrelease bzImage modules modules_install
`

// standInTree is a tree as --source takes it, with the stand-in Makefile.
func standInTree(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	for name, text := range map[string]string{
		"Makefile":                        standInMakefile,
		"Kconfig":                         "# stand-in\n",
		"arch/x86/Kconfig":                "# stand-in\n",
		"scripts/kconfig/merge_config.sh": "#!/bin/sh\n# merge_config.sh -m -O OBJ CONFIG FRAGMENT\ncat \"$5\" >> \"$4\"\n",
		"a.c":                             "echo a\n",
		"b.c":                             "echo b\n",
	} {
		path := filepath.Join(tree, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// TestBuildsIsolated: one patch's build plants an object of another file in the tree's
// objects (its a.c, "compiled", also writes b.o); a later build of another patch on the same
// tree has none of it in either kernel, and the tree's objects are still the base's. What
// the builds keep is root's alone.
func TestBuildsIsolated(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bwrap")
	testenv.RequireTool(t, "make")
	tree, cache := standInTree(t), t.TempDir()
	build := func(name, newA string) *Manifest {
		t.Helper()
		patch := filepath.Join(t.TempDir(), name+".patch")
		text := "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-echo a\n" + newA
		if err := os.WriteFile(patch, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Build(context.Background(), BuildRequest{Patches: []string{patch}, Source: tree, Cache: cache, Progress: io.Discard})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	image := func(m *Manifest, i int) string {
		data, err := os.ReadFile(filepath.Join(m.Kernels[i].Image, vm.BuildTreeImage))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	planter := build("planter", "+echo A; echo PLANTED > b.o\n")
	if got := image(planter, 0); got != "a\nb\n" {
		t.Errorf("the planter's base kernel: %q", got)
	}
	other := build("other", "+echo B\n")
	for i, want := range []string{"a\nb\n", "B\nb\n"} {
		if got := image(other, i); got != want {
			t.Errorf("the next patch's %s kernel is %q, want %q: another build's object reached it", other.Kernels[i].Label, got, want)
		}
	}
	objs, _ := filepath.Glob(filepath.Join(cache, "trees", "*", "obj", "b.o"))
	for _, o := range objs {
		if data, _ := os.ReadFile(o); string(data) != "b\n" {
			t.Errorf("%s is %q: the tree's objects are not the base's", o, data)
		}
	}
	// The builds' directories are root's and writable by root alone; the trees (nobody's
	// objects) are reachable by root alone.
	for _, m := range []*Manifest{planter, other} {
		filepath.WalkDir(m.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Error(err)
				return nil
			}
			fi, _ := os.Lstat(p)
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("%s: %d:%d %v, want root's and writable by root alone", p, st.Uid, st.Gid, fi.Mode())
			}
			return nil
		})
	}
	if fi, err := os.Stat(filepath.Join(cache, "trees")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("trees/: %v %v, want 0700", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "builds", "*.tmp-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestBuildStoppedAtLimits: a patch whose build writes without end (an object "compiled" from
// /dev/zero) or never ends is stopped at its limit with a sentence naming it and how to
// change it; nothing is added to the cache, and the tree's objects are still the base's.
func TestBuildStoppedAtLimits(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bwrap")
	testenv.RequireTool(t, "make")
	tree, cache := standInTree(t), t.TempDir()
	t.Setenv("NSPERF_BUILD_SPACE", "64M")
	t.Setenv("NSPERF_BUILD_TIMEOUT", "20s")
	for name, c := range map[string]struct{ newA, want string }{
		"writes without end": {"+cat /dev/zero\n", "stopped: it wrote more than 64 MiB into "},
		"never ends":         {"+sleep 3600\n", "stopped: it ran longer than 20s, its limit (NSPERF_BUILD_TIMEOUT)"},
	} {
		patch := filepath.Join(t.TempDir(), "p.patch")
		os.WriteFile(patch, []byte("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-echo a\n"+c.newA), 0o644)
		_, err := Build(context.Background(), BuildRequest{Patches: []string{patch}, Source: tree, Cache: cache, Progress: io.Discard})
		var be *BuildError
		if !errors.As(err, &be) || be.Label != "patched" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want the patched build stopped: %q", name, err, c.want)
		}
		builds, _ := os.ReadDir(filepath.Join(cache, "builds"))
		for _, b := range builds {
			if !strings.HasSuffix(b.Name(), ".logs") {
				t.Errorf("%s: %s left in the cache", name, b.Name())
			}
		}
	}
	objs, _ := filepath.Glob(filepath.Join(cache, "trees", "*", "obj", "a.o"))
	for _, o := range objs {
		if data, _ := os.ReadFile(o); string(data) != "a\n" {
			t.Errorf("%s is %.20q: the tree's objects are not the base's", o, data)
		}
	}
	if len(objs) != 1 {
		t.Errorf("the tree's objects: %v", objs)
	}
}

// TestBuildLimitsChecked: a limit set wrong in the environment is refused before anything is
// fetched or built, with the variable named.
func TestBuildLimitsChecked(t *testing.T) {
	cache := t.TempDir()
	for env, value := range map[string]string{"NSPERF_BUILD_TIMEOUT": "soon", "NSPERF_BUILD_SPACE": "lots"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, value)
			_, err := Build(context.Background(), BuildRequest{Patches: []string{"none.patch"}, Cache: cache})
			var in inputerr.Error
			if !errors.As(err, &in) || !strings.Contains(err.Error(), env+"="+value) {
				t.Errorf("%v, want an input error naming %s", err, env)
			}
		})
	}
	if entries, _ := os.ReadDir(cache); len(entries) > 0 {
		t.Errorf("the cache has %d entries", len(entries))
	}
}
