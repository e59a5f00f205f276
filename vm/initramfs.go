package vm

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"

	"github.com/cavaliergopher/cpio"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/shellq"
)

// Mount tags and paths shared by the host's QEMU command line and the guest's /init.
const (
	hostRootTag = "hostroot" // the host's / (read-only)
	exchangeTag = "nsperfx"  // the run's directory on the host (read-write)
	gateTag     = "nsperfg"  // the host's gate directory (read-only)
	// GuestGateDir is where the guest sees the host's gate directory, inside the host root.
	GuestGateDir = "/run/nsperf-vm-gate"
	GuestDir     = "/run/nsperf-vm" // where the guest sees the exchange directory, inside the host root
	// progressPrefix starts the lines /init writes on the progress port.
	progressPrefix = "nsperf-vm: "
	// ninePOptions are the guest's options of every 9p mount: virtio, 9P2000.L, and a message
	// size of 256 KiB (the default 8 KiB makes reading the tools' binaries slow).
	ninePOptions = "trans=virtio,version=9p2000.L,msize=262144"
)

// initScript is the guest's /init, made from the same constants as QEMU's arguments (the 9p
// mount tags, the guest's directories) and the host's reading of the progress lines: load the modules, mount the host root read-only over 9p
// with fresh proc, sys, dev, /run and /tmp in it, mount the exchange directory, run nsperf in
// the host root and leave its exit status for the host, then power off. The kernel log goes to
// ttyS0 (the console log); ttyS1 carries nsperf's stderr and these progress lines to the host.
var initScript = template.Must(template.New("init").Parse(`#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec 3>/dev/ttyS1
say() { echo "{{.Progress}}$*" >&3; }
# A kernel without ACPI (a --config of one's own) only halts at poweroff: a reset ends QEMU
# as well (-no-reboot).
off() { if [ -d /sys/firmware/acpi ]; then poweroff -f; fi; reboot -f; }
fail() { say "error: $*"; off; }
say booted
# CPUs the kernel left down at boot (maxcpus=1 in virtual time: CPUBringUpAfterBoot) come up
# now, from a running system.
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ -e "$c" ] || continue
	[ "$(cat "$c")" = 1 ] || echo 1 >"$c" || fail "bringing ${c%/online} online failed (see the console log)"
done
while read -r m; do
	insmod "/modules/$m" || fail "insmod $m failed (see the console log)"
done </modules.list
say modules loaded
mkdir -p /host
mount -t 9p -o {{.NineP}},ro,cache=mmap {{.HostRootTag}} /host || fail "mounting the host root over 9p failed: is 9p over virtio (9p, 9pnet_virtio, virtio_pci) built in or in --modules?"
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mount -t tmpfs tmpfs /host/run
mount -t tmpfs tmpfs /host/tmp
hide() {
	for p in "$@"; do
		if [ -d "/host$p" ]; then
			mount -t tmpfs -o size=1m,mode=0700 hidden "/host$p" || fail "hiding $p failed"
		elif [ -e "/host$p" ]; then
			mount --bind /dev/null "/host$p" || fail "hiding $p failed"
		fi
	done
}
hide {{.Hide}}
mkdir -p /host{{.GuestDir}}
mount -t 9p -o {{.NineP}} {{.ExchangeTag}} /host{{.GuestDir}} || fail "mounting the exchange directory over 9p failed"
mkdir -p /host{{.GuestGateDir}}
mount -t 9p -o {{.NineP}},ro {{.GateTag}} /host{{.GuestGateDir}} || fail "mounting the gate directory over 9p failed"
say running
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
chroot /host /bin/sh -c 'cd {{.GuestDir}} && exec "$@"' nsperf-guest {{.Argv}} >/host{{.GuestDir}}/stdout 2>&3
echo $? >/host{{.GuestDir}}/exit.tmp && mv /host{{.GuestDir}}/exit.tmp /host{{.GuestDir}}/exit
sync
off
`))

