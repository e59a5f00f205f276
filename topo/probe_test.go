package topo

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

func probeReport(vxNoLower, vxVeth, vxTap uint32) *ProbeReport {
	a := func(tso uint32) Attrs {
		return Attrs{"mtu": 1500, "gso_max_size": 65536, "gso_max_segs": 65535, "gro_max_size": 65536, "gso_ipv4_max_size": 65536, "gro_ipv4_max_size": 65536, "tso_max_size": tso, "tso_max_segs": 65535}
	}
	r := &ProbeReport{KernelRelease: "6.18.44", KernelVersion: "#1 SMP", Tools: map[string]string{"iperf3": "3.12"},
		Devices: []ProbedDevice{{Kind: ProbeVeth, Attrs: a(524280)}, {Kind: ProbeVxlanNoLower, Attrs: a(vxNoLower)},
			{Kind: ProbeVxlanVeth, Attrs: a(vxVeth)}, {Kind: ProbeTap, Attrs: a(65536)}, {Kind: ProbeVxlanTap, Attrs: a(vxTap)},
			{Kind: ProbeBridgePort, Attrs: a(524280)}, {Kind: ProbeTunnel("ipip"), Error: "not created: operation not supported (CONFIG_NET_IPIP)"},
			{Kind: ProbeOVSInternal, Error: "not probed: no openvswitch kernel module"}},
		Knobs: []KnobCheck{{Knob: "gso_max_size", Device: ProbeVeth, Value: 185000, Accepted: true},
			{Knob: "gso_max_size", Device: ProbeVxlanNoLower, Value: 185000, Error: "gso_max_size 185000 > tso_max_size 65536 of probe/vxnolower"},
			{Knob: "threaded", Device: ProbeVethNoGRO, Value: 1, Error: "threaded 1 on probe/veth1: the device has no NAPI to set it on"},
			{Knob: "threaded", Device: ProbeVethGRO, Value: 1, Accepted: true}}}
	r.Changes = verdicts(r)
	return r
}

func verdictOf(r *ProbeReport, change string) string {
	for _, c := range r.Changes {
		if c.Change == change {
			return c.Verdict
		}
	}
	return ""
}

func TestProbeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		noLower, overVeth, tap  uint32
		vxlanBigTCP, inheriting string
	}{
		{"this kernel", 65536, 524280, 65536, Absent, Present},
		{"with the vxlan change", 524280, 524280, 65536, Present, Present}, // the tap shows it
		{"no inheritance", 65536, 65536, 65536, Absent, Absent},
		{"no inheritance, vxlan change", 524280, 524280, 524280, Present, Absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := probeReport(tc.noLower, tc.overVeth, tc.tap)
			if got := verdictOf(r, ChangeVxlanBigTCP); got != tc.vxlanBigTCP {
				t.Errorf("vxlan BIG TCP: %s, want %s", got, tc.vxlanBigTCP)
			}
			if got := verdictOf(r, ChangeInheritLower); got != tc.inheriting {
				t.Errorf("inheritance: %s, want %s", got, tc.inheriting)
			}
			if got := verdictOf(r, ChangeOVSInternal); got != Unknown {
				t.Errorf("ovs: %s", got)
			}
			if got := verdictOf(r, ChangeIPv4BigTCP); got != Present {
				t.Errorf("ipv4 knobs: %s", got)
			}
		})
	}
}

// TestProbeOVSVerdict: an internal port of the kernel datapath (probed in a guest with the
// openvswitch module) decides the OVS change; without one it stays unknown, saying why.
func TestProbeOVSVerdict(t *testing.T) {
	for _, tc := range []struct {
		tso  uint32
		want string
	}{{65536, Absent}, {524280, Present}} {
		r := probeReport(65536, 524280, 65536)
		r.Devices[len(r.Devices)-1] = ProbedDevice{Kind: ProbeOVSInternal, Attrs: Attrs{"tso_max_size": tc.tso}}
		r.Changes = verdicts(r)
		if got := verdictOf(r, ChangeOVSInternal); got != tc.want {
			t.Errorf("tso_max_size %d: %s, want %s", tc.tso, got, tc.want)
		}
	}
	for _, c := range probeReport(65536, 524280, 65536).Changes {
		if c.Change == ChangeOVSInternal && c.Evidence != "not probed: no openvswitch kernel module" {
			t.Errorf("unknown without its reason: %+v", c)
		}
	}
}

