package scenarios

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Setting is one kind of what a state sets (a state's devices, offloads, qdiscs, xdp,
// sysctls, routes), as one state sets it: the value under the kind's key in the state's
// mapping, by target. A kind is a type implementing Setting in a file of its own
// (setting_KIND.go) that registers itself from init (registerSetting); with its applier in
// package topo (topo/setting_KIND.go) that is the whole kind: the loader, validation, the
// plan and its shell text, the guests' modules, compare, claims and reproduce walk the
// registry and never name a kind. Static facts (Key, Scope, Phases, MayDiffer) are the same
// for an empty value.
type Setting interface {
	// Key is the kind's key in a state's mapping: sysctls.
	Key() string
	// Scope says what the kind's targets are: namespaces (and what is under one: a route),
	// whose steps come first, or devices, whose steps come once for every device of the
	// topology, and again for the devices created anew in a state.
	Scope() Scope
	// Phases place the kind's steps among the other kinds' (PhaseLimits ...), one step a
	// target for each; the plan orders them by scope, phase, then key.
	Phases() []int
	// Targets are what the value sets something on, sorted: namespaces, devices ("ns/dev"),
	// or "ns/..." below a namespace (a route: client/198.18.0.0/24).
	Targets() []string
	// Check validates the value against the topology: c says where it stands and what the
	// topology has, and takes the problems.
	Check(c *SettingCheck)
	// Command is the shell equivalent of giving a target the value's setting at a phase: ""
	// where it sets nothing there, the live side then putting back the target's value as
	// built.
	Command(target string, phase int, sh Shell) string
	// Kernel is what the value needs of a kernel: modules a guest loads where it has them
	// (a qdisc's sch_fq, a congestion control's tcp_bbr), and options besides (XDP's
	// BPF_SYSCALL), with why.
	Kernel() KernelNeeds
	// MayDiffer says that two results' states of one name may differ in this kind and still
	// compare: a qdisc cap is how a known change is injected to calibrate a comparison.
	MayDiffer() bool
}

// KernelNeeds are what a setting needs of a kernel.
type KernelNeeds struct {
	Modules []KernelModule // loaded in a guest where the kernel has them
	Options []string       // without CONFIG_, needed besides the modules'
	Why     string         // for the options: "a state attaches an XDP program"
}

// Scope is what a setting kind's targets are.
type Scope int

const (
	NamespaceScope Scope = iota // namespaces, or "ns/..." below one
	DeviceScope                 // devices, "ns/dev"
)

// Shell is what a setting's Command needs to write its shell line.
type Shell struct {
	Scenario *Scenario
	NS       func(ns string) string // a scenario namespace's full name (`ip netns exec NAME`)
	IP       func(ns string) string // `ip -n NAME`, or `ip` for the namespace nsperf runs in
}

// The phases of settings, in the order their steps run: a namespace's, then, on each group
// of devices, the devices'.
const (
	PhaseSysctls    = 1  // a namespace's sysctls
	PhaseRoutes     = 2  // route attributes (a route's congctl may need a sysctl)
	PhaseLimits     = 10 // sizes and MTU-like knobs (`ip link set`): IPv6 sizes before IPv4 ones
	PhaseQdisc      = 20 // the root qdisc
	PhaseNAPIReset  = 30 // sysfs knobs a state leaves out, while the device still has its NAPI
	PhaseFeatures   = 40 // ethtool features
	PhaseXDP        = 50 // XDP programs
	PhaseNAPI       = 60 // the state's own sysfs knobs, once features and XDP gave the NAPI
	PhaseDeviceLast = 90 // a kind that needs every other set first
)

// settingMakers make each kind's empty value, by key: the registry of setting kinds.
var settingMakers = map[string]func() Setting{}

// registerSetting adds a setting kind; each kind's file calls it from init.
func registerSetting(make func() Setting) {
	key := make().Key()
	if _, dup := settingMakers[key]; dup {
		panic("scenarios: setting kind " + key + " registered twice")
	}
	settingMakers[key] = make
}

// RegisterSetting adds a setting kind defined outside this package: a test's.
func RegisterSetting(make func() Setting) { registerSetting(make) }

// SettingKeys are the keys of the setting kinds, sorted.
func SettingKeys() []string { return slices.Sorted(maps.Keys(settingMakers)) }

// SettingKinds are an empty value of each kind, namespace kinds first, then by first phase.
func SettingKinds() []Setting {
	var out []Setting
	for _, key := range SettingKeys() {
		out = append(out, settingMakers[key]())
	}
	slices.SortStableFunc(out, func(a, b Setting) int {
		return cmp.Or(cmp.Compare(a.Scope(), b.Scope()), cmp.Compare(firstPhase(a), firstPhase(b)))
	})
	return out
}

// NewSetting is an empty value of a kind, nil for no such kind.
func NewSetting(key string) Setting {
	if make, ok := settingMakers[key]; ok {
		return make()
	}
	return nil
}

func firstPhase(s Setting) int {
	if p := s.Phases(); len(p) > 0 {
		return p[0]
	}
	return 0
}

// Settings are what a state sets, by kind key. The decoder reads the kinds' keys beside the
// state's own (pluginSet).
type Settings map[string]Setting

func (Settings) pluginKeys() []string { return SettingKeys() }

func (Settings) newPlugin(key string) any { return settingMakers[key]() }

// Of is the state's value of a kind, or the kind's empty value when the state leaves the
// kind out.
func (s Settings) Of(key string) Setting {
	if v, ok := s[key]; ok && v != nil {
		return v
	}
	return NewSetting(key)
}

// SettingTargets are the targets any state of the scenario sets a kind on, sorted: those a
// state that leaves them out puts back as built.
func (s *Scenario) SettingTargets(key string) []string {
	seen := map[string]bool{}
	for _, st := range s.States {
		if v, ok := st.Settings[key]; ok && v != nil {
			for _, t := range v.Targets() {
				seen[t] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// SplitTarget cuts a target at its first slash: a device's namespace and name, or a
// namespace and what is below it; a namespace alone has no rest.
func SplitTarget(target string) (ns, rest string) {
	ns, rest, _ = strings.Cut(target, "/")
	return ns, rest
}

// SettingCheck is what a kind's Check is given: where the value stands and what the
// topology has, and where its problems go.
type SettingCheck struct {
	Path     string    // states[1].sysctls
	Scenario *Scenario // File is where relative paths start
	v        *validator
	t        *topologyIndex
}

// Problem records a problem at Path, or below it: sub "client.net.ipv4.tcp_autocorking"
// (none: at Path).
func (c *SettingCheck) Problem(sub, format string, args ...any) {
	c.v.add(joinPath(c.Path, sub), format, args...)
}

// Namespace says whether the topology has a namespace, recording the problem at sub when
// it has not.
func (c *SettingCheck) Namespace(sub, ns string) bool {
	if !c.t.namespaces[ns] {
		c.Problem(sub, "no namespace %s in the topology%s", ns, have(c.t.namespaces))
		return false
	}
	return true
}

// Device says whether the topology has a device ("ns/dev"), recording the problem at sub when
// it has not; ipv6: the device has an IPv6 address.
func (c *SettingCheck) Device(sub, ref string) (ok, ipv6 bool) {
	d := c.t.devices[ref]
	if d == nil {
		c.Problem(sub, "no device %s in the topology%s", ref, have(c.t.devices))
		return false, false
	}
	return true, d.ipv6
}

// checkSettings validates each setting of a state with its kind's Check.
func (v *validator) checkSettings(path string, st State, t *topologyIndex) {
	for _, key := range slices.Sorted(maps.Keys(st.Settings)) {
		if s := st.Settings[key]; s != nil {
			s.Check(&SettingCheck{Path: path + "." + key, Scenario: v.s, v: v, t: t})
		}
	}
}

// Named is a setting kind whose value names what it sets, as a message writes those names:
// a route's initrwnd, a sysctl's tcp_rmem (its last part), a device's gso_max_size, a
// qdisc's fq. reproduce prefers a scenario whose states set what a message names.
type Named interface{ Names() []string }

// StateNames are the names of what a state's settings set (Named), sorted.
func StateNames(st State) []string {
	var out []string
	for _, key := range SettingKeys() {
		if n, ok := st.Settings[key].(Named); ok {
			out = append(out, n.Names()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Dropper is a setting kind whose value may drop packets on purpose (netem's loss): the
// devices ("ns/dev") it drops them on.
type Dropper interface{ DropsOn() []string }

// Toggler is a setting kind whose value says what it toggles in the words reproduce matches
// a message's toggles with: "sysctl net.ipv4.tcp_autocorking", "qdisc fq", "offloads off".
type Toggler interface{ Toggles() []string }

// ToggleReader is a setting kind that reads a command a message shows (`sysctl -w ...`) as
// its own setting: claims asks every kind of each command it finds.
type ToggleReader interface {
	ReadToggle(cmd string) (SettingToggle, bool)
}

// SettingToggle is a command read as a kind's setting: the device it names ("" for none) and
// what it sets, by the kind's names.
type SettingToggle struct {
	Device string
	Values map[string]string
	// Measured: what a message shows after the command is measured with it (a device's limit
	// raised before the run), where a sysctl's or a qdisc's command is as often the setup of
	// both states, the labels around deciding.
	Measured bool
}

// ToggleDrafter is a setting kind that drafts its part of a scenario's two states, "before"
// and "after", from the toggles a message shows of it (ReadToggle's, in the message's order),
// for the drafted topology on: `nsperf reproduce --write-scenario`.
type ToggleDrafter interface {
	DraftToggles(shown []SettingToggle, on DraftTopology) SettingDraft
}

// DraftTopology is what a drafted scenario's topology has: the devices a device's toggle is
// drafted on (both ends), the namespaces, and the sender's device (a qdisc's egress).
type DraftTopology struct {
	Devices    []string // client/eth0, server/eth0
	Namespaces []string // client, server
	Sender     string   // client/eth0
}

// SettingDraft is a kind's part of the drafted states.
type SettingDraft struct {
	// Before and After are YAML under a state, its keys at column 0 ("sysctls:\n  client:
	// {...}\n"), "" for nothing.
	Before, After string
	// Toggles are what a shipped scenario's states must toggle (Toggler's words) for the
	// message's toggles of this kind to be measured there rather than in the draft; none where
	// every scenario models them (a device's limits and features are a scenario's states).
	Toggles []string
	// Notes are what was not drafted, and why, as comments.
	Notes []string
	// IPv6Only: the toggles concern IPv6 alone (gso_max_size without its IPv4 twin): with no
	// family in the claims, the draft measures IPv6.
	IPv6Only bool
}

// DraftPerTarget writes a kind's draft YAML: key, then each target with the same flow mapping
// of values (FlowMap); "" for no values.
func DraftPerTarget(key string, targets []string, values map[string]string, comment string) string {
	if len(values) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(key + ":\n")
	for _, t := range targets {
		b.WriteString("  " + t + ": {" + FlowMap(values) + "}")
		if comment != "" {
			b.WriteString("  # " + comment)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// plainKeyRe: a YAML key that needs no quotes.
var plainKeyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// FlowMap writes the inside of a YAML flow mapping of m, its keys in order, strings other than
// integers quoted ("off" is a boolean to YAML 1.1 readers).
func FlowMap(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if _, err := strconv.Atoi(v); err != nil {
			v = strconv.Quote(v)
		}
		if !plainKeyRe.MatchString(k) {
			k = strconv.Quote(k)
		}
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, ", ")
}

// StateToggles are what a state's settings toggle (Toggler), sorted.
func StateToggles(st State) []string {
	var out []string
	for _, key := range SettingKeys() {
		if t, ok := st.Settings[key].(Toggler); ok {
			out = append(out, t.Toggles()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
