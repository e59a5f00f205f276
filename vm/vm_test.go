package vm

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cavaliergopher/cpio"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// bzImage makes the first bytes of an x86 kernel image whose header carries version.
func bzImage(version string, proto uint16) []byte {
	data := make([]byte, 0x400)
	copy(data[headerMagicOffset:], "HdrS")
	binary.LittleEndian.PutUint16(data[headerVersionOffset:], proto)
	binary.LittleEndian.PutUint16(data[kernelVersionOffset:], 0x300-0x200)
	copy(data[0x300:], version+"\x00")
	return data
}

func TestParseImage(t *testing.T) {
	for _, tc := range []struct {
		name          string
		data          []byte
		release, fail string
	}{
		{"debian", bzImage("6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3", 0x020f), "6.1.0-57-amd64", ""},
		{"own build", bzImage("6.18.0-rc3-00042-gdeadbeef (me@box) #7 SMP", 0x020f), "6.18.0-rc3-00042-gdeadbeef", ""},
		{"vmlinux (ELF)", append([]byte("\x7fELF"), make([]byte, 0x400)...), "", "not an x86 kernel image"},
		{"short file", []byte("hello"), "", "not an x86 kernel image"},
		{"old protocol", bzImage("2.6.12 (x)", 0x0204), "", "too old"},
		{"no version string", func() []byte {
			d := bzImage("", 0x020f)
			binary.LittleEndian.PutUint16(d[kernelVersionOffset:], 0)
			return d
		}(), "", "no kernel version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, _, err := ParseImage(tc.data)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("err %v, want %q", err, tc.fail)
				}
				return
			}
			if err != nil || release != tc.release {
				t.Fatalf("release %q, %v; want %q", release, err, tc.release)
			}
		})
	}
}

func TestReadImageErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a kernel"), 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such file",
		text:                          "not an x86 kernel image",
		dir:                           "is a directory",
	} {
		if _, err := ReadImage(path); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--kernel "+path) {
			t.Errorf("ReadImage(%s): %v, want %q", path, err, want)
		}
	}
	img := filepath.Join(dir, "bzImage")
	os.WriteFile(img, bzImage("6.1.0-57-amd64 (x) #1", 0x020f), 0o644)
	got, err := ReadImage(img)
	if err != nil || got.Release != "6.1.0-57-amd64" || len(got.SHA256) != 64 {
		t.Errorf("ReadImage: %+v, %v", got, err)
	}
}

// moduleTree writes a lib/modules/RELEASE tree with the given modules.dep and friends.
func moduleTree(t *testing.T, files map[string]string) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "lib", "modules", "6.1.0-test")
	os.MkdirAll(filepath.Join(dir, "kernel"), 0o755)
	for name, text := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	return base
}

func TestResolve(t *testing.T) {
	base := moduleTree(t, map[string]string{
		"modules.dep": `kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko
kernel/drivers/virtio/virtio_pci_legacy_dev.ko:
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio.ko:
kernel/net/9p/9pnet_virtio.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko kernel/net/9p/9pnet.ko
kernel/net/9p/9pnet.ko:
kernel/fs/9p/9p.ko: kernel/fs/netfs/netfs.ko kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko
kernel/fs/netfs/netfs.ko:
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/drivers/net/veth.ko:
kernel/lib/libcrc32c.ko:
kernel/crypto/crc32c_generic.ko:
kernel/arch/x86/crypto/crc32c-intel.ko:
kernel/net/openvswitch/openvswitch.ko: kernel/net/nsh/nsh.ko kernel/lib/libcrc32c.ko
kernel/net/nsh/nsh.ko:
`,
		"modules.builtin": "kernel/net/ipv6/ipv6.ko\nkernel/drivers/net/tun.ko\n",
		"modules.softdep": "# Soft dependencies\nsoftdep libcrc32c pre: crc32c\n",
		"modules.alias":   "alias crc32c crc32c_intel\nalias crc32c crc32c_generic\nalias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci\n",
	})
	tree, err := FindTree(base, "6.1.0-test")
	if err != nil {
		t.Fatal(err)
	}
	files, skipped, err := tree.Resolve(append(slices.Clone(BootModules), "veth", "tun"), []string{"openvswitch", "sch_netem"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, ModName(f))
	}
	// Every module after its dependencies, each once; tun is built in; the generic crc32c
	// before libcrc32c (softdep), not the CPU-specific one.
	want := []string{"virtio", "virtio_ring", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "9pnet", "9pnet_virtio", "netfs", "fscache", "9p", "veth", "crc32c_generic", "libcrc32c", "nsh", "openvswitch"}
	if !slices.Equal(names, want) {
		t.Errorf("load order\n got %v\nwant %v", names, want)
	}
	if !slices.Equal(skipped, []string{"sch_netem"}) {
		t.Errorf("skipped %v, want [sch_netem]", skipped)
	}
	_, _, err = tree.Resolve([]string{"veth", "vxlan", "tcp_diag"}, nil)
	var missing *MissingModulesError
	if !errors.As(err, &missing) || !slices.Equal(missing.Modules, []string{"vxlan", "tcp_diag"}) || !strings.Contains(err.Error(), "missing modules vxlan, tcp_diag") {
		t.Errorf("missing modules: %v", err)
	}
}

