package kbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
)

// entry is one member of a test tarball.
type entry struct {
	name, link, body string
	typ              byte
	mode             int64
	size             int64 // the header's, when it differs from the body's
}

// kernelEntries make a tarball whose top directory looks like a kernel tree.
var kernelEntries = []entry{
	{name: "linux-6.12/", typ: tar.TypeDir, mode: 0o775},
	{name: "linux-6.12/Makefile", body: "VERSION = 6\n", mode: 0o664},
	{name: "linux-6.12/Kconfig", body: "# Kconfig\n", mode: 0o644},
	{name: "linux-6.12/arch/x86/Kconfig", body: "# x86\n", mode: 0o644},
	{name: "linux-6.12/scripts/kconfig/merge_config.sh", body: "#!/bin/sh\n", mode: 0o755},
	// A link inside the tree, as the kernel's include/dt-bindings are.
	{name: "linux-6.12/scripts/dtc/include-prefixes/arm", link: "../../../arch/x86", typ: tar.TypeSymlink, mode: 0o777},
}

// tarball writes entries as a tar file, compressed with compress when it is set.
func tarball(t *testing.T, dir, name string, compress func(io.Writer) io.WriteCloser, entries []entry) string {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		size := int64(len(e.body))
		if e.size != 0 {
			size = e.size
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Linkname: e.link, Typeflag: typ, Mode: e.mode, Size: size, ModTime: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body)) // a short body (e.size) is the hostile part
	}
	tw.Close()
	var out bytes.Buffer
	w := io.WriteCloser(nopCloser{&out})
	if compress != nil {
		w = compress(&out)
	}
	w.Write(raw.Bytes())
	w.Close()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func gz(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }

func xzw(w io.Writer) io.WriteCloser {
	x, err := xz.NewWriter(w)
	if err != nil {
		panic(err)
	}
	return x
}

// TestTarballBase: a kernel tarball (xz, gzip or plain; named relative to the working
// directory) unpacks as nsperf's own files: no setuid, setgid or sticky bit, directories 0755,
// files 0644 or 0755, links that stay in the tree kept (a chain of them too), times kept.
func TestTarballBase(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	entries := append(kernelEntries,
		entry{name: "linux-6.12/tools/suid", body: "x", mode: 0o4755},
		entry{name: "linux-6.12/tools/wide", body: "x", mode: 0o777},
		entry{name: "linux-6.12/tools/shared", body: "x", mode: 0o666},
		entry{name: "linux-6.12/tools/sticky/", typ: tar.TypeDir, mode: 0o1777},
		// A chain that stays in the tree, its link made after the one through it.
		entry{name: "linux-6.12/tools/kconfig", link: "../arch/up/x86/Kconfig", typ: tar.TypeSymlink, mode: 0o777},
		entry{name: "linux-6.12/arch/up", link: "../arch", typ: tar.TypeSymlink, mode: 0o777})
	for _, tc := range []struct {
		name     string
		compress func(io.Writer) io.WriteCloser
	}{{"linux.tar.xz", xzw}, {"linux.tar.gz", gz}, {"linux.tar", nil}} {
		path := tarball(t, dir, tc.name, tc.compress, entries)
		t.Chdir(dir)
		b, err := tarballBase(context.Background(), cache, tc.name, io.Discard) // relative
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for name, want := range map[string]os.FileMode{
			"Makefile": 0o644, "scripts/kconfig/merge_config.sh": 0o755, "tools/suid": 0o755, "tools/wide": 0o755,
			"tools/shared": 0o644, "tools/sticky": os.ModeDir | 0o755, "arch": os.ModeDir | 0o755,
		} {
			fi, err := os.Lstat(filepath.Join(b.Tree, name))
			if err != nil || fi.Mode() != want {
				t.Errorf("%s: %s: mode %v, want %v (%v)", tc.name, name, fi.Mode(), want, err)
			}
		}
		if target, err := os.Readlink(filepath.Join(b.Tree, "scripts/dtc/include-prefixes/arm")); err != nil || target != "../../../arch/x86" {
			t.Errorf("%s: the link in the tree: %q %v", tc.name, target, err)
		}
		if text, err := os.ReadFile(filepath.Join(b.Tree, "tools/kconfig")); err != nil || string(text) != "# x86\n" {
			t.Errorf("%s: the chain of links in the tree: %q %v", tc.name, text, err)
		}
		if fi, _ := os.Stat(filepath.Join(b.Tree, "Makefile")); !fi.ModTime().Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: the time was not kept: %v", tc.name, fi.ModTime())
		}
		if !strings.HasPrefix(b.Identity, "tarball "+tc.name+" sha256 ") {
			t.Errorf("identity %q", b.Identity)
		}
		_ = path
	}
}

