package topo

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
)

const qdiscStates = `  - name: default
  - name: pfifo-fast
    qdiscs: {client/eth0: {pfifo_fast: {}}}
  - name: noqueue
    qdiscs: {client/eth0: {noqueue: {}}}
  - name: tbf
    qdiscs: {client/eth0: {tbf: {rate: 2gbit, burst: 1mb}}}
  - name: fq
    optional: true
    qdiscs: {client/eth0: {fq: {maxrate: 1gbit, flow_limit: 50}}}
  - name: fq-codel
    optional: true
    qdiscs: {client/eth0: {fq_codel: {target: 2ms, interval: 40ms}}}
  - name: netem
    optional: true
    qdiscs: {client/eth0: {netem: {delay: 1ms, loss: 1%, reorder: 10%}}}
`

// TestQdiscKinds attaches each root qdisc kind to a real veth end and reads it back; the state
// after it, which attaches none, leaves the device's default (veth: noqueue, handle 0). A
// kernel without a qdisc's module (this host has no fq, fq_codel, netem) refuses it as a
// capability, naming the kernel option; where it has them, they read back.
func TestQdiscKinds(t *testing.T) {
	s := vethScenario(t, qdiscStates)
	l := buildRoot(t, s)
	rootQdisc := func() netlink.Qdisc {
		var root netlink.Qdisc
		err := l.withLink("client", "eth0", func(h *netlink.Handle, link netlink.Link) error {
			qs, err := h.QdiscList(link)
			for _, q := range qs {
				if q.Attrs().Parent == netlink.HANDLE_ROOT {
					root = q
				}
			}
			return err
		})
		if err != nil || root == nil {
			t.Fatalf("no root qdisc: %v", err)
		}
		return root
	}
	want := map[string]string{"pfifo-fast": "pfifo_fast", "noqueue": "noqueue", "tbf": "tbf rate 2gbit", "fq": "fq maxrate 1gbit",
		"fq-codel": "fq_codel target 2ms interval 40ms", "netem": "netem delay 1ms loss 1%"}
	// Each kind after each other, without the default between (a kind replaces a kind), then
	// each followed by the default.
	for _, st := range s.States[1:] {
		if _, err := l.Apply(st); err != nil && !st.Optional {
			t.Fatalf("state %s after the one before it: %v", st.Name, err)
		}
	}
	for _, st := range s.States[1:] {
		devices, err := l.Apply(st)
		var ce *capability.Error
		switch {
		case errors.As(err, &ce) && st.Optional:
			option := "CONFIG_" + st.Settings["qdiscs"].(scenarios.Qdiscs)["client/eth0"].Kind().Kconfig
			if !strings.Contains(err.Error(), option) {
				t.Errorf("state %s: %v, want the option %s named", st.Name, err, option)
			}
			t.Logf("state %s: %v", st.Name, err)
			continue
		case err != nil:
			t.Fatalf("state %s: %v", st.Name, err)
		}
		if got := devices.Qdiscs["client/eth0"]; got != want[st.Name] {
			t.Errorf("state %s: reads back %q, want %q", st.Name, got, want[st.Name])
		}
		if got := rootQdisc().Type(); got != strings.Fields(want[st.Name])[0] {
			t.Errorf("state %s: the kernel's root qdisc is %s", st.Name, got)
		}
		if _, err := l.Apply(s.States[0]); err != nil {
			t.Fatal(err)
		}
		if q := rootQdisc(); q.Type() != "noqueue" || q.Attrs().Handle != 0 {
			t.Errorf("after %s, the default state's root qdisc is %s handle %x, want veth's noqueue 0:", st.Name, q.Type(), q.Attrs().Handle)
		}
	}
}

// tickInUsec is the kernel's psched ticks a microsecond: 64ns ticks (/proc/net/psched
// 000003e8 00000040), on every kernel nsperf runs on.
const tickInUsec = 1000.0 / 64

