// Package topo plans a scenario's topology (pure), builds it in network namespaces with
// netlink, applies and reads back states, and tears it all down again.
package topo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/ovs"
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
		return "", fmt.Errorf("%q is not a run id (like nsp3f9a; `nsperf cleanup --dry-run` lists the runs left behind)", s)
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
	StartOVS     StepKind = "start-ovs"   // a private OVS instance in the ovs namespace
	ConnectOVS   StepKind = "connect-ovs" // an existing OVS
	AddBridge    StepKind = "bridge"
	MoveLink     StepKind = "move" // a device into another namespace
	SetMTU       StepKind = "mtu"
	TxCsumOff    StepKind = "tx-csum-off" // the userspace datapath needs it
	AddAddress   StepKind = "address"
	SetUp        StepKind = "up"
)

// Step is one action of a plan: pure data, with its iproute2 equivalent and that of its undo.
type Step struct {
	Kind   StepKind
	NS     string             // scenario namespace the step acts in
	Dev    string             // device in NS
	Peer   scenarios.Endpoint // AddVeth: the other end
	Vxlan  *scenarios.Vxlan   // AddVxlan
	Bridge *ovs.BridgeSpec    // AddBridge
	DB     string             // StartOVS, ConnectOVS: the ovsdb endpoint
	MTU    int
	Addr   netip.Prefix
	Do     string // iproute2 equivalent
	Undo   string // iproute2 equivalent of the undo; "" when removed with the namespace
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
	namespaces := s.Topology.Namespaces
	if o := s.Topology.OVS; o != nil && o.DB == "" {
		// First, so that it goes last: the devices of OVS live in it.
		namespaces = append([]string{scenarios.OVSNamespace}, namespaces...)
	}
	for _, ns := range namespaces {
		full := shellq.Word(id.Namespace(ns))
		p.add(Step{Kind: AddNamespace, NS: ns, Do: fmt.Sprintf("ip netns add %[1]s && ip -n %[1]s link set lo alias %s", full, id.Alias()), Undo: "ip netns del " + full})
		p.add(Step{Kind: SetUp, NS: ns, Dev: "lo", Do: fmt.Sprintf("ip -n %s link set lo up", full)})
	}
	for _, l := range s.Topology.Links {
		if v := l.Veth; v != nil {
			a, b := shellq.Word(id.Namespace(v.A.NS)), shellq.Word(id.Namespace(v.B.NS))
			mtu := ""
			if v.MTU != 0 {
				mtu = fmt.Sprintf(" mtu %d", v.MTU)
			}
			p.add(Step{Kind: AddVeth, NS: v.A.NS, Dev: v.A.Name, Peer: v.B, MTU: v.MTU,
				Do: fmt.Sprintf("ip -n %s link add %s%s type veth peer name %s netns %s%s && ip -n %s link set %s alias %s && ip -n %s link set %s alias %s",
					a, shellq.Word(v.A.Name), mtu, shellq.Word(v.B.Name), b, mtu, a, shellq.Word(v.A.Name), id.Alias(), b, shellq.Word(v.B.Name), id.Alias())})
			for _, ep := range []scenarios.Endpoint{v.A, v.B} {
				p.addAddresses(ep)
			}
			for _, ep := range []scenarios.Endpoint{v.A, v.B} {
				p.add(Step{Kind: SetUp, NS: ep.NS, Dev: ep.Name, Do: fmt.Sprintf("ip -n %s link set %s up", shellq.Word(id.Namespace(ep.NS)), shellq.Word(ep.Name))})
			}
		}
	}
	for _, l := range s.Topology.Links {
		if x := l.Vxlan; x != nil {
			p.add(Step{Kind: AddVxlan, NS: x.NS, Dev: x.Name, Vxlan: x, MTU: x.MTU, Do: vxlanShell(x, id)})
			p.addAddresses(x.Endpoint())
			p.add(Step{Kind: SetUp, NS: x.NS, Dev: x.Name, Do: fmt.Sprintf("ip -n %s link set %s up", shellq.Word(id.Namespace(x.NS)), shellq.Word(x.Name))})
		}
	}
	if s.Topology.OVS != nil {
		p.addOVS(s.Topology.OVS)
	}
	return p
}

// DetectDatapath resolves datapath: auto; tests replace it.
var DetectDatapath = ovs.DetectDatapath

