package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// elfWithNotes is an x86-64 ELF executable of one PT_NOTE segment holding notes (owner, type).
func elfWithNotes(notes ...struct {
	owner string
	typ   uint32
}) []byte {
	var n bytes.Buffer
	for _, note := range notes {
		name := append([]byte(note.owner), 0)
		for len(name)%4 != 0 {
			name = append(name, 0)
		}
		binary.Write(&n, binary.LittleEndian, []uint32{uint32(len(note.owner) + 1), 4, note.typ})
		n.Write(name)
		n.Write([]byte{0, 0, 0x10, 0}) // the entry's address
	}
	const ehsize, phsize = 64, 56
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	binary.Write(&b, binary.LittleEndian, struct {
		Type, Machine     uint16
		Version           uint32
		Entry, Phoff      uint64
		Shoff             uint64
		Flags             uint32
		Ehsize, Phentsize uint16
		Phnum, Shentsize  uint16
		Shnum, Shstrndx   uint16
	}{2, 62, 1, 0x1000000, ehsize, 0, 0, ehsize, phsize, 1, 64, 0, 0})
	binary.Write(&b, binary.LittleEndian, struct {
		Type, Flags                    uint32
		Off, Vaddr, Paddr, Filesz, Mem uint64
		Align                          uint64
	}{4, 4, ehsize + phsize, 0, 0, uint64(n.Len()), uint64(n.Len()), 4})
	b.Write(n.Bytes())
	return b.Bytes()
}

type note = struct {
	owner string
	typ   uint32
}

// withPayload is a bzImage (bzImage's header) whose payload is payload, as the kernel's
// build lays it out: setup sectors, then the payload, then its uncompressed size.
func withPayload(payload []byte) []byte {
	img := bzImage("6.1.0-test (t) #1", 0x020f)
	img[setupSectsOffset] = 1 // the setup: 2 sectors, 0x400 bytes, what bzImage made
	binary.LittleEndian.PutUint32(img[payloadOffsetOffset:], 0x40)
	binary.LittleEndian.PutUint32(img[payloadLengthOffset:], uint32(len(payload)))
	img = append(img, make([]byte, 0x40)...)
	img = append(img, payload...)
	return append(img, 1, 2, 3, 4)
}

func gzipped(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestExtractPVH(t *testing.T) {
	pvh := elfWithNotes(note{"Xen", 6}, note{"Xen", xenNotePhys32Entry})
	zstdOf := func(data []byte) []byte {
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(data, nil)
	}
	for _, tc := range []struct {
		name    string
		image   []byte
		want    []byte
		failure string
	}{
		{"gzip", withPayload(gzipped(t, pvh)), pvh, ""},
		{"zstd", withPayload(zstdOf(pvh)), pvh, ""},
		{"no PVH note", withPayload(gzipped(t, elfWithNotes(note{"Xen", 6}, note{"GNU", xenNotePhys32Entry}))), nil, "CONFIG_PVH is not set"},
		{"not an ELF", withPayload(gzipped(t, []byte("not a kernel"))), nil, "not an ELF file"},
		{"unknown compression", withPayload([]byte{0x02, 0x21, 0x4c, 0x18, 0, 0}), nil, "02 21 4c 18 00 00) is not gzip, xz or zstd"},
		{"payload past the end", func() []byte {
			img := withPayload(gzipped(t, pvh))
			binary.LittleEndian.PutUint32(img[payloadLengthOffset:], 1<<30)
			return img
		}(), nil, "is not within the image"},
		{"old protocol", bzImage("6.1.0-test (t) #1", 0x0207), nil, "has no payload fields"},
		{"corrupt gzip", withPayload(gzipped(t, pvh)[:40]), nil, "gzip payload:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractPVH(context.Background(), tc.image)
			if tc.failure != "" {
				if err == nil || !strings.Contains(err.Error(), tc.failure) {
					t.Fatalf("err %v, want %q", err, tc.failure)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("%d bytes, %v", len(got), err)
			}
		})
	}
}

// TestExtractPVHXZ: the kernel's xz payloads carry the x86 BCJ filter (scripts/xz_wrap.sh:
// xz --check=crc32 --x86 --lzma2=...), which the host's xz decodes.
func TestExtractPVHXZ(t *testing.T) {
	testenv.RequireTool(t, "xz")
	pvh := elfWithNotes(note{"Xen", xenNotePhys32Entry})
	cmd := exec.Command("xz", "--check=crc32", "--x86", "--lzma2=dict=1MiB", "-c")
	cmd.Stdin = bytes.NewReader(pvh)
	payload, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ExtractPVH(context.Background(), withPayload(payload))
	if err != nil || !bytes.Equal(got, pvh) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if _, err := ExtractPVH(context.Background(), withPayload(payload[:len(payload)/2])); err == nil || !strings.Contains(err.Error(), "xz -d") {
		t.Errorf("a cut xz payload: %v", err)
	}
}

// TestExtractPVHBound: a payload that decompresses to more than any kernel is refused.
func TestExtractPVHBound(t *testing.T) {
	defer func(n int) { maxVmlinuxSize = n }(maxVmlinuxSize)
	maxVmlinuxSize = 1 << 20
	big := append(elfWithNotes(note{"Xen", xenNotePhys32Entry}), make([]byte, 2<<20)...)
	if _, err := ExtractPVH(context.Background(), withPayload(gzipped(t, big))); err == nil || !strings.Contains(err.Error(), "decompresses to more than") {
		t.Fatalf("err %v", err)
	}
}

// TestPVHKernel: a guest boots the vmlinux when there is one with a PVH entry, else the
// bzImage with the reason; an image that changed since it was hashed boots as a bzImage.
func TestPVHKernel(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) results.KernelImage {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		sum := sha256.Sum256(data)
		return results.KernelImage{Path: p, SHA256: hex.EncodeToString(sum[:])}
	}
	pvh := elfWithNotes(note{"Xen", xenNotePhys32Entry})
	img := write("good", withPayload(gzipped(t, pvh)))
	out := t.TempDir()
	path, boot, why := pvhKernel(img, out)
	if data, _ := os.ReadFile(path); boot != BootPVH || why != "" || !bytes.Equal(data, pvh) || filepath.Dir(path) != out {
		t.Errorf("%s %q %q", path, boot, why)
	}
	plain := write("plain", withPayload(gzipped(t, elfWithNotes())))
	if path, boot, why := pvhKernel(plain, out); path != plain.Path || boot != BootBzImage || !strings.Contains(why, "CONFIG_PVH") {
		t.Errorf("%s %q %q", path, boot, why)
	}
	changed := img
	changed.SHA256 = strings.Repeat("0", 64)
	if path, boot, why := pvhKernel(changed, out); path != img.Path || boot != BootBzImage || !strings.Contains(why, "changed") {
		t.Errorf("%s %q %q", path, boot, why)
	}
}

func FuzzExtractPVH(f *testing.F) {
	f.Add(withPayload([]byte{0x1f, 0x8b, 8, 0}))
	f.Add(withPayload(elfWithNotes(note{"Xen", xenNotePhys32Entry})))
	f.Fuzz(func(t *testing.T, image []byte) {
		vmlinux, err := ExtractPVH(context.Background(), image)
		if err == nil && checkPVH(vmlinux) != nil {
			t.Fatalf("extracted a kernel without a PVH entry")
		}
	})
}

func FuzzXenNotes(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 4, 0, 0, 0, 18, 0, 0, 0, 'X', 'e', 'n', 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, notes []byte) {
		hasXenNote(notes, xenNotePhys32Entry) // must not panic on any input
	})
}
