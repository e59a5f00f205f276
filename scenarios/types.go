// Package scenarios defines the scenario format (YAML), loads it strictly with positioned
// errors, validates it, and ships the scenario library embedded in the binary.
package scenarios

import (
	"fmt"
	"strings"
	"time"
)

// Scenario is one experiment: a topology, the states to compare and the workloads to run.
type Scenario struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Reference   string     `yaml:"reference"` // the seed or source of the published numbers
	Topology    Topology   `yaml:"topology"`
	States      []State    `yaml:"states"` // ordered; the first is the baseline
	Workloads   []Workload `yaml:"workloads"`
	Runs        int        `yaml:"runs"`  // measured runs per state and workload
	Order       string     `yaml:"order"` // alternate | abba | random
	Seed        *int64     `yaml:"seed"`  // for order: random

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
}

// Link is one link entry; exactly one kind is set. vxlan and OVS follow in later versions.
type Link struct {
	Veth *Veth `yaml:"veth"`
}

// Veth is a veth pair with one end in each of two namespaces (`ip link add ... type veth peer`).
type Veth struct {
	A   Endpoint `yaml:"a"`
	B   Endpoint `yaml:"b"`
	MTU int      `yaml:"mtu"` // 0: the kernel default (1500)
}

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
	Name    string                    `yaml:"name"`
	Devices map[string]DeviceSettings `yaml:"devices"` // key: "ns/dev"
}

// DeviceSettings are the knobs a state sets on one device; nil means "as the device was
// created", so that no state inherits values from the state measured before it.
type DeviceSettings struct {
	MTU            *uint32 `yaml:"mtu"`
	GSOMaxSize     *uint32 `yaml:"gso_max_size"`
	GSOMaxSegs     *uint32 `yaml:"gso_max_segs"`
	GROMaxSize     *uint32 `yaml:"gro_max_size"`
	GSOIPv4MaxSize *uint32 `yaml:"gso_ipv4_max_size"`
	GROIPv4MaxSize *uint32 `yaml:"gro_ipv4_max_size"`
}

// Workload is one measurement run in every state; exactly one tool is set.
type Workload struct {
	Name   string  `yaml:"name"`
	Iperf3 *Iperf3 `yaml:"iperf3"`
}

// Iperf3 describes one iperf3 client/server pair. The address family follows Server.Addr.
type Iperf3 struct {
	Client   Side     `yaml:"client"`
	Server   Side     `yaml:"server"`
	Duration Duration `yaml:"duration"` // -t: measured time, after the omitted start
	Omit     Duration `yaml:"omit"`     // -O: seconds at the start left out of the result
	Port     int      `yaml:"port"`     // -p: server port
	CPort    int      `yaml:"cport"`    // --cport: fixed client port, 0 for an ephemeral one
	Streams  int      `yaml:"streams"`  // -P
}

// Side is where one end of a workload runs.
type Side struct {
	NS   string `yaml:"ns"`
	CPU  *int   `yaml:"cpu"`  // pinned CPU (-A); nil: not pinned
	Addr string `yaml:"addr"` // server only: the address the client connects to
}

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

// Defaults applied by the loader where a scenario is silent.
const (
	DefaultRuns     = 6
	DefaultOrder    = OrderAlternate
	DefaultDuration = 10 * time.Second
	DefaultOmit     = 2 * time.Second
	DefaultPort     = 5201
	DefaultStreams  = 1
)

// Orders of states within the rounds.
const (
	OrderAlternate = "alternate" // every round A B (C ...)
	OrderABBA      = "abba"      // rounds alternate A B, B A: cancels a linear drift
	OrderRandom    = "random"    // a seeded random permutation per round
)

// Kernel limits checked by validation (include/linux/netdevice.h, net/core/rtnetlink.c).
const (
	MaxGSOSize   = 524280 // GSO_MAX_SIZE = 8 * 65535
	MaxGROSize   = 524280 // GRO_MAX_SIZE
	MinGSOSize   = 193    // MAX_TCP_HEADER + 1 on this kernel; smaller is ERANGE
	MaxGSOSegs   = 65535  // GSO_MAX_SEGS
	MinMTU       = 68     // ETH_MIN_MTU (IPv4 minimum)
	MaxMTU       = 65535  // ETH_MAX_MTU (veth's max_mtu)
	MaxIfNameLen = 15     // IFNAMSIZ - 1
)

// Pos is a place in a scenario file.
type Pos struct{ Line, Col int }

// Devices returns every device the topology creates, in topology order.
func (s *Scenario) Devices() []Endpoint {
	var out []Endpoint
	for _, l := range s.Topology.Links {
		if l.Veth != nil {
			out = append(out, l.Veth.A, l.Veth.B)
		}
	}
	return out
}

// StateNames returns the names of the states in order.
func (s *Scenario) StateNames() []string {
	names := make([]string, len(s.States))
	for i, st := range s.States {
		names[i] = st.Name
	}
	return names
}
