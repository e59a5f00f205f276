package patches

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// outcome is what a tool made of a patch on a tree: the files it left (content and mode), or
// why it refused.
type outcome struct {
	files   map[string]string // path -> mode and content
	refused string
}

// nsperfApply is nsperf's reading and check of a patch on base, in memory.
func nsperfApply(text string, base map[string]string, modes map[string]fs.FileMode) outcome {
	series, err := Read("p.patch", []byte(text))
	if err != nil {
		return outcome{refused: err.Error()}
	}
	src := fstest.MapFS{}
	for p, c := range base {
		mode := fs.FileMode(0o644)
		if m := modes[p]; m != 0 {
			mode = m
		}
		src[p] = &fstest.MapFile{Data: []byte(c), Mode: mode}
	}
	r, err := Check(src, series, Options{})
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return outcome{refused: err.Error()}
	}
	out := outcome{files: map[string]string{}}
	for p, c := range base {
		out.files[p] = fmt.Sprintf("%o %s", src[p].Mode.Perm(), c)
	}
	for p, c := range r.Files {
		if c == nil {
			delete(out.files, p)
			continue
		}
		mode := fs.FileMode(0o644)
		if f, ok := src[p]; ok {
			mode = f.Mode.Perm()
		}
		if m := r.Modes[p]; m != 0 {
			mode = m
		}
		out.files[p] = fmt.Sprintf("%o %s", mode, c)
	}
	return out
}

// gitApply is `git apply` of the patch on base written to a scratch directory.
func gitApply(t *testing.T, text string, base map[string]string, modes map[string]fs.FileMode) outcome {
	t.Helper()
	dir := t.TempDir()
	for p, c := range base {
		path := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(path), 0o755)
		mode := fs.FileMode(0o644)
		if m := modes[p]; m != 0 {
			mode = m
		}
		if err := os.WriteFile(path, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, mode)
	}
	patch := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(patch, []byte(text), 0o644)
	cmd := exec.Command("git", "apply", patch)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent")
	if out, err := cmd.CombinedOutput(); err != nil {
		return outcome{refused: strings.TrimSpace(string(out))}
	}
	got := outcome{files: map[string]string{}}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, _ := d.Info()
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got.files[rel] = fmt.Sprintf("%o %s", fi.Mode().Perm(), data)
		return nil
	})
	return got
}

// formatPatch wraps diffs as a format-patch mail, with git's signature after them.
func formatPatch(diffs ...string) string {
	return "From: a <a@b>\nSubject: [PATCH] t: a change\n\nWhy.\n---\n" + strings.Join(diffs, "") + "-- \n2.39.5\n\n"
}

const fileA = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"

