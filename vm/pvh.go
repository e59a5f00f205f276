package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
)

// Booting the kernel's own ELF through its PVH entry point instead of the bzImage: under TCG
// the bzImage's decompressor, run by the emulated CPU, is most of a boot (Debian 12's 6.1,
// xz: 5.9 s of wall time before the kernel's first line, against 0.8 s from its vmlinux; the
// whole boot to a shell 11 s against 5 s). The host decompresses the payload once per guest
// (what scripts/extract-vmlinux does) and QEMU loads the ELF with -kernel, entering it at
// its XEN_ELFNOTE_PHYS32_ENTRY (CONFIG_PVH, set in Debian's and Fedora's kernels and in the
// kernels nsperf builds). The kernel then runs without KASLR: its addresses are the same at
// every boot, which makes two boots of one kernel more alike, not less. An image without a
// PVH entry, or compressed in a way the host cannot undo, boots as a bzImage as before.

// Boot methods, as results.VMInfo.Boot records them.
const (
	BootPVH     = "pvh: the image's vmlinux, decompressed on the host, entered at its PVH entry point (no KASLR)"
	BootBzImage = "bzimage"
)

// x86 boot protocol 2.08 and later: where the compressed kernel is within the protected-mode
// part of the image (Documentation/arch/x86/boot.rst, payload_offset and payload_length).
const (
	setupSectsOffset    = 0x1f1
	payloadOffsetOffset = 0x248
	payloadLengthOffset = 0x24c
	// xenNotePhys32Entry is XEN_ELFNOTE_PHYS32_ENTRY (include/xen/interface/elfnote.h): the
	// 32-bit entry point QEMU's PVH loader looks for.
	xenNotePhys32Entry = 18
)

// maxVmlinuxSize bounds what a payload decompresses to: Debian's vmlinux is about 65 MiB, a
// kernel with debug information without it several hundred.
var maxVmlinuxSize = 1 << 30 // a variable for the test of the bound

// payloadDecompressors are the compressions of a bzImage's payload the host undoes, by the
// magic the payload starts with (CONFIG_KERNEL_GZIP, _XZ, _ZSTD; the others boot as
// bzImages). xz through xz-utils (Debian's required package): the kernel's xz payload uses
// the x86 BCJ filter, which ulikunitz/xz does not decode.
var payloadDecompressors = []struct {
	name   string
	magic  []byte
	expand func(ctx context.Context, payload []byte) (io.Reader, func() error, error)
}{
	{"gzip", []byte{0x1f, 0x8b}, func(_ context.Context, p []byte) (io.Reader, func() error, error) {
		r, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil, nil, err
		}
		r.Multistream(false) // the payload's size follows the stream
		return r, r.Close, nil
	}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, func(_ context.Context, p []byte) (io.Reader, func() error, error) {
		d, err := zstd.NewReader(bytes.NewReader(p), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(maxVmlinuxSize)+1<<20))
		if err != nil {
			return nil, nil, err
		}
		return d, func() error { d.Close(); return nil }, nil
	}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, func(ctx context.Context, p []byte) (io.Reader, func() error, error) {
		// xz -dc --single-stream: the payload's size follows the stream; the memory limit
		// refuses a header that asks for more than a kernel's dictionary (32 MiB at most).
		cmd := exec.CommandContext(ctx, "xz", "-dc", "--single-stream", "--memlimit-decompress=256MiB")
		cmd.Stdin = bytes.NewReader(p)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("xz: %w", err)
		}
		return out, func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("xz -d: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
			}
			return nil
		}, nil
	}},
}

