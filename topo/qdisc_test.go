package topo

import (
	"errors"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/internal/capability"
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
			option := "CONFIG_" + st.Qdiscs["client/eth0"].Kind().Kconfig
			if !strings.Contains(err.Error(), option) {
				t.Errorf("state %s: %v, want the option %s named", st.Name, err, option)
			}
			t.Logf("state %s: %v", st.Name, err)
			continue
		case err != nil:
			t.Fatalf("state %s: %v", st.Name, err)
		}
		if got := devices["client/eth0"].Qdisc; got != want[st.Name] {
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
