package vm

import (
	"slices"

	"github.com/nsperf/nsperf/scenarios"
)

// Needs are the kernel modules a scenario needs in the guest: required ones must be there
// (as modules or built in), optional ones are loaded when they are. Open vSwitch wants its
// kernel datapath (openvswitch) but runs its userspace one without it, unless the scenario
// names datapath: system.
func Needs(s *scenarios.Scenario) (required, optional []string) {
	add := func(list *[]string, m ...string) {
		for _, x := range m {
			if !slices.Contains(*list, x) {
				*list = append(*list, x)
			}
		}
	}
	// The runner lists TCP sockets through sock_diag before each run (TIME_WAIT of the
	// fixed client port).
	add(&required, "tcp_diag")
	for _, c := range s.Expand() {
		t := c.Scenario.Topology
		for _, l := range t.Links {
			for _, m := range l.Spec().Modules() {
				add(&required, m.Name)
			}
		}
		// A tool that is the kernel's own (pktgen) is its module.
		for _, w := range c.Scenario.Workloads {
			if k, ok := w.Spec().(scenarios.KernelTool); ok {
				for _, m := range k.Kernel().Modules {
					add(&required, m.Name)
				}
			}
		}
		if t.OVS != nil {
			add(&required, "veth") // a bridge's ports to namespaces are veth pairs
			if t.OVS.Datapath == scenarios.DatapathSystem {
				add(&required, "openvswitch")
			} else {
				add(&optional, "openvswitch")
			}
			add(&optional, "tun") // the userspace datapath's internal ports are tap devices
		}
		if len(scenarios.LimitDevices(c.Scenario.States)) > 0 {
			// Packets above 64 KiB are counted with an nftables netdev table (topo/counters.go);
			// without nf_tables the result says they were not counted.
			add(&optional, "nf_tables")
		}
		// A route's congestion control: the guest has no modprobe for the kernel to load
		// it with when the route is added.
		for _, cc := range c.Scenario.CongestionControls() {
			if m, _, ok := scenarios.CongestionModule(cc); ok {
				add(&optional, m)
			}
		}
		// What the states' settings need: a qdisc's module, a congestion control's.
		for _, need := range settingNeeds(c.Scenario) {
			for _, m := range need.Modules {
				add(&optional, m.Name)
			}
		}
	}
	return required, optional
}

// NICs are the emulated NICs a scenario's links need of the guest's machine (a NIC pair's),
// in pairs connected to each other: NICs[2k] and NICs[2k+1] share a hub. The cases of a
// matrix share a topology's links, so the first case's are every case's.
func NICs(s *scenarios.Scenario) [][]scenarios.EmulatedNIC {
	var out [][]scenarios.EmulatedNIC
	for _, l := range s.Topology.Links {
		if e, ok := l.Spec().(scenarios.Emulated); ok {
			out = append(out, e.EmulatedNICs())
		}
	}
	return out
}

// settingNeeds are what each setting of each state of a case needs of the kernel.
func settingNeeds(s *scenarios.Scenario) []scenarios.KernelNeeds {
	var out []scenarios.KernelNeeds
	for _, st := range s.States {
		for _, key := range scenarios.SettingKeys() {
			if v := st.Settings[key]; v != nil {
				out = append(out, v.Kernel())
			}
		}
	}
	return out
}

// ProbeNeeds are what `nsperf probe` looks at: every device kind it creates, the IP tunnels
// of every mode (scenarios.TunnelModes) among them; each is loaded when the kernel has it.
func ProbeNeeds() []string {
	out := []string{"veth", "vxlan", "openvswitch", "tun", "bridge", "geneve", "ipvlan", "macvlan", "tcp_diag"}
	for _, m := range scenarios.TunnelModes {
		if !slices.Contains(out, m.Module.Name) {
			out = append(out, m.Module.Name)
		}
	}
	return out
}

// PinnedCPUs is the number of CPUs a guest needs for every CPU the scenario pins to: the
// highest pinned CPU plus one, at least 1.
func PinnedCPUs(s *scenarios.Scenario) int {
	n := 1
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			for _, spec := range w.Instances() {
				client, server := spec.Ends()
				for _, sd := range []scenarios.Side{client, server} {
					if sd.CPU != nil && *sd.CPU+1 > n {
						n = *sd.CPU + 1
					}
				}
			}
		}
	}
	return n
}
