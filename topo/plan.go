// Package topo plans a scenario's topology (pure), builds it in network namespaces with
// netlink, applies and reads back states, and tears it all down again.
package topo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// RunID names one run; every namespace (nsp3f9a-client) and device alias (nsperf:nsp3f9a) the
// run creates carries it, so that two runs never collide and leftovers can be traced.
type RunID string

// runIDPattern matches run ids; namespaceOfRun matches the namespaces a run creates.
var (
	runIDPattern   = regexp.MustCompile(`^nsp[0-9a-f]{4}$`)
	namespaceOfRun = regexp.MustCompile(`^(nsp[0-9a-f]{4})-`)
)

// NewRunID returns a random run id. Claiming it (the state file) happens in Build.
func NewRunID() RunID {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return RunID("nsp" + hex.EncodeToString(b[:]))
}

// ParseRunID checks a run id given by a user.
func ParseRunID(s string) (RunID, error) {
	if !runIDPattern.MatchString(s) {
		return "", fmt.Errorf("%q is not a run id (like nsp3f9a; see `nsperf cleanup --list`)", s)
	}
	return RunID(s), nil
}

// Namespace returns the name of the run's namespace for a scenario namespace.
func (id RunID) Namespace(ns string) string { return string(id) + "-" + ns }

// Alias is the alias every device of the run carries (`ip link set DEV alias nsperf:ID`).
func (id RunID) Alias() string { return "nsperf:" + string(id) }

// StepKind is what a step creates.
type StepKind string

// The kinds of steps, in the order a plan uses them.
const (
	AddNamespace StepKind = "namespace"
	AddVeth      StepKind = "veth"
	AddVxlan     StepKind = "vxlan"
	AddAddress   StepKind = "address"
	SetUp        StepKind = "up"
)

// Step is one action of a plan: pure data, with its iproute2 equivalent and that of its undo.
type Step struct {
	Kind  StepKind
	NS    string             // scenario namespace the step acts in
	Dev   string             // device in NS
	Peer  scenarios.Endpoint // AddVeth: the other end
	Vxlan *scenarios.Vxlan   // AddVxlan
	MTU   int
	Addr  netip.Prefix
	Do    string // iproute2 equivalent
	Undo  string // iproute2 equivalent of the undo; "" when removed with the namespace
}

// Plan is the ordered list of steps that builds a scenario's topology.
type Plan struct {
	RunID    RunID
	Scenario *scenarios.Scenario
	Steps    []Step
}

// NewPlan orders the steps for a scenario: namespaces (with lo up), then veth links, then
// vxlans (whose underlay must exist first), each with its addresses (IPv6 without duplicate
// address detection, so they are usable at once) and up.
func NewPlan(s *scenarios.Scenario, id RunID) *Plan {
	p := &Plan{RunID: id, Scenario: s}
	for _, ns := range s.Topology.Namespaces {
		full := id.Namespace(ns)
		p.add(Step{Kind: AddNamespace, NS: ns, Do: "ip netns add " + full, Undo: "ip netns del " + full})
		p.add(Step{Kind: SetUp, NS: ns, Dev: "lo", Do: fmt.Sprintf("ip -n %s link set lo up", full)})
	}
	for _, l := range s.Topology.Links {
		if v := l.Veth; v != nil {
			a, b := id.Namespace(v.A.NS), id.Namespace(v.B.NS)
			mtu := ""
			if v.MTU != 0 {
				mtu = fmt.Sprintf(" mtu %d", v.MTU)
			}
			p.add(Step{Kind: AddVeth, NS: v.A.NS, Dev: v.A.Name, Peer: v.B, MTU: v.MTU,
				Do: fmt.Sprintf("ip -n %s link add %s%s type veth peer name %s netns %s%s && ip -n %s link set %s alias %s && ip -n %s link set %s alias %s",
					a, v.A.Name, mtu, v.B.Name, b, mtu, a, v.A.Name, id.Alias(), b, v.B.Name, id.Alias())})
			for _, ep := range []scenarios.Endpoint{v.A, v.B} {
				p.addAddresses(ep)
			}
			for _, ep := range []scenarios.Endpoint{v.A, v.B} {
				p.add(Step{Kind: SetUp, NS: ep.NS, Dev: ep.Name, Do: fmt.Sprintf("ip -n %s link set %s up", id.Namespace(ep.NS), ep.Name)})
			}
		}
	}
	for _, l := range s.Topology.Links {
		if x := l.Vxlan; x != nil {
			p.add(Step{Kind: AddVxlan, NS: x.NS, Dev: x.Name, Vxlan: x, MTU: x.MTU, Do: vxlanShell(x, id)})
			p.addAddresses(x.Endpoint())
			p.add(Step{Kind: SetUp, NS: x.NS, Dev: x.Name, Do: fmt.Sprintf("ip -n %s link set %s up", id.Namespace(x.NS), x.Name)})
		}
	}
	return p
}

// DeviceSteps returns the steps that create one device, with its addresses and up: what
// recreating it repeats.
func (p *Plan) DeviceSteps(ns, dev string) []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.NS == ns && s.Dev == dev && s.Kind != AddNamespace {
			out = append(out, s)
		}
	}
	return out
}

