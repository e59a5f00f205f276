package topo

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// qdiscsApplier attaches the root qdisc a state sets on a device (scenarios.Qdiscs), or takes
// nsperf's away where it sets none.
type qdiscsApplier struct {
	attached map[string]bool // devices with a root qdisc nsperf attached
}

func init() {
	RegisterApplier("qdiscs", func() SettingApplier { return &qdiscsApplier{attached: map[string]bool{}} })
}

// Check: a kernel without the qdisc is the kernel's answer to attaching it.
func (a *qdiscsApplier) Check(*Live, scenarios.Setting) []string { return nil }

// Apply: the qdisc attached and read back; the record is what the device reads back, nil
// for none.
func (a *qdiscsApplier) Apply(l *Live, step plan.Step) (any, error) {
	q, _ := step.Setting.(scenarios.Qdiscs)
	got, err := a.apply(l, step.Target, q[step.Target])
	if err != nil || got == "" {
		return nil, err
	}
	return got, nil
}

// Drift: a qdisc is not read back while measuring (its counters are).
func (a *qdiscsApplier) Drift(*Live, string, any) ([]string, error) { return nil, nil }

// Record: the root qdisc of each device that has nsperf's, as read back.
func (a *qdiscsApplier) Record(rec *results.StateRecord, records map[string]any) {
	for ref, q := range records {
		if rec.Qdiscs == nil {
			rec.Qdiscs = map[string]string{}
		}
		rec.Qdiscs[ref] = q.(string)
	}
}

// Recreated: a device created anew has no qdisc of nsperf's.
func (a *qdiscsApplier) Recreated(_ *Live, ref string) error {
	a.attached[ref] = false
	return nil
}

// apply gives a device the root qdisc a state asks for, or takes nsperf's away when the
// state asks for none (the device's default comes back), and reads back what is attached.
// Equivalent: `tc qdisc replace dev DEV root fq` / `tc qdisc del dev DEV root`.
func (a *qdiscsApplier) apply(l *Live, ref string, want scenarios.Qdisc) (string, error) {
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
		case a.attached[ref]:
			if err := h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: root, QdiscType: "noqueue"}); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("tc qdisc del dev %s root: %w", ref, err)
			}
		}
		a.attached[ref] = attach
		if !attach {
			return nil
		}
		qs, err := retryDump(func() ([]netlink.Qdisc, error) { return h.QdiscList(link) })
		if err != nil {
			return err
		}
		var attached netlink.Qdisc
		for _, q := range qs {
			if q.Attrs().Parent == netlink.HANDLE_ROOT {
				attached = q
			}
		}
		if attached == nil {
			return fmt.Errorf("%s: no root qdisc reads back after attaching %s", ref, want)
		}
		readBack = describeQdisc(attached)
		if problems := qdiscReadBackProblems(want, attached, netlink.TickInUsec()); len(problems) > 0 {
			return fmt.Errorf("%s: root qdisc %s reads back otherwise: %s", ref, want, strings.Join(problems, "; "))
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
		q := netlink.NewNetem(root, netlink.NetemQdiscAttrs{Latency: uint32(n.Delay.Std() / time.Microsecond),
			Jitter: uint32(n.Jitter.Std() / time.Microsecond), Limit: uint32(n.Limit)})
		// The probabilities in float64: the library's Percentage2u32 multiplies in float32,
		// whose 24 bits are coarser than the field's 32. Reordering needs a gap of 1, as
		// NewNetem would give it (`tc ... reorder P%` sets the same).
		q.Loss, q.ReorderProb = netemProbability(n.Loss), netemProbability(n.Reorder)
		if q.ReorderProb > 0 {
			q.Gap = 1
		}
		return q
	case want.FQ != nil:
		q := netlink.NewFq(root)
		q.FlowMaxRate, q.Quantum = uint32(uint64(want.FQ.MaxRate)/8), uint32(want.FQ.Quantum)
		q.FlowPacketLimit, q.PacketLimit = uint32(want.FQ.FlowLimit), uint32(want.FQ.Limit)
		return q
	}
	// pfifo_fast and noqueue take no parameters.
	return &netlink.GenericQdisc{QdiscAttrs: root, QdiscType: want.Kind().Name}
}

// netemProbability is p as netem's 32-bit fraction of 2^32-1 (validation keeps p in [0, 1]).
func netemProbability(p scenarios.Percent) uint32 {
	return uint32(math.Round(float64(p) * math.MaxUint32))
}