func TestFindTree(t *testing.T) {
	base := moduleTree(t, map[string]string{"modules.dep": "kernel/drivers/net/veth.ko:\n"})
	for _, dir := range []string{base, filepath.Join(base, "lib", "modules"), filepath.Join(base, "lib", "modules", "6.1.0-test")} {
		if tree, err := FindTree(dir, "6.1.0-test"); err != nil || !strings.HasSuffix(tree.Dir, "lib/modules/6.1.0-test") {
			t.Errorf("FindTree(%s): %v", dir, err)
		}
	}
	if _, err := FindTree(base, "6.2.0-other"); err == nil || !strings.Contains(err.Error(), "no modules of 6.2.0-other") || !strings.Contains(err.Error(), "6.1.0-test") {
		t.Errorf("other release: %v", err)
	}
}

func TestInitramfs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "busybox"), []byte("#!busybox"), 0o755)
	os.MkdirAll(filepath.Join(dir, "kernel", "drivers", "net"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernel", "drivers", "net", "veth.ko"), []byte("\x7fELF veth"), 0o644)
	init := InitScript([]string{GuestDir + "/nsperf", "run", "/run/nsperf-vm/scenario.yaml", "--label", "it's mine"}, []string{"/var/lib/my db"})
	var b bytes.Buffer
	if err := WriteInitramfs(&b, filepath.Join(dir, "busybox"), dir, []string{"kernel/drivers/net/veth.ko"}, init); err != nil {
		t.Fatal(err)
	}
	r := cpio.NewReader(&b)
	got := map[string]string{}
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r)
		got[h.Name] = string(data)
		if h.Name == "init" && h.Mode&0o111 == 0 {
			t.Errorf("init is not executable: %v", h.Mode)
		}
	}
	if got["modules.list"] != "veth.ko\n" || got["modules/veth.ko"] != "\x7fELF veth" || got["bin/busybox"] != "#!busybox" {
		t.Errorf("archive: %q", got)
	}
	// The guest's command is one shell-quoted line: a label cannot become shell syntax.
	if !strings.Contains(got["init"], `nsperf-guest /run/nsperf-vm/nsperf run /run/nsperf-vm/scenario.yaml --label 'it'\''s mine' >`) {
		t.Errorf("init:\n%s", got["init"])
	}
	// The host's secrets and the paths given are hidden before the guest's command runs.
	hide := strings.Index(got["init"], "\nhide ")
	if hide < 0 || hide > strings.Index(got["init"], "nsperf-guest /run") {
		t.Fatalf("init hides nothing before the guest's command:\n%s", got["init"])
	}
	for _, p := range []string{"/root", "/home", "/etc/shadow", "/etc/ssh", "'/var/lib/my db'"} {
		if !strings.Contains(got["init"][hide:], " "+p) {
			t.Errorf("init does not hide %s:\n%s", p, got["init"])
		}
	}
}

