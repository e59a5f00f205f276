package topo

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

// Kinds of probed devices.
const (
	ProbeVeth         = "veth"
	ProbeVxlanNoLower = "vxlan without a lower device"
	ProbeVxlanVeth    = "vxlan over a veth"
	ProbeVxlanTap     = "vxlan over a tap"
	ProbeTap          = "tap"
	ProbeBridge       = "bridge (empty)"
	ProbeGeneve       = "geneve"
	ProbeOVSInternal  = "ovs internal port (kernel datapath)"
	ProbeBridgePort   = "bridge over a veth"
	ProbeNetkit       = "netkit"
	ProbeIpvlan       = "ipvlan (l2) over a veth"
	ProbeMacvlan      = "macvlan over a veth"
	// The devices of the NAPI rows: a veth without GRO, which has no NAPI, and with it.
	ProbeVethNoGRO = "veth, gro off"
	ProbeVethGRO   = "veth, gro on"
)

// ProbeTunnel is the row of an IP tunnel mode ("ipip tunnel").
func ProbeTunnel(mode string) string { return mode + " tunnel" }

// Kernel changes the probe detects, by capability and never by version number.
const (
	ChangeIPv4BigTCP   = "IPv4 BIG TCP knobs (gso_ipv4_max_size, Linux 6.3)"
	ChangeVxlanBigTCP  = "vxlan: Enable BIG TCP packets (net-next, July 2026)"
	ChangeGeneveBigTCP = "geneve: BIG TCP packets (its tso_max_size raised)"
	ChangeOVSInternal  = "openvswitch: raise internal port TSO limit (Sept 2026)"
	ChangeInheritLower = "vxlan inherits its lower device's TSO limits (netif_inherit_tso_max)"
	ChangeBridgeBigTCP = "bridge: takes its ports' TSO limits (BIG TCP through a bridge)"
	ChangeVethNAPIGRO  = "veth: NAPI with GRO on (threaded NAPI, gro_flush_timeout settable)"
)

// probeScenario is the scratch topology: one namespace with a veth pair inside it, whose
// addresses give the probe vxlans their local and remote ends.
func probeScenario() *scenarios.Scenario {
	return &scenarios.Scenario{
		Name: "probe",
		Topology: scenarios.Topology{
			Namespaces: []string{"probe"},
			Links: []scenarios.Link{{Veth: &scenarios.Veth{
				A: scenarios.Endpoint{NS: "probe", Name: "veth0", Addrs: []string{"198.18.0.1/24"}},
				B: scenarios.Endpoint{NS: "probe", Name: "veth1", Addrs: []string{"198.18.0.2/24"}},
			}}, {Veth: &scenarios.Veth{ // the bridge's port
				A: scenarios.Endpoint{NS: "probe", Name: "veth2"},
				B: scenarios.Endpoint{NS: "probe", Name: "veth3"},
			}}},
		},
	}
}

// Probe creates one device of each kind in a scratch namespace, reads their defaults, tries
// the BIG TCP knobs, and tells which known kernel changes are present. It removes everything
// it created. tools are the versions of the tools found (filled by the caller).
func Probe(tools map[string]string) (*ProbeReport, error) {
	l, err := Build(NewPlan(probeScenario(), NewRunID()), BuildOptions{})
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	report := &ProbeReport{Tools: tools}
	err = probe(l, report)
	return report, errors.Join(err, l.Teardown())
}

