package kbuild

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestGitTreeSource: a git tree is named by its commit, and by the sha256 of `git diff HEAD`
// when its tracked files changed; a build takes its tracked files only (an untracked file is
// left out, a tracked symlink is linked as a symlink). A plain tree configured in place is
// refused, and a directory that is no kernel tree too.
func TestGitTreeSource(t *testing.T) {
	testenv.RequireTool(t, "git")
	dir := t.TempDir()
	for _, f := range []string{"Makefile", "Kconfig", "scripts/kconfig/merge_config.sh", "arch/x86/Kconfig", "net/core/dev.c"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644)
	}
	os.Symlink("dev.c", filepath.Join(dir, "net/core/link.c"))
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	ctx := context.Background()
	b, err := treeBase(ctx, t.TempDir(), dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Identity, "git ") || strings.Contains(b.Identity, "uncommitted") || !slices.Contains(b.Files, "net/core/link.c") {
		t.Errorf("clean git tree: %q %v", b.Identity, b.Files)
	}
	os.WriteFile(filepath.Join(dir, "net/core/dev.c"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "untracked.c"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".config"), []byte("CONFIG_X=y\n"), 0o644) // built in place: git trees take tracked files only
	b2, err := treeBase(ctx, t.TempDir(), dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b2.Identity, "with uncommitted changes") || b2.Identity == b.Identity || slices.Contains(b2.Files, "untracked.c") {
		t.Errorf("changed git tree: %q %v", b2.Identity, b2.Files)
	}
	dst := filepath.Join(t.TempDir(), "src")
	if err := linkSource(dir, dst, b2.Files); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "net/core/link.c")); err != nil || target != "dev.c" {
		t.Errorf("the tracked symlink: %q %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "untracked.c")); err == nil {
		t.Error("an untracked file was taken")
	}
	if data, _ := os.ReadFile(filepath.Join(dst, "net/core/dev.c")); string(data) != "changed\n" {
		t.Errorf("the work tree's file: %q", data)
	}
	os.RemoveAll(filepath.Join(dir, ".git"))
	if _, err := treeBase(ctx, t.TempDir(), dir, io.Discard); err == nil || !strings.Contains(err.Error(), "configured or built in place") {
		t.Errorf("a plain tree with .config: %v", err)
	}
	os.Remove(filepath.Join(dir, ".config"))
	plain, err := treeBase(ctx, t.TempDir(), dir, io.Discard)
	if err != nil || !strings.Contains(plain.Identity, " files ") || plain.Files != nil {
		t.Errorf("a plain tree: %+v %v", plain, err)
	}
	if _, err := treeBase(ctx, t.TempDir(), t.TempDir(), io.Discard); err == nil || !strings.Contains(err.Error(), "not a Linux source tree") {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestGitConfigRunsNothing: a tree's own git configuration cannot make nsperf run a command
// while it names the tree: an fsmonitor hook, a filter driver's clean and smudge commands,
// an external diff and a textconv program are all configured to leave a mark, and none does.
func TestGitConfigRunsNothing(t *testing.T) {
	testenv.RequireTool(t, "git")
	dir := t.TempDir()
	marks := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.c"), []byte("int a;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "a.c")
	run("commit", "-q", "-m", "a")
	mark := func(name string) string {
		return "sh -c 'touch " + filepath.Join(marks, name) + "; cat'"
	}
	for key, value := range map[string]string{
		"core.fsmonitor":       filepath.Join(marks, "..", filepath.Base(marks)+"-fsmonitor.sh"),
		"filter.evil.clean":    mark("clean"),
		"filter.evil.smudge":   mark("smudge"),
		"filter.evil.required": "true",
		"diff.external":        mark("external"),
		"diff.evil.textconv":   mark("textconv"),
	} {
		run("config", key, value)
	}
	hook := filepath.Join(filepath.Dir(marks), filepath.Base(marks)+"-fsmonitor.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "fsmonitor")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=evil diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.c"), []byte("int a, b;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, id, ok, err := gitIdentity(context.Background(), dir)
	if err != nil || !ok || !strings.Contains(id, "with uncommitted changes") || len(files) != 1 {
		t.Errorf("identity %q of %v, %v %v", id, files, ok, err)
	}
	if left, _ := os.ReadDir(marks); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("the tree's git configuration ran: %v", names)
	}
}

// TestGitSubmoduleRunsNothing: a --source tree with a submodule whose own configuration names
// commands (fsmonitor, a filter's clean, an external diff) runs none of them, dirty as the
// submodule is, and is refused with the submodule named: a kernel tree has none, and its
// files would not be built.
func TestGitSubmoduleRunsNothing(t *testing.T) {
	testenv.RequireTool(t, "git")
	top, sub, marks := t.TempDir(), t.TempDir(), t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, d := range []string{top, sub} {
		run(d, "init", "-q")
		os.WriteFile(filepath.Join(d, "a.c"), []byte("int a;\n"), 0o644)
		run(d, "add", "a.c")
		run(d, "commit", "-q", "-m", "a")
	}
	run(top, "submodule", "add", "-q", sub, "lib")
	run(top, "commit", "-q", "-m", "lib")
	inSub := filepath.Join(top, "lib")
	hook := filepath.Join(marks, "fsmonitor.sh")
	os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "fsmonitor-ran")+"\n"), 0o755)
	for key, value := range map[string]string{
		"core.fsmonitor":       hook,
		"filter.evil.clean":    "sh -c 'touch " + filepath.Join(marks, "clean-ran") + "; cat'",
		"filter.evil.required": "true",
		"diff.external":        "sh -c 'touch " + filepath.Join(marks, "external-ran") + "'",
	} {
		run(inSub, "config", key, value)
	}
	os.WriteFile(filepath.Join(inSub, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
	// Same size, a new time: git must read the file (through the filter) to know it changed.
	os.WriteFile(filepath.Join(inSub, "a.c"), []byte("int b;\n"), 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(inSub, "a.c"), later, later)
	_, _, _, err := gitIdentity(context.Background(), top)
	if err == nil || !strings.Contains(err.Error(), "submodule lib") {
		t.Errorf("a tree with a submodule: %v, want it refused naming lib", err)
	}
	if left, _ := os.ReadDir(marks); len(left) > 1 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("the submodule's git configuration ran: %v", names)
	}
}
