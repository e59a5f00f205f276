// Package scenarios defines the scenario format (YAML), loads it strictly with positioned
// errors, validates it, and ships the scenario library embedded in the binary.
package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nsperf/nsperf/knobs"
)

// Scenario is one experiment: a topology, the states to compare and the workloads to run.
type Scenario struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Reference   string     `yaml:"reference"` // the seed or source of the published numbers
	Topology    Topology   `yaml:"topology"`
	States      []State    `yaml:"states"` // ordered; the first is the baseline
	Workloads   []Workload `yaml:"workloads"`
	Runs        int        `yaml:"runs,auto"` // measured runs per state and workload; auto: adaptive (AutoRuns)
	// MaxRuns bounds the rounds of runs: auto (default DefaultMaxRuns).
	MaxRuns int `yaml:"max_runs"`
	// Adaptive: runs: auto; Runs is then MaxRuns, and the run stops at the first look at
	// which every gated comparison is decided.
	Adaptive bool   `yaml:"-"`
	Order    string `yaml:"order"` // alternate | abba | random
	Seed     *int64 `yaml:"seed"`  // for order: random
	// Matrix expands the scenario into cases, one per combination of values; ${name} in any
	// value of the scenario stands for the case's value.
	Matrix map[string][]string `yaml:"matrix"`
	// Expect are the scenario's CI gates, checked against every case.
	Expect []Expectation `yaml:"expect"`
	// Alpha is the significance level of comparisons (default 0.05); CVLimit the CV above
	// which a comparison without a significant difference is "too noisy" (default 5%).
	Alpha   float64 `yaml:"alpha"`
	CVLimit Percent `yaml:"cv_limit"`
	// MinChange is the smallest change that matters (default 2%): smaller significant changes
	// are negligible, a CI within it is equivalence.
	MinChange *Percent `yaml:"min_change"`

	// cases are the concrete scenarios, one per matrix combination (one when there is no
	// matrix), in the order they are measured; see Expand. Filled by the loader.
	cases []Case

	// Source facts, filled by the loader.
	File string `yaml:"-"`
	Text []byte `yaml:"-"`
	// positions maps a field path (states[1].devices.client/eth0.gso_max_size) to where it
	// stands in File, so that validation can point at it.
	positions map[string]Pos
}

// Topology lists the namespaces and the links between them.
type Topology struct {
	Namespaces []string `yaml:"namespaces"`
	Links      []Link   `yaml:"links"`
	OVS        *OVS     `yaml:"ovs"`
	// Routes are added once every link is up (route.go).
	Routes []Route `yaml:"routes"`
	// Sysctls are set in the namespaces once the topology is built, for every state (a
	// router's net.ipv4.ip_forward); key: namespace, then the sysctl's name. A state's own
	// sysctls start from these.
	Sysctls map[string]map[string]string `yaml:"sysctls"`
}

// OVSNamespace is the namespace Open vSwitch runs in: a private instance gets a namespace of
// its own, where its bridges' ports and internal ports appear; workloads may run there.
const OVSNamespace = "ovs"

// OVSRunKey is the external_ids key that names the nsperf run owning an OVS bridge, port or
// interface (`ovs-vsctl find bridge external_ids:nsperf-run=RUNID`).
const OVSRunKey = "nsperf-run"

// OVS describes Open vSwitch bridges. By default nsperf starts a private OVS instance for the
// run; DB names an existing one instead (e.g. unix:/run/openvswitch/db.sock), where nsperf
// creates and removes only its own bridges.
type OVS struct {
	DB       string   `yaml:"db"`
	Datapath string   `yaml:"datapath"` // auto (default): system with the kernel module, else netdev
	Bridges  []Bridge `yaml:"bridges"`
}

// Datapaths of OVS bridges.
const (
	DatapathAuto   = "auto"
	DatapathSystem = "system" // the kernel module
	DatapathNetdev = "netdev" // the userspace datapath
)

// Bridge is an OVS bridge; its OVS name carries the run id (RUNID-NAME).
type Bridge struct {
	Name  string `yaml:"name"`
	Ports []Port `yaml:"ports"`
}

