package vm

import (
	"fmt"
	"github.com/nsperf/nsperf/kconfig"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/scenarios"
)

// The kernel config a scenario needs comes from the same tables that decide what a guest
// loads (Needs, BootModules): each module is built by one config option, its own, and may need
// others to work. `nsperf kconfig` prints them as a kselftest `config` fragment, and a kernel
// under test is checked against them before it boots.

// moduleOptions maps each module a guest may load to the options that build it: the first is
// the module's own (CONFIG_VXLAN builds vxlan.ko), the rest are what it needs besides. The
// link kinds' modules come from the kinds themselves (LinkSpec.Modules); this table holds the
// rest: OVS, the runner's, the counting table's and the guest's boot; the qdiscs' come from
// scenarios.QdiscKinds.
var moduleOptions = withKernelTools(withQdiscKinds(withLinkKinds(map[string][]string{
	"bridge":       {"BRIDGE"},
	"tun":          {"TUN"},
	"openvswitch":  {"OPENVSWITCH", "NF_CONNTRACK", "NF_NAT", "NET_NSH"},
	"tcp_diag":     {"INET_TCP_DIAG", "INET_DIAG"},
	"nf_tables":    {"NF_TABLES", "NF_TABLES_NETDEV", "NETFILTER_EGRESS"},
	"virtio_pci":   {"VIRTIO_PCI"},
	"9pnet_virtio": {"NET_9P_VIRTIO", "NET_9P"},
	"9p":           {"9P_FS"},
})))

// optionsOf are the options that build a module: moduleOptions', or a congestion control's
// own (tcp_bbr: TCP_CONG_BBR).
func optionsOf(module string) []string {
	if o, ok := moduleOptions[module]; ok {
		return o
	}
	if name, ok := strings.CutPrefix(module, "tcp_"); ok {
		if _, option, ok := scenarios.CongestionModule(name); ok {
			return []string{option}
		}
	}
	return nil
}

// withQdiscKinds adds every root qdisc's module and option to table.
func withQdiscKinds(table map[string][]string) map[string][]string {
	for _, k := range scenarios.QdiscKinds {
		if k.Module != "" {
			table[k.Module] = []string{k.Kconfig}
		}
	}
	return table
}

// withKernelTools adds the modules of every tool that is the kernel's own (pktgen) and their
// options to table.
func withKernelTools(table map[string][]string) map[string][]string {
	for _, spec := range scenarios.ToolKindSpecs() {
		if k, ok := spec.(scenarios.KernelTool); ok {
			for _, m := range k.Kernel().Modules {
				table[m.Name] = m.Options
			}
		}
	}
	return table
}

// withLinkKinds adds every link kind's modules and their options to table.
func withLinkKinds(table map[string][]string) map[string][]string {
	for _, spec := range scenarios.LinkKindSpecs() {
		for _, m := range spec.Modules() {
			table[m.Name] = m.Options
		}
	}
	return table
}

// baseOptions are what every run needs whatever its topology: namespaces, IPv4 and IPv6, and
// the traffic control layer, whose qdiscs the runner reads back on every device.
var baseOptions = []string{"NET_NS", "INET", "IPV6", "NET_SCHED"}

// guestOptions are what booting a kernel under test needs besides its modules (vm/initramfs.go):
// the initramfs, the console on the first serial port, devtmpfs, proc, sysfs and tmpfs.
var guestOptions = []string{"BLK_DEV_INITRD", "SERIAL_8250", "SERIAL_8250_CONSOLE", "DEVTMPFS", "PROC_FS", "SYSFS", "TMPFS", "VIRTIO"}

