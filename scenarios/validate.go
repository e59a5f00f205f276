package scenarios

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/knobs"
)

var (
	scenarioNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	nsNameRE       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	stateNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	featureNameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	// ifNameRE: what the kernel accepts as an interface name (dev_valid_name), narrowed to
	// words a shell takes as they are, so that a name can never be read as shell syntax.
	ifNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
	// ovsDBRE: unix:PATH of an existing ovsdb-server, a path of shell-safe characters.
	ovsDBRE = regexp.MustCompile(`^unix:/[A-Za-z0-9._/-]+$`)
)

// MaxRuns bounds the runs per state and workload.
const MaxRuns = 1000

// runsProblem says what is wrong with a number of runs, or "".
func runsProblem(n int) string {
	if n < 1 || n > MaxRuns {
		return fmt.Sprintf("%d: want 1 to %d runs per state", n, MaxRuns)
	}
	return ""
}

// MaxNamespaceNameLen keeps the run-id-prefixed namespace names (nsp3f9a-client) short.
const MaxNamespaceNameLen = 32

type validator struct {
	s        *Scenario
	problems Problems
	// undecodable holds the paths whose values could not be decoded: checks on them or below
	// them would only repeat the decoding problem.
	undecodable []string
}

func (v *validator) add(path, format string, args ...any) {
	for _, u := range v.undecodable {
		if path == u || strings.HasPrefix(path, u+".") || strings.HasPrefix(path, u+"[") {
			return
		}
	}
	v.problems = append(v.problems, Problem{File: v.s.File, Pos: v.s.pos(path), Path: path, Msg: fmt.Sprintf(format, args...)})
}

// validate checks everything that can be known without a kernel: references, names, ranges.
func (s *Scenario) validate(opt Options, decoding Problems) Problems {
	v := &validator{s: s}
	for _, p := range decoding {
		v.undecodable = append(v.undecodable, p.Path)
	}
	if s.Name == "" {
		v.add("name", "missing: every scenario needs a name")
	} else if !scenarioNameRE.MatchString(s.Name) {
		v.add("name", "%q: use lower-case letters, digits, '.', '_' and '-'", s.Name)
	}
	namespaces := v.namespaces()
	devices, owner := v.links(namespaces)
	v.ovs(namespaces, devices, owner)
	v.routes(namespaces, devices)
	v.states(namespaces, devices)
	v.workloads(namespaces, devices, opt)
	if problem := runsProblem(s.Runs); problem != "" {
		v.add("runs", "%s", problem)
	}
	if s.MaxRuns != 0 && !s.Adaptive {
		v.add("max_runs", "max_runs goes with runs: auto")
	}
	switch s.Order {
	case OrderAlternate, OrderABBA, OrderRandom:
	default:
		v.add("order", "%q: want alternate, abba or random", s.Order)
	}
	if s.Seed != nil && s.Order != OrderRandom {
		v.add("seed", "a seed is used only with order: random")
	}
	if s.Alpha < 0 || s.Alpha >= 0.5 || (s.Alpha != 0 && s.Alpha < 0.0001) {
		v.add("alpha", "%g: want a significance level from 0.0001 to below 0.5, e.g. 0.05", s.Alpha)
	}
	if s.MinChange != nil && (*s.MinChange < 0 || *s.MinChange >= 1) {
		v.add("min_change", "%g%%: want 0%% to 100%%", float64(*s.MinChange)*100)
	}
	if s.CVLimit < 0 || s.CVLimit > 1 {
		v.add("cv_limit", "%g%%: want 0%% to 100%%", float64(s.CVLimit)*100)
	}
	v.expectations(devices)
	return v.problems
}

func (v *validator) namespaces() map[string]bool {
	known := map[string]bool{}
	if len(v.s.Topology.Namespaces) == 0 {
		v.add("topology.namespaces", "missing: list the namespaces to create, e.g. [client, server]")
	}
	for i, ns := range v.s.Topology.Namespaces {
		path := fmt.Sprintf("topology.namespaces[%d]", i)
		switch {
		case !nsNameRE.MatchString(ns):
			v.add(path, "%q: use letters, digits, '_' and '-'", ns)
		case len(ns) > MaxNamespaceNameLen:
			v.add(path, "%q is %d bytes; at most %d", ns, len(ns), MaxNamespaceNameLen)
		case known[ns]:
			v.add(path, "duplicate namespace %q", ns)
		}
		known[ns] = true
	}
	return known
}

// device is what validation knows of a device the topology creates.
type device struct {
	addrs []netip.Prefix
	ipv6  bool
}