// OVSDir is where a run's private OVS keeps its database, sockets and logs.
func OVSDir(id RunID) string { return filepath.Join(StateDir, string(id)+"-ovs") }

// Datapath returns the datapath the scenario's bridges use, "auto" resolved.
func Datapath(o *scenarios.OVS) string {
	if o.Datapath == "" || o.Datapath == scenarios.DatapathAuto {
		return DetectDatapath()
	}
	return o.Datapath
}

// addOVS plans Open vSwitch: the private instance (or the connection to an existing one), each
// bridge's veth pairs, the bridge with all its ports in one transaction, then the internal
// ports moved into their namespaces, addressed and up; on the userspace datapath, tx checksum
// offload off on the devices whose traffic crosses it.
func (p *Plan) addOVS(o *scenarios.OVS) {
	id := p.RunID
	on := func(ns string) string { return "ip -n " + shellq.Word(id.Namespace(ns)) }
	exec := func(ns string) string { return "ip netns exec " + shellq.Word(id.Namespace(ns)) + " " }
	q := shellq.Word
	db := o.DB
	if db == "" {
		dir := OVSDir(id)
		db = "unix:" + dir + "/db.sock"
		p.add(Step{Kind: StartOVS, NS: scenarios.OVSNamespace, DB: db,
			Do: fmt.Sprintf("mkdir -p %[1]s && ovsdb-tool create %[1]s/conf.db /usr/share/openvswitch/vswitch.ovsschema && "+
				"%[2]sovsdb-server %[1]s/conf.db --remote=punix:%[1]s/db.sock --unixctl=%[1]s/ovsdb-server.ctl --pidfile=%[1]s/ovsdb-server.pid --log-file=%[1]s/ovsdb-server.log --detach && "+
				"ovs-vsctl --db=%[3]s --no-wait init && "+
				"%[2]sovs-vswitchd %[3]s --unixctl=%[1]s/ovs-vswitchd.ctl --pidfile=%[1]s/ovs-vswitchd.pid --log-file=%[1]s/ovs-vswitchd.log --detach", dir, exec(scenarios.OVSNamespace), db),
			Undo: fmt.Sprintf("ovs-appctl -t %[1]s/ovs-vswitchd.ctl exit; ovs-appctl -t %[1]s/ovsdb-server.ctl exit; rm -rf %[1]s", dir)})
	} else {
		p.add(Step{Kind: ConnectOVS, DB: db, Do: "ovs-vsctl --db=" + q(db) + " show >/dev/null",
			Undo: fmt.Sprintf("for b in $(ovs-vsctl --db=%s --bare --columns=name find bridge external_ids:%s=%s); do ovs-vsctl --db=%s del-br $b; done", q(db), ovs.RunKey, id, q(db))})
	}
	datapath := Datapath(o)
	n := 0
	for _, b := range o.Bridges {
		spec := &ovs.BridgeSpec{Name: string(id) + "-" + b.Name, Datapath: datapath, RunID: string(id)}
		vsctl := []string{fmt.Sprintf("ovs-vsctl --db=%s add-br %s -- set bridge %s datapath_type=%s external_ids:%s=%s", q(db), q(spec.Name), q(spec.Name), datapath, ovs.RunKey, id)}
		var csum []scenarios.Endpoint
		for _, port := range b.Ports {
			if port.Veth != nil {
				// The bridge's end of the pair, in the namespace OVS runs in, named for the run.
				name := fmt.Sprintf("%sp%d", id, n)
				n++
				ovsNS := p.ovsNS(o)
				p.add(Step{Kind: AddVeth, NS: scenarios.OVSNamespace, Dev: name, Peer: *port.Veth,
					Do: fmt.Sprintf("%s link add %s type veth peer name %s netns %s && %s link set %s alias %s", ovsNS, name, q(port.Veth.Name), q(id.Namespace(port.Veth.NS)), ovsNS, name, id.Alias())})
				p.addAddresses(*port.Veth)
				p.add(Step{Kind: SetUp, NS: scenarios.OVSNamespace, Dev: name, Do: fmt.Sprintf("%s link set %s up", ovsNS, name)})
				p.add(Step{Kind: SetUp, NS: port.Veth.NS, Dev: port.Veth.Name, Do: fmt.Sprintf("%s link set %s up", on(port.Veth.NS), q(port.Veth.Name))})
				spec.Ports = append(spec.Ports, ovs.PortSpec{Name: name})
				vsctl = append(vsctl, "add-port "+q(spec.Name)+" "+name)
				csum = append(csum, *port.Veth)
			} else {
				spec.Ports = append(spec.Ports, ovs.PortSpec{Name: port.Internal, Internal: true})
				vsctl = append(vsctl, fmt.Sprintf("add-port %s %s -- set interface %s type=internal", q(spec.Name), q(port.Internal), q(port.Internal)))
			}
		}
		p.add(Step{Kind: AddBridge, NS: scenarios.OVSNamespace, Dev: spec.Name, Bridge: spec, DB: db, Do: strings.Join(vsctl, " -- ")})
		for _, port := range b.Ports {
			if port.Internal == "" {
				continue
			}
			ep := port.Endpoint()
			if ep.NS != scenarios.OVSNamespace {
				p.add(Step{Kind: MoveLink, NS: scenarios.OVSNamespace, Dev: ep.Name, Peer: ep,
					Do: fmt.Sprintf("%s link set %s netns %s", p.ovsNS(o), q(ep.Name), q(id.Namespace(ep.NS)))})
			}
			if port.MTU != 0 {
				p.add(Step{Kind: SetMTU, NS: ep.NS, Dev: ep.Name, MTU: port.MTU, Do: fmt.Sprintf("%s link set %s mtu %d", on(ep.NS), q(ep.Name), port.MTU)})
			}
			p.addAddresses(ep)
			p.add(Step{Kind: SetUp, NS: ep.NS, Dev: ep.Name, Do: fmt.Sprintf("%s link set %s up", on(ep.NS), q(ep.Name))})
			csum = append(csum, ep)
		}
		if datapath == scenarios.DatapathNetdev {
			// Seen here: through the userspace datapath TCP stalls until tx checksum offload is
			// off on the devices at either end; that turns TSO off too.
			for _, ep := range csum {
				p.add(Step{Kind: TxCsumOff, NS: ep.NS, Dev: ep.Name, Do: exec(ep.NS) + "ethtool -K " + q(ep.Name) + " tx off"})
			}
		}
	}
}

