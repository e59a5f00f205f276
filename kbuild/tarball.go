package kbuild

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/nsperf/nsperf/internal/safefile"
)

// Bounds of a source tarball: Linux 6.12's unpacks to about 1.5 GB in 90,000 files, its
// largest file 24 MB. (Variables: the tests lower them.)
var (
	maxTarballBytes int64 = 4 << 30
	maxTarballFiles       = 300_000
	maxTarballFile  int64 = 64 << 20
)

// unpackTarball unpacks a source tarball (plain, gzip, xz, bzip2 or zstd: read from its first
// bytes) into dir, which exists and is empty, as nsperf's own files: directories 0755, files
// 0644 or 0755 (executable for anyone when executable for someone in the archive), with no
// owner, setuid, setgid or sticky bit of the archive's. Refused with the entry named: a path
// out of the tree (absolute or ../), a link leading out of it, a device node, a FIFO, more than
// maxTarballFiles entries or maxTarballBytes in all, a file above maxTarballFile. Nothing is
// written outside dir (os.Root: no path, link or ../ of the archive reaches out); the caller
// removes dir when this fails. `tar -xf --no-same-owner --no-same-permissions`, bounded.
//
// A link's target is checked twice: as written, from the entry's name, when it is unpacked
// (the early refusal of ../../.. and /etc); then every link of the tree as unpacked, where it
// landed, resolved through the tree's other links as the kernel would (linksInTree). Only the
// second is sound: a link can land elsewhere than its name says (written through a linked
// directory, or moved by a hard link to it), and its target can pass through a link that a
// later entry makes (L/.. is L's target's parent, not L's directory). Checking the tree once
// whole makes the order of the entries irrelevant.
func unpackTarball(file, dir string) error {
	f, err := openRegular(file)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := decompressed(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := unpackEntries(root, tar.NewReader(r)); err != nil {
		return err
	}
	return linksInTree(root)
}

// openRegular opens file for reading, refused unless it is a regular file: opened O_NONBLOCK,
// so that a FIFO is refused rather than waited on.
func openRegular(file string) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w (%s)", safefile.ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// unpackEntries unpacks the archive's entries into root in their order, within the bounds of a
// kernel tree; an archive without a single entry is no tarball.
func unpackEntries(root *os.Root, tr *tar.Reader) error {
	var budget tarballBudget
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if budget.entries == 0 {
				return errors.New("not a tar archive: it holds no files")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("not a tar archive nsperf can read: %w", err)
		}
		if err := budget.entry(); err != nil {
			return err
		}
		name, err := tarPath(hdr.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue // the archive's "./"
		}
		if err := unpackEntry(root, name, hdr, tr, &budget); err != nil {
			return err
		}
	}
}

// unpackEntry unpacks one entry, hdr, as name in root by its type: a directory, a file (its
// body read from r, counted in budget), a symbolic or a hard link; any other type is refused.
func unpackEntry(root *os.Root, name string, hdr *tar.Header, r io.Reader, budget *tarballBudget) error {
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(name, 0o755); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
	case tar.TypeReg: // the reader reports the old TypeRegA as TypeReg
		if err := budget.file(hdr.Name, hdr.Size); err != nil {
			return err
		}
		if err := writeEntry(root, name, hdr, r); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
	case tar.TypeSymlink:
		return unpackSymlink(root, name, hdr)
	case tar.TypeLink:
		return unpackHardLink(root, name, hdr)
	case tar.TypeChar, tar.TypeBlock:
		return fmt.Errorf("%s: a device node: a source tree has none", hdr.Name)
	case tar.TypeFifo:
		return fmt.Errorf("%s: a FIFO: a source tree has none", hdr.Name)
	default:
		return fmt.Errorf("%s: an entry of type %q: a source tree has only directories, files and links", hdr.Name, hdr.Typeflag)
	}
	return nil
}

// tarballBudget counts an archive's entries and the bytes of its files against the bounds of
// a kernel tree (maxTarballFiles, maxTarballFile, maxTarballBytes).
type tarballBudget struct {
	entries int
	bytes   int64
}

// entry counts one more entry of the archive, refused past maxTarballFiles.
func (b *tarballBudget) entry() error {
	if b.entries++; b.entries > maxTarballFiles {
		return fmt.Errorf("more than %d entries: no kernel tree has that many", maxTarballFiles)
	}
	return nil
}

// file counts the size bytes of the file name, refused above maxTarballFile, or when the
// archive's files come to more than maxTarballBytes.
func (b *tarballBudget) file(name string, size int64) error {
	if size > maxTarballFile {
		return fmt.Errorf("%s: %s, above %s, larger than any file of a kernel tree", name, safefile.Size(size), safefile.Size(maxTarballFile))
	}
	if b.bytes += size; b.bytes > maxTarballBytes {
		return fmt.Errorf("it unpacks to more than %s: no kernel tree is that large", safefile.Size(maxTarballBytes))
	}
	return nil
}