// minimalOptions are what a kernel made from `make tinyconfig` lacks to run a guest's
// userland besides the fragment's options: a 64-bit SMP kernel with ACPI (pinned CPUs: QEMU's
// MP table names the boot CPU alone, ACPI's tables all of them; and poweroff ends QEMU),
// printk and a tty for the console, ELF and #! programs, the system calls Go, glibc and the
// tools use (futex, epoll, the fds of signals, timers and events, POSIX timers, file locks,
// uids, SysV IPC, rseq, membarrier), sysctl writes under /proc/sys, PCI for virtio, Unix and
// packet sockets, network devices and the namespaces', network file systems' and netfilter's
// Kconfig menus.
var minimalOptions = []string{"64BIT", "SMP", "ACPI", "PRINTK", "TTY", "BINFMT_ELF", "BINFMT_SCRIPT", "MULTIUSER", "FUTEX", "EPOLL",
	"SIGNALFD", "TIMERFD", "EVENTFD", "SHMEM", "POSIX_TIMERS", "FILE_LOCKING", "PROC_SYSCTL", "HIGH_RES_TIMERS", "PCI",
	"VIRTIO_MENU", "NET", "UNIX", "PACKET", "NETDEVICES", "NET_CORE", "NAMESPACES", "NETFILTER", "NETWORK_FILESYSTEMS",
	"SYSVIPC", "ADVISE_SYSCALLS", "RSEQ", "MEMBARRIER"}

// countingOptions are what counting a patch's functions' calls in a guest needs (package
// coverage): kprobes on kernel text found by name, and tracefs' kprobe events with their hit
// counts. Debian's kernels have them; a kernel made from tinyconfig does not.
var countingOptions = []string{"KALLSYMS", "KPROBES", "FTRACE", "KPROBE_EVENTS"}

// pvhOptions give a kernel the PVH entry point QEMU boots an ELF vmlinux through (PVH is in
// the "Linux guest support" menu).
var pvhOptions = []string{"HYPERVISOR_GUEST", "PVH"}

// minimalOff are what a kernel made small leaves out although tinyconfig's and ACPI's
// defaults would build them: the virtual terminal with its input layer (the console is the
// serial port), and ACPI's buttons, fans and thermal zones, frequency and idle drivers.
var minimalOff = []string{"VT", "INPUT", "ACPI_BUTTON", "ACPI_FAN", "ACPI_THERMAL", "THERMAL", "CPU_FREQ", "CPU_IDLE"}

// MinimalFragment is the fragment merged into `make tinyconfig` for a whole kernel built
// small: what the scenarios need, booted as a guest, and what the guest's userland needs of a
// kernel that tinyconfig left without it, every option built in; then minimalOff, as
// "# CONFIG_X is not set" lines.
func MinimalFragment(ss []*scenarios.Scenario) (on []Option, off []string) {
	on = Fragment(ss, true)
	seen := map[string]bool{}
	for _, o := range on {
		seen[o.Name] = true
	}
	for _, n := range minimalOptions {
		if !seen[n] {
			on = append(on, Option{Name: n, Why: "the guest's userland on a kernel made from tinyconfig"})
		}
	}
	for _, n := range pvhOptions {
		if !seen[n] {
			on = append(on, Option{Name: n, Why: "QEMU enters the kernel at its PVH entry point, skipping the decompressor the emulated CPU would run (BootPVH)"})
		}
	}
	for _, n := range countingOptions {
		if !seen[n] {
			on = append(on, Option{Name: n, Why: "counting the calls of a patch's functions (kprobe events, coverage)"})
		}
	}
	return on, minimalOff
}

// Option is one line of a config fragment, with why it is there.
type Option struct {
	Name     string // without CONFIG_
	Why      string // "the scenario needs vxlan", "guests boot with 9p over virtio"
	Optional bool   // only for an optional module: its absence is said, not refused
}