// ovsNS is the `ip -n NS` of the namespace OVS runs in: the run's ovs namespace for a private
// instance, the root namespace for an existing one.
func (p *Plan) ovsNS(o *scenarios.OVS) string {
	if o.DB != "" {
		return "ip"
	}
	return "ip -n " + shellq.Word(p.RunID.Namespace(scenarios.OVSNamespace))
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
	return shellq.Join(args) + fmt.Sprintf(" && ip -n %s link set %s alias %s", shellq.Word(ns), shellq.Word(x.Name), id.Alias())
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
			Do: fmt.Sprintf("ip -n %s addr add %s dev %s%s", shellq.Word(p.RunID.Namespace(ep.NS)), pfx, shellq.Word(ep.Name), nodad)})
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
		out = append(out, fmt.Sprintf("ip -n %s link del %s  # created anew: it inherits from its lower device as set now", shellq.Word(id.Namespace(ns)), shellq.Word(dev)))
		for _, step := range p.DeviceSteps(ns, dev) {
			out = append(out, step.Do)
		}
	}
	return append(out, stateShell(st, id, func(ref string) bool { return recreated[ref] })...)
}

func stateShell(st scenarios.State, id RunID, include func(ref string) bool) []string {
	var out []string
	for _, ref := range sortedKeys(st.Devices) {
		if !include(ref) {
			continue
		}
		ds := st.Devices[ref]
		ns, dev, _ := strings.Cut(ref, "/")
		prefix := fmt.Sprintf("ip -n %s link set dev %s", shellq.Word(id.Namespace(ns)), shellq.Word(dev))
		var plain, ipv4 []string
		for _, k := range knobs.Settable() {
			if v, set := ds[k.Name]; set {
				kv := fmt.Sprintf("%s %d", k.Name, v)
				if k.IPv4 {
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
	for _, ref := range sortedKeys(st.Qdiscs) {
		if include(ref) {
			ns, dev := splitRef(ref)
			out = append(out, fmt.Sprintf("ip netns exec %s tc qdisc replace dev %s root %s", shellq.Word(id.Namespace(ns)), shellq.Word(dev), st.Qdiscs[ref]))
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
		out = append(out, shellq.Join(args))
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
