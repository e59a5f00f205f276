package coverage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/scenarios"
)

// TestShippedMap: the map that ships (make coverage-map) has every shipped scenario, agrees
// with what each scenario's link kinds declare (some function of each declared source ran),
// and sends a patch to TCP's output path and one to UDP's GRO to a scenario whose traffic
// runs the patched function.
func TestShippedMap(t *testing.T) {
	m, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shipped {
		if !m.Knows(s.Name) {
			t.Errorf("the map lacks %s: run make coverage-map", s.Name)
			continue
		}
		for _, src := range scenarios.KernelSources(s) {
			if len(m.RanFiles(s.Name, []string{src})) == 0 && !ranUnder(m, s.Name, src) {
				t.Errorf("%s declares %s, but no function of it ran there", s.Name, src)
			}
		}
	}
	for _, patch := range []Target{
		{Function: "tcp_write_xmit", File: "net/ipv4/tcp_output.c"},
		{Function: "udp_gro_receive", File: "net/ipv4/udp_offload.c"},
		{Function: "udp6_gro_receive", File: "net/ipv6/udp_offload.c"},
	} {
		var runs []string
		for _, s := range shipped {
			if strength, _ := m.Runs(s, []Target{patch}, []string{patch.File}); strength == 2 {
				runs = append(runs, s.Name)
			}
		}
		if len(runs) == 0 {
			t.Errorf("no shipped scenario runs %s (%s)", patch.Function, patch.File)
		}
		t.Logf("%s: %s", patch.Function, strings.Join(runs, ", "))
	}
}

