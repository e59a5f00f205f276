// Package knobs is the one registry of the device attributes nsperf sets and reads back:
// their scenario (YAML) names, ranges, iproute2 spelling, the order they are applied in,
// what bounds them, and the netlink library's field and setter for each. Scenarios, the
// plan, the live topology, the probe and the renderers all walk this table; adding a knob is
// one entry here plus tests.
package knobs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind groups the attributes for ordering and reports.
type Kind int

// Kinds, in the order reports list them (`nsperf probe`, inheritance).
const (
	Limit    Kind = iota // read only: what the driver allows (tso_max_size)
	Size                 // a GSO/GRO limit a state sets
	Link                 // a link property a state sets (mtu)
	NAPI                 // how the device's NAPI polls (sysfs only: threaded, gro_flush_timeout)
	Steering             // which CPUs process what the device receives (sysfs only: rps_cpus)
)

// Knob is one device attribute.
type Knob struct {
	// Name is the scenario key, the word of `ip link set dev DEV NAME N` and of
	// `ip -d link show`, and the JSON name in results.
	Name string
	Kind Kind
	// Netlink names the vishvananda/netlink LinkAttrs field that reads the attribute back;
	// for a settable knob, Handle.LinkSet<Netlink> sets it.
	Netlink string
	// Min and Max are what any kernel accepts; Range explains the bounds after the value in
	// a validation message ("600000 is outside ...").
	Min, Max uint32
	Range    string
	// IPv6Min: a device with IPv6 addresses needs at least this (the MTU's 1280).
	IPv6Min uint32
	// IPv4 marks the IPv4 BIG TCP sizes (Linux 6.3): applied after the plain sizes, because
	// setting a plain size of 64K or less also overwrites the IPv4 one; absent on older
	// kernels, which then report them as 0.
	IPv4 bool
	// Bound names the read-only attribute that caps the knob on a device: the kernel refuses
	// larger values with EINVAL.
	Bound string
	// Inherited: a device created over a lower device (vxlan dev U) may take it from there.
	Inherited bool
	// Sysfs names the file in /sys/class/net/DEV/ of an attribute that has no netlink
	// attribute: it is read and set there, from the device's own namespace, and Netlink is "".
	// A pattern ("queues/rx-*/rps_cpus") names one file per queue: each is set, and they
	// must agree when read back.
	Sysfs string
	// CPUMask: the sysfs file holds a mask of CPUs in hexadecimal (bit N is CPU N), read in
	// words of 32 bits separated by commas ("00000000,00000002"); a state writes it as a
	// number (0x2, or 2).
	CPUMask bool
	// Kconfig names the option (without CONFIG_) a kernel needs for the knob beyond what
	// every run needs ("RPS"), for the guests' config fragments.
	Kconfig string
	// BigTCP marks the limits of a GSO or GRO packet's size in bytes, which BIG TCP raises
	// above 64 KiB: a state that sets one concerns its device's packet sizes, which the
	// evidence then shows, and `nsperf probe` tries each at BigTCPSize.
	BigTCP bool
}

// BigTCPSize is the size BIG TCP's patches and the probe use (185000 bytes: net/core's
// selftests and the BIG TCP merge's commit message).
const BigTCPSize = 185000

// SizeLimits are the names of the BigTCP knobs, in registry order.
func SizeLimits() []string {
	var out []string
	for _, k := range All {
		if k.BigTCP {
			out = append(out, k.Name)
		}
	}
	return out
}

// Settable reports whether a state may set the knob.
func (k Knob) Settable() bool { return k.Kind != Limit }

// Check returns why a value is out of range for a device (ipv6: it has IPv6 addresses),
// or "".
func (k Knob) Check(v uint32, ipv6 bool) string {
	if v < k.Min || v > k.Max {
		return fmt.Sprintf("%d %s", v, k.Range)
	}
	if ipv6 && v < k.IPv6Min {
		return fmt.Sprintf("%d is below %d, the IPv6 minimum, and the device has IPv6 addresses", v, k.IPv6Min)
	}
	return ""
}

// Kernel limits (include/linux/netdevice.h, net/core/rtnetlink.c, this kernel's MAX_TCP_HEADER).
const (
	MaxGSOSize = 524280 // GSO_MAX_SIZE = 8 * 65535
	LegacyGSO  = 65536  // GSO_LEGACY_MAX_SIZE: a device without BIG TCP
	MaxGROSize = 524280 // GRO_MAX_SIZE
	MinGSOSize = 193    // MAX_TCP_HEADER + 1 on this kernel; smaller is ERANGE
	MaxGSOSegs = 65535  // GSO_MAX_SEGS
	MinMTU     = 68     // ETH_MIN_MTU (IPv4 minimum)
	MaxMTU     = 65535  // ETH_MAX_MTU (veth's max_mtu)
	MinIPv6MTU = 1280   // IPV6_MIN_MTU
)

var (
	gsoRange = fmt.Sprintf("is outside %d..%d (below %d the kernel answers ERANGE; above %d no kernel accepts)", MinGSOSize, MaxGSOSize, MinGSOSize, MaxGSOSize)
	groRange = fmt.Sprintf("exceeds %d, the largest GRO size any kernel accepts", MaxGROSize)
)