// TestInitramfsCompressedModules: modules as distributions and CONFIG_MODULE_COMPRESS_* install
// them (.ko.xz, .ko.zst, .ko.gz) go into the initramfs decompressed, as NAME.ko, in load
// order; a broken or foreign file is refused with its name.
func TestInitramfsCompressedModules(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "busybox"), []byte("#!busybox"), 0o755)
	module := func(name string) []byte { return []byte("\x7fELF " + strings.Repeat(name, 1000)) }
	compressors := map[string]func(io.Writer) io.WriteCloser{
		".xz":  func(w io.Writer) io.WriteCloser { x, _ := xz.NewWriter(w); return x },
		".zst": func(w io.Writer) io.WriteCloser { z, _ := zstd.NewWriter(w); return z },
		".gz":  func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
	}
	var files []string
	for _, name := range []string{"netfs", "vxlan", "openvswitch", "veth"} {
		suffix := map[string]string{"netfs": ".xz", "vxlan": ".zst", "openvswitch": ".gz", "veth": ""}[name]
		var b bytes.Buffer
		if c := compressors[suffix]; c != nil {
			w := c(&b)
			w.Write(module(name))
			w.Close()
		} else {
			b.Write(module(name))
		}
		f := "kernel/" + name + ".ko" + suffix
		os.MkdirAll(filepath.Join(dir, "kernel"), 0o755)
		os.WriteFile(filepath.Join(dir, f), b.Bytes(), 0o644)
		files = append(files, f)
	}
	var b bytes.Buffer
	if err := WriteInitramfs(&b, filepath.Join(dir, "busybox"), dir, files, "#!/bin/sh"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	r := cpio.NewReader(&b)
	for h, err := r.Next(); err == nil; h, err = r.Next() {
		data, _ := io.ReadAll(r)
		got[h.Name] = string(data)
	}
	if got["modules.list"] != "netfs.ko\nvxlan.ko\nopenvswitch.ko\nveth.ko\n" {
		t.Errorf("modules.list %q", got["modules.list"])
	}
	for _, name := range []string{"netfs", "vxlan", "openvswitch", "veth"} {
		if got["modules/"+name+".ko"] != string(module(name)) {
			t.Errorf("modules/%s.ko: %d bytes, not the module decompressed", name, len(got["modules/"+name+".ko"]))
		}
	}
	for file, content := range map[string]string{"kernel/broken.ko.xz": "not xz at all", "kernel/text.ko": "hello"} {
		os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644)
		err := WriteInitramfs(io.Discard, filepath.Join(dir, "busybox"), dir, []string{file}, "")
		if err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want an error naming it", file, err)
		}
	}
}

// TestInitramfsRefusesDynamicBusybox: a busybox that needs ld.so cannot be /init's shell.
func TestInitramfsRefusesDynamicBusybox(t *testing.T) {
	sh, err := os.Executable() // the test binary: Go, static unless cgo; find a dynamic one
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/bin/ls", "/usr/bin/ls", sh} {
		data, err := os.ReadFile(p)
		if err != nil || !dynamic(data) {
			continue
		}
		err = WriteInitramfs(io.Discard, p, "", nil, "")
		if err == nil || !strings.Contains(err.Error(), "install busybox-static") {
			t.Errorf("%s: %v", p, err)
		}
		return
	}
	t.Skip("no dynamically linked program found")
}

func TestNeeds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpus     int
		required []string
		optional []string
	}{
		// Each sets a GSO/GRO size limit: nf_tables counts the packets above 64 KiB.
		{"veth-bigtcp", 2, []string{"tcp_diag", "veth"}, []string{"nf_tables"}},
		{"vxlan-bigtcp", 2, []string{"tcp_diag", "veth", "vxlan"}, []string{"nf_tables"}},
		{"ovs-internal-tso", 2, []string{"tcp_diag", "veth"}, []string{"openvswitch", "tun", "nf_tables"}},
	} {
		s, err := scenarios.Load(tc.name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		req, opt := Needs(s)
		if !slices.Equal(req, tc.required) || !slices.Equal(opt, tc.optional) || PinnedCPUs(s) != tc.cpus {
			t.Errorf("%s: required %v optional %v cpus %d; want %v %v %d", tc.name, req, opt, PinnedCPUs(s), tc.required, tc.optional, tc.cpus)
		}
	}
}

