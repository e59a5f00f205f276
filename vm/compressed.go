package vm

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/nsperf/nsperf/internal/safefile"
)

// maxModuleSize bounds a module file and what it decompresses to: the largest module of
// Debian's 6.12 kernel is a few MiB; a file of hundreds is not a module.
const maxModuleSize = 256 << 20

// decompressors read the compressed modules a kernel build or a distribution installs
// (CONFIG_MODULE_COMPRESS_XZ, _ZSTD, _GZIP: Debian and Fedora .ko.xz, Ubuntu .ko.zst), by
// suffix. busybox's insmod takes only plain modules, so the host decompresses them into the
// initramfs: the same for every guest kernel, whether or not it has CONFIG_MODULE_DECOMPRESS.
var decompressors = map[string]func(io.Reader) (io.Reader, error){
	// One stream only, walked by checkXZ before (readModule): the decoder then never reads
	// a block header that was not checked.
	".xz": func(r io.Reader) (io.Reader, error) { return xz.ReaderConfig{SingleStream: true}.NewReader(r) },
	".zst": func(r io.Reader) (io.Reader, error) {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	},
	".gz": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
}

// readModule reads a module file of a tree, beneath the tree (os.Root: neither a ../ of
// modules.dep nor a symlink takes it outside), decompressed when it is compressed, and returns
// the name it goes by in the initramfs (NAME.ko).
func readModule(tree *os.Root, file string) (name string, data []byte, err error) {
	raw, err := safefile.ReadInTree(tree, file, maxModuleSize)
	if err != nil {
		return "", nil, fmt.Errorf("module %s of %s: %w", file, tree.Name(), err)
	}
	base := path.Base(file)
	for suffix, open := range decompressors {
		if !strings.HasSuffix(base, suffix) {
			continue
		}
		if suffix == ".xz" {
			if err := checkXZ(raw); err != nil {
				return "", nil, fmt.Errorf("module %s: %w", file, err)
			}
		}
		r, err := open(bytes.NewReader(raw))
		if err != nil {
			return "", nil, fmt.Errorf("module %s: not a %s file: %w", file, suffix, err)
		}
		plain, err := io.ReadAll(io.LimitReader(r, maxModuleSize+1))
		if err != nil {
			return "", nil, fmt.Errorf("module %s: decompressing: %w", file, err)
		}
		if len(plain) > maxModuleSize {
			return "", nil, fmt.Errorf("module %s: decompresses to more than %s: not a module", file, safefile.Size(maxModuleSize))
		}
		raw, base = plain, strings.TrimSuffix(base, suffix)
		break
	}
	if !bytes.HasPrefix(raw, []byte("\x7fELF")) {
		return "", nil, fmt.Errorf("module %s: not an ELF object (a kernel module is one, plain or compressed as .ko.xz, .ko.zst or .ko.gz)", file)
	}
	return base, raw, nil
}