func (v *validator) links(namespaces map[string]bool) (map[string]*device, map[netip.Addr]string) {
	t := &topologyIndex{namespaces: namespaces, devices: map[string]*device{}, owner: map[netip.Addr]string{}}
	// Stage by stage: a device on top of others is checked once every address below it is
	// known.
	for _, stage := range LinkStages {
		for i, l := range v.s.Topology.Links {
			path := fmt.Sprintf("topology.links[%d]", i)
			names, specs := l.kinds()
			switch {
			case len(specs) == 0 && stage == LinkOwn:
				v.add(path, "a link needs one kind: %s", orList(LinkKinds()))
			case len(specs) > 1 && stage == LinkOwn:
				entries := "two"
				if len(names) > 2 {
					entries = "separate"
				}
				v.add(path, "a link has one kind: split %s into %s entries", strings.Join(names, " and "), entries)
			case len(specs) == 1 && specs[0].Stage() == stage:
				specs[0].check(v, path+"."+names[0], t)
			}
		}
	}
	return t.devices, t.owner
}

func (v *validator) ovs(namespaces map[string]bool, devices map[string]*device, owner map[netip.Addr]string) {
	o := v.s.Topology.OVS
	if o == nil {
		return
	}
	if namespaces[OVSNamespace] {
		for i, ns := range v.s.Topology.Namespaces {
			if ns == OVSNamespace {
				v.add(fmt.Sprintf("topology.namespaces[%d]", i), "%q is the namespace Open vSwitch runs in; name yours otherwise", ns)
			}
		}
	}
	namespaces[OVSNamespace] = true
	switch o.Datapath {
	case DatapathAuto, DatapathSystem, DatapathNetdev:
	default:
		v.add("topology.ovs.datapath", "%q: want auto, system or netdev", o.Datapath)
	}
	if o.DB != "" && !ovsDBRE.MatchString(o.DB) {
		v.add("topology.ovs.db", "%q: want unix:PATH of an existing ovsdb-server, or leave it out for a private OVS", o.DB)
	}
	if len(o.Bridges) == 0 {
		v.add("topology.ovs.bridges", "missing: list at least one bridge")
	}
	if o.DB != "" {
		for i, w := range v.s.Workloads {
			if client, server := w.Sides(); client.NS == OVSNamespace || server.NS == OVSNamespace {
				v.add(fmt.Sprintf("workloads[%d].%s", i, w.Tool()), "runs in the ovs namespace, which with an existing OVS (db: %s) is the root namespace; nsperf runs tools only in namespaces it built", o.DB)
			}
		}
	}
	seen := map[string]bool{}
	for i, b := range o.Bridges {
		path := fmt.Sprintf("topology.ovs.bridges[%d]", i)
		switch {
		case b.Name == "" || len(b.Name) > MaxBridgeNameLen || !nsNameRE.MatchString(b.Name):
			v.add(path+".name", "%q: want 1 to %d letters, digits, '_' or '-' (the bridge is named RUNID-NAME)", b.Name, MaxBridgeNameLen)
		case seen[b.Name]:
			v.add(path+".name", "duplicate bridge %q", b.Name)
		}
		seen[b.Name] = true
		if len(b.Ports) == 0 {
			v.add(path+".ports", "missing: a bridge needs ports (internal, or veth)")
		}
		for j, p := range b.Ports {
			ppath := fmt.Sprintf("%s.ports[%d]", path, j)
			switch {
			case (p.Internal == "") == (p.Veth == nil):
				v.add(ppath, "a port is either internal: NAME or veth: {ns, name, addrs}")
			case p.Internal != "" && p.Name != "":
				v.add(ppath+".name", "an internal port is named by internal:; name: names a veth port's bridge end")
			case p.Internal != "":
				ep := p.Endpoint()
				if o.DB != "" && p.NS == "" {
					v.add(ppath+".ns", "with an existing OVS (db: %s) an internal port must be moved into one of the scenario's namespaces", o.DB)
				}
				d := v.endpoint(ppath, Endpoint{NS: ep.NS, Name: p.Internal, Addrs: p.Addrs}, namespaces, devices, owner)
				v.mtu(ppath+".mtu", p.MTU, d != nil && d.ipv6, "port")
			default:
				if p.NS != "" || len(p.Addrs) > 0 || p.MTU != 0 {
					v.add(ppath, "ns, addrs and mtu belong to internal ports; a veth port's addresses go on its veth end")
				}
				v.endpoint(ppath+".veth", *p.Veth, namespaces, devices, owner)
				if p.Name != "" && o.DB != "" {
					v.add(ppath+".name", "with an existing OVS (db: %s) the bridge ends live in the root namespace, where nsperf names them after the run", o.DB)
				} else if p.Name != "" {
					v.endpoint(ppath, Endpoint{NS: OVSNamespace, Name: p.Name}, namespaces, devices, owner)
				}
			}
		}
	}
}