// TestTarballRefused: a tarball with a device node, a FIFO, a path or a link out of the tree
// (alone, or through the tree's other links: a chain, a link written through a linked
// directory or moved by a hard link, a target through a later link, a loop), a file larger than a kernel's, more entries than a kernel has, or that is not a kernel tree
// is refused naming why, and leaves nothing in the cache or outside it.
func TestTarballRefused(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	defer func(files int, file int64) { maxTarballFiles, maxTarballFile = files, file }(maxTarballFiles, maxTarballFile)
	maxTarballFile = 1 << 20
	for _, tc := range []struct {
		name  string
		extra []entry
		want  string
	}{
		{"device", []entry{{name: "linux-6.12/dev", typ: tar.TypeChar, mode: 0o666}}, "a device node"},
		{"fifo", []entry{{name: "linux-6.12/fifo", typ: tar.TypeFifo, mode: 0o644}}, "a FIFO"},
		{"absolute", []entry{{name: filepath.Join(outside, "x"), body: "x", mode: 0o644}}, "an absolute path"},
		{"dotdot", []entry{{name: "linux-6.12/../../x", body: "x", mode: 0o644}}, "a path out of the tree"},
		{"link out", []entry{{name: "linux-6.12/etc", link: outside, typ: tar.TypeSymlink, mode: 0o777}}, "a link to an absolute path"},
		{"link up", []entry{{name: "linux-6.12/up", link: "../../..", typ: tar.TypeSymlink, mode: 0o777}}, "a link out of the tree"},
		{"hard link out", []entry{{name: "linux-6.12/passwd", link: "../etc/passwd", typ: tar.TypeLink}}, "a hard link"},
		// Links that each stay in the tree as written, and lead out through another link.
		// L is the unpacked tree's top; S, written through L, lands there and climbs out.
		{"link through a link", []entry{
			{name: "linux-6.12/a/b/L", link: "../../..", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/a/b/L/S", link: "../../../etc/shadow", typ: tar.TypeSymlink, mode: 0o777},
		}, "a link out of the tree"},
		// S's target passes through L, which comes later in the archive: L/.. is the top's
		// parent, where path.Clean would have taken it for a/b.
		{"target through a later link", []entry{
			{name: "linux-6.12/S", link: "a/b/L/../etc/shadow", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/a/b/L", link: "../../..", typ: tar.TypeSymlink, mode: 0o777},
		}, "a link out of the tree"},
		// A chain: S -> T -> U -> .., each a step that stays in the tree alone.
		{"chain of links", []entry{
			{name: "linux-6.12/x/S", link: "../y/T/etc/shadow", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/y/T", link: "../z/U/..", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/z/U", link: "../..", typ: tar.TypeSymlink, mode: 0o777},
		}, "a link out of the tree"},
		// A hard link to a link moves it: ../../../x stays in from a/b, not from the top.
		{"hard link to a link", []entry{
			{name: "linux-6.12/a/b/s", link: "../../../x", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/h", link: "linux-6.12/a/b/s", typ: tar.TypeLink},
		}, "a link out of the tree"},
		{"links in a loop", []entry{
			{name: "linux-6.12/p", link: "q", typ: tar.TypeSymlink, mode: 0o777},
			{name: "linux-6.12/q", link: "p", typ: tar.TypeSymlink, mode: 0o777},
		}, "more than 40 links"},
		{"huge file", []entry{{name: "linux-6.12/big", body: "x", size: 2 << 20, mode: 0o644}}, "larger than any file of a kernel tree"},
		{"not a kernel", []entry{{name: "other/", typ: tar.TypeDir, mode: 0o755}}, "one top directory"},
	} {
		cache := t.TempDir()
		path := tarball(t, dir, tc.name+".tar.gz", gz, append(append([]entry{}, kernelEntries...), tc.extra...))
		_, err := tarballBase(context.Background(), cache, path, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if left, _ := os.ReadDir(filepath.Join(cache, "sources")); len(left) > 0 {
			t.Errorf("%s: left in the cache: %v", tc.name, left)
		}
		if left, _ := os.ReadDir(outside); len(left) > 0 {
			t.Errorf("%s: written outside: %v", tc.name, left)
		}
	}
	maxTarballFiles = 3
	if _, err := tarballBase(context.Background(), t.TempDir(), tarball(t, dir, "many.tar", nil, kernelEntries), io.Discard); err == nil || !strings.Contains(err.Error(), "more than 3 entries") {
		t.Errorf("too many entries: %v", err)
	}
	if _, err := tarballBase(context.Background(), t.TempDir(), "/dev/zero", io.Discard); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a device as the tarball: %v", err)
	}
}

// TestTarballBudget: an archive's entries and file bytes are counted against the bounds of a
// kernel tree: a file above maxTarballFile is refused by name, files that come to more than
// maxTarballBytes together are refused though each is within its bound, and one entry past
// maxTarballFiles is refused.
func TestTarballBudget(t *testing.T) {
	defer func(files int, file, bytes int64) {
		maxTarballFiles, maxTarballFile, maxTarballBytes = files, file, bytes
	}(maxTarballFiles, maxTarballFile, maxTarballBytes)
	maxTarballFiles, maxTarballFile, maxTarballBytes = 3, 100, 250
	for _, tc := range []struct {
		name  string
		sizes []int64
		want  string // "" when every file fits
	}{
		{"within the bounds", []int64{100, 100, 50}, ""},
		{"a file too large", []int64{10, 101}, "b: 101 bytes, above 100 bytes"},
		{"too many bytes in all", []int64{100, 100, 51}, "it unpacks to more than 250 bytes"},
		{"too many entries", []int64{1, 1, 1, 1}, "more than 3 entries"},
	} {
		var b tarballBudget
		var err error
		for i, size := range tc.sizes {
			if err = b.entry(); err != nil {
				break
			}
			if err = b.file(string(rune('a'+i)), size); err != nil {
				break
			}
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
