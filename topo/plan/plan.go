// Package plan turns one case of a scenario into ordered steps, pure data: the steps that
// build its topology, each with the step that undoes it, and the steps that put it into each
// state. Every step carries its iproute2, ovs-vsctl, ethtool or tc equivalent. Nothing here
// touches the kernel or the file system: what the plan must know of the host comes in as
// Facts. Package topo carries the steps out through netlink; `nsperf plan` prints them.
package plan

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/scenarios"
)

// RunID names one run; every namespace (nsp3f9a-client) and device alias (nsperf:nsp3f9a) the
// run creates carries it, so that two runs never collide and leftovers can be traced.
type RunID string

// RunIDPattern is what a run id is, as a regular expression: nsp and four hex digits.
const RunIDPattern = `nsp[0-9a-f]{4}`

var runIDRE = regexp.MustCompile(`^` + RunIDPattern + `$`)

// NewRunID returns a random run id. Claiming it (the state file) happens when topo builds.
func NewRunID() RunID {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return RunID("nsp" + hex.EncodeToString(b[:]))
}

// ParseRunID checks a run id given by a user.
func ParseRunID(s string) (RunID, error) {
	if !runIDRE.MatchString(s) {
		return "", fmt.Errorf("%q is not a run id (like nsp3f9a; `nsperf cleanup --dry-run` lists the runs left behind)", s)
	}
	return RunID(s), nil
}

// Namespace returns the name of the run's namespace for a scenario namespace.
func (id RunID) Namespace(ns string) string { return string(id) + "-" + ns }

// Alias is the alias every device of the run carries (`ip link set DEV alias nsperf:ID`).
func (id RunID) Alias() string { return "nsperf:" + string(id) }

// StateDir is where a run's state file and lock live (runstate.Dir): named here, in the pure
// plan, for the plan script, which holds the run's lock as nsperf's run does.
const StateDir = "/run/nsperf"

// LockPath is the run's lock file: a run is alive while a process holds it (flock).
func (id RunID) LockPath() string { return StateDir + "/" + string(id) + ".lock" }

// StepKind is what a step does.
type StepKind string

// The kinds of build steps, in the order a plan uses them.
const (
	AddNamespace StepKind = "namespace"
	AddLink      StepKind = "link"        // a link of any kind (Step.Link)
	AddVeth      StepKind = "veth"        // the pair of a bridge's port
	StartOVS     StepKind = "start-ovs"   // a private OVS instance in the ovs namespace
	ConnectOVS   StepKind = "connect-ovs" // an existing OVS
	AddBridge    StepKind = "bridge"
	MoveLink     StepKind = "move" // a device into another namespace
	SetMTU       StepKind = "mtu"
	TxCsumOff    StepKind = "tx-csum-off" // the userspace datapath needs it
	AddAddress   StepKind = "address"
	SetUp        StepKind = "up"
	AddRoute     StepKind = "route" // Step.Route, once every device is up
	// SetSysctls, per namespace: the topology's sysctls (Step.Sysctls), once built.
	SetSysctls StepKind = "sysctls"
)

// The kinds of undo steps: each build step that leaves something behind names one.
const (
	DelNamespace StepKind = "del-namespace"
	DelLink      StepKind = "del-link"
	StopOVS      StepKind = "stop-ovs"    // the private instance: both daemons, then its directory
	DelBridges   StepKind = "del-bridges" // the run's bridges in an existing OVS
)

// Step is one action of a plan: pure data, with its iproute2 (or ovs-vsctl, ethtool, tc)
// equivalent, and the step that undoes it. The live topology carries out the data; `nsperf
// plan` prints the text.
type Step struct {
	Kind     StepKind
	NS       string             // scenario namespace the step acts in
	Dev      string             // device in NS
	Peer     scenarios.Endpoint // AddVeth: the other end; MoveLink: the device in its new namespace
	Link     scenarios.LinkSpec // AddLink; LinkKind is its YAML key
	LinkKind string
	Bridge   *Bridge // AddBridge
	DB       string  // StartOVS, ConnectOVS, DelBridges: the ovsdb endpoint
	Dir      string  // StartOVS, StopOVS: the private instance's directory
	MTU      int
	Addr     netip.Prefix

	Sysctls map[string]string // SetSysctls: what the topology sets in NS, when built
	Route   *scenarios.Route  // AddRoute

	// SetSetting (see StateSteps): the kind (its key), the target ("ns", "ns/dev", "ns/to"),
	// the phase, and the state's value of the kind, nil where the state leaves it out.
	SettingKey string
	Target     string
	Phase      int
	Setting    scenarios.Setting

	Do   string // the command-line equivalent; state steps may have several lines, or none
	Undo *Step  // what removes what this step created; nil if nothing
	// WithNamespace marks an undo that deleting the device's namespace does too: the live
	// side does it first (a device in the root namespace outlives no namespace), the shell
	// leaves it to `ip netns del`.
	WithNamespace bool
}

// Bridge is an OVS bridge to create, with its ports, owned by a run (external_ids:scenarios.OVSRunKey).
type Bridge struct {
	Name     string
	Datapath string
	RunID    string
	Ports    []BridgePort
}

