package coverage

import (
	"slices"
	"strings"
	"testing"
)

// kallsyms is a piece of a 6.12 guest's /proc/kallsyms: a module's static function whose
// name another module and the image have too, a function with a compiler clone, an inlined
// one (absent), data symbols.
const kallsyms = `ffffffff81a01230 T tcp_sendmsg
ffffffff81a04000 t tcp_tasklet_func
ffffffff81a05000 t tcp_tso_should_defer.isra.0
ffffffff81a05800 t tcp_tso_should_defer.cold
ffffffff81b00000 t do_setup
ffffffff81b00100 t do_setup
ffffffff82000000 d tcp_sendmsg_data
ffffffffc0a01230 t do_setup	[openvswitch]
ffffffffc0a02000 t internal_dev_xmit	[openvswitch]
ffffffffc0b01000 t do_setup	[vxlan]
ffffffffc0c01000 t veth_xmit	[veth]
`

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		target     Target
		probes     []string
		notCounted string
		absent     string
	}{
		{Target{Function: "do_setup", File: "net/openvswitch/vport-internal_dev.c", Module: "openvswitch"}, []string{"openvswitch:do_setup"}, "", ""},
		{Target{Function: "tcp_sendmsg", File: "net/ipv4/tcp.c"}, []string{"tcp_sendmsg"}, "", ""},
		{Target{Function: "tcp_tso_should_defer", File: "net/ipv4/tcp_output.c"}, []string{"tcp_tso_should_defer.isra.0"}, "", ""},
		{Target{Function: "tcp_inlined", File: "net/ipv4/tcp_output.c"}, nil, "inlined into its callers", ""},
		{Target{Function: "do_setup", File: "drivers/x/y.c"}, nil, "2 functions named do_setup", ""},
		{Target{Function: "veth_xmit", File: "drivers/net/veth.c"}, []string{"veth:veth_xmit"}, "", ""}, // built as a module by a config of one's own
		{Target{Function: "bond_xmit", File: "drivers/net/bonding/bond_main.c", Module: "bonding"}, nil, "", "bonding.ko is not loaded"},
		{Target{Function: "vxlan_xmit", File: "drivers/net/vxlan/vxlan_core.c", Module: "vxlan"}, nil, "no symbol vxlan_xmit in vxlan.ko", ""},
	} {
		rs, err := Resolve(strings.NewReader(kallsyms), []Target{c.target})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if !slices.Equal(r.Probes, c.probes) || !strings.Contains(r.NotCounted, c.notCounted) || (c.notCounted == "") != (r.NotCounted == "") || r.Absent != c.absent {
			t.Errorf("%+v: probes %v, not counted %q, absent %q", c.target, r.Probes, r.NotCounted, r.Absent)
		}
	}
}

// FuzzResolve: any kallsyms text resolves without a panic, and every probe is a symbol of a
// kprobe event (no space, no newline, at most one ":").
func FuzzResolve(f *testing.F) {
	f.Add(kallsyms, "do_setup", "openvswitch")
	f.Add("0 t a.isra.0 [m]\n0 T a\n", "a", "")
	f.Fuzz(func(t *testing.T, text, function, module string) {
		rs, err := Resolve(strings.NewReader(text), []Target{{Function: function, Module: module}})
		if err != nil {
			return
		}
		for _, p := range rs[0].Probes {
			if strings.ContainsAny(p, " \t\n") || strings.Count(p, ":") > 1 {
				t.Fatalf("probe %q", p)
			}
		}
	})
}

// TestTracedFunction: the function of a line of the function tracer's output.
func TestTracedFunction(t *testing.T) {
	for line, want := range map[string]string{
		"          iperf3-81      [001] ..... 12.345678: tcp_sendmsg <-sock_sendmsg":          "tcp_sendmsg",
		"          <idle>-0       [000] d.s2. 99.000001: udp4_gro_receive <-inet_gro_receive": "udp4_gro_receive",
		"# tracer: function":             "",
		"CPU:1 [LOST 12 EVENTS]":         "",
		"  x-1 [000] ..... 1.0: a b <-c": "",
	} {
		if got := TracedFunction(line); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// FuzzTracedFunction: any line gives a symbol's name or nothing.
func FuzzTracedFunction(f *testing.F) {
	f.Add("          iperf3-81      [001] ..... 12.345678: tcp_sendmsg <-sock_sendmsg")
	f.Fuzz(func(t *testing.T, line string) {
		if name := TracedFunction(line); name != "" && !symbolName.MatchString(name) {
			t.Fatalf("%q gave %q", line, name)
		}
	})
}
