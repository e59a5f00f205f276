package topo

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
)

// xdpAttached is an XDP program nsperf attached to a device: the program and its bpf_link,
// which holds it there for as long as nsperf holds the link (a run killed with SIGKILL leaves
// nothing attached; the namespace's removal would take it anyway).
type xdpAttached struct {
	want string // scenarios.XDPPass or the object's path
	prog *ebpf.Program
	link link.Link
}

func (x *xdpAttached) close() error {
	return errors.Join(x.link.Close(), x.prog.Close())
}

// applyXDP attaches the XDP program a state asks for to a device, or detaches nsperf's when
// it asks for none, and reads back what the device has: "pass (id N, native)". Equivalent:
// `ip -n NS link set dev DEV xdp obj FILE sec xdp` / `ip -n NS link set dev DEV xdp off`.
func (l *Live) applyXDP(ref, want string) (string, error) {
	ns, dev := splitRef(ref)
	if have := l.xdp[ref]; have != nil && have.want != want {
		if err := have.close(); err != nil {
			return "", fmt.Errorf("ip link set dev %s xdp off: %w", ref, err)
		}
		delete(l.xdp, ref)
	}
	if want != "" && l.xdp[ref] == nil {
		prog, err := xdpProgram(want)
		if err != nil {
			return "", fmt.Errorf("xdp %s on %s: %w", want, ref, err)
		}
		index := 0
		err = l.withLink(ns, dev, func(_ *netlink.Handle, link netlink.Link) error { index = link.Attrs().Index; return nil })
		if err != nil {
			prog.Close()
			return "", err
		}
		var attached link.Link
		// The interface index is the namespace's: the attach runs in it.
		err = l.Do(ns, func() error {
			var err error
			attached, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: index})
			return err
		})
		if err != nil {
			prog.Close()
			return "", &capability.Error{Reasons: []string{fmt.Sprintf("xdp %s on %s: the kernel refused it: %v", want, ref, err)}}
		}
		l.xdp[ref] = &xdpAttached{want: want, prog: prog, link: attached}
	}
	got, err := l.readXDP(ref)
	if err != nil {
		return "", err
	}
	if (want != "") != (got != "") {
		return "", fmt.Errorf("%s: XDP reads back %q after attaching %q", ref, got, want)
	}
	return got, nil
}

// readXDP is what XDP program a device has, as `ip -d link show DEV` says it: "" for none.
func (l *Live) readXDP(ref string) (string, error) {
	ns, dev := splitRef(ref)
	link, err := l.lookup(ns, dev)
	if err != nil {
		return "", err
	}
	x := link.Attrs().Xdp
	if x == nil || !x.Attached {
		return "", nil
	}
	mode := map[uint32]string{1: "native", 2: "generic", 3: "offload"}[uint32(x.AttachMode)]
	name := "a program nsperf did not attach"
	if have := l.xdp[ref]; have != nil {
		name = have.want
		if have.want != scenarios.XDPPass {
			name = "object " + have.want
		}
	}
	return fmt.Sprintf("%s (id %d, %s)", name, x.ProgId, mode), nil
}

// xdpProgram loads the program: nsperf's XDP_PASS, or the first XDP program of an object.
func xdpProgram(want string) (*ebpf.Program, error) {
	if want == scenarios.XDPPass {
		return ebpf.NewProgram(&ebpf.ProgramSpec{Name: "nsperf_pass", Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2 /* XDP_PASS */), asm.Return()}})
	}
	spec, err := ebpf.LoadCollectionSpec(want)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Programs)) {
		if p := spec.Programs[name]; p.Type == ebpf.XDP {
			coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{Maps: spec.Maps, Programs: map[string]*ebpf.ProgramSpec{name: p}, Types: spec.Types}, ebpf.CollectionOptions{})
			if err != nil {
				return nil, err
			}
			prog := coll.DetachProgram(name)
			coll.Close()
			return prog, nil
		}
	}
	return nil, errors.New("no XDP program in the object")
}

// closeXDP detaches every program nsperf attached (teardown).
func (l *Live) closeXDP() error {
	var errs []error
	for ref, x := range l.xdp {
		errs = append(errs, x.close())
		delete(l.xdp, ref)
	}
	return errors.Join(errs...)
}