// BridgePort is one port of a bridge: an internal port, or an existing device (a veth end).
type BridgePort struct {
	Name     string
	Internal bool
}

// Plan is the ordered list of steps that builds a scenario's topology.
type Plan struct {
	RunID    RunID
	Scenario *scenarios.Scenario
	Facts    Facts
	Steps    []Step
}

// New orders the steps for one case of a scenario: namespaces (with lo up), then the links
// stage by stage (a vxlan after its underlay), each with its addresses (IPv6 without duplicate
// address detection, so they are usable at once) and up; then Open vSwitch.
func New(s *scenarios.Scenario, id RunID, facts Facts) *Plan {
	p := &Plan{RunID: id, Scenario: s, Facts: facts}
	namespaces := s.Topology.Namespaces
	if o := s.Topology.OVS; o != nil && o.DB == "" {
		// First, so that it goes last: the devices of OVS live in it.
		namespaces = append([]string{scenarios.OVSNamespace}, namespaces...)
	}
	for _, ns := range namespaces {
		full := shellq.Word(id.Namespace(ns))
		p.add(Step{Kind: AddNamespace, NS: ns, Do: fmt.Sprintf("ip netns add %[1]s && ip -n %[1]s link set lo alias %s", full, id.Alias()),
			Undo: &Step{Kind: DelNamespace, NS: ns, Do: "ip netns del " + full}})
		p.setUp(ns, "lo")
	}
	for _, stage := range scenarios.LinkStages {
		for _, l := range s.Topology.Links {
			if spec := l.Spec(); spec.Stage() == stage {
				p.addLink(l.Kind(), spec)
			}
		}
	}
	if s.Topology.OVS != nil {
		p.addOVS(s.Topology.OVS)
	}
	// The topology's sysctls, then its routes (a router forwards before anything is sent
	// through it); both go with their namespace.
	for _, ns := range slices.Sorted(maps.Keys(s.Topology.Sysctls)) {
		p.add(Step{Kind: SetSysctls, NS: ns, Sysctls: s.Topology.Sysctls[ns], Do: scenarios.SysctlCommand(p.RunID.Namespace(ns), s.Topology.Sysctls[ns])})
	}
	for i := range s.Topology.Routes {
		r := &s.Topology.Routes[i]
		p.add(Step{Kind: AddRoute, NS: r.NS, Route: r, Do: r.Command(p.RunID.Namespace)})
	}
	return p
}

// Facts is what a plan needs to know of the machine; the live side finds it out, tests make
// it up, and planning itself never looks.
type Facts struct {
	// Datapath is the OVS datapath a bridge with datapath: auto gets (system with the
	// openvswitch kernel module, netdev without).
	Datapath string
	// StateDir holds the run's private OVS directory (RUNID-ovs).
	StateDir string
}

// OVSDir is where a run's private OVS keeps its database, sockets and logs.
func (h Facts) OVSDir(id RunID) string { return filepath.Join(h.StateDir, string(id)+"-ovs") }

// datapath returns the datapath a scenario's bridges use, "auto" resolved.
func (h Facts) datapath(o *scenarios.OVS) string {
	if o.Datapath == "" || o.Datapath == scenarios.DatapathAuto {
		return h.Datapath
	}
	return o.Datapath
}

// Datapath is the datapath the scenario's bridges use, auto resolved; "" without OVS.
func (p *Plan) Datapath() string {
	if o := p.Scenario.Topology.OVS; o != nil {
		return p.Facts.datapath(o)
	}
	return ""
}