// TestLikeGitApply: nsperf reads and applies patches as git apply does: generated cases (new
// files with their modes, deletions whole and partial, mode changes with and without hunks, a
// diff after the signature line, a header that counts too few lines, hunks at the start and
// at the end of a file, a hunk that does not match) give the same files or both refuse, and
// where nsperf refuses on purpose (a link, a path out of the tree, line numbers past any file)
// it says why.
func TestLikeGitApply(t *testing.T) {
	testenv.RequireTool(t, "git")
	modify := "diff --git a/a.c b/a.c\nindex 1..2 100644\n--- a/a.c\n+++ b/a.c\n@@ -3,3 +3,3 @@\n three\n-four\n+FOUR\n five\n"
	for _, tc := range []struct {
		name    string
		patch   string
		base    map[string]string
		modes   map[string]fs.FileMode
		ownWhy  string // nsperf refuses on purpose, saying this; "" when it must agree with git
		refused bool   // both refuse
	}{
		{name: "modify", patch: formatPatch(modify)},
		{name: "new file", patch: formatPatch("diff --git a/n.c b/n.c\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.c\n@@ -0,0 +1,2 @@\n+int a;\n+int b;\n")},
		{name: "new script", patch: formatPatch("diff --git a/s.sh b/s.sh\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/s.sh\n@@ -0,0 +1 @@\n+#!/bin/sh\n")},
		{name: "deletion", patch: formatPatch("diff --git a/a.c b/a.c\ndeleted file mode 100644\nindex 1..0000000\n--- a/a.c\n+++ /dev/null\n@@ -1,7 +0,0 @@\n-one\n-two\n-three\n-four\n-five\n-six\n-seven\n")},
		{name: "partial deletion", refused: true, patch: formatPatch("diff --git a/a.c b/a.c\ndeleted file mode 100644\n--- a/a.c\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n")},
		{name: "mode change", patch: formatPatch("diff --git a/a.c b/a.c\nold mode 100644\nnew mode 100755\n")},
		{name: "mode change and hunk", patch: formatPatch("diff --git a/a.c b/a.c\nold mode 100644\nnew mode 100755\nindex 1..2\n--- a/a.c\n+++ b/a.c\n@@ -3,3 +3,3 @@\n three\n-four\n+FOUR\n five\n")},
		{name: "mode back", modes: map[string]fs.FileMode{"a.c": 0o755}, patch: formatPatch("diff --git a/a.c b/a.c\nold mode 100755\nnew mode 100644\n")},
		{name: "a diff after the signature", patch: formatPatch(modify) + "diff --git a/b.c b/b.c\n--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-b\n+B\n", base: map[string]string{"a.c": fileA, "b.c": "b\n"}},
		{name: "a header that counts too few", refused: true, patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -3,2 +3,2 @@\n three\n-four\n+FOUR\n five\n+hidden\n")},
		{name: "a cut hunk", refused: true, patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -3,4 +3,4 @@\n three\n-four\n+FOUR\n")},
		{name: "at the start", patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,3 @@\n+zero\n one\n two\n")},
		{name: "at the end", patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -6,2 +6,3 @@\n six\n seven\n+eight\n")},
		{name: "no match", refused: true, patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -3,3 +3,3 @@\n three\n-FOUR\n+4\n five\n")},
		{name: "the file is missing", refused: true, patch: formatPatch("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-x\n+y\n")},
		{name: "a new file that exists", refused: true, patch: formatPatch("diff --git a/a.c b/a.c\nnew file mode 100644\n--- /dev/null\n+++ b/a.c\n@@ -0,0 +1 @@\n+x\n")},
		{name: "a symlink", ownWhy: "symbolic link", patch: formatPatch("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n")},
		{name: "a symlink, 0120000", ownWhy: "symbolic link", patch: formatPatch("diff --git a/l b/l\nnew file mode 0120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n")},
		{name: "absolute after b/", ownWhy: "an absolute path", patch: formatPatch("diff --git a/a.c b//etc/x\n--- a/a.c\n+++ b//etc/x\n@@ -3,3 +3,3 @@\n three\n-four\n+FOUR\n five\n")},
		{name: "out of the tree", ownWhy: "leaves the source", patch: formatPatch("diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-x\n+y\n")},
		{name: "a start near 2^63", ownWhy: "past any source file", patch: formatPatch("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -9223372036854775806,3 +9223372036854775806,3 @@\n three\n-four\n+FOUR\n five\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == nil {
				base = map[string]string{"a.c": fileA}
			}
			ours, git := nsperfApply(tc.patch, base, tc.modes), gitApply(t, tc.patch, base, tc.modes)
			switch {
			case tc.ownWhy != "":
				if !strings.Contains(ours.refused, tc.ownWhy) {
					t.Errorf("nsperf: %+v, want refused with %q (git: %+v)", ours, tc.ownWhy, git)
				}
			case tc.refused:
				if ours.refused == "" || git.refused == "" {
					t.Errorf("want both to refuse: nsperf %+v, git %+v", ours, git)
				}
			default:
				if ours.refused != "" || git.refused != "" || !equalFiles(ours.files, git.files) {
					t.Errorf("nsperf %+v\ngit    %+v", ours, git)
				}
			}
		})
	}
}

// TestLikeGitApplyOnReal: every mail of the seeds and of the claims corpus that carries a diff
// applies, on a base made from its own hunks (their context and removed lines where the hunk
// headers put them), to the same files with nsperf and with git apply.
func TestLikeGitApplyOnReal(t *testing.T) {
	testenv.RequireTool(t, "git")
	inputs, _ := filepath.Glob("testdata/*.mbox")
	more, _ := filepath.Glob("testdata/*.patch")
	corpus, _ := filepath.Glob("testdata/corpus/*.txt")
	inputs = slices.Concat(inputs, more, corpus)
	compared := 0
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		series, err := ReadMessages(in, data)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		for i, p := range series {
			if len(p.Files) == 0 {
				continue
			}
			base := baseOf(p)
			text := rawDiff(p)
			ours, git := nsperfApply(text, base, nil), gitApply(t, text, base, nil)
			if ours.refused != "" || git.refused != "" || !equalFiles(ours.files, git.files) {
				t.Errorf("%s patch %d (%s): nsperf %v / git %v", in, i+1, p.Name(), ours.refused, git.refused)
			}
			compared++
		}
	}
	if compared < 12 {
		t.Errorf("compared %d mails, want the seeds' and the corpus' (at least 12)", compared)
	}
}

// baseOf is a source on which p applies exactly: each file's hunks' old lines (context and
// removed) at the lines their headers name, the gaps filled with lines of their own.
func baseOf(p Patch) map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		if f.OldPath == "" {
			continue
		}
		var lines []string
		for _, h := range f.Hunks {
			start := oldIndex(h)
			for len(lines) < start {
				lines = append(lines, fmt.Sprintf("/* filler %d */", len(lines)+1))
			}
			lines = append(lines[:min(start, len(lines))], h.Old()...)
		}
		lines = append(lines, "/* the end */")
		out[f.OldPath] = strings.Join(lines, "\n") + "\n"
	}
	return out
}

// rawDiff is p's diff as git format-patch writes it, from what nsperf read.
func rawDiff(p Patch) string {
	var b strings.Builder
	b.WriteString("From: a <a@b>\nSubject: " + p.Subject + "\n\n---\n")
	for _, f := range p.Files {
		old, new := "a/"+f.OldPath, "b/"+f.NewPath
		if f.OldPath == "" {
			old = "/dev/null"
		}
		if f.NewPath == "" {
			new = "/dev/null"
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- %s\n+++ %s\n", f.Path(), f.Path(), old, new)
		for _, h := range f.Hunks {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@ %s\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Section)
			for _, l := range h.Lines {
				b.WriteString(string(l.Op) + l.Text + "\n")
			}
		}
	}
	return b.String()
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestManyFailingHunks: a series of 20,000 hunks that do not apply is checked only until 100
// problems (the series does not apply either way), and the last says the check stopped.
func TestManyFailingHunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "@@ -%d,1 +%d,1 @@\n-missing %d\n+x\n", i+1, i+1, i)
	}
	series, err := Read("many.patch", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(fstest.MapFS{"a.c": {Data: []byte(strings.Repeat("line\n", 20000))}}, series, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) > maxProblems+1 || !strings.Contains(r.Problems[len(r.Problems)-1].Msg, "stopped after 100 problems") {
		t.Errorf("%d problems, the last %q", len(r.Problems), r.Problems[len(r.Problems)-1].Msg)
	}
}