func probe(l *Live, r *ProbeReport) error {
	sp := l.spaces["probe"]
	// A tap is created in the calling thread's namespace, whatever handle asks for it.
	tapErr := netnsx.Do(sp.fd, func() error {
		return sp.nl.LinkAdd(&netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: "tap0"}, Mode: netlink.TUNTAP_MODE_TAP})
	})
	tap, _ := sp.nl.LinkByName("tap0")
	// Each vxlan gets a port of its own: two on one port and local address collide.
	vxlan := func(name string, vni int, underlay string) error {
		vx, err := l.vxlanDevice(&scenarios.Vxlan{NS: "probe", Name: name, VNI: vni, Port: scenarios.DefaultVxlanPort + vni,
			Local: "198.18.0.1", Remote: "198.18.0.2", Underlay: underlay})
		if err != nil {
			return err
		}
		return sp.nl.LinkAdd(vx)
	}
	created := []probeDevice{
		{ProbeVeth, "veth0", nil},
		{ProbeVxlanNoLower, "vxnolower", vxlan("vxnolower", 1, "")},
		{ProbeVxlanVeth, "vxveth", vxlan("vxveth", 2, "veth0")},
		{ProbeTap, "tap0", tapErr},
		{ProbeBridge, "br0", sp.nl.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}})},
		{ProbeGeneve, "gnv0", withOptions(sp.nl.LinkAdd(&netlink.Geneve{LinkAttrs: netlink.LinkAttrs{Name: "gnv0"}, ID: 1, Remote: net.ParseIP("198.18.0.2"), Dport: scenarios.DefaultGenevePort}), new(scenarios.Geneve).Modules())},
	}
	if tap != nil {
		created = append(created, probeDevice{ProbeVxlanTap, "vxtap", vxlan("vxtap", 3, "tap0")})
	} else {
		created = append(created, probeDevice{ProbeVxlanTap, "", fmt.Errorf("no tap: %v", tapErr)})
	}
	for _, pl := range probeLinks() {
		created = append(created, probeDevice{pl.kind, pl.dev, createProbeLink(l, pl)})
	}
	for _, c := range created {
		d := ProbedDevice{Kind: c.kind}
		if c.err == nil {
			var a Attrs
			if a, c.err = l.ReadAttrs("probe/" + c.dev); c.err == nil {
				d.Attrs = a
				l.pristine["probe/"+c.dev] = a
			}
		}
		if c.err != nil {
			d.Error = "not created: " + c.err.Error()
		}
		r.Devices = append(r.Devices, d)
	}
	r.Devices = append(r.Devices, probeOVSInternal())

	for _, k := range knobChecks() {
		c := KnobCheck{Knob: k.knob, Device: kindOf(created, k.dev), Value: k.v}
		ref := "probe/" + k.dev
		knob, _ := knobs.Lookup(k.knob)
		if _, ok := l.pristine[ref]; !ok {
			c.Error = "device not created"
		} else if err := l.set(ref, knob, k.v); err != nil {
			c.Error = err.Error()
			var capErr *capability.Error
			if errors.As(err, &capErr) {
				c.Error = strings.Join(capErr.Reasons, "; ")
			}
		} else if got, err := l.ReadAttrs(ref); err != nil || got[k.knob] != k.v {
			c.Error = fmt.Sprintf("accepted, but reads back %d", got[k.knob])
		} else {
			c.Accepted = true
		}
		r.Knobs = append(r.Knobs, c)
	}
	r.Knobs = append(r.Knobs, probeNAPI(l)...)
	r.Changes = verdicts(r)
	return nil
}

// probeLink is a device the probe creates through its link kind's maker, as a run would.
type probeLink struct {
	kind, dev, linkKind string
	spec                scenarios.LinkSpec
}

// probeLinks are the link kinds whose defaults the kernel decides besides the ones above:
// every IP tunnel mode (scenarios.TunnelModes), netkit, a bridge with a veth port, and an
// ipvlan and a macvlan over a veth (what they inherit of its TSO limits).
func probeLinks() []probeLink {
	var out []probeLink
	for i, m := range scenarios.TunnelModes {
		local, remote := "198.18.0.1", "198.18.0.2"
		if m.Underlay6 {
			local, remote = "2001:db8::1", "2001:db8::2"
		}
		dev := fmt.Sprintf("tnl%d", i)
		out = append(out, probeLink{ProbeTunnel(m.Name), dev, "tunnel",
			&scenarios.IPTunnel{NS: "probe", Name: dev, Mode: m.Name, Local: local, Remote: remote}})
	}
	return append(out,
		probeLink{ProbeNetkit, "nk0", "netkit", &scenarios.Netkit{A: scenarios.Endpoint{NS: "probe", Name: "nk0"}, B: scenarios.Endpoint{NS: "probe", Name: "nk1"}}},
		probeLink{ProbeBridgePort, "br1", "bridge", &scenarios.LinuxBridge{NS: "probe", Name: "br1", Ports: []string{"veth2"}}},
		// Each over a veth end of its own: one device takes an ipvlan or macvlans, not both.
		probeLink{ProbeIpvlan, "iv0", "ipvlan", &scenarios.Ipvlan{NS: "probe", LowerNS: "probe", Name: "iv0", Lower: "veth3", Mode: "l2"}},
		probeLink{ProbeMacvlan, "mv0", "macvlan", &scenarios.Macvlan{NS: "probe", Name: "mv0", Lower: "veth1", Mode: "bridge"}})
}

// createProbeLink creates one probe device with its kind's maker; the namespace's end removes it.
// A kernel without the kind says which options build it.
func createProbeLink(l *Live, pl probeLink) error {
	err := linkMakers[pl.linkKind](l, pl.spec, &plan.Step{Kind: plan.DelLink, NS: "probe", Dev: pl.dev, WithNamespace: true})
	return withOptions(err, pl.spec.Modules())
}

// withOptions adds to a kernel's "operation not supported" the options that build the kind.
func withOptions(err error, modules []scenarios.KernelModule) error {
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(configOptions(modules), ", "))
}