// Port is one port of a bridge: an internal port, or a veth pair whose other end is in a
// namespace.
type Port struct {
	Internal string    `yaml:"internal"` // name of an internal port (`ovs-vsctl add-port BR NAME -- set interface NAME type=internal`)
	NS       string    `yaml:"ns"`       // internal: the namespace to move it into (default: ovs)
	Addrs    []string  `yaml:"addrs"`    // internal: its addresses
	MTU      int       `yaml:"mtu"`      // internal: its MTU
	Veth     *Endpoint `yaml:"veth"`     // a veth pair: this end in a namespace, the other end is the port
	// Name is a veth port's bridge end, in the ovs namespace (default: RUNIDpN, which no state
	// can name). Named, it is a device of the topology like any other (ovs/NAME): a state
	// sets its limits, so that a path whose every device allows big packets can be built.
	Name string `yaml:"name"`
}

// Endpoint returns an internal port as a device of the topology.
func (p Port) Endpoint() Endpoint {
	ns := p.NS
	if ns == "" {
		ns = OVSNamespace
	}
	return Endpoint{NS: ns, Name: p.Internal, Addrs: p.Addrs}
}

// MaxBridgeNameLen keeps RUNID-NAME within an interface name (the bridge's own port).
const MaxBridgeNameLen = 7

// Endpoint is one network device in one namespace with its addresses (CIDR notation).
type Endpoint struct {
	NS    string   `yaml:"ns"`
	Name  string   `yaml:"name"`
	Addrs []string `yaml:"addrs"`
}

// Ref is the scenario-wide name of a device: "ns/dev".
func (e Endpoint) Ref() string { return e.NS + "/" + e.Name }

// State is one configuration of the devices to measure in.
type State struct {
	Name string `yaml:"name"`
	// Settings are what the state sets, by the keys of the setting kinds (devices, offloads,
	// qdiscs, xdp, sysctls, routes: setting.go and each kind's setting_KIND.go), which sit in
	// the state's mapping beside its own keys.
	Settings Settings `yaml:",plugins"`
	// CompareTo names the state this one is compared with; default: the first state.
	CompareTo string `yaml:"compare_to"`
	// Optional: when the kernel cannot apply this state, the run measures the others and
	// reports this one as unavailable, instead of ending with exit 4.
	Optional bool `yaml:"optional"`
}

// Rate is a bit rate written like tc: 5gbit, 500mbit, 100kbit, or bits per second.
type Rate uint64

var rateUnits = []unit{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}

// UnmarshalScalar implements scalarDecoder.
func (r *Rate) UnmarshalScalar(s string) error {
	v, err := parseScaled(s, rateUnits)
	if errors.Is(err, errNotScaled) {
		return fmt.Errorf("%q is not a rate (e.g. 5gbit, 500mbit)", s)
	}
	*r = Rate(v)
	return err
}

type unit struct {
	suffix string
	scale  float64
}

// errNotScaled: the text is no positive number with a unit; the caller names the kind of value.
var errNotScaled = errors.New("not a scaled number")

// parseScaled reads a positive number with an optional unit suffix, as tc writes them, as a
// whole number of the last unit (bits, bytes); the longer suffixes come first in units. NaN
// and infinities are errNotScaled, and a value of 2^64 units or more is refused: Go leaves
// the conversion of either to uint64 undefined (2^63 on amd64), which made "inf" and "1e30"
// rates of 9.2 exabits a second.
func parseScaled(s string, units []unit) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSuffix(t, u.suffix), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, errNotScaled
	}
	base := units[len(units)-1].suffix
	switch v *= scale; {
	case v >= 1<<64:
		return 0, fmt.Errorf("%q exceeds %d%s (2^64-1)", s, uint64(math.MaxUint64), base)
	case v < 1:
		return 0, fmt.Errorf("%q is below 1%s", s, base)
	}
	return uint64(v), nil
}

func (r Rate) String() string {
	for _, u := range rateUnits {
		if float64(r) >= u.scale && math.Mod(float64(r), u.scale) == 0 {
			return fmt.Sprintf("%d%s", uint64(float64(r)/u.scale), u.suffix)
		}
	}
	return fmt.Sprintf("%dbit", uint64(r))
}

// Size is a size in bytes written like tc: 1mb, 256kb, or bytes.
type Size uint64

// UnmarshalScalar implements scalarDecoder.
func (z *Size) UnmarshalScalar(s string) error {
	v, err := parseScaled(s, []unit{{"mb", 1 << 20}, {"kb", 1 << 10}, {"b", 1}})
	if errors.Is(err, errNotScaled) {
		return fmt.Errorf("%q is not a size (e.g. 1mb, 256kb)", s)
	}
	*z = Size(v)
	return err
}