// TestShippedMapNewPaths: each shipped scenario that adds a path of the stack is, by the map,
// one whose traffic runs that path's functions: a qdisc, the bridge, forwarding, the tunnels,
// XDP's NAPI path, threaded NAPI, netkit, connection setup and timewait.
func TestShippedMapNewPaths(t *testing.T) {
	m, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for scenario, patched := range map[string][]Target{
		"veth-fq": {{Function: "fq_dequeue", File: "net/sched/sch_fq.c"}},
		// The server's end steers what it receives to the server's CPU (rps_cpus).
		"veth-bigtcp":   {{Function: "get_rps_cpu", File: "net/core/dev.c"}, {Function: "store_rps_map", File: "net/core/net-sysfs.c"}},
		"bridge-bigtcp": {{Function: "br_forward", File: "net/bridge/br_forward.c"}, {Function: "br_handle_frame", File: "net/bridge/br_input.c"}},
		"routed-bigtcp": {{Function: "ip_forward", File: "net/ipv4/ip_forward.c"}, {Function: "ip6_forward", File: "net/ipv6/ip6_output.c"}},
		"geneve-bigtcp": {{Function: "geneve_xmit", File: "drivers/net/geneve.c"}},
		"veth-xdp":      {{Function: "veth_poll", File: "drivers/net/veth.c"}},
		"veth-napi":     {{Function: "napi_threaded_poll", File: "net/core/dev.c"}},
		"netkit-bigtcp": {{Function: "netkit_xmit", File: "drivers/net/netkit.c"}},
		"veth-netperf":  {{Function: "tcp_v4_connect", File: "net/ipv4/tcp_ipv4.c"}, {Function: "tcp_time_wait", File: "net/ipv4/tcp_minisocks.c"}},
		// l3 mode: out through the lower device's namespace, in by destination address.
		"ipvlan-l3": {{Function: "ipvlan_process_v4_outbound", File: "drivers/net/ipvlan/ipvlan_core.c"}, {Function: "ipvlan_handle_mode_l3", File: "drivers/net/ipvlan/ipvlan_core.c"}},
		// UDP_SEGMENT sends, segmented by the stack in the state that turns the device's off.
		"veth-udpgso": {{Function: "__udp_gso_segment", File: "net/ipv4/udp_offload.c"}, {Function: "udp_cmsg_send", File: "net/ipv4/udp.c"}},
		// The state's `ip route change` and the window it sets at each connection's start.
		"veth-initcwnd": {{Function: "inet_rtm_newroute", File: "net/ipv4/fib_frontend.c"}, {Function: "tcp_init_cwnd", File: "net/ipv4/tcp_input.c"}},
		"ip-tunnels": {{Function: "ipip_tunnel_xmit", File: "net/ipv4/ipip.c"}, {Function: "ipgre_xmit", File: "net/ipv4/ip_gre.c"},
			{Function: "sit_tunnel_xmit", File: "net/ipv6/sit.c"}, {Function: "ip6gre_tunnel_xmit", File: "net/ipv6/ip6_gre.c"},
			{Function: "ip6_tnl_xmit", File: "net/ipv6/ip6_tunnel.c"}},
		// A path with delay and loss: netem's queue, loss recovery and TCP's write timer
		// (the loss probe and the retransmission timeout).
		"veth-netem": {{Function: "netem_enqueue", File: "net/sched/sch_netem.c"}, {Function: "tcp_enter_recovery", File: "net/ipv4/tcp_input.c"},
			{Function: "tcp_mark_head_lost", File: "net/ipv4/tcp_input.c"}, {Function: "tcp_write_timer_handler", File: "net/ipv4/tcp_timer.c"}},
	} {
		s, err := scenarios.Load(scenario, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range patched {
			if strength, how := m.Runs(s, []Target{target}, []string{target.File}); strength != 2 {
				t.Errorf("%s does not run %s by the map: %d %q", scenario, target.Function, strength, how)
			}
		}
	}
}

// ranUnder reports whether some function of a file under dir (ending in "/") ran.
func ranUnder(m *Map, scenario, dir string) bool {
	if !strings.HasSuffix(dir, "/") {
		return false
	}
	for f := range m.Scenarios[scenario].Files {
		if strings.HasPrefix(f, dir) {
			return true
		}
	}
	return false
}

// TestMapRuns: the strength and words of Runs, from a map and without one.
func TestMapRuns(t *testing.T) {
	m := &Map{Version: MapVersion, Scenarios: map[string]ScenarioMap{
		"veth-udp": {Files: map[string][]string{"net/ipv4/udp_offload.c": {"udp4_gro_receive"}, "drivers/net/veth.c": {"veth_xmit"}}}}}
	s := &scenarios.Scenario{Name: "veth-udp"}
	for _, c := range []struct {
		fns      []Target
		touched  []string
		strength int
		how      string
	}{
		{[]Target{{Function: "udp4_gro_receive", File: "net/ipv4/udp_offload.c"}}, []string{"net/ipv4/udp_offload.c"}, 2, "runs the patched udp4_gro_receive"},
		{[]Target{{Function: "udp4_gro_complete", File: "net/ipv4/udp_offload.c"}}, []string{"net/ipv4/udp_offload.c"}, 1, "runs through net/ipv4/udp_offload.c"},
		{nil, []string{"drivers/net/veth.h"}, 1, "drivers/net/veth.h"},
		{[]Target{{Function: "tcp_write_xmit", File: "net/ipv4/tcp_output.c"}}, []string{"net/ipv4/tcp_output.c"}, 0, ""},
	} {
		strength, how := m.Runs(s, c.fns, c.touched)
		if strength != c.strength || !strings.Contains(how, c.how) {
			t.Errorf("%v %v: %d %q", c.fns, c.touched, strength, how)
		}
	}
	// A scenario the map lacks: its link kinds' declared sources decide.
	veth := &scenarios.Scenario{Name: "other", Topology: scenarios.Topology{Links: []scenarios.Link{{Veth: &scenarios.Veth{}}}}}
	if strength, how := m.Runs(veth, nil, []string{"drivers/net/veth.c"}); strength != 1 || !strings.Contains(how, "link kinds' sources") {
		t.Errorf("declared: %d %q", strength, how)
	}
}

// TestUnderRoots: where a trace can see a function run.
func TestUnderRoots(t *testing.T) {
	for file, want := range map[string]bool{"net/ipv4/tcp_output.c": true, "drivers/net/veth.c": true, "drivers/net/vxlan/vxlan_core.c": true,
		"drivers/net/ethernet/intel/ice/ice_main.c": false, "drivers/vhost/net.c": false, "include/net/tcp.h": false, "kernel/bpf/core.c": false, "net": false} {
		if got := UnderRoots(file); got != want {
			t.Errorf("UnderRoots(%s) = %v", file, got)
		}
	}
}

// TestMapFileMerge: a map written as it ships reads back from its file; merging the scenarios
// of another measurement on the same kernel replaces and adds them, one of another kernel is
// refused naming both; a file that is not a map, a map of another version and a FIFO are
// refused, the FIFO without blocking on it.
func TestMapFileMerge(t *testing.T) {
	shipped, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	if data, err := shipped.Encode(); err != nil || string(data) != string(shippedMap) {
		t.Errorf("the shipped map encoded is not map.json as it ships (%v)", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "map.json")
	base := &Map{Version: MapVersion, Kernel: "6.12", Source: "src", Method: "ftrace",
		Scenarios: map[string]ScenarioMap{"a": {Files: map[string][]string{"net/a.c": {"f"}}}, "b": {}}}
	data, err := base.Encode()
	if err != nil || os.WriteFile(path, data, 0o644) != nil {
		t.Fatal(err)
	}
	read, err := ReadMapFile(path)
	if err != nil || !reflect.DeepEqual(read, base) {
		t.Fatalf("read back %+v, %v", read, err)
	}
	again := &Map{Version: MapVersion, Kernel: "6.12", Source: "src", Method: "ftrace",
		Scenarios: map[string]ScenarioMap{"a": {Files: map[string][]string{"net/a.c": {"g"}}}, "c": {LostEvents: 2}}}
	if err := read.Merge(again); err != nil {
		t.Fatal(err)
	}
	if len(read.Scenarios) != 3 || read.Scenarios["a"].Files["net/a.c"][0] != "g" || read.Scenarios["c"].LostEvents != 2 {
		t.Errorf("merged: %+v", read.Scenarios)
	}
	other := &Map{Version: MapVersion, Kernel: "6.13", Source: "src2", Method: "ftrace"}
	if err := read.Merge(other); err == nil || !strings.Contains(err.Error(), "6.12 (src), these on 6.13 (src2)") {
		t.Errorf("another kernel merged: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"garbage": "is not a coverage map: invalid character", `{"version": 2}`: "is not a coverage map: version 2"} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadMapFile(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
	if _, err := ReadMapFile(fifo); err == nil {
		t.Error("a FIFO read as a map")
	}
}