// kernelEcho is what the kernel reports (QdiscList) of the qdisc nsperf sends for want, by
// the kernel's own conversions: netem and tbf keep the ticks, bytes and fractions they are
// given (netem_dump, tbf_dump); fq its 32-bit fields, with its defaults for those not sent;
// fq_codel its times as 1024ns units (codel_time_to_us).
func kernelEcho(want scenarios.Qdisc) netlink.Qdisc {
	root := netlink.QdiscAttrs{Parent: netlink.HANDLE_ROOT}
	if c := want.FQCodel; c != nil {
		options := fqCodelOptions(c)
		codel := func(attr int, byDefault uint32) uint32 {
			us, sent := options[attr]
			if !sent {
				return byDefault
			}
			return uint32((uint64(us) * 1000 >> 10 << 10) / 1000)
		}
		limit, sent := options[nl.TCA_FQ_CODEL_LIMIT]
		if !sent {
			limit = 10240
		}
		return &netlink.FqCodel{QdiscAttrs: root, Target: codel(nl.TCA_FQ_CODEL_TARGET, 4999),
			Interval: codel(nl.TCA_FQ_CODEL_INTERVAL, 99999), Limit: limit, ECN: options[nl.TCA_FQ_CODEL_ECN]}
	}
	sent := qdiscOf(root, want)
	if f, ok := sent.(*netlink.Fq); ok {
		got := *f
		for _, field := range []struct {
			v         *uint32
			byDefault uint32
		}{{&got.FlowMaxRate, math.MaxUint32}, {&got.Quantum, 3028}, {&got.FlowPacketLimit, 100}, {&got.PacketLimit, 10000}} {
			if *field.v == 0 {
				*field.v = field.byDefault
			}
		}
		return &got
	}
	return sent
}