// TestNeedsCongestionControl: a congestion control a route names, in the topology or a state,
// or a namespace's net.ipv4.tcp_congestion_control, is loaded in the guest when the kernel has
// it (no modprobe there) and is in the fragment; reno is the kernel's own.
func TestNeedsCongestionControl(t *testing.T) {
	text := `name: t
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}
  routes:
    - {ns: client, to: 198.19.0.0/24, via: 198.18.0.2, congctl: reno}
states:
  - name: cubic
  - name: bbr
    routes: {server: {198.18.0.0/24: {congctl: bbr}}}
  - name: dctcp
    sysctls: {client: {net.ipv4.tcp_congestion_control: dctcp}}
workloads:
  - name: tcp
    iperf3: {client: {ns: client}, server: {ns: server, addr: 198.18.0.2}}
`
	s, err := scenarios.Parse("t.yaml", []byte(text), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, opt := Needs(s); !slices.Equal(opt, []string{"tcp_bbr", "tcp_dctcp"}) {
		t.Errorf("optional modules %v, want [tcp_bbr tcp_dctcp]", opt)
	}
	for _, want := range []string{"TCP_CONG_BBR", "TCP_CONG_DCTCP"} {
		found := false
		for _, o := range Fragment([]*scenarios.Scenario{s}, false) {
			found = found || o.Name == want && o.Optional
		}
		if !found {
			t.Errorf("fragment lacks %s: %v", want, Fragment([]*scenarios.Scenario{s}, false))
		}
	}
}

func FuzzParseImage(f *testing.F) {
	f.Add(bzImage("6.1.0-57-amd64 (x) #1", 0x020f))
	f.Add([]byte("HdrS"))
	f.Fuzz(func(t *testing.T, data []byte) {
		release, version, err := ParseImage(data)
		if err == nil && (release == "" || !strings.HasPrefix(version, release)) {
			t.Fatalf("release %q of version %q", release, version)
		}
	})
}

func FuzzModulesDep(f *testing.F) {
	f.Add("kernel/a.ko: kernel/b.ko\nkernel/b.ko:\n", "softdep a pre: c\n")
	f.Add("a.ko: a.ko\n", "softdep a pre: a\n")
	f.Fuzz(func(t *testing.T, dep, softdep string) {
		tree := &Tree{}
		if err := tree.readDep(strings.NewReader(dep)); err != nil {
			return
		}
		tree.readSoftdep(strings.NewReader(softdep))
		tree.readAliases(strings.NewReader(softdep))
		var want []string
		for name := range tree.files {
			want = append(want, name)
		}
		files, _, _ := tree.Resolve(want, nil)
		seen := map[string]bool{}
		for _, f := range files {
			if seen[f] {
				t.Fatalf("%s loaded twice: %v", f, files)
			}
			seen[f] = true
		}
	})
}

// TestReadKernelBuildTree: --kernel takes a built kernel tree as virtme-ng's --kdir does (its
// bzImage; its modules from modules.order, laid out as modules_install would), and says what
// it expected of anything else.
func TestReadKernelBuildTree(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	if _, _, err := ReadKernel(dir, tmp); err == nil || !strings.Contains(err.Error(), "not a built kernel tree: no arch/x86/boot/bzImage") {
		t.Errorf("an empty directory: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "arch/x86/boot"), 0o755)
	os.WriteFile(filepath.Join(dir, BuildTreeImage), bzImage("6.18.0-rc3-00042-gdeadbeef (me@box) #7 SMP", 0x020f), 0o644)
	img, modules, err := ReadKernel(dir, tmp)
	if err != nil || img.Release != "6.18.0-rc3-00042-gdeadbeef" || modules != "" {
		t.Errorf("a tree without modules: %+v, %q, %v", img, modules, err)
	}
	os.WriteFile(filepath.Join(dir, "modules.order"), []byte("drivers/net/veth.o\n"), 0o644)
	if _, _, err := ReadKernel(dir, tmp); err == nil || !strings.Contains(err.Error(), "modules.order lists drivers/net/veth.ko, which is not built") {
		t.Errorf("a module not built: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "modules.order"), []byte("../../etc/shadow.o\n"), 0o644)
	if _, _, err := ReadKernel(dir, tmp); err == nil || !strings.Contains(err.Error(), "outside the tree") {
		t.Errorf("a path out of the tree: %v", err)
	}
	if _, _, err := ReadKernel(filepath.Join(dir, "modules.order"), tmp); err == nil || !strings.Contains(err.Error(), "not an x86 kernel image") {
		t.Errorf("a file that is no image: %v", err)
	}
}

// TestNoHangOnSpecialFiles: a device, a FIFO or a huge file as the kernel, and a FIFO as
// modules.dep, are refused at once, without reading from them.
func TestNoHangOnSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, _ := os.Create(huge)
	f.Truncate(2 << 30) // sparse: nothing is written
	f.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for path, want := range map[string]string{"/dev/zero": "not a regular file", fifo: "not a regular file", huge: "larger than any kernel image"} {
			if _, err := ReadImage(path); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadImage(%s): %v, want %q", path, err, want)
			}
			if _, _, err := ReadKernel(path, t.TempDir()); err == nil {
				t.Errorf("ReadKernel(%s) accepted it", path)
			}
		}
		tree := filepath.Join(dir, "lib", "modules", "6.1.0-test")
		os.MkdirAll(filepath.Join(tree, "kernel"), 0o755)
		unix.Mkfifo(filepath.Join(tree, "modules.dep"), 0o600)
		if _, err := FindTree(dir, "6.1.0-test"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO as modules.dep: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a special file hung the reader") // a bound on a hang, not a timing assertion
	}
}

// TestModulesStayInTheTree: a modules.dep entry with ../ and a module that is a symlink out of
// the tree put no outside file into the initramfs.
func TestModulesStayInTheTree(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "busybox"), []byte("#!busybox"), 0o755)
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "kernel"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret.ko"), []byte("\x7fELF secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.ko"), filepath.Join(tree, "kernel", "linked.ko"))
	for _, m := range []string{"../../" + filepath.Base(outside) + "/secret.ko", "kernel/linked.ko"} {
		var b bytes.Buffer
		err := WriteInitramfs(&b, filepath.Join(dir, "busybox"), tree, []string{m}, "")
		if err == nil || strings.Contains(b.String(), "secret") {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// TestGateIsTheHosts: the host's gate files are in a directory outside the exchange directory
// the guest writes, shared with it read-only: a link the guest plants cannot make the host
// write through it.
func TestGateIsTheHosts(t *testing.T) {
	c := Config{Dir: "/run/nsperf/vm/vm-x"}
	if rel, err := filepath.Rel(c.Exchange(), c.Gate()); err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("gate %s is inside the exchange directory %s", c.Gate(), c.Exchange())
	}
	args := strings.Join(c.args(), " ")
	if !strings.Contains(args, "-virtfs local,path="+c.Gate()+",mount_tag="+gateTag+",security_model=none,readonly=on") {
		t.Errorf("the gate directory is not shared read-only: %s", args)
	}
	if !strings.Contains(InitScript([]string{"x"}, nil), "mount -t 9p -o "+ninePOptions+",ro "+gateTag+" /host"+GuestGateDir+" ") {
		t.Error("/init does not mount the gate read-only")
	}
}

// TestInitMountsWhatQEMUShares: /init mounts every 9p share of QEMU's command line, by the
// same tag, where the guest's paths say, and read-only exactly when QEMU shares it read-only:
// both come from the same constants.
func TestInitMountsWhatQEMUShares(t *testing.T) {
	c := Config{Dir: "/run/nsperf/vm/vm-x"}
	args := c.args()
	shared := map[string]bool{} // mount tag -> read-only
	for i, a := range args {
		if a == "-virtfs" && i+1 < len(args) {
			tag := regexp.MustCompile(`mount_tag=([^,]+)`).FindStringSubmatch(args[i+1])
			if tag == nil {
				t.Fatalf("-virtfs %s has no mount tag", args[i+1])
			}
			shared[tag[1]] = strings.Contains(args[i+1], "readonly=on")
		}
	}
	where := map[string]string{hostRootTag: "/host", exchangeTag: "/host" + GuestDir, gateTag: "/host" + GuestGateDir}
	mounted := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^mount -t 9p -o (\S+) (\S+) (\S+) `).FindAllStringSubmatch(InitScript([]string{"x"}, nil), -1) {
		opts, tag, dir := strings.Split(m[1], ","), m[2], m[3]
		ro, ok := shared[tag]
		if !ok {
			t.Errorf("/init mounts tag %s, which QEMU does not share", tag)
			continue
		}
		mounted[tag] = true
		if dir != where[tag] || slices.Contains(opts, "ro") != ro {
			t.Errorf("/init mounts %s at %s with %v; want %s, read-only %v", tag, dir, opts, where[tag], ro)
		}
	}
	if len(mounted) != len(shared) || len(shared) != 3 {
		t.Errorf("QEMU shares %v, /init mounts %v", shared, mounted)
	}
}

func TestPlanPinning(t *testing.T) {
	for _, tc := range []struct {
		allowed []int
		vcpus   int
		want    PinPlan
	}{
		// Fewer vCPUs than CPUs: the last CPUs run vCPUs, the first ones QEMU's other threads.
		{[]int{0, 1}, 1, PinPlan{VCPUs: [][]int{{1}}, Other: []int{0}}},
		{[]int{0, 1, 2, 3}, 2, PinPlan{VCPUs: [][]int{{2}, {3}}, Other: []int{0, 1}}},
		{[]int{2, 5, 7}, 1, PinPlan{VCPUs: [][]int{{7}}, Other: []int{2, 5}}},
		// As many: one each, nothing free for the other threads.
		{[]int{0, 1}, 2, PinPlan{VCPUs: [][]int{{0}, {1}}}},
		// More: in turn.
		{[]int{0, 1}, 3, PinPlan{VCPUs: [][]int{{0}, {1}, {0}}}},
		{nil, 2, PinPlan{}},
	} {
		got := PlanPinning(tc.allowed, tc.vcpus)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("PlanPinning(%v, %d) = %+v, want %+v", tc.allowed, tc.vcpus, got, tc.want)
		}
	}
}

func TestAccelArg(t *testing.T) {
	if got := (Config{Accel: AccelTCG}).accelArg(); got != "tcg,thread=multi" {
		t.Errorf("tcg: %q", got)
	}
	if got := (Config{Accel: AccelKVM}).accelArg(); got != "kvm" {
		t.Errorf("kvm: %q", got)
	}
}

// In virtual time TCG runs single-threaded with -icount's fixed options and the real-time
// clock on the virtual clock; on the wall clock multi-threaded without them.
func TestVirtualTimeArgs(t *testing.T) {
	virtual := Config{Accel: AccelTCG, Icount: IcountOptions}
	args := strings.Join(virtual.args(), " ")
	if virtual.accelArg() != "tcg,thread=single" || !strings.Contains(args, "-accel tcg,thread=single") || !strings.Contains(args, "-icount shift=2,sleep=off,align=off") || virtual.TCGThreads() != "single" {
		t.Errorf("virtual time: %s", args)
	}
	if strings.Contains(args, "-rtc") {
		t.Errorf("virtual time without a date: %s", args)
	}
	virtual.RTCBase = time.Date(2026, 12, 6, 10, 31, 7, 0, time.UTC)
	if args := strings.Join(virtual.args(), " "); !strings.Contains(args, "-rtc base=2026-12-06T10:31:07,clock=vm") {
		t.Errorf("virtual time's real-time clock: %s", args)
	}
	wall := Config{Accel: AccelTCG, RTCBase: virtual.RTCBase}
	if args := strings.Join(wall.args(), " "); strings.Contains(args, "-icount") || strings.Contains(args, "-rtc") || !strings.Contains(args, "thread=multi") {
		t.Errorf("wall clock: %s", args)
	}
	if (Config{Accel: AccelKVM}).TCGThreads() != "" {
		t.Error("KVM has TCG threads")
	}
}

func TestResolveClock(t *testing.T) {
	for _, tc := range []struct {
		clock, accel, want, err string
	}{
		{"", AccelTCG, ClockVirtual, ""},
		{"auto", AccelTCG, ClockVirtual, ""},
		{"auto", AccelKVM, ClockWall, ""},
		{"auto", "", ClockVirtual, ""}, // not yet chosen: TCG unless KVM boots
		{"wall", AccelTCG, ClockWall, ""},
		{"wall", AccelKVM, ClockWall, ""},
		{"virtual", AccelTCG, ClockVirtual, ""},
		{"virtual", AccelKVM, "", "--vm-clock virtual with --vm-accel kvm: virtual time (QEMU's icount) exists under TCG only"},
		{"fast", AccelTCG, "", `--vm-clock "fast": want auto (virtual under TCG, wall under KVM), virtual or wall`},
	} {
		got, err := ResolveClock(tc.clock, tc.accel)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ResolveClock(%q, %q) = %q, %v; want %q, %q", tc.clock, tc.accel, got, err, tc.want, tc.err)
		}
	}
	if err := CheckClockFlags("virtual", "auto"); err != nil {
		t.Errorf("virtual with auto: %v", err)
	}
	if !icountUnsupported("qemu-system-x86_64: -icount shift=2: Invalid parameter 'align'") || icountUnsupported("could not open kernel file") {
		t.Error("icountUnsupported")
	}
}

// A QEMU that refuses -icount (a build without TCG) is named as such, with what QEMU said and
// what to do instead.
func TestStartWithoutIcount(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'qemu-system-x86_64: -icount shift=2,sleep=off,align=off: icount is not supported by this accelerator' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, QEMU), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, err := Start(Config{Name: "A", Accel: AccelTCG, Icount: IcountOptions, CPUs: 1, MemoryMB: 64, Dir: t.TempDir()})
	if !errors.Is(err, ErrNoIcount) || !strings.Contains(err.Error(), "use --vm-clock wall") || !strings.Contains(err.Error(), "icount is not supported by this accelerator") {
		t.Errorf("err = %v", err)
	}
}

// A kernel release names directories and files on the host: one that could leave them
// (../, a slash, control characters) is refused before any use (issue 31, item 9).
func TestParseImageRelease(t *testing.T) {
	for _, bad := range []string{"../../../tmp/x", "6.1/../../x", "..", ".hidden", "6.1\x1b[31m", strings.Repeat("6", 65)} {
		if _, _, err := ParseImage(bzImage(bad+" (x) #1", 0x020f)); err == nil || !strings.Contains(err.Error(), "is not a release as uname -r prints one") {
			t.Errorf("release %q: %v", bad, err)
		}
	}
	for _, good := range []string{"6.12.117+deb12-amd64", "6.19.0-rc1-00042-gdeadbeef", "6.1.0-57-amd64"} {
		if release, _, err := ParseImage(bzImage(good+" (x) #1", 0x020f)); err != nil || release != good {
			t.Errorf("release %q: %q %v", good, release, err)
		}
	}
}

// TestKernelTreeFilesAreChecked: every file nsperf reads from a kernel tree (.config,
// config-RELEASE, modules.order, modules.builtin, a module under --modules) is refused at
// once when it is a FIFO, /dev/zero, or a link out of the tree, and nothing outside is read.
func TestKernelTreeFilesAreChecked(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("CONFIG_SECRET=y\nsecret.o\n"), 0o600)
	const release = "6.18.0-test"
	type special func(path string) error
	fifo := func(path string) error { return unix.Mkfifo(path, 0o600) }
	zero := func(path string) error { return os.Symlink("/dev/zero", path) }
	out := func(path string) error { return os.Symlink(secret, path) }
	// A built tree whose file name is planted as a special file.
	builtTree := func(t *testing.T, name string, plant special) string {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "arch/x86/boot"), 0o755)
		os.MkdirAll(filepath.Join(dir, "net"), 0o755)
		os.WriteFile(filepath.Join(dir, BuildTreeImage), bzImage(release+" (me@box) #1 SMP", 0x020f), 0o644)
		os.WriteFile(filepath.Join(dir, "net/a.ko"), []byte("\x7fELF a"), 0o644)
		if name != "modules.order" {
			os.WriteFile(filepath.Join(dir, "modules.order"), []byte("net/a.o\n"), 0o644)
		}
		os.Remove(filepath.Join(dir, name))
		if err := plant(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, plant := range []struct {
			what string
			fn   special
			want string
		}{{"a FIFO", fifo, "a FIFO"}, {"/dev/zero", zero, "leads out of"}, {"a link out", out, "leads out of"}} {
			for _, name := range []string{"modules.order", "modules.builtin", "net/a.ko"} {
				dir := builtTree(t, name, plant.fn)
				if _, _, err := ReadKernel(dir, t.TempDir()); err == nil || !strings.Contains(err.Error(), plant.want) {
					t.Errorf("%s as %s of a built tree: %v, want %q", plant.what, name, err, plant.want)
				}
			}
			dir := builtTree(t, ".config", plant.fn)
			if _, _, err := FindConfig(dir, release); err == nil || !strings.Contains(err.Error(), plant.want) {
				t.Errorf("%s as .config: %v", plant.what, err)
			}
			boot := t.TempDir()
			plant.fn(filepath.Join(boot, "config-"+release))
			os.WriteFile(filepath.Join(boot, "vmlinuz-"+release), bzImage(release+" (me@box) #1 SMP", 0x020f), 0o644)
			if _, _, err := FindConfig(filepath.Join(boot, "vmlinuz-"+release), release); err == nil || !strings.Contains(err.Error(), plant.want) {
				t.Errorf("%s as config-RELEASE: %v", plant.what, err)
			}
			mods := filepath.Join(t.TempDir(), "lib", "modules", release)
			os.MkdirAll(filepath.Join(mods, "kernel"), 0o755)
			plant.fn(filepath.Join(mods, "kernel", "m.ko"))
			root, _ := os.OpenRoot(mods)
			if _, data, err := readModule(root, "kernel/m.ko"); err == nil || !strings.Contains(err.Error(), plant.want) || bytes.Contains(data, []byte("secret")) {
				t.Errorf("%s as a module under --modules: %v", plant.what, err)
			}
			root.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a special file in a kernel tree hung the reader") // a bound on a hang, not a timing assertion
	}
}

// TestPlanTogether: the guests of an A/B in virtual time get a host CPU each (A the last, B
// the one before, QEMU's other threads the rest, or the guest's own CPU); the wall clock, one CPU for two guests, a
// guest with several vCPU threads and --vm-turns alternate take turns instead.
func TestPlanTogether(t *testing.T) {
	for _, tc := range []struct {
		name           string
		allowed        []int
		i, guests, thr int
		clock, turns   string
		want           *PinPlan
	}{
		{"2 CPUs, A", []int{0, 1}, 0, 2, 1, ClockVirtual, TurnsAuto, &PinPlan{VCPUs: [][]int{{1}}, Other: []int{1}}},
		{"2 CPUs, B", []int{0, 1}, 1, 2, 1, ClockVirtual, TurnsTogether, &PinPlan{VCPUs: [][]int{{0}}, Other: []int{0}}},
		{"4 CPUs, B", []int{0, 1, 2, 3}, 1, 2, 1, ClockVirtual, "", &PinPlan{VCPUs: [][]int{{2}}, Other: []int{0, 1}}},
		{"a taskset of 2, 5, 7", []int{2, 5, 7}, 0, 2, 1, ClockVirtual, TurnsAuto, &PinPlan{VCPUs: [][]int{{7}}, Other: []int{2}}},
		{"wall clock", []int{0, 1}, 0, 2, 1, ClockWall, TurnsAuto, nil},
		{"one CPU", []int{3}, 0, 2, 1, ClockVirtual, TurnsTogether, nil},
		{"one guest", []int{0, 1}, 0, 1, 1, ClockVirtual, TurnsAuto, nil},
		{"two vCPU threads", []int{0, 1, 2, 3}, 0, 2, 2, ClockVirtual, TurnsAuto, nil},
		{"turns asked for", []int{0, 1}, 0, 2, 1, ClockVirtual, TurnsAlternate, nil},
	} {
		p, ok := PlanTogether(tc.allowed, tc.i, tc.guests, tc.thr, tc.clock, tc.turns)
		if ok != (tc.want != nil) || (ok && !reflect.DeepEqual(p, *tc.want)) {
			t.Errorf("%s: %+v %v, want %+v", tc.name, p, ok, tc.want)
		}
	}
	for turns, want := range map[string]string{"": "", TurnsAuto: "", TurnsAlternate: "", TurnsTogether: "", "sometimes": `want auto, together or alternate`} {
		if err := CheckTurns(turns, ClockAuto); (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("--vm-turns %q: %v", turns, err)
		}
	}
	if err := CheckTurns(TurnsTogether, ClockWall); err == nil || !strings.Contains(err.Error(), "measure each other's load") {
		t.Errorf("together on the wall clock: %v", err)
	}
}

// TCG guests get a CPU without CMPXCHG16B: QEMU's x86 translator (the same in user mode as in
// a guest) leaves the flags of an unlocked cmpxchg16b as a register's bits, which a 6.12
// guest's SLUB turned into double faults. testdata/cx16flags.c runs under qemu-x86_64 with
// the model nsperf passes: the instruction is absent, or its flags are right.
func TestTCGCPUModelAvoidsCX16Flags(t *testing.T) {
	testenv.RequireTool(t, "cc")
	testenv.RequireTool(t, "qemu-x86_64")
	prog := filepath.Join(t.TempDir(), "cx16flags")
	if out, err := exec.Command("cc", "-O1", "-static", "-o", prog, "testdata/cx16flags.c").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	model := (Config{Accel: AccelTCG}).CPUModel()
	out, err := exec.Command("qemu-x86_64", "-cpu", model, prog).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "cx16 absent") {
		t.Errorf("qemu-x86_64 -cpu %s: %v: %s", model, err, out)
	}
	// QEMU's default model shows why: on a QEMU that computes the flags right this logs it,
	// and the model could go.
	out, _ = exec.Command("qemu-x86_64", "-cpu", "qemu64", prog).CombinedOutput()
	t.Logf("qemu-x86_64 -cpu qemu64: %s", out)
	args := strings.Join((Config{Accel: AccelTCG, Icount: IcountOptions}).args(), " ")
	if !strings.Contains(args, "-cpu "+TCGCPUModel+" ") || strings.Contains(strings.Join((Config{Accel: AccelKVM}).args(), " "), "-cpu") {
		t.Errorf("TCG's arguments lack -cpu %s, or KVM's have one: %s", TCGCPUModel, args)
	}
}

// TestNICArgs: a scenario's NIC pairs become QEMU NICs, each pair on a hub of its own with
// the MAC addresses the scenario gives its ends; a scenario without them adds none.
func TestNICArgs(t *testing.T) {
	s, err := scenarios.Parse("pairs.yaml", []byte(`name: pairs
topology:
  namespaces: [a, b]
  links:
    - nic: {a: {ns: a, name: eth0, addrs: [198.18.0.1/24]}, b: {ns: b, name: eth0, addrs: [198.18.0.2/24]}}
    - nic: {model: e1000e, a: {ns: a, name: eth1}, b: {ns: b, name: eth1}}
states:
  - name: plain
workloads:
  - name: tcp
    iperf3: {client: {ns: a}, server: {ns: b, addr: 198.18.0.2}}
`), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nic := func(ns, name string) string { return scenarios.NICMAC(scenarios.Endpoint{NS: ns, Name: name}) }
	args := strings.Join(Config{NICs: NICs(s)}.args(), " ")
	for _, want := range []string{
		"-netdev hubport,id=nic0_0,hubid=0 -netdev hubport,id=nic0_1,hubid=0 -netdev hubport,id=nic1_0,hubid=1 -netdev hubport,id=nic1_1,hubid=1",
		"-device virtio-net-pci,netdev=nic0_0,mac=" + nic("a", "eth0") + " -device virtio-net-pci,netdev=nic0_1,mac=" + nic("b", "eth0"),
		"-device e1000e,netdev=nic1_0,mac=" + nic("a", "eth1") + " -device e1000e,netdev=nic1_1,mac=" + nic("b", "eth1"),
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
	if nic("a", "eth0") == nic("b", "eth0") || !strings.HasPrefix(nic("a", "eth0"), "52:54:00:") {
		t.Errorf("MAC addresses %s and %s", nic("a", "eth0"), nic("b", "eth0"))
	}
	def, err := scenarios.Load(scenarios.DefaultScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := NICs(def); len(n) != 0 || strings.Contains(strings.Join(Config{NICs: n}.args(), " "), "hubport") {
		t.Errorf("a veth scenario's guest has NICs: %v", n)
	}
}