// qdiscReadBackProblems compares the root qdisc the kernel reports (`tc qdisc show dev DEV
// root`) with what nsperf asked, every parameter nsperf sends: one line per parameter that
// differs, "delay: asked 10ms, the kernel holds 2.704ms". The kernel's units are allowed
// for: times go as whole microseconds turned into ticks (tickInUsec of them a microsecond:
// netem's delay and jitter, tbf's burst as time) or into CoDel's 1024ns units (fq_codel),
// probabilities as fractions of 2^32-1, tbf's latency as its limit in whole bytes. A value
// cut to 32 bits on its way reads back far from what was asked. Comparisons are written so
// that a NaN asked fails them.
func qdiscReadBackProblems(want scenarios.Qdisc, got netlink.Qdisc, tickInUsec float64) []string {
	if kind := want.Kind().Name; got.Type() != kind {
		return []string{fmt.Sprintf("kind: asked %s, the kernel holds %s", kind, got.Type())}
	}
	// A time travels as whole microseconds (nsperf truncates) turned into whole ticks (the
	// library truncates): it reads back within a microsecond and a tick of what was asked.
	r := &readBack{tickInUsec: tickInUsec, tick: time.Duration(float64(time.Microsecond) / tickInUsec)}
	switch got := got.(type) {
	case *netlink.Tbf:
		r.tbf(want.TBF, got)
	case *netlink.Netem:
		r.netem(want.Netem, got)
	case *netlink.Fq:
		r.fq(want.FQ, got)
	case *netlink.FqCodel:
		r.fqCodel(want.FQCodel, got)
	}
	return r.problems
}

// readBack compares what a qdisc was asked with what the kernel holds, one kind's
// parameters at a time, and gathers what differs.
type readBack struct {
	problems   []string
	tickInUsec float64
	tick       time.Duration
}

func (r *readBack) differ(param string, asked, holds any) {
	r.problems = append(r.problems, fmt.Sprintf("%s: asked %v, the kernel holds %v", param, asked, holds))
}

// ticks is a count of the kernel's scheduler ticks as a duration.
func (r *readBack) ticks(n uint32) time.Duration {
	return time.Duration(float64(n) / r.tickInUsec * float64(time.Microsecond))
}

func near(asked, holds, within time.Duration) bool {
	d := asked - holds
	return d <= within && -d <= within
}

func (r *readBack) tbf(t *scenarios.TBF, got *netlink.Tbf) {
	bytesPerSecond := uint64(t.Rate) / 8
	if got.Rate != bytesPerSecond {
		r.differ("rate", t.Rate, bitRate(got.Rate))
	}
	// The burst travels as time at the rate (tc_tbf_qopt.buffer, in ticks).
	burst := float64(bytesPerSecond) * r.ticks(got.Buffer).Seconds()
	within := float64(bytesPerSecond)*(time.Microsecond+r.tick).Seconds() + 1
	if !(math.Abs(burst-float64(t.Burst)) <= within) {
		r.differ("burst", t.Burst, scenarios.Size(math.Round(burst)))
	}
	// The latency travels as the limit, rate × latency + burst in whole bytes.
	latency := t.Latency.Std()
	if latency == 0 {
		latency = scenarios.DefaultTBFLatency
	}
	if bytesPerSecond > 0 {
		holds := (float64(got.Limit) - float64(t.Burst)) / float64(bytesPerSecond)
		if !(math.Abs(holds-latency.Seconds()) <= 1/float64(bytesPerSecond)+1e-9) {
			r.differ("latency", latency, time.Duration(holds*float64(time.Second)))
		}
	}
}

func (r *readBack) netem(n *scenarios.Netem, got *netlink.Netem) {
	if holds := r.ticks(got.Latency); !near(n.Delay.Std(), holds, time.Microsecond+r.tick) {
		r.differ("delay", n.Delay, holds)
	}
	if holds := r.ticks(got.Jitter); !near(n.Jitter.Std(), holds, time.Microsecond+r.tick) {
		r.differ("jitter", n.Jitter, holds)
	}
	for _, p := range []struct {
		name  string
		asked scenarios.Percent
		holds uint32
	}{{"loss", n.Loss, got.Loss}, {"reorder", n.Reorder, got.ReorderProb}} {
		if !(math.Abs(float64(p.asked)*math.MaxUint32-float64(p.holds)) <= 1) {
			r.differ(p.name, percent(float64(p.asked)), percent(float64(p.holds)/math.MaxUint32))
		}
	}
	limit := uint64(1000) // NewNetem's default, tc's too
	if n.Limit != 0 {
		limit = uint64(n.Limit)
	}
	if uint64(got.Limit) != limit {
		r.differ("limit", limit, got.Limit)
	}
}

