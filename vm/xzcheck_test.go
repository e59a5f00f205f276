package vm

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// xzCompress compresses data with the xz command, as the kernel's modules_install does.
func xzCompress(t testing.TB, data []byte, args ...string) []byte {
	t.Helper()
	testenv.RequireTool(t, "xz")
	cmd := exec.Command("xz", append([]string{"--stdout", "--check=crc32"}, args...)...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz: %v", err)
	}
	return out
}

// blockHeaders returns the offsets of every block header of a one-stream .xz file, walked
// by the chunk sizes as checkXZ walks them.
func blockHeaders(t *testing.T, data []byte) []int {
	var at []int
	pos := 12
	for data[pos] != 0 {
		at = append(at, pos)
		pos += (int(data[pos]) + 1) * 4
		start := pos
		n, _, err := lzma2Chunks(data[pos:])
		if err != nil {
			t.Fatal(err)
		}
		pos += n
		for (pos-start)%4 != 0 {
			pos++
		}
		pos += 4 // CRC32
	}
	return at
}

// withDict rewrites the LZMA2 dictionary property of the block header at off, with a valid
// CRC32: what a hostile file does.
func withDict(data []byte, off int, prop byte) []byte {
	out := bytes.Clone(data)
	size := (int(out[off]) + 1) * 4
	h := out[off : off+size]
	// Flags byte 0 (one filter, no sizes): filter id 0x21, properties size 1, the property.
	if h[1] != 0 || h[2] != 0x21 || h[3] != 1 {
		panic("unexpected block header layout")
	}
	h[4] = prop
	binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
	return out
}

func TestCheckXZ(t *testing.T) {
	module := append([]byte("\x7fELF"), bytes.Repeat([]byte("a kernel module's text "), 4000)...)
	one := xzCompress(t, module, "--lzma2=dict=1MiB")
	if err := checkXZ(one); err != nil {
		t.Fatalf("a module as the kernel compresses it: %v", err)
	}
	blocks := xzCompress(t, module, "--lzma2=dict=1MiB", "--block-size=8192")
	at := blockHeaders(t, blocks)
	if len(at) < 3 {
		t.Fatalf("%d blocks, want several", len(at))
	}
	if err := checkXZ(blocks); err != nil {
		t.Fatalf("a module in %d blocks: %v", len(at), err)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"4 GiB dictionary":                 {withDict(one, 12, 40), "asks for a 4294967295 bytes dictionary"},
		"128 MiB dictionary":               {withDict(one, 12, 30), "asks for a 128 MiB dictionary"},
		"a later block's 4 GiB dictionary": {withDict(blocks, at[len(at)-1], 40), "asks for a 4294967295 bytes dictionary"},
		"bad header CRC":                   {func() []byte { d := bytes.Clone(one); d[12+4] ^= 1; return d }(), "CRC32 does not match"},
		"cut short":                        {one[:40], "no end"},
		"not xz":                           {[]byte("not xz at all"), "no xz stream header"},
	} {
		err := checkXZ(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// The decoder, as readModule runs it, reads what checkXZ passed.
	r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(blocks))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(r); err != nil || !bytes.Equal(plain, module) {
		t.Errorf("decoded %d bytes, %v", len(plain), err)
	}
}

// TestReadModuleRefusesAHugeDictionary: the 4 KB module whose header claims a 4 GiB
// dictionary is refused before the decoder allocates it.
func TestReadModuleRefusesAHugeDictionary(t *testing.T) {
	dir := t.TempDir()
	module := append([]byte("\x7fELF"), bytes.Repeat([]byte("x"), 4000)...)
	hostile := withDict(xzCompress(t, module, "--lzma2=dict=1MiB"), 12, 40)
	writeFile(t, dir+"/kernel/m.ko.xz", hostile)
	var b bytes.Buffer
	writeFile(t, dir+"/busybox", []byte("#!busybox"))
	err := WriteInitramfs(&b, dir+"/busybox", dir, []string{"kernel/m.ko.xz"}, "")
	if err == nil || !strings.Contains(err.Error(), "kernel/m.ko.xz") || !strings.Contains(err.Error(), "dictionary") {
		t.Errorf("%v", err)
	}
}

func FuzzCheckXZ(f *testing.F) {
	module := append([]byte("\x7fELF"), bytes.Repeat([]byte("fuzz "), 3000)...)
	f.Add(xzCompress(f, module, "--lzma2=dict=1MiB"))
	f.Add(xzCompress(f, module, "--lzma2=dict=1MiB", "--block-size=4096"))
	f.Add(xzCompress(f, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkXZ(data) != nil {
			return
		}
		// Passed: the decoder must not ask for more than the cap, whatever it then finds.
		r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		io.Copy(io.Discard, io.LimitReader(r, maxModuleSize+1))
	})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInitramfsIsBounded: modules that add up to more than the initramfs may hold are
// refused, naming the one that crossed the bound.
func TestInitramfsIsBounded(t *testing.T) {
	defer func(was int64) { maxInitramfs = was }(maxInitramfs)
	maxInitramfs = 1 << 20
	dir := t.TempDir()
	writeFile(t, dir+"/busybox", []byte("#!busybox"))
	module := append([]byte("\x7fELF"), make([]byte, 600<<10)...)
	writeFile(t, dir+"/kernel/a.ko", module)
	writeFile(t, dir+"/kernel/b.ko", module)
	if err := WriteInitramfs(io.Discard, dir+"/busybox", dir, []string{"kernel/a.ko"}, ""); err != nil {
		t.Fatalf("one module: %v", err)
	}
	err := WriteInitramfs(io.Discard, dir+"/busybox", dir, []string{"kernel/a.ko", "kernel/b.ko"}, "")
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB with modules/b.ko") {
		t.Errorf("two modules over the bound: %v", err)
	}
}