func (z Size) String() string {
	switch {
	case z%(1<<20) == 0:
		return fmt.Sprintf("%dmb", z>>20)
	case z%(1<<10) == 0:
		return fmt.Sprintf("%dkb", z>>10)
	}
	return fmt.Sprintf("%db", uint64(z))
}

// Switch is an offload setting: on/off (or true/false) in YAML.
type Switch bool

// UnmarshalScalar implements scalarDecoder.
func (s *Switch) UnmarshalScalar(v string) error {
	switch strings.ToLower(v) {
	case "on", "true":
		*s = true
	case "off", "false":
		*s = false
	default:
		return fmt.Errorf("%q: want on or off", v)
	}
	return nil
}

// Expectation is one CI gate. Exactly one kind:
//   - change: a workload's metric in a state against the state it is compared with, e.g.
//     {workload: tcp6, metric: throughput, state: on, change: ">= +10%", significant: true};
//   - cv: the spread of a workload's metric in a state (every state if none is named), e.g.
//     {workload: tcp6, cv: "<= 5%"};
//   - value: a device attribute as read back in a state (every state if none), e.g.
//     {device: client/eth0, attr: tso_max_size, value: ">= 524280"}.
type Expectation struct {
	Workload    string     `yaml:"workload"`
	Metric      string     `yaml:"metric"` // default: throughput
	State       string     `yaml:"state"`
	Change      *Condition `yaml:"change"`
	Significant *bool      `yaml:"significant"`
	CV          *Condition `yaml:"cv"`
	Device      string     `yaml:"device"`
	Attr        string     `yaml:"attr"`
	// Evidence names a per-sample figure of the device's counters (EvidenceNames), e.g.
	// big_tx: the mean over the state's samples must hold Value.
	Evidence string     `yaml:"evidence"`
	Value    *Condition `yaml:"value"`
}

// Condition is a comparison with a number, e.g. ">= +10%", "<= 5%", ">= 524280".
type Condition struct {
	Op      string  // >=, <=, >, <, ==
	Value   float64 // a fraction when Percent
	Percent bool
	Text    string
}

// UnmarshalScalar implements scalarDecoder.
func (c *Condition) UnmarshalScalar(s string) error {
	t := strings.TrimSpace(s)
	for _, op := range []string{">=", "<=", "==", ">", "<"} {
		if strings.HasPrefix(t, op) {
			c.Op, t = op, strings.TrimSpace(t[len(op):])
			break
		}
	}
	if c.Op == "" {
		return fmt.Errorf("%q: want a comparison such as \">= +10%%\" or \"<= 5%%\" or \">= 524280\"", s)
	}
	if strings.HasSuffix(t, "%") {
		c.Percent, t = true, strings.TrimSuffix(t, "%")
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(t, "+"), 64)
	if err != nil {
		return fmt.Errorf("%q: %q is not a number", s, t)
	}
	if c.Percent {
		v /= 100
	}
	c.Value, c.Text = v, strings.TrimSpace(s)
	return nil
}

// Holds reports whether x satisfies the condition (x a fraction for percentages).
func (c Condition) Holds(x float64) bool {
	const eps = 1e-12
	switch c.Op {
	case ">=":
		return x >= c.Value-eps
	case "<=":
		return x <= c.Value+eps
	case ">":
		return x > c.Value
	case "<":
		return x < c.Value
	}
	return x == c.Value
}

// Percent is a percentage written "5%" (or a plain fraction, 0.05).
type Percent float64

// UnmarshalScalar implements scalarDecoder.
func (p *Percent) UnmarshalScalar(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("%q is not a percentage (e.g. 5%%)", s)
	}
	*p = Percent(v * scale)
	return nil
}

// Case is one concrete scenario of a matrix.
type Case struct {
	Values   []MatrixValue // in the order of the matrix keys; empty without a matrix
	Scenario *Scenario
}

// MatrixValue is one variable's value in a case.
type MatrixValue struct{ Name, Value string }

// Label names a case, e.g. "mtu=8000"; "" without a matrix.
func (c Case) Label() string {
	parts := make([]string, len(c.Values))
	for i, v := range c.Values {
		parts[i] = v.Name + "=" + v.Value
	}
	return strings.Join(parts, " ")
}