// mtu checks the MTU a topology entry creates its device with (0: the kernel's default);
// what names the entry in the message (link, port, device).
func (v *validator) mtu(path string, mtu int, ipv6 bool, what string) {
	k, _ := knobs.Lookup("mtu")
	switch {
	case mtu == 0:
	case mtu < int(k.Min) || mtu > int(k.Max):
		v.add(path, "%d: want %d to %d", mtu, k.Min, k.Max)
	case ipv6 && mtu < int(k.IPv6Min):
		v.add(path, "%d is below %d, the IPv6 minimum, and the %s has IPv6 addresses", mtu, k.IPv6Min, what)
	}
}

// underlayAddr checks that an address is one the topology assigns to a (non-overlay) device.
func (v *validator) underlayAddr(path, s, what string, underlay map[netip.Addr]string) netip.Addr {
	if s == "" {
		v.add(path, "missing: %s", what)
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		v.add(path, "%q is not an IP address (no prefix length here)", s)
		return netip.Addr{}
	}
	if _, ok := underlay[a]; !ok {
		v.add(path, "no device of the topology carries %s; nsperf only sends traffic to addresses it assigns", a)
		return netip.Addr{}
	}
	return a
}

func (v *validator) endpoint(path string, ep Endpoint, namespaces map[string]bool, devices map[string]*device, owner map[netip.Addr]string) *device {
	ok := true
	if ep.NS == "" {
		v.add(path+".ns", "missing: the namespace this end lives in")
		ok = false
	} else if !namespaces[ep.NS] {
		v.add(path+".ns", "namespace %q is not in topology.namespaces%s", ep.NS, have(namespaces))
		ok = false
	}
	switch {
	case ep.Name == "":
		v.add(path+".name", "missing: the interface name, e.g. eth0")
		ok = false
	case len(ep.Name) > MaxIfNameLen:
		v.add(path+".name", "%q is %d bytes; interface names have at most %d", ep.Name, len(ep.Name), MaxIfNameLen)
		ok = false
	case !ifNameRE.MatchString(ep.Name) || ep.Name == "." || ep.Name == "..":
		v.add(path+".name", "%q: an interface name takes letters, digits, '.', '_' and '-', and does not start with '-' or '.'", ep.Name)
		ok = false
	}
	if ok && devices[ep.Ref()] != nil {
		v.add(path+".name", "device %s is defined twice", ep.Ref())
		ok = false
	}
	d := &device{}
	for j, a := range ep.Addrs {
		apath := fmt.Sprintf("%s.addrs[%d]", path, j)
		p, err := netip.ParsePrefix(a)
		if err != nil {
			v.add(apath, "%q is not an address with a prefix length, e.g. 198.18.0.1/24 or 2001:2::1/64", a)
			continue
		}
		if prev, dup := owner[p.Addr()]; dup {
			v.add(apath, "%s is already assigned to %s", p.Addr(), prev)
			continue
		}
		owner[p.Addr()] = ep.Ref()
		d.addrs = append(d.addrs, p)
		d.ipv6 = d.ipv6 || p.Addr().Is6()
	}
	if !ok {
		return d
	}
	devices[ep.Ref()] = d
	return d
}

// name checks the name of a state or workload (what), unique among those seen.
func (v *validator) name(path, name, what, example string, seen map[string]bool) {
	switch {
	case name == "":
		v.add(path, "missing: every %s needs a name, e.g. %s", what, example)
	case !stateNameRE.MatchString(name):
		v.add(path, "%q: use letters, digits, '.', '_' and '-'", name)
	case seen[name]:
		v.add(path, "duplicate %s %q", what, name)
	}
	seen[name] = true
}

func (v *validator) states(namespaces map[string]bool, devices map[string]*device) {
	if len(v.s.States) == 0 {
		v.add("states", "missing: list at least one state; the first is the baseline")
	}
	seen := map[string]bool{}
	optional := map[string]bool{}
	for _, st := range v.s.States {
		optional[st.Name] = st.Optional
	}
	for i, st := range v.s.States {
		path := fmt.Sprintf("states[%d]", i)
		if i == 0 && st.Optional {
			v.add(path+".optional", "the first state is the baseline and cannot be optional")
		}
		if c := st.CompareTo; c != "" {
			_, known := optional[c]
			switch {
			case c == st.Name:
				v.add(path+".compare_to", "a state cannot be compared with itself")
			case !known:
				v.add(path+".compare_to", "no state named %q%s", c, have(optional))
			case optional[c]:
				v.add(path+".compare_to", "state %q is optional and may be unavailable; compare with a state that is always measured", c)
			}
		}
		v.checkSettings(path, st, &topologyIndex{namespaces: namespaces, devices: devices})
		v.name(path+".name", st.Name, "state", "off or on", seen)
	}
}