// unpackSymlink makes the symbolic link hdr as name in root, replacing an earlier entry of the
// name; a target out of the tree as written, from where the link is, is refused here, and
// linksInTree checks it again where it landed.
func unpackSymlink(root *os.Root, name string, hdr *tar.Header) error {
	if err := linkInTree(name, hdr.Linkname); err != nil {
		return fmt.Errorf("%s -> %s: %w", hdr.Name, hdr.Linkname, err)
	}
	if err := mkParent(root, name); err != nil {
		return err
	}
	root.Remove(name)
	if err := root.Symlink(hdr.Linkname, name); err != nil {
		return fmt.Errorf("%s: %w", hdr.Name, err)
	}
	return nil
}

// unpackHardLink makes the hard link hdr as name in root, to an entry of the tree, replacing
// an earlier entry of the name.
func unpackHardLink(root *os.Root, name string, hdr *tar.Header) error {
	target, err := tarPath(hdr.Linkname)
	if err != nil || target == "" {
		return fmt.Errorf("%s: a hard link to %q, out of the tree", hdr.Name, hdr.Linkname)
	}
	if err := mkParent(root, name); err != nil {
		return err
	}
	root.Remove(name)
	if err := root.Link(target, name); err != nil {
		return fmt.Errorf("%s: a hard link to %s: %w", hdr.Name, hdr.Linkname, err)
	}
	return nil
}

// decompressed reads r through the decompressor its first bytes name; a plain tar as it is.
func decompressed(r *bufio.Reader) (io.Reader, error) {
	magic, _ := r.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return gzip.NewReader(r)
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return xz.NewReader(r)
	case bytes.HasPrefix(magic, []byte("BZh")):
		return bzip2.NewReader(r), nil
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		d, err := zstd.NewReader(r, zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return r, nil
}

// tarPath is an entry's path relative to the tree ("" for the tree itself), refused when it
// is absolute or climbs out.
func tarPath(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%s: an absolute path, out of the tree", name)
	}
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%s: a path out of the tree", name)
	}
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// linkInTree refuses a symbolic link whose target is absolute or leads out of the tree from
// where the link is (include/dt-bindings -> ../../../arch stays in it).
func linkInTree(name, target string) error {
	if target == "" || strings.HasPrefix(target, "/") {
		return errors.New("a link to an absolute path, out of the tree")
	}
	if to := path.Join(path.Dir(name), target); to == ".." || strings.HasPrefix(to, "../") {
		return errors.New("a link out of the tree")
	}
	return nil
}

// maxLinkHops is how many links resolving one path may follow: Linux's own bound (ELOOP).
const maxLinkHops = 40

// linksInTree refuses a tree, as unpacked in root, with a symbolic link that leads out of
// it: each link, where it is, resolved through the others (a chain of links, a target
// through a linked directory), or that cannot be resolved within maxLinkHops links (a loop).
// `find -type l` with `realpath -m` of each, checked against the tree's top.
func linksInTree(root *os.Root) error {
	return fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err // WalkDir descends directories only, never a link to one
		}
		target, err := root.Readlink(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := resolveInTree(root, name); err != nil {
			return fmt.Errorf("%s -> %s: %w", name, target, err)
		}
		return nil
	})
}

// resolveInTree follows the link name (a path without links above it) to where it leads
// in root, component by component as the kernel resolves a path: a link met on the way is
// replaced by its target, read from the directory the link is in, and .. climbs from where
// the path has got to (L/.. is the parent of L's target). A component that is not there is
// taken as written: the tree is complete, so nothing makes it later.
func resolveInTree(root *os.Root, name string) error {
	var at []string // where the path has got to, without links, from the top
	if dir := path.Dir(name); dir != "." {
		at = strings.Split(dir, "/")
	}
	todo := []string{path.Base(name)}
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return errors.New("a link out of the tree (resolved where it is, through the tree's links)")
			}
			at = at[:len(at)-1]
			continue
		}
		at = append(at, c)
		fi, err := root.Lstat(path.Join(at...))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue // a directory, a file, or nothing there
		}
		if hops++; hops > maxLinkHops {
			return fmt.Errorf("more than %d links to follow (a loop): it leads nowhere", maxLinkHops)
		}
		target, err := root.Readlink(path.Join(at...))
		if err != nil {
			return err
		}
		if target == "" || strings.HasPrefix(target, "/") {
			return errors.New("a link out of the tree, through a link to an absolute path")
		}
		at = at[:len(at)-1]
		todo = append(strings.Split(target, "/"), todo...)
	}
	return nil
}

// mkParent makes the directories above name.
func mkParent(root *os.Root, name string) error {
	if dir := path.Dir(name); dir != "." {
		return root.MkdirAll(dir, 0o755)
	}
	return nil
}

// writeEntry writes one file of the archive, replacing an earlier entry of the same name.
func writeEntry(root *os.Root, name string, hdr *tar.Header, r io.Reader) error {
	if err := mkParent(root, name); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		mode = 0o755
	}
	root.Remove(name)
	f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, r, hdr.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return root.Chtimes(name, hdr.ModTime, hdr.ModTime) // make compares times
}