func vxlanShell(x *scenarios.Vxlan, id RunID) string {
	ns := id.Namespace(x.NS)
	args := []string{"ip", "-n", ns, "link", "add", x.Name}
	if x.MTU != 0 {
		args = append(args, "mtu", fmt.Sprint(x.MTU))
	}
	args = append(args, "type", "vxlan", "id", fmt.Sprint(x.VNI), "local", x.Local, "remote", x.Remote, "dstport", fmt.Sprint(x.Port))
	if x.Underlay != "" {
		args = append(args, "dev", x.Underlay)
	}
	if x.Learning != nil && *x.Learning {
		args = append(args, "learning")
	} else {
		args = append(args, "nolearning")
	}
	if x.UDPCsum != nil {
		v6 := netip.MustParseAddr(x.Local).Is6()
		switch {
		case !v6 && *x.UDPCsum:
			args = append(args, "udpcsum")
		case !v6:
			args = append(args, "noudpcsum")
		case !*x.UDPCsum:
			args = append(args, "udp6zerocsumtx", "udp6zerocsumrx")
		}
	}
	return strings.Join(args, " ") + fmt.Sprintf(" && ip -n %s link set %s alias %s", ns, x.Name, id.Alias())
}

func (p *Plan) add(s Step) { p.Steps = append(p.Steps, s) }

func (p *Plan) addAddresses(ep scenarios.Endpoint) {
	for _, a := range ep.Addrs {
		pfx := netip.MustParsePrefix(a) // validated by the loader
		nodad := ""
		if pfx.Addr().Is6() {
			nodad = " nodad"
		}
		p.add(Step{Kind: AddAddress, NS: ep.NS, Dev: ep.Name, Addr: pfx,
			Do: fmt.Sprintf("ip -n %s addr add %s dev %s%s", p.RunID.Namespace(ep.NS), pfx, ep.Name, nodad)})
	}
}

// Shell returns the plan as shell commands, one per line.
func (p *Plan) Shell() string {
	var b strings.Builder
	for _, s := range p.Steps {
		b.WriteString(s.Do + "\n")
	}
	return b.String()
}

// UndoShell returns the commands that undo the plan, last step first.
func (p *Plan) UndoShell() string {
	var b strings.Builder
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if u := p.Steps[i].Undo; u != "" {
			b.WriteString(u + "\n")
		}
	}
	return b.String()
}

// StateShell returns the commands that apply a state: every knob the state sets, IPv6 (plain)
// sizes before IPv4 ones, because setting a plain size of 64K or less also overwrites the IPv4
// one; the offloads (`ethtool -K`); then the devices created anew in each state, and their own
// settings.
func StateShell(s *scenarios.Scenario, st scenarios.State, id RunID) []string {
	recreated := map[string]bool{}
	for _, l := range s.Topology.Links {
		if x := l.Vxlan; x != nil && x.Recreate {
			recreated[x.NS+"/"+x.Name] = true
		}
	}
	out := stateShell(st, id, func(ref string) bool { return !recreated[ref] })
	p := NewPlan(s, id)
	for _, ref := range sortedKeys(recreated) {
		ns, dev := splitRef(ref)
		out = append(out, fmt.Sprintf("ip -n %s link del %s  # created anew: it inherits from its lower device as set now", id.Namespace(ns), dev))
		for _, step := range p.DeviceSteps(ns, dev) {
			out = append(out, step.Do)
		}
	}
	return append(out, stateShell(st, id, func(ref string) bool { return recreated[ref] })...)
}

func stateShell(st scenarios.State, id RunID, include func(ref string) bool) []string {
	var out []string
	for _, ref := range sortedRefs(st.Devices) {
		if !include(ref) {
			continue
		}
		ds := st.Devices[ref]
		ns, dev, _ := strings.Cut(ref, "/")
		prefix := fmt.Sprintf("ip -n %s link set dev %s", id.Namespace(ns), dev)
		var plain, ipv4 []string
		for _, k := range knobs {
			if v := k.get(ds); v != nil {
				kv := fmt.Sprintf("%s %d", k.name, *v)
				if k.ipv4 {
					ipv4 = append(ipv4, kv)
				} else {
					plain = append(plain, kv)
				}
			}
		}
		if len(plain) > 0 {
			out = append(out, prefix+" "+strings.Join(plain, " "))
		}
		if len(ipv4) > 0 {
			out = append(out, prefix+" "+strings.Join(ipv4, " ")+" || echo 'needs iproute2 >= 6.3: nsperf sets it through netlink' >&2")
		}
	}
	for _, ref := range sortedKeys(st.Offloads) {
		if !include(ref) {
			continue
		}
		ns, dev := splitRef(ref)
		args := []string{"ip", "netns", "exec", id.Namespace(ns), "ethtool", "-K", dev}
		for _, f := range sortedKeys(st.Offloads[ref]) {
			args = append(args, f, onOff(bool(st.Offloads[ref][f])))
		}
		out = append(out, strings.Join(args, " "))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// knob is one settable device attribute; knobs lists them in the order they are applied.
type knob struct {
	name string
	ipv4 bool
	get  func(scenarios.DeviceSettings) *uint32
}

var knobs = []knob{
	{"mtu", false, func(d scenarios.DeviceSettings) *uint32 { return d.MTU }},
	{"gso_max_size", false, func(d scenarios.DeviceSettings) *uint32 { return d.GSOMaxSize }},
	{"gso_max_segs", false, func(d scenarios.DeviceSettings) *uint32 { return d.GSOMaxSegs }},
	{"gro_max_size", false, func(d scenarios.DeviceSettings) *uint32 { return d.GROMaxSize }},
	{"gso_ipv4_max_size", true, func(d scenarios.DeviceSettings) *uint32 { return d.GSOIPv4MaxSize }},
	{"gro_ipv4_max_size", true, func(d scenarios.DeviceSettings) *uint32 { return d.GROIPv4MaxSize }},
}

func sortedRefs(m map[string]scenarios.DeviceSettings) []string { return sortedKeys(m) }
