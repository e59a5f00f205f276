package topo

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// passProgram is the name nsperf's own XDP_PASS program is loaded under.
const passProgram = "nsperf_pass"

// xdpAttached is an XDP program nsperf attached to a device: the program and its bpf_link,
// which holds it there for as long as nsperf holds the link (a run killed with SIGKILL leaves
// nothing attached; the namespace's removal would take it anyway), or, in a topology kept up
// (`nsperf up`, `run --keep`), for as long as the link's pin in bpffs stays.
type xdpAttached struct {
	want    string         // scenarios.XDPPass or the object's path
	program string         // the program's name: passProgram, or its symbol in the object
	id      ebpf.ProgramID // the kernel's id of the program, as the device reads it back
	prog    *ebpf.Program  // nil once nsperf let go of it (Keep)
	link    link.Link      // nil once nsperf let go of it (Keep)
	pin     string         // the link's pin in the run's runstate.PinDir, or "" for none
}

// release closes nsperf's handles on the program and its link: without a pin, the kernel
// detaches the program (`ip link set dev DEV xdp off`); with one, the pin holds it.
func (x *xdpAttached) release() error {
	var errs []error
	if x.link != nil {
		errs = append(errs, x.link.Close())
		x.link = nil
	}
	if x.prog != nil {
		errs = append(errs, x.prog.Close())
		x.prog = nil
	}
	return errors.Join(errs...)
}

// close detaches the program: its pin removed (`rm /sys/fs/bpf/nsperf/RUNID/xdp:NS:DEV`), its
// handles closed.
func (x *xdpAttached) close() error {
	var errs []error
	if x.pin != "" {
		if err := os.Remove(x.pin); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("unpin %s: %w", x.pin, err))
		}
		x.pin = ""
	}
	return errors.Join(append(errs, x.release())...)
}

// xdpApplier attaches the XDP program a state sets on a device (scenarios.XDPPrograms), or
// detaches nsperf's where it sets none.
type xdpApplier struct {
	attached map[string]*xdpAttached // XDP programs nsperf attached, by "ns/dev"
}

func init() {
	RegisterApplier("xdp", func() SettingApplier { return &xdpApplier{attached: map[string]*xdpAttached{}} })
}

// Check: in a topology that outlives nsperf, XDP links must be pinned to stay.
func (a *xdpApplier) Check(l *Live, value scenarios.Setting) []string {
	x, _ := value.(scenarios.XDPPrograms)
	if len(x) == 0 || !l.kept {
		return nil
	}
	if _, err := ensurePinDir(l.ID); err != nil {
		return []string{keptXDPReason(strings.Join(x.Targets(), ", "), err)}
	}
	return nil
}

// Apply: the program attached and read back; the record is what the device reads back, nil
// for none.
func (a *xdpApplier) Apply(l *Live, step plan.Step) (any, error) {
	x, _ := step.Setting.(scenarios.XDPPrograms)
	want := x[step.Target]
	if want == "" && a.attached[step.Target] == nil {
		return nil, nil // nothing attached, nothing asked: no read-back to do
	}
	got, err := a.apply(l, step.Target, want)
	if err != nil || got == "" {
		return nil, err
	}
	return got, nil
}

// Drift: the program a device has against the one attached.
func (a *xdpApplier) Drift(l *Live, ref string, record any) ([]string, error) {
	got, err := a.read(l, ref)
	if err != nil {
		return nil, err
	}
	if want := record.(string); got != want {
		return []string{fmt.Sprintf("%s xdp is %q, applied %q", ref, got, want)}, nil
	}
	return nil, nil
}

// Record: the program of each device that has nsperf's, as read back.
func (a *xdpApplier) Record(rec *results.StateRecord, records map[string]any) {
	for ref, x := range records {
		if rec.XDP == nil {
			rec.XDP = map[string]string{}
		}
		rec.XDP[ref] = x.(string)
	}
}