// All lists every attribute in the order a state applies them and messages list them.
var All = []Knob{
	{Name: "mtu", Kind: Link, Netlink: "MTU", Min: MinMTU, Max: MaxMTU, IPv6Min: MinIPv6MTU,
		Range: fmt.Sprintf("is outside %d..%d", MinMTU, MaxMTU)},
	// NAPI's own, read and set through the device's sysfs (a veth has NAPI only with GRO or
	// XDP on its receiving end). threaded: its poll runs in a kernel thread of its own, not
	// in softirq; gro_flush_timeout: nanoseconds GRO holds packets past a poll that found
	// none (with napi_defer_hard_irqs: polls that may find none before the device's interrupt
	// comes back).
	{Name: "threaded", Kind: NAPI, Sysfs: "threaded", Max: 1, Range: "is neither 0 nor 1 (1: NAPI polls in a kernel thread)"},
	{Name: "gro_flush_timeout", Kind: NAPI, Sysfs: "gro_flush_timeout", Max: math.MaxUint32,
		Range: fmt.Sprintf("exceeds %d nanoseconds", uint32(math.MaxUint32))},
	{Name: "napi_defer_hard_irqs", Kind: NAPI, Sysfs: "napi_defer_hard_irqs", Max: math.MaxInt32,
		Range: fmt.Sprintf("exceeds %d (S32_MAX)", math.MaxInt32)},
	// Receive packet steering (Documentation/networking/scaling.rst): what a device receives
	// through netif_rx (a veth's packets, a driver without NAPI) or its NAPI poll is queued to
	// the backlog of a CPU of the mask, chosen by the flow's hash, instead of the CPU that
	// received it; 0 turns it off. One CPU keeps a flow's packets in one queue: a veth
	// whose sender transmits from two CPUs (the writer's and the one processing its ACKs)
	// otherwise queues them on both, whose backlogs drain independently (reordering).
	{Name: "rps_cpus", Kind: Steering, Sysfs: "queues/rx-*/rps_cpus", CPUMask: true, Kconfig: "RPS", Max: math.MaxUint32,
		Range: "sets CPUs above 31 (a mask of CPUs 0-31: 0x2 is CPU 1)"},
	{Name: "gso_max_size", Kind: Size, Netlink: "GSOMaxSize", Min: MinGSOSize, Max: MaxGSOSize, Range: gsoRange,
		Bound: "tso_max_size", Inherited: true, BigTCP: true},
	{Name: "gso_max_segs", Kind: Size, Netlink: "GSOMaxSegs", Min: 1, Max: MaxGSOSegs,
		Range: fmt.Sprintf("is outside 1..%d", MaxGSOSegs), Bound: "tso_max_segs", Inherited: true},
	{Name: "gro_max_size", Kind: Size, Netlink: "GROMaxSize", Max: MaxGROSize, Range: groRange, BigTCP: true},
	{Name: "gso_ipv4_max_size", Kind: Size, Netlink: "GSOIPv4MaxSize", Min: MinGSOSize, Max: MaxGSOSize, Range: gsoRange,
		IPv4: true, Bound: "tso_max_size", Inherited: true, BigTCP: true},
	{Name: "gro_ipv4_max_size", Kind: Size, Netlink: "GROIPv4MaxSize", Max: MaxGROSize, Range: groRange, IPv4: true, BigTCP: true},
	{Name: "tso_max_size", Kind: Limit, Netlink: "TSOMaxSize", Inherited: true},
	{Name: "tso_max_segs", Kind: Limit, Netlink: "TSOMaxSegs", Inherited: true},
}

// Lookup returns the knob of a name.
func Lookup(name string) (Knob, bool) {
	i := slices.IndexFunc(All, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return Knob{}, false
	}
	return All[i], true
}

// Names returns the names of all attributes, in registry order.
func Names() []string {
	out := make([]string, len(All))
	for i, k := range All {
		out[i] = k.Name
	}
	return out
}

// Settable returns the knobs a state may set, in the order they are applied.
func Settable() []Knob {
	return slices.DeleteFunc(slices.Clone(All), func(k Knob) bool { return !k.Settable() })
}

// SettableNames returns the names of the settable knobs, in order.
func SettableNames() []string {
	var out []string
	for _, k := range Settable() {
		out = append(out, k.Name)
	}
	return out
}

// ReportOrder returns all attributes as reports list them: limits, then sizes, then link
// properties, each group in registry order.
func ReportOrder() []Knob {
	out := slices.Clone(All)
	slices.SortStableFunc(out, func(a, b Knob) int { return int(a.Kind) - int(b.Kind) })
	return out
}

// Values are a device's attributes (or the knobs a state sets) by knob name.
type Values map[string]uint32

// Widen returns the values as results store them.
func (v Values) Widen() map[string]uint64 {
	out := make(map[string]uint64, len(v))
	for name, x := range v {
		out[name] = uint64(x)
	}
	return out
}

// SysfsText is v as the knob's sysfs file takes it: decimal, or hexadecimal for a CPU mask.
func (k Knob) SysfsText(v uint32) string {
	if k.CPUMask {
		return strconv.FormatUint(uint64(v), 16)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// ParseSysfs reads the knob's value from its sysfs file's text.
func (k Knob) ParseSysfs(text string) (uint32, error) {
	text = strings.TrimSpace(text)
	if !k.CPUMask {
		v, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is no number", text)
		}
		return uint32(v), nil
	}
	// Words of 32 bits, the most significant first: only the last may have bits set here.
	words := strings.Split(text, ",")
	for _, w := range words[:len(words)-1] {
		if strings.Trim(w, "0") != "" {
			return 0, fmt.Errorf("%q sets CPUs above 31", text)
		}
	}
	v, err := strconv.ParseUint(words[len(words)-1], 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is no CPU mask", text)
	}
	return uint32(v), nil
}

// SysfsKnobs are the knobs read and set through sysfs, in registry order.
func SysfsKnobs() []Knob {
	return slices.DeleteFunc(slices.Clone(All), func(k Knob) bool { return k.Sysfs == "" })
}