// Map returns the case's values by name.
func (c Case) Map() map[string]string {
	m := map[string]string{}
	for _, v := range c.Values {
		m[v.Name] = v.Value
	}
	return m
}

// Baseline returns the name of the state a state is compared with.
func (s *Scenario) Baseline(st State) string {
	if st.CompareTo != "" {
		return st.CompareTo
	}
	return s.States[0].Name
}

// DeviceSettings are the knobs a state sets on one device, by name (the registry in package
// knobs); a knob left out means "as the device was created", so that no state inherits
// values from the state measured before it.
type DeviceSettings map[string]uint32

// KnownKeys are the keys the decoder accepts: the settable knobs.
func (DeviceSettings) KnownKeys() []string { return knobs.SettableNames() }

// Duration is a time.Duration written as "15s" (or a plain number of seconds) in YAML.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Seconds returns d in whole seconds, the unit iperf3 and netperf take.
func (d Duration) Seconds() int { return int(time.Duration(d) / time.Second) }

// String prints d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalScalar implements scalarDecoder.
func (d *Duration) UnmarshalScalar(s string) error {
	if s == "" {
		return fmt.Errorf("empty duration")
	}
	if strings.Trim(s, "0123456789") == "" {
		var n int64
		if _, err := fmt.Sscan(s, &n); err != nil {
			return err
		}
		*d = Duration(time.Duration(n) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. 15s)", s)
	}
	*d = Duration(v)
	return nil
}

// Defaults applied by the loader where a scenario is silent; each tool has its own too.
const (
	DefaultRuns     = 6
	DefaultMaxRuns  = 20 // for runs: auto
	AutoRuns        = -1 // runs: auto, as decoded
	DefaultOrder    = OrderAlternate
	DefaultDuration = 10 * time.Second // a run's measured time, for every tool
)

// Orders of states within the rounds.
const (
	OrderAlternate = "alternate" // every round A B (C ...)
	OrderABBA      = "abba"      // rounds alternate A B, B A: cancels a linear drift
	OrderRandom    = "random"    // a seeded random permutation per round
)

// MaxIfNameLen is IFNAMSIZ - 1; the knobs' kernel limits are in package knobs.
const MaxIfNameLen = 15

// Pos is a place in a scenario file.
type Pos struct{ Line, Col int }

// Devices returns every device the topology creates, in the order it creates them: the
// links stage by stage, then the ports of Open vSwitch.
func (s *Scenario) Devices() []Endpoint {
	var out []Endpoint
	for _, stage := range LinkStages {
		for _, l := range s.Topology.Links {
			if spec := l.Spec(); spec != nil && spec.Stage() == stage {
				out = append(out, spec.Devices()...)
			}
		}
	}
	if o := s.Topology.OVS; o != nil {
		for _, b := range o.Bridges {
			for _, p := range b.Ports {
				switch {
				case p.Internal != "":
					out = append(out, p.Endpoint())
				case p.Veth != nil:
					out = append(out, *p.Veth)
					if p.Name != "" {
						out = append(out, Endpoint{NS: OVSNamespace, Name: p.Name})
					}
				}
			}
		}
	}
	return out
}

// SetAuto makes the runs adaptive, with at most max rounds (0: DefaultMaxRuns).
func (s *Scenario) SetAuto(max int) {
	if max == 0 {
		max = DefaultMaxRuns
	}
	s.Adaptive, s.Runs, s.MaxRuns = true, max, max
}

// StateNames returns the names of the states in order.
func (s *Scenario) StateNames() []string {
	names := make([]string, len(s.States))
	for i, st := range s.States {
		names[i] = st.Name
	}
	return names
}

// EvidenceNames are the per-sample device figures an expectation can name (expect:
// evidence:), as the result's counters hold them.
var EvidenceNames = []string{"big_tx", "big_rx", "tx_bytes_per_packet", "rx_bytes_per_packet", "tx_packets", "rx_packets", "tx_bytes", "rx_bytes", "qdisc_drops", "qdisc_requeues", "qdisc_overlimits"}

// TextSHA256 is the hex sha256 of a scenario's text: what a result records (scenario.sha256)
// and what compare, the history and a bisect baseline match results by.
func TextSHA256(text []byte) string {
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}