// ExtractPVH returns the vmlinux inside a bzImage when the host can decompress it and it has
// a PVH entry point; an error says why not, and the image then boots as it is.
func ExtractPVH(ctx context.Context, image []byte) ([]byte, error) {
	if _, _, err := ParseImage(image); err != nil {
		return nil, err
	}
	if len(image) < payloadLengthOffset+4 {
		return nil, errors.New("the image ends inside its boot header")
	}
	if proto := binary.LittleEndian.Uint16(image[headerVersionOffset:]); proto < 0x0208 {
		return nil, fmt.Errorf("boot protocol %d.%02d has no payload fields (2.08 and later do)", proto>>8, proto&0xff)
	}
	sects := int(image[setupSectsOffset])
	if sects == 0 {
		sects = 4 // the boot protocol's meaning of 0
	}
	start := (sects+1)*512 + int(binary.LittleEndian.Uint32(image[payloadOffsetOffset:]))
	length := int(binary.LittleEndian.Uint32(image[payloadLengthOffset:]))
	if start >= len(image) || length <= 0 || length > len(image)-start {
		return nil, fmt.Errorf("the boot header's payload (%d bytes at %d) is not within the image's %d bytes", length, start, len(image))
	}
	payload := image[start : start+length]
	for _, d := range payloadDecompressors {
		if !bytes.HasPrefix(payload, d.magic) {
			continue
		}
		r, done, err := d.expand(ctx, payload)
		if err != nil {
			return nil, fmt.Errorf("%s payload: %w", d.name, err)
		}
		plain, readErr := io.ReadAll(io.LimitReader(r, int64(maxVmlinuxSize)+1))
		if len(plain) > maxVmlinuxSize {
			// Stop a decompressor that would go on (xz's process), then say why.
			io.Copy(io.Discard, r)
			done()
			return nil, fmt.Errorf("%s payload: decompresses to more than %s: not a kernel", d.name, safefile.Size(int64(maxVmlinuxSize)))
		}
		if err := errors.Join(readErr, done()); err != nil {
			return nil, fmt.Errorf("%s payload: %w", d.name, err)
		}
		if err := checkPVH(plain); err != nil {
			return nil, err
		}
		return plain, nil
	}
	head := payload[:min(len(payload), 6)]
	return nil, fmt.Errorf("the payload's compression (it starts % x) is not gzip, xz or zstd", head)
}

// checkPVH says whether vmlinux is an x86-64 ELF executable with a PVH entry note.
func checkPVH(vmlinux []byte) error {
	f, err := elf.NewFile(bytes.NewReader(vmlinux))
	if err != nil {
		return fmt.Errorf("the payload is not an ELF file: %w", err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		return fmt.Errorf("the payload is not an x86-64 ELF executable (%s %s %s)", f.Class, f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		notes, err := io.ReadAll(io.LimitReader(p.Open(), int64(p.Filesz)))
		if err != nil {
			continue
		}
		if hasXenNote(notes, xenNotePhys32Entry) {
			return nil
		}
	}
	return errors.New("the kernel has no PVH entry point (CONFIG_PVH is not set)")
}

// hasXenNote walks ELF notes (namesz, descsz, type, name and desc, each padded to 4 bytes)
// for a note of owner "Xen" and the given type.
func hasXenNote(notes []byte, typ uint32) bool {
	pad := func(n uint32) int { return int((uint64(n) + 3) &^ 3) }
	for len(notes) >= 12 {
		namesz := binary.LittleEndian.Uint32(notes)
		descsz := binary.LittleEndian.Uint32(notes[4:])
		t := binary.LittleEndian.Uint32(notes[8:])
		rest := notes[12:]
		if pad(namesz) > len(rest) || pad(descsz) > len(rest)-pad(namesz) {
			return false
		}
		if t == typ && bytes.Equal(bytes.TrimRight(rest[:namesz], "\x00"), []byte("Xen")) {
			return true
		}
		notes = rest[pad(namesz)+pad(descsz):]
	}
	return false
}

// pvhKernel writes the vmlinux of img into dir for QEMU's -kernel and returns its path and
// the boot method; the bzImage itself, with the reason, when it cannot boot through PVH.
// The file read is checked against the sha256 recorded for img: what boots is what the
// result names.
func pvhKernel(img results.KernelImage, dir string) (path, boot, why string) {
	data, err := os.ReadFile(img.Path)
	if err != nil {
		return img.Path, BootBzImage, err.Error()
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != img.SHA256 {
		return img.Path, BootBzImage, "the image changed since it was read"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vmlinux, err := ExtractPVH(ctx, data)
	if err != nil {
		return img.Path, BootBzImage, err.Error()
	}
	path = dir + "/vmlinux"
	if err := os.WriteFile(path, vmlinux, 0o644); err != nil {
		return img.Path, BootBzImage, err.Error()
	}
	return path, BootPVH, ""
}
