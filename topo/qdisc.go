package topo

import (
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
)

// applyQdisc gives a device the root qdisc a state asks for, or takes nsperf's away when the
// state asks for none (the device's default comes back), and reads back what is attached.
// Equivalent: `tc qdisc replace dev DEV root fq` / `tc qdisc del dev DEV root`.
func (l *Live) applyQdisc(ref string, want scenarios.Qdisc) (string, error) {
	ns, dev := splitRef(ref)
	var readBack string
	attach := want.Kind().Name != ""
	err := l.withLink(ns, dev, func(h *netlink.Handle, link netlink.Link) error {
		// Handle 0, as tc: the kernel numbers the qdisc. A fixed handle makes replacing one
		// kind by another (fq, then fq_codel in the next state) EINVAL ("Invalid qdisc name").
		root := netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Parent: netlink.HANDLE_ROOT}
		switch {
		case attach:
			replace := func() error { return h.QdiscReplace(qdiscOf(root, want)) }
			if want.FQCodel != nil {
				replace = func() error { return l.Do(ns, func() error { return replaceFqCodel(root, want.FQCodel) }) }
			}
			if err := replace(); err != nil {
				if errors.Is(err, unix.ENOENT) {
					// The kernel knows no qdisc of that name: not built, or its module absent.
					return &capability.Error{Reasons: []string{fmt.Sprintf("qdisc %s on %s: this kernel has no %s qdisc (CONFIG_%s)", want, ref, want.Kind().Name, want.Kind().Kconfig)}}
				}
				return fmt.Errorf("tc qdisc replace dev %s root %s: %w", ref, want, err)
			}
		case l.qdiscs[ref]:
			if err := h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: root, QdiscType: "noqueue"}); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("tc qdisc del dev %s root: %w", ref, err)
			}
		}
		l.qdiscs[ref] = attach
		qs, err := retryDump(func() ([]netlink.Qdisc, error) { return h.QdiscList(link) })
		if err != nil {
			return err
		}
		for _, q := range qs {
			if q.Attrs().Parent == netlink.HANDLE_ROOT && attach {
				readBack = describeQdisc(q)
			}
		}
		if attach && readBack != want.Kind().Name && !startsWithWord(readBack, want.Kind().Name) {
			return fmt.Errorf("%s: the root qdisc reads back %q after attaching %s", ref, readBack, want)
		}
		return nil
	})
	return readBack, err
}

// qdiscOf is the netlink form of a scenario's qdisc at root.
func qdiscOf(root netlink.QdiscAttrs, want scenarios.Qdisc) netlink.Qdisc {
	switch {
	case want.TBF != nil:
		t := want.TBF
		rate := uint64(t.Rate) / 8 // bytes/s
		latency := t.Latency.Std()
		if latency == 0 {
			latency = scenarios.DefaultTBFLatency
		}
		return &netlink.Tbf{QdiscAttrs: root, Rate: rate, Buffer: netlink.Xmittime(rate, uint32(t.Burst)),
			Limit: uint32(float64(rate)*latency.Seconds()) + uint32(t.Burst)}
	case want.Netem != nil:
		n := want.Netem
		return netlink.NewNetem(root, netlink.NetemQdiscAttrs{Latency: uint32(n.Delay.Std() / time.Microsecond),
			Jitter: uint32(n.Jitter.Std() / time.Microsecond), Loss: float32(n.Loss * 100), ReorderProb: float32(n.Reorder * 100), Limit: uint32(n.Limit)})
	case want.FQ != nil:
		q := netlink.NewFq(root)
		q.FlowMaxRate, q.Quantum = uint32(uint64(want.FQ.MaxRate)/8), uint32(want.FQ.Quantum)
		q.FlowPacketLimit, q.PacketLimit = uint32(want.FQ.FlowLimit), uint32(want.FQ.Limit)
		return q
	}
	// pfifo_fast and noqueue take no parameters.
	return &netlink.GenericQdisc{QdiscAttrs: root, QdiscType: want.Kind().Name}
}

// describeQdisc is a qdisc as read back, in tc's words.
func describeQdisc(q netlink.Qdisc) string {
	switch q := q.(type) {
	case *netlink.Tbf:
		return fmt.Sprintf("tbf rate %s", scenarios.Rate(q.Rate*8))
	case *netlink.Netem:
		// The library converts microseconds to psched ticks when it sends, not when it reads.
		us := float64(q.Latency) / netlink.TickInUsec()
		s := fmt.Sprintf("netem delay %s", (time.Duration(us+0.5) * time.Microsecond).Round(time.Microsecond))
		if q.Loss > 0 {
			s += fmt.Sprintf(" loss %.3g%%", float64(q.Loss)/(1<<32)*100) // a fraction of 2^32
		}
		return s
	case *netlink.Fq:
		if q.FlowMaxRate > 0 && q.FlowMaxRate != ^uint32(0) {
			return fmt.Sprintf("fq maxrate %s", scenarios.Rate(uint64(q.FlowMaxRate)*8))
		}
		return "fq"
	case *netlink.FqCodel:
		// CoDel keeps times in units of 1024 ns: 5ms reads back as 4999us.
		us := func(v uint32) time.Duration {
			return (time.Duration(v) * time.Microsecond).Round(100 * time.Microsecond)
		}
		return fmt.Sprintf("fq_codel target %s interval %s", us(q.Target), us(q.Interval))
	}
	return q.Type()
}

func startsWithWord(s, word string) bool { return len(s) > len(word) && s[:len(word)+1] == word+" " }

// replaceFqCodel is `tc qdisc replace dev DEV root fq_codel ...` as its own netlink request,
// sent from the calling thread's namespace: vishvananda/netlink v1.3.1 reads fq_codel's
// target back but never sends it (qdiscPayload has no TCA_FQ_CODEL_TARGET).
func replaceFqCodel(root netlink.QdiscAttrs, c *scenarios.FQCodel) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(root.LinkIndex), Handle: root.Handle, Parent: root.Parent})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("fq_codel")))
	options := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	ecn := uint32(1)
	if c.NoECN {
		ecn = 0
	}
	options.AddRtAttr(nl.TCA_FQ_CODEL_ECN, nl.Uint32Attr(ecn))
	for attr, v := range map[int]uint32{nl.TCA_FQ_CODEL_TARGET: uint32(c.Target.Std() / time.Microsecond),
		nl.TCA_FQ_CODEL_INTERVAL: uint32(c.Interval.Std() / time.Microsecond), nl.TCA_FQ_CODEL_LIMIT: uint32(c.Limit)} {
		if v > 0 {
			options.AddRtAttr(attr, nl.Uint32Attr(v))
		}
	}
	req.AddData(options)
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}