// addOVS plans Open vSwitch: the private instance (or the connection to an existing one), each
// bridge's veth pairs, the bridge with all its ports in one transaction, then the internal
// ports moved into their namespaces, addressed and up; on the userspace datapath, tx checksum
// offload off on the devices whose traffic crosses it.
func (p *Plan) addOVS(o *scenarios.OVS) {
	id := p.RunID
	exec := func(ns string) string { return "ip netns exec " + shellq.Word(id.Namespace(ns)) + " " }
	q := shellq.Word
	db := o.DB
	if db == "" {
		dir := p.Facts.OVSDir(id)
		db = "unix:" + dir + "/db.sock"
		p.add(Step{Kind: StartOVS, NS: scenarios.OVSNamespace, DB: db, Dir: dir,
			Do: fmt.Sprintf("mkdir -p %[1]s && ovsdb-tool create %[1]s/conf.db /usr/share/openvswitch/vswitch.ovsschema && "+
				"%[2]sovsdb-server %[1]s/conf.db --remote=punix:%[1]s/db.sock --unixctl=%[1]s/ovsdb-server.ctl --pidfile=%[1]s/ovsdb-server.pid --log-file=%[1]s/ovsdb-server.log --detach && "+
				"ovs-vsctl --db=%[3]s --no-wait init && "+
				"%[2]sovs-vswitchd %[3]s --unixctl=%[1]s/ovs-vswitchd.ctl --pidfile=%[1]s/ovs-vswitchd.pid --log-file=%[1]s/ovs-vswitchd.log --detach", dir, exec(scenarios.OVSNamespace), db),
			Undo: &Step{Kind: StopOVS, NS: scenarios.OVSNamespace, Dir: dir,
				Do: fmt.Sprintf("ovs-appctl -t %[1]s/ovs-vswitchd.ctl exit; ovs-appctl -t %[1]s/ovsdb-server.ctl exit; rm -rf %[1]s", dir)}})
	} else {
		p.add(Step{Kind: ConnectOVS, DB: db, Do: "ovs-vsctl --db=" + q(db) + " show >/dev/null",
			Undo: &Step{Kind: DelBridges, DB: db,
				Do: fmt.Sprintf("for b in $(ovs-vsctl --db=%s --bare --columns=name find bridge external_ids:%s=%s); do ovs-vsctl --db=%s del-br $b; done", q(db), scenarios.OVSRunKey, id, q(db))}})
	}
	datapath := p.Facts.datapath(o)
	n := 0
	for _, b := range o.Bridges {
		spec := &Bridge{Name: string(id) + "-" + b.Name, Datapath: datapath, RunID: string(id)}
		vsctl := []string{fmt.Sprintf("ovs-vsctl --db=%s add-br %s -- set bridge %s datapath_type=%s external_ids:%s=%s", q(db), q(spec.Name), q(spec.Name), datapath, scenarios.OVSRunKey, id)}
		var csum []scenarios.Endpoint
		for _, port := range b.Ports {
			if port.Veth != nil {
				// The bridge's end of the pair, in the namespace OVS runs in: as the scenario
				// names it, else named for the run.
				name := fmt.Sprintf("%sp%d", id, n)
				if port.Name != "" {
					name = port.Name
				}
				n++
				ovsNS := p.ip(scenarios.OVSNamespace)
				p.add(Step{Kind: AddVeth, NS: scenarios.OVSNamespace, Dev: name, Peer: *port.Veth, Undo: p.delLink(scenarios.OVSNamespace, name),
					Do: fmt.Sprintf("%s && %s link set %s alias %s", scenarios.VethAddCommand(ovsNS, name, port.Veth.Name, id.Namespace(port.Veth.NS), 0), ovsNS, q(name), id.Alias())})
				p.addAddresses(*port.Veth)
				p.setUp(scenarios.OVSNamespace, name)
				p.setUp(port.Veth.NS, port.Veth.Name)
				spec.Ports = append(spec.Ports, BridgePort{Name: name})
				vsctl = append(vsctl, "add-port "+q(spec.Name)+" "+name)
				csum = append(csum, *port.Veth)
			} else {
				spec.Ports = append(spec.Ports, BridgePort{Name: port.Internal, Internal: true})
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
					Do: fmt.Sprintf("%s link set %s netns %s", p.ip(scenarios.OVSNamespace), q(ep.Name), q(id.Namespace(ep.NS)))})
			}
			if port.MTU != 0 {
				p.add(Step{Kind: SetMTU, NS: ep.NS, Dev: ep.Name, MTU: port.MTU, Do: fmt.Sprintf("%s link set %s mtu %d", p.ip(ep.NS), q(ep.Name), port.MTU)})
			}
			p.addAddresses(ep)
			p.setUp(ep.NS, ep.Name)
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

// addLink plans a link: the command that creates its devices, then their addresses, then up.
// Removing the first device removes the link (the peer of a veth goes with it).
func (p *Plan) addLink(kind string, spec scenarios.LinkSpec) {
	devs := spec.Devices()
	first := devs[0]
	p.add(Step{Kind: AddLink, NS: first.NS, Dev: first.Name, Link: spec, LinkKind: kind,
		Do: spec.Command(p.RunID.Namespace, p.RunID.Alias()), Undo: p.delLink(first.NS, first.Name)})
	for _, ep := range devs {
		p.addAddresses(ep)
	}
	for _, ep := range devs {
		p.setUp(ep.NS, ep.Name)
	}
}

func (p *Plan) add(s Step) { p.Steps = append(p.Steps, s) }

// setUp: `ip -n NS link set DEV up`.
func (p *Plan) setUp(ns, dev string) {
	p.add(Step{Kind: SetUp, NS: ns, Dev: dev, Do: fmt.Sprintf("%s link set %s up", p.ip(ns), shellq.Word(dev))})
}

// delLink is the undo of a device: `ip -n NS link del DEV`.
func (p *Plan) delLink(ns, dev string) *Step {
	return &Step{Kind: DelLink, NS: ns, Dev: dev, WithNamespace: true,
		Do: fmt.Sprintf("%s link del %s", p.ip(ns), shellq.Word(dev))}
}

// ip is `ip -n NS` for a scenario namespace; plain `ip` for the ovs namespace of an existing
// OVS, which is the root namespace.
func (p *Plan) ip(ns string) string {
	if o := p.Scenario.Topology.OVS; ns == scenarios.OVSNamespace && o != nil && o.DB != "" {
		return "ip"
	}
	return "ip -n " + shellq.Word(p.RunID.Namespace(ns))
}

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
		if u := p.Steps[i].Undo; u != nil && !u.WithNamespace {
			b.WriteString(u.Do + "\n")
		}
	}
	return b.String()
}
