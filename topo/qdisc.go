package topo

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/scenarios"
)

// applyQdisc gives a device the root qdisc a state asks for, or takes nsperf's away when the
// state asks for none, and reads back what is attached. Equivalent: `tc qdisc replace dev DEV
// root tbf rate R burst B latency L` / `tc qdisc del dev DEV root`.
func (l *Live) applyQdisc(ref string, want scenarios.Qdisc) (string, error) {
	ns, dev := splitRef(ref)
	var readBack string
	err := l.withLink(ns, dev, func(h *netlink.Handle, link netlink.Link) error {
		root := netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
		switch {
		case want.TBF != nil:
			t := want.TBF
			rate := uint64(t.Rate) / 8 // bytes/s
			latency := t.Latency.Std()
			if latency == 0 {
				latency = scenarios.DefaultTBFLatency
			}
			q := &netlink.Tbf{QdiscAttrs: root, Rate: rate, Buffer: netlink.Xmittime(rate, uint32(t.Burst)),
				Limit: uint32(float64(rate)*latency.Seconds()) + uint32(t.Burst)}
			if err := h.QdiscReplace(q); err != nil {
				return fmt.Errorf("tc qdisc replace dev %s root %s: %w", ref, want, err)
			}
		case want.Netem != nil:
			q := netlink.NewNetem(root, netlink.NetemQdiscAttrs{Latency: uint32(want.Netem.Delay.Std() / time.Microsecond),
				Jitter: uint32(want.Netem.Jitter.Std() / time.Microsecond)})
			if err := h.QdiscReplace(q); err != nil {
				return fmt.Errorf("tc qdisc replace dev %s root %s: %w", ref, want, err)
			}
		case l.qdiscs[ref]:
			if err := h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: root, QdiscType: "tbf"}); err != nil {
				return fmt.Errorf("tc qdisc del dev %s root: %w", ref, err)
			}
		}
		l.qdiscs[ref] = want.TBF != nil || want.Netem != nil
		qs, err := retryDump(func() ([]netlink.Qdisc, error) { return h.QdiscList(link) })
		if err != nil {
			return err
		}
		for _, q := range qs {
			if q.Attrs().Parent != netlink.HANDLE_ROOT {
				continue
			}
			switch q := q.(type) {
			case *netlink.Tbf:
				readBack = fmt.Sprintf("tbf rate %s", scenarios.Rate(q.Rate*8))
			case *netlink.Netem:
				readBack = fmt.Sprintf("netem delay %s", time.Duration(q.Latency)*time.Microsecond)
			default:
				if l.qdiscs[ref] {
					readBack = q.Type()
				}
			}
		}
		if l.qdiscs[ref] && readBack == "" {
			return fmt.Errorf("%s: no root qdisc after attaching %s", ref, want)
		}
		return nil
	})
	return readBack, err
}