func (v *validator) expectations(devices map[string]*device) {
	states := map[string]bool{}
	for _, st := range v.s.States {
		states[st.Name] = true
	}
	workloads := map[string]bool{}
	for _, w := range v.s.Workloads {
		workloads[w.Name] = true
	}
	for i, e := range v.s.Expect {
		path := fmt.Sprintf("expect[%d]", i)
		kinds := 0
		for _, set := range []bool{e.Change != nil || e.Significant != nil, e.CV != nil, e.Value != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			v.add(path, "an expectation checks one thing: change (with significant), cv, or value")
			continue
		}
		if e.State != "" && !states[e.State] {
			v.add(path+".state", "no state named %q%s", e.State, have(states))
		}
		if e.Value != nil {
			switch {
			case devices[e.Device] == nil:
				v.add(path+".device", "no device %q in the topology%s", e.Device, have(devices))
			case e.Evidence != "" && e.Attr != "":
				v.add(path, "a value expectation checks an attr or an evidence figure, not both")
			case e.Evidence != "":
				if !slices.Contains(EvidenceNames, e.Evidence) {
					v.add(path+".evidence", "%q: want one of %s", e.Evidence, strings.Join(EvidenceNames, ", "))
				}
			case !slices.Contains(knobs.Names(), e.Attr):
				v.add(path+".attr", "%q: want one of %s", e.Attr, strings.Join(knobs.Names(), ", "))
			}
			continue
		}
		if !workloads[e.Workload] {
			v.add(path+".workload", "no workload named %q%s", e.Workload, have(workloads))
		}
		if e.Change != nil || e.Significant != nil {
			switch {
			case e.State == "" && len(v.s.States) != 2:
				v.add(path+".state", "name the state whose change is expected (there are %d states)", len(v.s.States))
			case e.State != "" && len(v.s.States) > 0 && e.State == v.s.States[0].Name && v.s.States[0].CompareTo == "":
				v.add(path+".state", "%q is the baseline; name a state compared with it", e.State)
			}
		}
	}
}

// side checks one end of a workload and returns its address, if it has a valid one.
func (v *validator) side(path string, sd Side, namespaces map[string]bool, devices map[string]*device, opt Options, isServer bool) netip.Addr {
	if sd.NS == "" {
		v.add(path+".ns", "missing: the namespace to run in")
	} else if !namespaces[sd.NS] {
		v.add(path+".ns", "namespace %q is not in topology.namespaces%s", sd.NS, have(namespaces))
	}
	if sd.CPU != nil && (*sd.CPU < 0 || (opt.CPUs > 0 && *sd.CPU >= opt.CPUs)) {
		v.add(path+".cpu", "CPU %d does not exist: this machine has CPUs 0-%d", *sd.CPU, opt.CPUs-1)
	}
	if sd.Addr == "" {
		if isServer {
			v.add(path+".addr", "missing: the address the client connects to, one the topology assigns in namespace %s", sd.NS)
		}
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(sd.Addr)
	if err != nil {
		v.add(path+".addr", "%q is not an IP address (no prefix length here)", sd.Addr)
		return netip.Addr{}
	}
	if !namespaces[sd.NS] {
		return a
	}
	var there []string
	for ref, d := range devices {
		if !strings.HasPrefix(ref, sd.NS+"/") {
			continue
		}
		for _, p := range d.addrs {
			if p.Addr() == a {
				return a
			}
			there = append(there, p.Addr().String())
		}
	}
	hint := "; nsperf only sends traffic to addresses it assigns"
	if len(there) > 0 {
		hint = " (addresses there: " + strings.Join(slices.Compact(slices.Sorted(slices.Values(there))), ", ") + ")" + hint
	}
	v.add(path+".addr", "no device in namespace %s carries %s%s", sd.NS, a, hint)
	return netip.Addr{}
}

func have[V any](m map[string]V) string {
	if len(m) == 0 {
		return ""
	}
	return " (have: " + strings.Join(slices.Sorted(maps.Keys(m)), ", ") + ")"
}
