package scenarios

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
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