// probeNAPI tries NAPI's threaded mode on a veth without GRO (which has no NAPI) and with GRO
// on (`ethtool -K veth1 gro on; echo 1 > /sys/class/net/veth1/threaded`).
func probeNAPI(l *Live) []KnobCheck {
	threaded, _ := knobs.Lookup("threaded")
	try := func(device string) KnobCheck {
		c := KnobCheck{Knob: threaded.Name, Device: device, Value: 1}
		if err := l.set("probe/veth1", threaded, 1); err != nil {
			c.Error = err.Error()
			var capErr *capability.Error
			if errors.As(err, &capErr) {
				c.Error = strings.Join(capErr.Reasons, "; ")
			}
			return c
		}
		got := Attrs{}
		if err := l.readSysfsKnobs("probe/veth1", got); err != nil {
			c.Error = "accepted, but not read back: " + err.Error()
		} else if got[threaded.Name] != 1 {
			c.Error = fmt.Sprintf("accepted, but reads back %d", got[threaded.Name])
		} else {
			c.Accepted = true
		}
		return c
	}
	out := []KnobCheck{}
	if _, err := l.applyFeatures("probe/veth1", map[string]bool{"rx-gro": false}); err != nil {
		return append(out, KnobCheck{Knob: threaded.Name, Device: ProbeVethNoGRO, Value: 1, Error: "gro not turned off: " + err.Error()})
	}
	out = append(out, try(ProbeVethNoGRO))
	if _, err := l.applyFeatures("probe/veth1", map[string]bool{"rx-gro": true}); err != nil {
		return append(out, KnobCheck{Knob: threaded.Name, Device: ProbeVethGRO, Value: 1, Error: "gro not turned on: " + err.Error()})
	}
	return append(out, try(ProbeVethGRO))
}

// probeDevice is a device the probe created (or failed to).
type probeDevice struct {
	kind, dev string
	err       error
}

func kindOf(created []probeDevice, dev string) string {
	for _, c := range created {
		if c.dev == dev {
			return c.kind
		}
	}
	return dev
}

// probeOVSInternal reads the defaults of an internal port of the kernel datapath: a private
// OVS with one bridge (datapath_type=system) and one internal port, built and removed like a
// run's. Without the openvswitch module there is no such port to read.
func probeOVSInternal() ProbedDevice {
	d := ProbedDevice{Kind: ProbeOVSInternal}
	if _, err := os.Stat("/sys/module/openvswitch"); err != nil {
		d.Error = "not probed: no openvswitch kernel module (the userspace datapath's internal ports are tap devices: see tap)"
		return d
	}
	s := &scenarios.Scenario{Name: "probe-ovs", Topology: scenarios.Topology{OVS: &scenarios.OVS{
		Datapath: scenarios.DatapathSystem,
		Bridges:  []scenarios.Bridge{{Name: "br0", Ports: []scenarios.Port{{Internal: "int0"}}}},
	}}}
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		d.Error = "not created: " + err.Error()
		return d
	}
	d.Attrs, err = l.ReadAttrs(scenarios.OVSNamespace + "/int0")
	if err != nil {
		d.Error = "not read: " + err.Error()
	}
	if terr := l.Teardown(); terr != nil && d.Error == "" {
		d.Error = "read, but not removed: " + terr.Error()
	}
	return d
}

// raisedTSO decides a change that raises a device's tso_max_size to the GSO maximum: present
// when the device a shows it, absent when it shows 64K, unknown (with why) without a device.
func raisedTSO(change string, a Attrs, device, unknown string) ChangeVerdict {
	if a == nil {
		return ChangeVerdict{Change: change, Verdict: Unknown, Evidence: unknown}
	}
	v := ChangeVerdict{Change: change, Verdict: Absent,
		Evidence: fmt.Sprintf("%s has tso_max_size %d (%d with the change)", device, a["tso_max_size"], knobs.MaxGSOSize)}
	if a["tso_max_size"] >= knobs.MaxGSOSize {
		v.Verdict = Present
	}
	return v
}

