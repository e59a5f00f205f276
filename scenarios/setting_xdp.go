package scenarios

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/shellq"
)

// XDPPass is the XDP program nsperf brings itself: `r0 = XDP_PASS; exit`, which passes every
// packet on. On a veth it is what switches the receiving end to its NAPI path (veth_xdp_rcv,
// GRO) without changing a packet.
const XDPPass = "pass"

// MaxXDPObject bounds an XDP object file a scenario names.
const MaxXDPObject = 16 << 20

// xdpSection reports whether an ELF section holds an XDP program by libbpf's naming (SEC("xdp"),
// "xdp/NAME", "xdp.frags").
func xdpSection(name string) bool {
	return name == "xdp" || strings.HasPrefix(name, "xdp/") || strings.HasPrefix(name, "xdp.")
}

// checkXDP returns why a state cannot attach value to a device, or "": XDPPass, or the path of
// an ELF object with an XDP program (relative paths are the scenario file's); abs is the
// object's absolute path.
func checkXDP(value, scenarioFile string) (abs, problem string) {
	if value == XDPPass {
		return value, ""
	}
	if value == "" {
		return "", fmt.Sprintf("missing: %s (nsperf's XDP_PASS program) or an ELF object with an XDP program", XDPPass)
	}
	abs = value
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(filepath.Join(filepath.Dir(scenarioFile), value)); err != nil {
			return "", fmt.Sprintf("%s: %v", value, err)
		}
	}
	// Regular files only, bounded, never blocking on a FIFO (internal/safefile).
	data, err := safefile.ReadRegular(abs, MaxXDPObject)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path as written, not as resolved here
		}
		return "", fmt.Sprintf("%s: %v (a relative path is the scenario file's)", value, err)
	}
	obj, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Sprintf("%s is not an ELF object (%v): give %s, or an object built with clang -target bpf", value, err, XDPPass)
	}
	if obj.Machine != elf.EM_BPF {
		return "", fmt.Sprintf("%s is an ELF object for %s, not BPF: build it with clang -target bpf", value, obj.Machine)
	}
	for _, s := range obj.Sections {
		if xdpSection(s.Name) && s.Type == elf.SHT_PROGBITS && s.Size > 0 {
			return abs, ""
		}
	}
	return "", fmt.Sprintf("%s has no XDP program: no section named xdp (SEC(\"xdp\"), \"xdp/NAME\", \"xdp.frags\")", value)
}

// XDPPrograms attach an XDP program to a device while a state is measured (`ip link set dev
// DEV xdp obj FILE`), key "ns/dev": XDPPass (nsperf's own XDP_PASS program) or the path of an
// ELF object with an XDP program (relative to the scenario file; its first in the file, by
// section then offset). A device without one in a state has none.
type XDPPrograms map[string]string

func init() { registerSetting(func() Setting { return XDPPrograms{} }) }

// Key implements Setting.
func (XDPPrograms) Key() string { return "xdp" }

// Scope implements Setting.
func (XDPPrograms) Scope() Scope { return DeviceScope }

// Phases implements Setting: after the features, before the NAPI knobs a program's NAPI takes.
func (XDPPrograms) Phases() []int { return []int{PhaseXDP} }

// MayDiffer implements Setting.
func (XDPPrograms) MayDiffer() bool { return false }

// Targets implements Setting: the devices.
func (x XDPPrograms) Targets() []string { return slices.Sorted(maps.Keys(x)) }

// Check implements Setting: a device of the topology and a program nsperf can load; a
// relative path becomes the object's absolute one, wherever the run starts from.
func (x XDPPrograms) Check(c *SettingCheck) {
	for _, ref := range x.Targets() {
		if ok, _ := c.Device(ref, ref); !ok {
			continue
		}
		abs, problem := checkXDP(x[ref], c.Scenario.File)
		if problem != "" {
			c.Problem(ref, "%s", problem)
			continue
		}
		x[ref] = abs
	}
}

// Command implements Setting: `ip -n NS link set dev DEV xdp obj FILE sec xdp`.
func (x XDPPrograms) Command(ref string, _ int, sh Shell) string {
	ns, dev := SplitTarget(ref)
	switch x[ref] {
	case "":
		return ""
	case XDPPass:
		return fmt.Sprintf("%s link set dev %s xdp obj xdp_pass.o sec xdp  # xdp_pass.o: r0 = XDP_PASS; exit (nsperf loads its own)", sh.IP(ns), shellq.Word(dev))
	}
	return fmt.Sprintf("%s link set dev %s xdp obj %s sec xdp", sh.IP(ns), shellq.Word(dev), shellq.Word(x[ref]))
}

// Kernel implements Setting: the bpf() system call (programs and links) and the JIT that
// runs a program at speed.
func (x XDPPrograms) Kernel() KernelNeeds {
	if len(x) == 0 {
		return KernelNeeds{}
	}
	return KernelNeeds{Options: []string{"BPF_SYSCALL", "BPF_JIT"}, Why: "a state attaches an XDP program (BPF system call and links)"}
}