// Fragment is every option the scenarios need, in a stable order: the base, then each
// module's in the order Needs gives them (required first), then, with guest, the boot's.
func Fragment(ss []*scenarios.Scenario, guest bool) []Option {
	var out []Option
	seen := map[string]bool{}
	add := func(why string, optional bool, names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, Option{Name: n, Why: why, Optional: optional})
			}
		}
	}
	add("network namespaces, IPv4, IPv6 and traffic control (the runner reads qdiscs back)", false, baseOptions...)
	for _, s := range ss {
		required, optional := Needs(s)
		for _, m := range required {
			add("the scenario needs "+m, false, optionsOf(m)...)
		}
		for _, m := range optional {
			add("the scenario uses "+m+" when there", true, optionsOf(m)...)
		}
		for _, c := range s.Expand() {
			for _, need := range settingNeeds(c.Scenario) {
				add(need.Why, false, need.Options...) // a state's settings' besides modules (XDP's bpf())
			}
			for _, w := range c.Scenario.Workloads {
				if k, ok := w.Spec().(scenarios.KernelTool); ok {
					need := k.Kernel()
					add(need.Why, false, need.Options...) // a tool's besides its modules (xdp-bench's BPF)
				}
			}
		}
	}
	if guest {
		for _, m := range BootModules {
			add("guests mount the host over 9p on virtio", false, moduleOptions[m]...)
		}
		add("guests boot from an initramfs with a serial console", false, guestOptions...)
	}
	return out
}

// WriteFragment writes opts as a fragment (kconfig.WriteFragment), each run of options of
// one reason under that reason.
func WriteFragment(w io.Writer, opts []Option) error {
	return kconfig.WriteFragment(w, Groups(opts), "", nil)
}

// Groups are opts as kconfig groups: each run of options of one reason.
func Groups(opts []Option) []kconfig.Group {
	var gs []kconfig.Group
	for _, o := range opts {
		if len(gs) == 0 || gs[len(gs)-1].Why != o.Why {
			gs = append(gs, kconfig.Group{Why: o.Why})
		}
		gs[len(gs)-1].Names = append(gs[len(gs)-1].Names, o.Name)
	}
	return gs
}

// ModulesOf are the modules a fragment builds: the modules whose own option it sets.
func ModulesOf(opts []Option) []string {
	set := map[string]bool{}
	for _, o := range opts {
		set[o.Name] = true
	}
	var out []string
	for m, names := range moduleOptions {
		if len(names) > 0 && set[names[0]] {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// FindConfig finds the config of a kernel under test: a built tree's .config, or the
// config-RELEASE next to an image (/boot/config-6.12.117+deb12-amd64 of a package). ok is
// false when there is none.
func FindConfig(kernelPath, release string) (c kconfig.Config, ok bool, err error) {
	candidates := []string{filepath.Join(kernelPath, ".config")}
	if st, err := os.Stat(kernelPath); err == nil && !st.IsDir() {
		candidates = []string{filepath.Join(filepath.Dir(kernelPath), "config-"+release)}
	}
	for _, p := range candidates {
		// Beneath its directory, regular and bounded: a FIFO or /dev/zero named .config
		// must not hang or fill memory.
		data, err := safefile.ReadFileInTree(filepath.Dir(p), filepath.Base(p), kconfig.MaxSize)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return c, false, err
		}
		return kconfig.Parse(p, data), true, nil
	}
	return c, false, nil
}

// MissingConfigError names the options a kernel under test lacks for the scenario: the run
// is skipped (exit 4) before anything boots.
type MissingConfigError struct {
	Config  string // the config file
	Missing []Option
}

// Is makes a MissingConfigError a capability.ErrMissing.
func (e *MissingConfigError) Is(target error) bool { return target == capability.ErrMissing }

func (e *MissingConfigError) Error() string {
	var parts []string
	for _, o := range e.Missing {
		parts = append(parts, fmt.Sprintf("CONFIG_%s is not set in %s: %s", o.Name, filepath.Base(e.Config), o.Why))
	}
	return strings.Join(parts, "; ") + " (`nsperf kconfig` prints the fragment to merge)"
}

// CheckConfig holds a kernel's config against a fragment: the required options it lacks are
// an error, the optional ones are returned as warnings.
func CheckConfig(c kconfig.Config, opts []Option) (warnings []string, err error) {
	var missing []Option
	for _, o := range opts {
		if c.Has(o.Name) {
			continue
		}
		if o.Optional {
			warnings = append(warnings, fmt.Sprintf("CONFIG_%s is not set in %s: %s", o.Name, filepath.Base(c.Path), o.Why))
			continue
		}
		missing = append(missing, o)
	}
	if len(missing) > 0 {
		return warnings, &MissingConfigError{Config: c.Path, Missing: missing}
	}
	return warnings, nil
}
