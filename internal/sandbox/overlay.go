package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Whiteout is an overlay's mark of a lower file deleted through it: a character device 0/0
// in the upper directory.
func Whiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

// opaque is an upper directory that hides the lower one's entries (it was removed and made
// again through the overlay): the xattr trusted.overlay.opaque is "y".
func opaque(dir string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(dir, "trusted.overlay.opaque", buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

// MergeUpper makes lower what an Overlay's commands saw, and empties upper: each file and
// link of upper replaces lower's, a whiteout removes lower's, an opaque directory replaces
// lower's whole, a directory is merged into lower's. The overlay must be unmounted (its
// commands ended: the mount went with their namespace). Ownership and modes are upper's.
func MergeUpper(upper, lower string) error {
	entries, err := os.ReadDir(upper)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the commands wrote nothing
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		up, low := filepath.Join(upper, e.Name()), filepath.Join(lower, e.Name())
		fi, err := os.Lstat(up)
		if err != nil {
			return err
		}
		lfi, lerr := os.Lstat(low)
		switch {
		case Whiteout(fi):
			if err := os.RemoveAll(low); err != nil {
				return err
			}
		case fi.IsDir():
			if lerr == nil && (!lfi.IsDir() || opaque(up)) {
				if err := os.RemoveAll(low); err != nil {
					return err
				}
				lerr = fs.ErrNotExist
			}
			if lerr != nil {
				if err := os.Mkdir(low, fi.Mode().Perm()); err != nil {
					return err
				}
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				if err := os.Lchown(low, int(st.Uid), int(st.Gid)); err != nil {
					return err
				}
			}
			if err := os.Chmod(low, fi.Mode().Perm()); err != nil {
				return err
			}
			if err := MergeUpper(up, low); err != nil {
				return err
			}
		default:
			if lerr == nil && lfi.IsDir() {
				if err := os.RemoveAll(low); err != nil {
					return err
				}
			}
			if err := moveFile(up, low, fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveFile renames a file or link over dst, or copies it where the two are on different
// file systems.
func moveFile(src, dst string, fi fs.FileInfo) error {
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	os.Remove(dst)
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %v is not a file a build leaves", src, fi.Mode().Type())
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		os.Lchown(dst, int(st.Uid), int(st.Gid))
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}