func (r *readBack) fq(f *scenarios.FQ, got *netlink.Fq) {
	// All ones is no limit (TCA_FQ_FLOW_MAX_RATE): never what a maxrate asks.
	if f.MaxRate > 0 && (got.FlowMaxRate == math.MaxUint32 || uint64(got.FlowMaxRate) != uint64(f.MaxRate)/8) {
		holds := any(bitRate(uint64(got.FlowMaxRate)))
		if got.FlowMaxRate == math.MaxUint32 {
			holds = "no maxrate"
		}
		r.differ("maxrate", f.MaxRate, holds)
	}
	if f.Quantum > 0 && uint64(got.Quantum) != uint64(f.Quantum) {
		r.differ("quantum", f.Quantum, scenarios.Size(got.Quantum))
	}
	if f.FlowLimit > 0 && uint64(got.FlowPacketLimit) != uint64(f.FlowLimit) {
		r.differ("flow_limit", f.FlowLimit, got.FlowPacketLimit)
	}
	if f.Limit > 0 && uint64(got.PacketLimit) != uint64(f.Limit) {
		r.differ("limit", f.Limit, got.PacketLimit)
	}
}

func (r *readBack) fqCodel(c *scenarios.FQCodel, got *netlink.FqCodel) {
	// CoDel keeps microseconds as 1024ns units: 5ms reads back as 4999us.
	const codelUnit = 1024 * time.Nanosecond
	for _, p := range []struct {
		name  string
		asked scenarios.Duration
		holds uint32
	}{{"target", c.Target, got.Target}, {"interval", c.Interval, got.Interval}} {
		if holds := time.Duration(p.holds) * time.Microsecond; p.asked != 0 && !near(p.asked.Std(), holds, time.Microsecond+codelUnit) {
			r.differ(p.name, p.asked, holds)
		}
	}
	if c.Limit > 0 && uint64(got.Limit) != uint64(c.Limit) {
		r.differ("limit", c.Limit, got.Limit)
	}
	if ecn := got.ECN != 0; ecn == c.NoECN {
		r.differ("noecn", c.NoECN, !ecn)
	}
}

// bitRate is a rate in bytes a second as tc writes rates, in bits.
func bitRate(bytesPerSecond uint64) string {
	if bytesPerSecond > math.MaxUint64/8 {
		return fmt.Sprintf("%d bytes a second", bytesPerSecond)
	}
	return scenarios.Rate(bytesPerSecond * 8).String()
}

// percent is a fraction as a percentage.
func percent(fraction float64) string { return fmt.Sprintf("%.9g%%", fraction*100) }

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

// replaceFqCodel is `tc qdisc replace dev DEV root fq_codel ...` as its own netlink request,
// sent from the calling thread's namespace: vishvananda/netlink v1.3.1 reads fq_codel's
// target back but never sends it (qdiscPayload has no TCA_FQ_CODEL_TARGET).
func replaceFqCodel(root netlink.QdiscAttrs, c *scenarios.FQCodel) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(root.LinkIndex), Handle: root.Handle, Parent: root.Parent})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("fq_codel")))
	options := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	for attr, v := range fqCodelOptions(c) {
		options.AddRtAttr(attr, nl.Uint32Attr(v))
	}
	req.AddData(options)
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// fqCodelOptions are the TCA_FQ_CODEL_* attributes nsperf sends: ECN always (on is
// fq_codel's default), the others when set, times in microseconds.
func fqCodelOptions(c *scenarios.FQCodel) map[int]uint32 {
	ecn := uint32(1)
	if c.NoECN {
		ecn = 0
	}
	out := map[int]uint32{nl.TCA_FQ_CODEL_ECN: ecn}
	for attr, v := range map[int]uint32{nl.TCA_FQ_CODEL_TARGET: uint32(c.Target.Std() / time.Microsecond),
		nl.TCA_FQ_CODEL_INTERVAL: uint32(c.Interval.Std() / time.Microsecond), nl.TCA_FQ_CODEL_LIMIT: uint32(c.Limit)} {
		if v > 0 {
			out[attr] = v
		}
	}
	return out
}