// apply attaches the XDP program a state asks for to a device, or detaches nsperf's when
// it asks for none, and reads back what the device has: "pass (id N, native)". Equivalent:
// `ip -n NS link set dev DEV xdp obj FILE sec xdp` / `ip -n NS link set dev DEV xdp off`; in a
// topology kept up, the link is pinned (`ip ... xdp pinned`'s counterpart for a bpf_link:
// `bpftool link pin`) so that it stays after nsperf exits.
func (a *xdpApplier) apply(l *Live, ref, want string) (string, error) {
	ns, dev := splitRef(ref)
	if have := a.attached[ref]; have != nil && have.want != want {
		if err := have.close(); err != nil {
			return "", fmt.Errorf("ip link set dev %s xdp off: %w", ref, err)
		}
		delete(a.attached, ref)
	}
	if want != "" && a.attached[ref] == nil {
		x, err := attachXDP(l, ns, dev, want)
		if err != nil {
			return "", err
		}
		a.attached[ref] = x
	}
	got, err := a.read(l, ref)
	if err != nil {
		return "", err
	}
	if (want != "") != (got != "") {
		return "", fmt.Errorf("%s: XDP reads back %q after attaching %q", ref, got, want)
	}
	return got, nil
}

// attachXDP loads want's program and attaches it to a device with a bpf_link, pinned when
// the topology is kept up.
func attachXDP(l *Live, ns, dev, want string) (*xdpAttached, error) {
	ref := ns + "/" + dev
	prog, name, err := xdpProgram(want)
	if err != nil {
		return nil, fmt.Errorf("xdp %s on %s: %w", want, ref, err)
	}
	x := &xdpAttached{want: want, program: name, prog: prog}
	info, err := prog.Info()
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("xdp %s on %s: read the loaded program's id: %w", want, ref, err)
	}
	x.id, _ = info.ID()
	index := 0
	err = l.withLink(ns, dev, func(_ *netlink.Handle, link netlink.Link) error { index = link.Attrs().Index; return nil })
	if err != nil {
		prog.Close()
		return nil, err
	}
	// The interface index is the namespace's: the attach runs in it.
	err = l.Do(ns, func() error {
		var err error
		x.link, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: index})
		return err
	})
	if err != nil {
		prog.Close()
		return nil, &capability.Error{Reasons: []string{fmt.Sprintf("xdp %s on %s: the kernel refused it: %v", want, ref, err)}}
	}
	if !l.kept {
		return x, nil
	}
	dir, err := ensurePinDir(l.ID)
	if err == nil {
		x.pin = filepath.Join(dir, xdpPinName(ns, dev))
		if err = x.link.Pin(x.pin); err != nil {
			x.pin = ""
		}
	}
	if err != nil {
		x.close()
		return nil, keptXDPError(ref, err)
	}
	return x, nil
}

// keptXDPError says that the XDP program of a device cannot outlive nsperf here.
func keptXDPError(ref string, err error) error {
	return &capability.Error{Reasons: []string{keptXDPReason(ref, err)}}
}

func keptXDPReason(refs string, err error) string {
	return fmt.Sprintf("xdp on %s cannot stay attached after nsperf exits: pinning its bpf_link in %s failed: %v; leave the topology to nsperf (no `nsperf up`, no `run --keep`), or make bpffs usable there (mount -t bpf bpf %s)", refs, runstate.PinRoot, err, runstate.BPFFS)
}

// xdpPinName is a device's pin in its run's directory: xdp:NS:DEV. bpffs refuses a dot in a
// name, and a device's name may have one: it becomes a colon, which neither a device's nor a
// namespace's name has, so no two devices share a pin.
func xdpPinName(ns, dev string) string { return "xdp:" + ns + ":" + strings.ReplaceAll(dev, ".", ":") }

// read is what XDP program a device has, as `ip -d link show DEV` says it: "" for none.
func (a *xdpApplier) read(l *Live, ref string) (string, error) {
	x, err := deviceXDP(l, ref)
	if err != nil || x == nil {
		return "", err
	}
	mode := map[uint32]string{1: "native", 2: "generic", 3: "offload"}[uint32(x.AttachMode)]
	name := "a program nsperf did not attach"
	if have := a.attached[ref]; have != nil && uint32(have.id) == x.ProgId {
		name = have.want
		if have.want != scenarios.XDPPass {
			name = fmt.Sprintf("object %s, program %s", have.want, have.program)
		}
	}
	return fmt.Sprintf("%s (id %d, %s)", name, x.ProgId, mode), nil
}