// TestProbeBridgeAndNAPIVerdicts: the bridge's verdict follows its port's limits only where
// the port shows BIG TCP; the NAPI verdict follows the threaded check on a veth with GRO.
func TestProbeBridgeAndNAPIVerdicts(t *testing.T) {
	for _, tc := range []struct {
		bridge, veth Attrs
		want         string
	}{
		{Attrs{"tso_max_size": 524280}, Attrs{"tso_max_size": 524280}, Present},
		{Attrs{"tso_max_size": 65536}, Attrs{"tso_max_size": 524280}, Absent},
		{Attrs{"tso_max_size": 65536}, Attrs{"tso_max_size": 65536}, Unknown}, // the port shows nothing
		{nil, Attrs{"tso_max_size": 524280}, Unknown},
	} {
		if got := bridgeVerdict(tc.bridge, tc.veth); got.Verdict != tc.want || got.Evidence == "" {
			t.Errorf("bridge %v over veth %v: %+v, want %s", tc.bridge, tc.veth, got, tc.want)
		}
	}
	for _, tc := range []struct {
		checks []KnobCheck
		want   string
	}{
		{nil, Unknown},
		{[]KnobCheck{{Knob: "threaded", Device: ProbeVethNoGRO, Error: "no NAPI"}, {Knob: "threaded", Device: ProbeVethGRO, Accepted: true}}, Present},
		{[]KnobCheck{{Knob: "threaded", Device: ProbeVethGRO, Error: "no NAPI"}}, Absent},
	} {
		if got := napiVerdict(tc.checks); got.Verdict != tc.want {
			t.Errorf("%+v: %+v, want %s", tc.checks, got, tc.want)
		}
	}
}

func TestProbeTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := probeReport(65536, 524280, 65536).Text(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "probe.golden"), b.String())
}

// TestProbe runs the probe on this kernel: its verdicts agree with what it read, the knobs a
// veth takes are accepted, and nothing is left behind.
func TestProbe(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	r, err := Probe(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Devices {
		// The kernel may lack openvswitch, geneve, the tunnels and netkit (this host has none
		// of them): their rows then say so with the options that build them.
		optional := d.Kind == ProbeGeneve || d.Kind == ProbeNetkit || d.Kind == ProbeIpvlan || strings.HasSuffix(d.Kind, " tunnel")
		switch {
		case d.Attrs != nil:
		case optional && !strings.Contains(d.Error, "CONFIG_"):
			t.Errorf("%s: not created without the options that build it: %s", d.Kind, d.Error)
		case !optional && d.Kind != ProbeOVSInternal:
			t.Errorf("%s: %s", d.Kind, d.Error)
		}
	}
	for _, m := range scenarios.TunnelModes {
		if r.Device(ProbeTunnel(m.Name)) == nil {
			t.Errorf("no row for the %s tunnel", m.Name)
		}
	}
	// A bridge over a veth: the kernel decides whether its limits follow the port's.
	bridge := r.Device(ProbeBridgePort).Attrs
	if got, want := verdictOf(r, ChangeBridgeBigTCP), map[bool]string{true: Present, false: Absent}[bridge["tso_max_size"] == r.Device(ProbeVeth).Attrs["tso_max_size"]]; got != want {
		t.Errorf("bridge verdict %s, want %s (bridge %v)", got, want, bridge)
	}
	// NAPI: a veth has none without GRO; with GRO its threaded mode is set and read back.
	napi := map[string]KnobCheck{}
	for _, k := range r.Knobs {
		if k.Knob == "threaded" {
			napi[k.Device] = k
		}
	}
	if c := napi[ProbeVethNoGRO]; c.Accepted || !strings.Contains(c.Error, "no NAPI") {
		t.Errorf("threaded on a veth without GRO: %+v", c)
	}
	if c := napi[ProbeVethGRO]; !c.Accepted || verdictOf(r, ChangeVethNAPIGRO) != Present {
		t.Errorf("threaded on a veth with GRO: %+v, verdict %s", c, verdictOf(r, ChangeVethNAPIGRO))
	}
	veth, noLower, overVeth := r.Device(ProbeVeth).Attrs, r.Device(ProbeVxlanNoLower).Attrs, r.Device(ProbeVxlanVeth).Attrs
	if overVeth["tso_max_size"] != veth["tso_max_size"] {
		t.Errorf("vxlan over a veth: tso_max_size %d, the veth %d", overVeth["tso_max_size"], veth["tso_max_size"])
	}
	want := Absent
	if noLower["tso_max_size"] == 524280 {
		want = Present
	}
	if got := verdictOf(r, ChangeVxlanBigTCP); got != want {
		t.Errorf("vxlan BIG TCP verdict %s, but a vxlan without a lower device has tso_max_size %d", got, noLower["tso_max_size"])
	}
	for _, k := range r.Knobs {
		onVeth := k.Device == ProbeVeth
		if onVeth && !k.Accepted {
			t.Errorf("%s %d refused on a veth: %s", k.Knob, k.Value, k.Error)
		}
		if k.Device == ProbeVxlanNoLower && k.Accepted != (noLower["tso_max_size"] >= k.Value) {
			t.Errorf("%s %d on a vxlan without a lower device: accepted %v with tso_max_size %d", k.Knob, k.Value, k.Accepted, noLower["tso_max_size"])
		}
		if !k.Accepted && k.Knob != "threaded" && !strings.Contains(k.Error, "tso_max_size") {
			t.Errorf("refusal without the reason: %q", k.Error)
		}
	}
}