// verdicts decides the known kernel changes from what the devices showed.
func verdicts(r *ProbeReport) []ChangeVerdict {
	attrs := func(kind string) Attrs {
		if d := r.Device(kind); d != nil {
			return d.Attrs
		}
		return nil
	}
	var out []ChangeVerdict

	v4 := ChangeVerdict{Change: ChangeIPv4BigTCP, Verdict: Unknown, Evidence: "no veth to read"}
	if a := attrs(ProbeVeth); a != nil {
		v4.Verdict, v4.Evidence = Absent, "a veth reports no gso_ipv4_max_size"
		if a["gso_ipv4_max_size"] != 0 {
			v4.Verdict, v4.Evidence = Present, fmt.Sprintf("a veth reports gso_ipv4_max_size %d", a["gso_ipv4_max_size"])
		}
	}
	out = append(out, v4)

	out = append(out,
		raisedTSO(ChangeVxlanBigTCP, attrs(ProbeVxlanNoLower), "a vxlan without a lower device", "no vxlan without a lower device could be created"),
		raisedTSO(ChangeGeneveBigTCP, attrs(ProbeGeneve), "a geneve", "no geneve could be created (CONFIG_GENEVE)"),
		raisedTSO(ChangeOVSInternal, attrs(ProbeOVSInternal), "an internal port of the kernel datapath", r.Device(ProbeOVSInternal).Error))

	// A vxlan over a lower device shows inheritance only where that device's tso_max_size
	// differs from a vxlan's own default.
	inh := ChangeVerdict{Change: ChangeInheritLower, Verdict: Unknown}
	base := attrs(ProbeVxlanNoLower)
	var evidence []string
	informative, follows := 0, true
	for _, pair := range [][2]string{{ProbeVxlanVeth, ProbeVeth}, {ProbeVxlanTap, ProbeTap}} {
		over, lower := attrs(pair[0]), attrs(pair[1])
		if over == nil || lower == nil || base == nil {
			continue
		}
		evidence = append(evidence, fmt.Sprintf("%s has tso_max_size %d (the lower device %d)", pair[0], over["tso_max_size"], lower["tso_max_size"]))
		if lower["tso_max_size"] != base["tso_max_size"] {
			informative++
			follows = follows && over["tso_max_size"] == lower["tso_max_size"]
		}
	}
	switch {
	case informative > 0 && follows:
		inh.Verdict = Present
	case informative > 0:
		inh.Verdict = Absent
	}
	if len(evidence) == 0 {
		evidence = []string{"no vxlan over a lower device"}
	}
	inh.Evidence = fmt.Sprintf("%s; a vxlan without one has %s", strings.Join(evidence, "; "), tsoOf(base))
	out = append(out, inh, bridgeVerdict(attrs(ProbeBridgePort), attrs(ProbeVeth)), napiVerdict(r.Knobs))
	return out
}

// bridgeVerdict: a bridge whose tso_max_size follows its veth port's past 64K passes BIG TCP
// packets on (br_set_gso_limits); one that keeps 64K caps them.
func bridgeVerdict(bridge, veth Attrs) ChangeVerdict {
	v := ChangeVerdict{Change: ChangeBridgeBigTCP, Verdict: Unknown, Evidence: "no bridge with a veth port"}
	switch {
	case bridge == nil || veth == nil:
	case veth["tso_max_size"] <= knobs.LegacyGSO:
		v.Evidence = fmt.Sprintf("the veth port's tso_max_size %d shows nothing", veth["tso_max_size"])
	default:
		v.Verdict, v.Evidence = Absent, fmt.Sprintf("the bridge has tso_max_size %d, its veth port %d", bridge["tso_max_size"], veth["tso_max_size"])
		if bridge["tso_max_size"] == veth["tso_max_size"] {
			v.Verdict = Present
		}
	}
	return v
}

// napiVerdict: a veth with GRO on has NAPI, so that threaded mode is set and read back.
func napiVerdict(checks []KnobCheck) ChangeVerdict {
	v := ChangeVerdict{Change: ChangeVethNAPIGRO, Verdict: Unknown, Evidence: "threaded not tried on a veth with GRO on"}
	for _, c := range checks {
		if c.Device != ProbeVethGRO {
			continue
		}
		v.Verdict, v.Evidence = Present, "threaded 1 accepted and read back on a veth with GRO on"
		if !c.Accepted {
			v.Verdict, v.Evidence = Absent, "threaded 1 on a veth with GRO on: "+c.Error
		}
	}
	return v
}

func tsoOf(a Attrs) string {
	if a == nil {
		return "nothing to compare"
	}
	return fmt.Sprint(a["tso_max_size"])
}

// knobCheck is one value the probe tries on one of its devices.
type knobCheck struct {
	knob string
	dev  string
	v    uint32
}

// knobChecks are what the probe tries, from the knob registry: every BIG TCP size at
// BigTCPSize on a veth; those a driver caps (Bound) at their largest value too; and those a
// stacked device inherits at BigTCPSize on a vxlan without and with a lower device.
func knobChecks() []knobCheck {
	var out []knobCheck
	for _, k := range knobs.All {
		if !k.BigTCP {
			continue
		}
		out = append(out, knobCheck{k.Name, "veth0", knobs.BigTCPSize})
		if k.Bound != "" {
			out = append(out, knobCheck{k.Name, "veth0", k.Max})
		}
		if k.Inherited {
			out = append(out, knobCheck{k.Name, "vxnolower", knobs.BigTCPSize}, knobCheck{k.Name, "vxveth", knobs.BigTCPSize})
		}
	}
	return out
}
