// Package safefile reads and writes the files nsperf is given or produces without following
// symlinks on write, without blocking on FIFOs or devices on read, and within size limits.
//
// Every file nsperf writes (results, journals, JUnit, HTML, state files) is created as a new
// temporary file in the target's directory (O_EXCL, so never through a symlink planted there)
// and renamed over the target: rename replaces a symlink itself, never what it points to.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is returned for a path that is a directory, a FIFO, a device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file above the reader's limit.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads a regular file of at most limit bytes. FIFOs and devices are refused
// without reading from them (the open does not block: O_NONBLOCK), and so is a file that grows
// past limit while it is read.
func ReadRegular(path string, limit int64) ([]byte, error) { return read(path, 0, limit) }

func read(path string, flags int, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, path, limit)
}

// ReadInTree reads the file name of the tree root (a kernel tree, a module directory) as
// ReadRegular does, and only beneath root: a "..", an absolute name or a symlink that leads
// out of the tree is refused (os.Root, openat2 RESOLVE_BENEATH), while links inside it are
// followed, as make modules_install leaves some. Name the file in errors by path.
func ReadInTree(root *os.Root, name string, limit int64) ([]byte, error) {
	path := filepath.Join(root.Name(), name)
	f, err := root.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if strings.Contains(err.Error(), "path escapes from parent") {
			return nil, fmt.Errorf("%s: %w: it leads out of %s (a symlink or ..); not followed", path, ErrOutside, root.Name())
		}
		return nil, err
	}
	defer f.Close()
	return readOpen(f, path, limit)
}

// ErrOutside is returned for a name that leads out of the tree it is read from.
var ErrOutside = errors.New("outside the tree")

// ReadFileInTree is ReadInTree for one file, with the tree opened and closed for it.
func ReadFileInTree(rootDir, name string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadInTree(root, name, limit)
}

func readOpen(f *os.File, path string, limit int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %s", path, ErrTooLarge, st.Size(), Size(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: more than %s", path, ErrTooLarge, Size(limit))
	}
	return data, nil
}

// ReadUntrusted reads a file that another party wrote (a guest under test, into the directory
// it shares with the host) as ReadRegular does, and never through a symlink at path.
func ReadUntrusted(path string, limit int64) ([]byte, error) {
	data, err := read(path, unix.O_NOFOLLOW, limit)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s: %w (a symlink; not followed)", path, ErrNotRegular)
	}
	return data, err
}

// Size prints a byte count the way the limits are stated ("1 MiB").
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// Temp is a new file in the directory of its target, renamed over the target by Commit.
type Temp struct {
	*os.File
	target string
	done   bool
}

// Create makes a temporary file next to target (creating target's directory if needed) with
// permissions perm. Nothing at target is touched until Commit.
func Create(target string, perm fs.FileMode) (*Temp, error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &Temp{File: f, target: target}, nil
}

// Commit syncs the file and renames it over the target (a symlink there is replaced, not
// followed). The file stays open for further appends (a journal) until Close.
func (t *Temp) Commit() error {
	if err := t.Sync(); err != nil {
		return err
	}
	if err := os.Rename(t.Name(), t.target); err != nil {
		return err
	}
	t.done = true
	if d, err := os.Open(filepath.Dir(t.target)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort closes and removes a temporary file that was not committed.
func (t *Temp) Abort() {
	t.Close()
	if !t.done {
		os.Remove(t.Name())
	}
}

// Replace stores data at path atomically (a new file renamed over it, never through a
// symlink) without syncing it to disk: for files on tmpfs (/run), where a crash of the process
// leaves the old or the new file and a power loss leaves neither, so that a sync buys nothing
// and costs a millisecond per write.
func Replace(path string, data []byte, perm fs.FileMode) error { return write(path, data, perm, false) }

// Write stores data at path atomically and without following a symlink at path, synced to
// disk before it replaces what was there.
func Write(path string, data []byte, perm fs.FileMode) error { return write(path, data, perm, true) }

func write(path string, data []byte, perm fs.FileMode, sync bool) error {
	t, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer t.Abort()
	if _, err := t.File.Write(data); err != nil {
		return err
	}
	if sync {
		err = t.Commit()
	} else if err = os.Rename(t.Name(), t.target); err == nil {
		t.done = true
	}
	if err != nil {
		return err
	}
	return t.Close()
}

// CheckWritable tells, before any work is done, whether Write(path) can succeed: path must not
// be a directory, and its directory must exist or be creatable and take a new file. Nothing at
// path is touched.
func CheckWritable(path string) error {
	if path == "" || strings.HasSuffix(path, "/") {
		return fmt.Errorf("%q names a directory; give a file name", path)
	}
	if st, err := os.Lstat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	t, err := Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	t.Abort()
	return nil
}