// TestQdiscReadBackProblems compares what nsperf asks with what the kernel would report of
// what nsperf sends: values validation accepts read back within the kernel's rounding (1us
// of netem delay is 15 ticks, 960ns; fq_codel's 5ms is 4999us), and values it refuses, sent
// anyway, read back as another value, named by parameter with asked and held: the 32-bit
// wraps of netem's delay and jitter, tbf's limit and burst, fq's maxrate and limits.
func TestQdiscReadBackProblems(t *testing.T) {
	d := func(s string) scenarios.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return scenarios.Duration(v)
	}
	netem := func(n scenarios.Netem) scenarios.Qdisc { return scenarios.Qdisc{Netem: &n} }
	tbf := func(b scenarios.TBF) scenarios.Qdisc { return scenarios.Qdisc{TBF: &b} }
	fq := func(f scenarios.FQ) scenarios.Qdisc { return scenarios.Qdisc{FQ: &f} }
	codel := func(c scenarios.FQCodel) scenarios.Qdisc { return scenarios.Qdisc{FQCodel: &c} }
	const mb, gbit = 1 << 20, 1e9
	for _, tc := range []struct {
		name string
		want scenarios.Qdisc
		// got is what the kernel reports; nil: kernelEcho of want.
		got netlink.Qdisc
		// problems each begin so, in order.
		problems []string
	}{
		{name: "netem", want: netem(scenarios.Netem{Delay: d("10ms"), Jitter: d("1ms"), Loss: 0.01, Reorder: 0.1, Limit: 5000})},
		{name: "netem 1us, 15 ticks", want: netem(scenarios.Netem{Delay: d("1us"), Loss: 1})},
		{name: "netem at its range's ends", want: netem(scenarios.Netem{Delay: scenarios.Duration(scenarios.MaxTicked), Jitter: scenarios.Duration(scenarios.MaxNetemJitter), Loss: scenarios.NetemProbabilityUnit})},
		{name: "netem delay wraps", want: netem(scenarios.Netem{Delay: d("4294.97s")}), problems: []string{"delay: asked 1h11m34.97s, the kernel holds "}},
		{name: "netem delay past the ticks", want: netem(scenarios.Netem{Delay: d("300s")}), problems: []string{"delay: asked 5m0s, the kernel holds "}},
		{name: "netem negative jitter", want: netem(scenarios.Netem{Delay: d("10ms"), Jitter: d("-5ms")}), problems: []string{"jitter: asked -5ms, the kernel holds "}},
		{name: "netem NaN loss", want: netem(scenarios.Netem{Delay: d("1ms"), Loss: scenarios.Percent(math.NaN())}), problems: []string{"loss: asked NaN%, the kernel holds "}},
		{name: "netem limit wraps", want: netem(scenarios.Netem{Delay: d("1ms"), Limit: 5_000_000_000}), problems: []string{"limit: asked 5000000000, the kernel holds 705032704"}},
		{name: "netem read as another", want: netem(scenarios.Netem{Delay: d("1ms"), Loss: 0.01}),
			got:      &netlink.Netem{Latency: 15625, Jitter: 1600, Loss: 0, Limit: 1000},
			problems: []string{"jitter: asked 0s, the kernel holds 102.4µs", "loss: asked 1%, the kernel holds 0%"}},
		{name: "tbf", want: tbf(scenarios.TBF{Rate: 2 * gbit, Burst: mb})},
		{name: "tbf slow", want: tbf(scenarios.TBF{Rate: 100e3, Burst: 64 << 10, Latency: d("1s")})},
		{name: "tbf fast", want: tbf(scenarios.TBF{Rate: 100 * gbit, Burst: mb, Latency: d("10ms")})},
		{name: "tbf odd bits", want: tbf(scenarios.TBF{Rate: 1_000_000_007, Burst: 100_000, Latency: d("20ms")})},
		{name: "tbf latency wraps", want: tbf(scenarios.TBF{Rate: gbit, Burst: mb, Latency: d("100000h")}), problems: []string{"latency: asked 100000h0m0s, the kernel holds "}},
		{name: "tbf negative latency", want: tbf(scenarios.TBF{Rate: gbit, Burst: mb, Latency: d("-1s")}), problems: []string{"latency: asked -1s, the kernel holds "}},
		{name: "tbf default latency wraps", want: tbf(scenarios.TBF{Rate: 1000 * gbit, Burst: mb}), problems: []string{"latency: asked 50ms, the kernel holds "}},
		{name: "tbf burst wraps", want: tbf(scenarios.TBF{Rate: 100 * gbit, Burst: 5 << 30}),
			problems: []string{"burst: asked 5120mb, the kernel holds 10737", "latency: asked 50ms, the kernel holds "}},
		{name: "tbf rate read as another", want: tbf(scenarios.TBF{Rate: 2 * gbit, Burst: mb}),
			got:      &netlink.Tbf{Rate: 125e6, Buffer: 65531, Limit: 13_548_576},
			problems: []string{"rate: asked 2gbit, the kernel holds 1gbit"}},
		{name: "tbf burst and latency read as others", want: tbf(scenarios.TBF{Rate: 2 * gbit, Burst: mb}),
			got:      &netlink.Tbf{Rate: 250e6, Buffer: 32765, Limit: 10_000_000},
			problems: []string{"burst: asked 1mb, the kernel holds 524240b", "latency: asked 50ms, the kernel holds 35.805696ms"}},
		{name: "fq", want: fq(scenarios.FQ{MaxRate: gbit, Quantum: 3028, FlowLimit: 50, Limit: 10000})},
		{name: "fq defaults", want: fq(scenarios.FQ{})},
		{name: "fq maxrate wraps", want: fq(scenarios.FQ{MaxRate: 35 * gbit}), problems: []string{"maxrate: asked 35gbit, the kernel holds 640261632bit"}},
		{name: "fq maxrate becomes unlimited", want: fq(scenarios.FQ{MaxRate: (1<<32 - 1) * 8}), problems: []string{"maxrate: asked 34359738360bit, the kernel holds no maxrate"}},
		{name: "fq flow_limit wraps", want: fq(scenarios.FQ{FlowLimit: 1 << 32}), problems: []string{"flow_limit: asked 4294967296, the kernel holds 100"}},
		{name: "fq_codel", want: codel(scenarios.FQCodel{Target: d("5ms"), Interval: d("100ms"), Limit: 1000, NoECN: true})},
		{name: "fq_codel at its range's end", want: codel(scenarios.FQCodel{Target: d("1us"), Interval: scenarios.Duration(scenarios.MaxCodelTime)})},
		{name: "fq_codel negative target", want: codel(scenarios.FQCodel{Target: d("-1ms")}), problems: []string{"target: asked -1ms, the kernel holds 1h11m34.966295s"}},
		{name: "fq_codel ecn", want: codel(scenarios.FQCodel{NoECN: true}), got: &netlink.FqCodel{ECN: 1}, problems: []string{"noecn: asked true, the kernel holds false"}},
		{name: "another kind", want: tbf(scenarios.TBF{Rate: gbit, Burst: mb}), got: &netlink.GenericQdisc{QdiscType: "noqueue"}, problems: []string{"kind: asked tbf, the kernel holds noqueue"}},
		{name: "noqueue", want: scenarios.Qdisc{Noqueue: &struct{}{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.got
			if got == nil {
				got = kernelEcho(tc.want)
			}
			problems := qdiscReadBackProblems(tc.want, got, tickInUsec)
			ok := len(problems) == len(tc.problems)
			for i := 0; ok && i < len(problems); i++ {
				ok = strings.HasPrefix(problems[i], tc.problems[i])
			}
			if !ok {
				t.Errorf("%s read back as %+v:\n got problems %q\nwant problems %q", tc.want, got, problems, tc.problems)
			}
		})
	}
}