// Hidden are the host's paths a guest sees empty: the kernel under test runs with root's
// rights over the host's root (read-only), and must not copy secrets into its result or
// console log, which CI uploads. A directory is covered by an empty tmpfs, a file by
// /dev/null. What nsperf needs in the guest is elsewhere: the tools and libraries in /usr,
// the binary and the scenario in the exchange directory, fresh /run and /tmp.
var Hidden = []string{
	"/root", "/home", // users' files: SSH keys, cloud and registry credentials, ~/.local/share/nsperf/history.db
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/ssl/private",
	"/var/lib/postgresql", "/var/lib/cloud", "/var/lib/sss", "/var/backups",
	"/opt/actions-runner", // a GitHub runner's credentials (.credentials, .runner), where its docs install it
}

// InitScript is /init for a guest that runs argv (argv[0] a path inside the host root),
// with Hidden and hide (absolute paths) hidden from it.
func InitScript(argv []string, hide []string) string {
	var b strings.Builder
	err := initScript.Execute(&b, map[string]string{
		"Progress": progressPrefix, "NineP": ninePOptions,
		"HostRootTag": hostRootTag, "ExchangeTag": exchangeTag, "GateTag": gateTag,
		"GuestDir": GuestDir, "GuestGateDir": GuestGateDir,
		"Hide": shellq.Join(append(append([]string{}, Hidden...), hide...)), "Argv": shellq.Join(argv),
	})
	if err != nil {
		panic(err) // a template of constants and quoted words: cannot fail
	}
	return b.String()
}

// maxInitramfs bounds the initramfs, which lives in the host's tmpfs and the guest's memory:
// busybox and the modules a guest needs (virtio, 9p, veth, vxlan, openvswitch and their
// dependencies) are a few MiB. A variable so that a test can reach it with small files.
var maxInitramfs int64 = 256 << 20

// WriteInitramfs writes a newc cpio archive: busybox (a static build), the modules in load
// order (/modules/NAME.ko, decompressed, and /modules.list), and /init. It is not compressed: unpacking a
// gzipped one took the guest about a second more under TCG, and it lives on tmpfs for
// seconds only.
func WriteInitramfs(w io.Writer, busybox string, modDir string, modules []string, init string) error {
	cw := cpio.NewWriter(w)
	dir := func(name string) error {
		return cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeDir | 0o755})
	}
	var total int64
	file := func(name string, mode cpio.FileMode, data []byte) error {
		if total += int64(len(data)); total > maxInitramfs {
			return fmt.Errorf("initramfs: more than %s with %s: the modules are not the few a guest needs", safefile.Size(maxInitramfs), name)
		}
		if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := cw.Write(data)
		return err
	}
	for _, d := range []string{"bin", "dev", "proc", "sys", "modules", "host"} {
		if err := dir(d); err != nil {
			return err
		}
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("initramfs: %w (install busybox-static)", err)
	}
	if dynamic(bb) {
		return fmt.Errorf("initramfs: %s is linked dynamically and cannot run without the host's libraries: install busybox-static", busybox)
	}
	if err := file("bin/busybox", 0o755, bb); err != nil {
		return err
	}
	var list strings.Builder
	var tree *os.Root
	if len(modules) > 0 {
		if tree, err = os.OpenRoot(modDir); err != nil {
			return fmt.Errorf("initramfs: modules: %w", err)
		}
		defer tree.Close()
	}
	for _, m := range modules {
		base, data, err := readModule(tree, m)
		if err != nil {
			return fmt.Errorf("initramfs: %w", err)
		}
		if err := file("modules/"+base, 0o644, data); err != nil {
			return err
		}
		list.WriteString(base + "\n")
	}
	if err := file("modules.list", 0o644, []byte(list.String())); err != nil {
		return err
	}
	if err := file("init", 0o755, []byte(init)); err != nil {
		return err
	}
	return cw.Close()
}

// dynamic reports whether an ELF executable asks for a program interpreter (ld.so).
func dynamic(data []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return false // not ELF (a test's stand-in): let the guest say
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
