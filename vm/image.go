// Package vm runs a scenario on a kernel under test: it boots the kernel image in QEMU over the
// host's own root filesystem (read-only 9p, the method of virtme-ng), with the modules the
// scenario needs in a small initramfs, and runs the same nsperf binary inside. The parsing of
// kernel images and module trees is pure; starting QEMU is the privileged edge.
package vm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
)

// x86 boot protocol (Documentation/arch/x86/boot.rst): the setup header starts at 0x1f1; the
// magic "HdrS" is at 0x202, the protocol version at 0x206, and kernel_version at 0x20e points
// (minus 0x200) to the NUL-terminated version string, which starts with the release.
const (
	headerMagicOffset   = 0x202
	headerVersionOffset = 0x206
	kernelVersionOffset = 0x20e
)

// ParseImage reads the boot header of a bzImage: the release and version string it carries.
// A file that is not an x86 bzImage is an error that says so.
func ParseImage(data []byte) (release, version string, err error) {
	if len(data) < 0x210 || string(data[headerMagicOffset:headerMagicOffset+4]) != "HdrS" {
		return "", "", fmt.Errorf("not an x86 kernel image (bzImage): no \"HdrS\" boot header at 0x202; give arch/x86/boot/bzImage or /boot/vmlinuz-*, not vmlinux")
	}
	if proto := binary.LittleEndian.Uint16(data[headerVersionOffset:]); proto < 0x0206 {
		return "", "", fmt.Errorf("boot protocol %d.%02d is too old to boot with -kernel and an initramfs (want 2.06 or later)", proto>>8, proto&0xff)
	}
	ptr := int(binary.LittleEndian.Uint16(data[kernelVersionOffset:])) + 0x200
	if ptr <= 0x200 || ptr >= len(data) {
		return "", "", fmt.Errorf("the boot header has no kernel version string")
	}
	end := bytes.IndexByte(data[ptr:], 0)
	if end < 0 {
		return "", "", fmt.Errorf("the kernel version string of the boot header is not terminated")
	}
	version = strings.TrimSpace(string(data[ptr : ptr+end]))
	release, _, _ = strings.Cut(version, " ")
	if release == "" {
		return "", "", fmt.Errorf("the boot header's kernel version string is empty")
	}
	// The release names directories (lib/modules/RELEASE) and files on the host.
	if !releaseRE.MatchString(release) || strings.Contains(release, "..") {
		return "", "", fmt.Errorf("the boot header's kernel release %q is not a release as uname -r prints one (letters, digits, '.', '_', '+', '~', '-', at most 64)", strconv.QuoteToGraphic(release))
	}
	return release, version, nil
}

// releaseRE is a kernel release: what Kbuild's KERNELRELEASE makes of VERSION, PATCHLEVEL,
// SUBLEVEL, EXTRAVERSION and LOCALVERSION in practice ("6.12.117+deb12-amd64",
// "6.19.0-rc1-00042-gdeadbeef"); no '/', and it does not begin with a dot.
var releaseRE = regexp.MustCompile(`^[A-Za-z0-9_+~-][A-Za-z0-9._+~-]{0,63}$`)

// maxImageSize bounds a kernel image: a bzImage is 10 to 20 MiB; a file of gigabytes is not
// one, and is refused before it is read.
const maxImageSize = 512 << 20

// ReadImage identifies the kernel image at path: a regular file (a device or FIFO is refused
// without reading it, a file over maxImageSize by its size), whose boot header is read and
// checked before the whole file is hashed.
func ReadImage(path string) (results.KernelImage, error) {
	fail := func(err error) (results.KernelImage, error) {
		return results.KernelImage{}, fmt.Errorf("--kernel %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return fail(err)
	case st.IsDir():
		return fail(errors.New("is a directory without " + BuildTreeImage + ": give the kernel image file or a built kernel tree"))
	case !st.Mode().IsRegular():
		return fail(errors.New("not a regular file (a device, FIFO or socket): give the kernel image file (arch/x86/boot/bzImage, /boot/vmlinuz-*) or a built kernel tree"))
	case st.Size() > maxImageSize:
		return fail(fmt.Errorf("%d bytes: larger than any kernel image (%s at most)", st.Size(), safefile.Size(maxImageSize)))
	}
	h := sha256.New()
	head := make([]byte, min(st.Size(), 64<<10))
	if _, err := io.ReadFull(f, head); err != nil {
		return fail(err)
	}
	release, version, err := ParseImage(head)
	if err != nil {
		return fail(err)
	}
	h.Write(head)
	if _, err := io.Copy(h, io.LimitReader(f, maxImageSize)); err != nil {
		return fail(err)
	}
	return results.KernelImage{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Release: release, Version: version}, nil
}