// FuzzQdiscReadBack: whatever qdisc validation accepts reads back, as the kernel reports it,
// without a problem: the ranges validation names are ones the fields hold, and the read-back
// comparison allows for every rounding on the way.
func FuzzQdiscReadBack(f *testing.F) {
	for _, s := range []string{"{netem: {delay: 1us}}", "{netem: {delay: 274.877906999s, jitter: 2.147483s, loss: 100%, reorder: 0.0000000233%}}",
		`{netem: {delay: "10ms", jitter: "1ms", loss: "1%", limit: 4294967295}}`, "{tbf: {rate: 2kbit, burst: 64kb, latency: 1us}}",
		"{tbf: {rate: 1gbit, burst: 1mb, latency: 34.351349s}}", "{tbf: {rate: 1000gbit, burst: 1mb, latency: 34ms}}",
		"{tbf: {rate: 1.5kbit, burst: 100000b, latency: 3s}}", "{fq: {maxrate: 34359738359bit, quantum: 1mb, flow_limit: 4294967295}}",
		"{fq_codel: {target: 1.5us, interval: 4294.967295s, noecn: true}}", "{pfifo_fast: {}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		want, err := scenarios.ParseQdisc(text)
		if err != nil {
			return
		}
		if problems := qdiscReadBackProblems(want, kernelEcho(want), tickInUsec); len(problems) > 0 {
			t.Fatalf("%q, accepted as %s, reads back other than asked: %q", text, want, problems)
		}
	})
}

// TestQdiscReadBack attaches token buckets (the qdisc with parameters this host's kernel has)
// to a real veth end: those validation accepts read back as asked, through the kernel's own
// rounding; one it refuses, attached anyway, is refused after reading back, with the
// parameter, what was asked and what the kernel holds, where the kind alone used to pass.
func TestQdiscReadBack(t *testing.T) {
	s := vethScenario(t, "  - name: default\n")
	l := buildRoot(t, s)
	state := func(text string) scenarios.State {
		q, err := scenarios.ParseQdisc(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return scenarios.State{Name: text, Settings: scenarios.Settings{"qdiscs": scenarios.Qdiscs{"client/eth0": q}}}
	}
	for _, text := range []string{"{tbf: {rate: 2gbit, burst: 1mb}}", "{tbf: {rate: 100kbit, burst: 64kb, latency: 1s}}",
		"{tbf: {rate: 100gbit, burst: 1mb, latency: 10ms}}", "{tbf: {rate: 1000000007bit, burst: 100000b, latency: 20ms}}",
		"{tbf: {rate: 1gbit, burst: 1mb, latency: 34.351349s}}"} {
		if _, err := l.Apply(state(text)); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
	wraps := scenarios.State{Name: "wraps", Settings: scenarios.Settings{"qdiscs": scenarios.Qdiscs{"client/eth0": {TBF: &scenarios.TBF{Rate: 1e9, Burst: 1 << 20, Latency: scenarios.Duration(100000 * time.Hour)}}}}}
	_, err := l.Apply(wraps)
	if want := "latency: asked 100000h0m0s, the kernel holds "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a tbf latency beyond the limit's 32 bits: %v, want an error with %q", err, want)
	} else {
		t.Log(err)
	}
	if _, err := l.Apply(s.States[0]); err != nil {
		t.Fatal(err)
	}
}
