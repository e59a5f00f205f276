package topo

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/internal/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

func probeReport(vxNoLower, vxVeth, vxTap uint32) *ProbeReport {
	a := func(tso uint32) Attrs {
		return Attrs{"mtu": 1500, "gso_max_size": 65536, "gso_max_segs": 65535, "gro_max_size": 65536, "gso_ipv4_max_size": 65536, "gro_ipv4_max_size": 65536, "tso_max_size": tso, "tso_max_segs": 65535}
	}
	r := &ProbeReport{KernelRelease: "6.18.44", KernelVersion: "#1 SMP", Tools: map[string]string{"iperf3": "3.12"},
		Devices: []ProbedDevice{{Kind: ProbeVeth, Attrs: a(524280)}, {Kind: ProbeVxlanNoLower, Attrs: a(vxNoLower)},
			{Kind: ProbeVxlanVeth, Attrs: a(vxVeth)}, {Kind: ProbeTap, Attrs: a(65536)}, {Kind: ProbeVxlanTap, Attrs: a(vxTap)},
			{Kind: ProbeOVSInternal, Error: "not probed: no openvswitch kernel module"}},
		Knobs: []KnobCheck{{Knob: "gso_max_size", Device: ProbeVeth, Value: 185000, Accepted: true},
			{Knob: "gso_max_size", Device: ProbeVxlanNoLower, Value: 185000, Error: "gso_max_size 185000 > tso_max_size 65536 of probe/vxnolower"}}}
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
		// The kernel may lack openvswitch and geneve (this host has neither): their rows
		// then say so, and their changes are unknown.
		if d.Attrs == nil && d.Kind != ProbeOVSInternal && d.Kind != ProbeGeneve {
			t.Errorf("%s: %s", d.Kind, d.Error)
		}
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
		if !k.Accepted && !strings.Contains(k.Error, "tso_max_size") {
			t.Errorf("refusal without the reason: %q", k.Error)
		}
	}
}