// deviceXDP is the XDP program a device has (`ip -d link show DEV`: "prog/xdp id N"), or nil.
func deviceXDP(l *Live, ref string) (*netlink.LinkXdp, error) {
	ns, dev := splitRef(ref)
	link, err := l.lookup(ns, dev)
	if err != nil {
		return nil, err
	}
	if x := link.Attrs().Xdp; x != nil && x.Attached {
		return x, nil
	}
	return nil, nil
}

// xdpProgram loads the program: nsperf's XDP_PASS, or an object's first XDP program in the
// file (xdpProgramOrder); name is the program's.
func xdpProgram(want string) (prog *ebpf.Program, name string, err error) {
	if want == scenarios.XDPPass {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: passProgram, Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2 /* XDP_PASS */), asm.Return()}})
		return prog, passProgram, err
	}
	spec, err := ebpf.LoadCollectionSpec(want)
	if err != nil {
		return nil, "", err
	}
	order, err := xdpProgramOrder(want)
	if err != nil {
		return nil, "", err
	}
	for _, name := range order {
		if p := spec.Programs[name]; p != nil && p.Type == ebpf.XDP {
			coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{Maps: spec.Maps, Programs: map[string]*ebpf.ProgramSpec{name: p}, Types: spec.Types}, ebpf.CollectionOptions{})
			if err != nil {
				return nil, "", err
			}
			prog := coll.DetachProgram(name)
			coll.Close()
			return prog, name, nil
		}
	}
	return nil, "", errors.New("no XDP program in the object")
}

// xdpProgramOrder are the functions of a BPF object in the order of the file: by section,
// then by offset in it, as libbpf (and so `ip link set dev DEV xdp obj FILE`) numbers its
// programs. cilium/ebpf keeps an object's programs in a map, which has no order.
func xdpProgramOrder(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: symbols: %w", path, err)
	}
	var funcs []elf.Symbol
	for _, s := range syms {
		i := int(s.Section)
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section < elf.SHN_LORESERVE && i < len(f.Sections) && f.Sections[i].Flags&elf.SHF_EXECINSTR != 0 {
			funcs = append(funcs, s)
		}
	}
	slices.SortStableFunc(funcs, func(a, b elf.Symbol) int {
		return cmp.Or(cmp.Compare(a.Section, b.Section), cmp.Compare(a.Value, b.Value))
	})
	var out []string
	for _, s := range funcs {
		out = append(out, s.Name)
	}
	return out, nil
}

// Teardown detaches every program nsperf attached, pins and all.
func (a *xdpApplier) Teardown(l *Live) error {
	var errs []error
	for _, ref := range slices.Sorted(maps.Keys(a.attached)) {
		errs = append(errs, a.attached[ref].close())
		delete(a.attached, ref)
	}
	if l.kept {
		if _, err := removePins(l.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Keep lets go of nsperf's handles on the programs it attached, leaving each to its pin, and
// reads every device back: a program that went with the handles is an error.
func (a *xdpApplier) Keep(l *Live) error {
	var errs []error
	for _, ref := range slices.Sorted(maps.Keys(a.attached)) {
		x := a.attached[ref]
		if x.pin == "" {
			errs = append(errs, fmt.Errorf("xdp on %s is not pinned: it would go with nsperf", ref))
			continue
		}
		if err := x.release(); err != nil {
			errs = append(errs, fmt.Errorf("xdp on %s: %w", ref, err))
			continue
		}
		got, err := deviceXDP(l, ref)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read back xdp on %s: %w", ref, err))
		case got == nil || got.ProgId != uint32(x.id):
			errs = append(errs, fmt.Errorf("xdp on %s: program %s (id %d) went with nsperf's handles on it, its pin %s did not hold it", ref, x.program, x.id, x.pin))
		}
	}
	return errors.Join(errs...)
}
