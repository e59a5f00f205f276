package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
)

// BuildTreeImage is where a built kernel tree has its image.
const BuildTreeImage = "arch/x86/boot/bzImage"

// ReadKernel reads what --kernel names: a kernel image file, or a built kernel tree (as
// virtme-ng's --kdir), whose image is arch/x86/boot/bzImage and whose modules, when it built
// any (modules.order), are laid out under tmp as `make modules_install INSTALL_MOD_PATH=tmp`
// would lay them, and indexed with depmod; modules is then that tree, else "".
func ReadKernel(path, tmp string) (img results.KernelImage, modules string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return img, "", fmt.Errorf("--kernel %s: %w", path, err)
	}
	if !st.IsDir() {
		img, err = ReadImage(path)
		return img, "", err
	}
	image := filepath.Join(path, BuildTreeImage)
	if _, err := os.Stat(image); err != nil {
		return img, "", fmt.Errorf("--kernel %s: a directory, but not a built kernel tree: no %s (build it with make bzImage modules, or give the image file: a bzImage or /boot/vmlinuz-*)", path, BuildTreeImage)
	}
	if img, err = ReadImage(image); err != nil {
		return img, "", err
	}
	if _, err := os.Stat(filepath.Join(path, "modules.order")); errors.Is(err, fs.ErrNotExist) {
		return img, "", nil // a kernel without modules: everything it needs is built in
	}
	modules, err = installBuildTree(path, tmp, img.Release)
	if err != nil {
		return img, "", fmt.Errorf("--kernel %s: %w", path, err)
	}
	return img, modules, nil
}

// installBuildTree copies the modules a build tree's modules.order lists (net/x/y.o, or .ko
// from older kernels) to tmp/lib/modules/RELEASE/kernel/, with modules.builtin and its
// modinfo, and runs depmod there. It returns tmp, the INSTALL_MOD_PATH.
//
// Every file is read beneath dir only (safefile.ReadInTree): regular, bounded, and neither a
// ".." nor a symlink leads out of the tree; a FIFO or a device is refused without a read.
func installBuildTree(dir, tmp, release string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	order, err := safefile.ReadInTree(root, "modules.order", maxIndexSize)
	if err != nil {
		return "", err
	}
	tree := filepath.Join(tmp, "lib", "modules", release)
	sc := bufio.NewScanner(bytes.NewReader(order))
	sc.Buffer(nil, len(order)+1) // every line fits: the file is in memory already
	n := 0
	for sc.Scan() {
		rel := filepath.Clean(strings.TrimSpace(sc.Text()))
		if rel == "." {
			continue
		}
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("modules.order: %q is outside the tree", sc.Text())
		}
		rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".o"), ".ko") + ".ko"
		data, err := safefile.ReadInTree(root, rel, maxModuleSize)
		if errors.Is(err, safefile.ErrOutside) || errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
			return "", fmt.Errorf("modules.order lists %s: %w", rel, err)
		}
		if err != nil {
			return "", fmt.Errorf("modules.order lists %s, which is not built (make modules): %w", rel, err)
		}
		if err := writeIn(filepath.Join(tree, "kernel", rel), data); err != nil {
			return "", err
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("modules.order: %w", err)
	}
	for _, f := range []string{"modules.builtin", "modules.builtin.modinfo", "modules.order"} {
		data, err := safefile.ReadInTree(root, f, maxIndexSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := writeIn(filepath.Join(tree, f), data); err != nil {
			return "", err
		}
	}
	if out, err := exec.Command("depmod", "-b", tmp, release).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%d modules copied; depmod -b %s %s: %v: %s", n, tmp, release, err, strings.TrimSpace(string(out)))
	}
	return tmp, nil
}

func writeIn(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
