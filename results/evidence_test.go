package results

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func u(v uint64) *uint64 { return &v }

// evidenceCase is a case of two states over six rounds whose samples carry the counters dev
// gives per state and round.
func evidenceCase(dev func(state string, round int) map[string]DeviceCounters, ns func(state string, round int) map[string]uint64) Case {
	c := Case{States: []StateRecord{
		{Name: "off", Devices: map[string]map[string]uint64{"client/eth0": {"gso_max_size": 65536}}},
		{Name: "on", CompareTo: "off", Devices: map[string]map[string]uint64{"client/eth0": {"gso_max_size": 185000}}},
	}}
	for round := 1; round <= 6; round++ {
		for _, st := range []string{"off", "on"} {
			cnt := &Counters{Devices: dev(st, round)}
			if ns != nil {
				cnt.Namespaces = map[string]map[string]uint64{"client": ns(st, round)}
			}
			c.Samples = append(c.Samples, Sample{Round: round, State: st, Workload: "tcp4", Metrics: []Metric{{Name: Throughput, Value: 1e10}}, Counters: cnt})
		}
	}
	return c
}

func TestEvidenceBigTCP(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onBig    uint64
		onSize   uint64
		want     []string
		unwanted string
	}{
		{"in effect", 980, 171000, []string{"off: client/eth0 tx 64.0 KB per packet, 0% above 64 KiB", "on: client/eth0 tx 171 KB per packet, 98% above 64 KiB"}, "not in effect"},
		{"not in effect", 0, 64000, []string{"WARNING on: BIG TCP not in effect on client/eth0: gso_max_size 185000, but no packet above 64 KiB in 6000 tx packets (64.0 KB per packet)"}, "98%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := evidenceCase(func(state string, round int) map[string]DeviceCounters {
				if state == "on" {
					return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 1000 * tc.onSize, RxPackets: 500, RxBytes: 33000, BigTx: u(tc.onBig), BigRx: u(0)}}
				}
				return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000, RxPackets: 500, RxBytes: 33000, BigTx: u(0), BigRx: u(0)}}
			}, nil)
			Explain(&c, Policy{})
			lines := strings.Join(EvidenceLines(c), "\n")
			for _, w := range tc.want {
				if !strings.Contains(lines, w) {
					t.Errorf("lacks %q:\n%s", w, lines)
				}
			}
			if strings.Contains(lines, tc.unwanted) {
				t.Errorf("has %q:\n%s", tc.unwanted, lines)
			}
		})
	}
}

// TestEvidenceUncounted: where big packets were not counted, the line says nothing about
// them and there is no warning: no guessing.
func TestEvidenceUncounted(t *testing.T) {
	c := evidenceCase(func(string, int) map[string]DeviceCounters {
		return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000}}
	}, nil)
	Explain(&c, Policy{})
	lines := strings.Join(EvidenceLines(c), "\n")
	if !strings.Contains(lines, "on: client/eth0 tx 64.0 KB per packet") || strings.Contains(lines, "above") || strings.Contains(lines, "WARNING") {
		t.Errorf("uncounted:\n%s", lines)
	}
}

func TestEvidenceShrink(t *testing.T) {
	c := evidenceCase(func(state string, round int) map[string]DeviceCounters {
		vx := DeviceCounters{TxPackets: 1000, TxBytes: 64000000}
		under := DeviceCounters{TxPackets: 43000, TxBytes: 64500000}
		if state == "on" {
			vx = DeviceCounters{TxPackets: 400, TxBytes: 68000000}
			under = DeviceCounters{TxPackets: 46000, TxBytes: 68700000}
		}
		if state == "off" { // the underlay takes the 64K packets whole
			under = DeviceCounters{TxPackets: 1000, TxBytes: 64100000}
		}
		return map[string]DeviceCounters{"client/vx0": vx, "client/eth0": under, "server/eth0": {RxPackets: under.TxPackets, RxBytes: under.TxBytes}}
	}, nil)
	Explain(&c, Policy{})
	lines := strings.Join(EvidenceLines(c), "\n")
	want := "WARNING on: packets shrink along the path: client/vx0 tx 170 KB per packet, but client/eth0 tx 1.5 KB: segmented in software between them"
	if !strings.Contains(lines, want) {
		t.Errorf("lacks %q:\n%s", want, lines)
	}
	if strings.Contains(lines, "off: packets shrink") {
		t.Errorf("off shrinks nowhere:\n%s", lines)
	}
}

// TestSideMetrics: a counter that moved beyond the noise is listed with its change; one that
// did not change, or moved within the noise, is not.
func TestSideMetrics(t *testing.T) {
	c := evidenceCase(func(state string, round int) map[string]DeviceCounters {
		return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000}}
	}, func(state string, round int) map[string]uint64 {
		m := map[string]uint64{"IpInReceives": 5000, "TcpRetransSegs": uint64(10 + round%3)}
		if state == "on" {
			m["TcpExtTCPOFOQueue"] = uint64(300 + round)
			m["TcpRetransSegs"] = uint64(10 + (round+1)%3) // noise
		} else {
			m["TcpExtTCPOFOQueue"] = uint64(100 + round)
		}
		return m
	})
	Explain(&c, Policy{Alpha: 0.05})
	var names []string
	for _, m := range c.SideMetrics {
		names = append(names, m.Counter)
	}
	if len(c.SideMetrics) != 1 || c.SideMetrics[0].Counter != "ns client TcpExtTCPOFOQueue" {
		t.Fatalf("side metrics %v, want only TcpExtTCPOFOQueue", names)
	}
	m := c.SideMetrics[0]
	if m.State != "on" || m.Baseline != "off" || m.Change < 1.8 || m.Change > 2.2 || m.Shown != 1 || m.Tested != 2 {
		t.Errorf("side metric %+v", m)
	}
	table := strings.Join(SideMetricTables(c, AllSideMetrics), "\n")
	for _, want := range []string{"side metrics tcp4 on vs off (information, never gated; 1 of 2 counters that moved; p adjusted (Holm) over the 1 shown)", "%stddev", "+193.2%", "ns client TcpExtTCPOFOQueue"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestCountersDelta(t *testing.T) {
	before := Counters{Devices: map[string]DeviceCounters{"a/x": {TxPackets: 10, TxBytes: 100, BigTx: u(1)}, "a/y": {TxPackets: 50}},
		Namespaces: map[string]map[string]uint64{"a": {"IpInReceives": 5, "Same": 3}}, CPUs: map[string]CPUCounters{"1": {NetRX: 7, LocalTimerIRQs: 100, TimerSoftirqs: 40, DeviceIRQs: 5}}}
	after := Counters{Devices: map[string]DeviceCounters{"a/x": {TxPackets: 30, TxBytes: 400, BigTx: u(4), QdiscBacklog: 9}, "a/y": {TxPackets: 2}},
		Namespaces: map[string]map[string]uint64{"a": {"IpInReceives": 8, "Same": 3}}, CPUs: map[string]CPUCounters{"1": {NetRX: 17, LocalTimerIRQs: 150, TimerSoftirqs: 41, DeviceIRQs: 4}}}
	d := after.Delta(before)
	x := d.Devices["a/x"]
	if x.TxPackets != 20 || x.TxBytes != 300 || *x.BigTx != 3 || x.QdiscBacklog != 9 {
		t.Errorf("a/x: %+v", x)
	}
	if _, ok := d.Devices["a/y"]; ok || len(d.Errors) != 1 || !strings.Contains(d.Errors[0], "a/y: counters went backwards") {
		t.Errorf("a/y went backwards: %+v %v", d.Devices, d.Errors)
	}
	if c := d.CPUs["1"]; c.LocalTimerIRQs != 50 || c.TimerSoftirqs != 1 || c.DeviceIRQs != 0 {
		t.Errorf("cpu 1's interrupts and softirqs: %+v", c)
	}
	if d.Namespaces["a"]["IpInReceives"] != 3 || len(d.Namespaces["a"]) != 1 || d.CPUs["1"].NetRX != 10 {
		t.Errorf("namespaces %v cpus %v", d.Namespaces, d.CPUs)
	}
	f := d.Flat()
	if f["a/x tx_bytes_per_packet"] != 15 || f["a/x big_tx"] != 3 || f["ns a IpInReceives"] != 3 || f["cpu 1 net_rx"] != 10 {
		t.Errorf("flat: %v", f)
	}
}

// The BIG TCP warning of the three shipped BIG TCP scenarios, as their states read back: a
// state warns where it meant packets above 64 KiB to cross a device and none did; a device
// behind another held at 64 KiB (the baseline of ovs-internal-tso and vxlan-bigtcp) does not
// warn (issue 31, item 3).
func TestEvidenceWarnsOnlyWhereBigPacketsWereMeant(t *testing.T) {
	limits := func(v uint64) map[string]uint64 {
		return map[string]uint64{"gso_max_size": v, "gro_max_size": v, "gso_ipv4_max_size": v, "gro_ipv4_max_size": v}
	}
	type dev struct {
		ref string
		tx  bool
	}
	for _, tc := range []struct {
		scenario string
		path     []dev                        // the devices that carry the data
		states   map[string]map[string]uint64 // state -> device -> its limits
		lower    map[string]string
		bigIn    string   // the state whose packets are big; the other's are 64 KB
		want     []string // warnings, when no device saw a packet above 64 KiB
	}{
		{"ovs-internal-tso", []dev{{"ovs/int0", true}, {"ovs/p0", true}, {"server/eth0", false}},
			map[string]map[string]uint64{"off": {"ovs/int0": 65536, "ovs/p0": 524280, "server/eth0": 524280}, "on": {"ovs/int0": 524280, "ovs/p0": 524280, "server/eth0": 524280}},
			nil, "on", []string{"on: BIG TCP not in effect on ovs/int0", "on: BIG TCP not in effect on ovs/p0", "on: BIG TCP not in effect on server/eth0"}},
		{"veth-bigtcp", []dev{{"client/eth0", true}, {"server/eth0", false}},
			map[string]map[string]uint64{"off": {"client/eth0": 65536, "server/eth0": 65536}, "on": {"client/eth0": 185000, "server/eth0": 185000}},
			nil, "on", []string{"on: BIG TCP not in effect on client/eth0", "on: BIG TCP not in effect on server/eth0"}},
		{"vxlan-bigtcp", []dev{{"client/vx0", true}, {"client/eth0", true}, {"server/eth0", false}, {"server/vx0", false}},
			map[string]map[string]uint64{"off": {"client/vx0": 65536, "server/vx0": 65536, "client/eth0": 185000, "server/eth0": 185000}, "on": {"client/vx0": 185000, "server/vx0": 185000, "client/eth0": 185000, "server/eth0": 185000}},
			map[string]string{"client/vx0": "client/eth0", "server/vx0": "server/eth0"}, "on",
			[]string{"on: BIG TCP not in effect on client/eth0", "on: BIG TCP not in effect on client/vx0", "on: BIG TCP not in effect on server/eth0", "on: BIG TCP not in effect on server/vx0"}},
		// The shrink scenario's kind: the vxlan raised, its lower device held; the vxlan still
		// warns (it is upstream of the hold), the devices after the hold do not.
		{"shrink", []dev{{"client/vx0", true}, {"client/eth0", true}, {"server/eth0", false}},
			map[string]map[string]uint64{"off": {"client/vx0": 65536, "client/eth0": 65536, "server/eth0": 185000}, "on": {"client/vx0": 185000, "client/eth0": 16000, "server/eth0": 185000}},
			map[string]string{"client/vx0": "client/eth0"}, "", []string{"on: BIG TCP not in effect on client/vx0"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			for _, big := range []bool{true, false} {
				c := Case{}
				for _, name := range []string{"off", "on"} {
					rec := StateRecord{Name: name, Devices: map[string]map[string]uint64{}, Lower: tc.lower}
					if name == "on" {
						rec.CompareTo = "off"
					}
					for ref, v := range tc.states[name] {
						rec.Devices[ref] = limits(v)
					}
					c.States = append(c.States, rec)
					for round := 1; round <= 3; round++ {
						devices := map[string]DeviceCounters{}
						for _, d := range tc.path {
							n, size, above := uint64(1000), uint64(64000), uint64(0)
							if big && name == tc.bigIn {
								n, size, above = 400, 160000, 400
							}
							dc := DeviceCounters{}
							if d.tx {
								dc.TxPackets, dc.TxBytes, dc.BigTx = n, n*size, &above
							} else {
								dc.RxPackets, dc.RxBytes, dc.BigRx = n, n*size, &above
							}
							devices[d.ref] = dc
						}
						c.Samples = append(c.Samples, Sample{Round: round, State: name, Workload: "tcp4", Metrics: []Metric{{Name: Throughput, Value: 1e10}}, Counters: &Counters{Devices: devices}})
					}
				}
				Explain(&c, Policy{})
				var warnings []string
				for _, e := range c.Evidence {
					if e.Warning {
						parts := strings.SplitN(e.Text, ": ", 3) // "on", "BIG TCP not in effect on DEV", why
						warnings = append(warnings, parts[0]+": "+parts[1])
					}
				}
				want := tc.want
				if big && tc.bigIn != "" {
					want = nil // every packet above 64 KiB where it was meant to be: no warning
				}
				if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
					t.Errorf("big packets in %q: %v: warnings\n%s\nwant\n%s", tc.bigIn, big, strings.Join(warnings, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// Cosmetic (issue 31, item 23): a case without a big-packet method prints no empty "big
// packets )" in its evidence header, and counter sums that would wrap saturate.
func TestEvidenceHeaderAndSums(t *testing.T) {
	c := evidenceCase(func(state string, round int) map[string]DeviceCounters {
		return map[string]DeviceCounters{"client/eth0": {TxPackets: 1000, TxBytes: 64000000}}
	}, nil)
	Explain(&c, Policy{})
	var b strings.Builder
	explanation(&b, c, 10)
	if !strings.Contains(b.String(), "evidence (device counters over the samples):") || strings.Contains(b.String(), "big packets )") {
		t.Errorf("header:\n%s", b.String())
	}
	if addSat(math.MaxUint64-1, 5) != math.MaxUint64 || addSat(2, 3) != 5 {
		t.Error("addSat")
	}
}

// The terminal table shows the ten strongest side metrics of a comparison by default, N or
// all when asked; the rest are counted, and the JSON keeps every one (issue 31, item 25).
func TestSideMetricRows(t *testing.T) {
	c := Case{}
	for i := range 30 {
		c.SideMetrics = append(c.SideMetrics, SideMetric{Workload: "tcp4", State: "on", Baseline: "off", Counter: fmt.Sprintf("counter%02d", i), Change: float64(30 - i), Shown: 30, Tested: 40})
	}
	count := func(lines []string) (rows int, more string) {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[len(f)-1], "counter") && f[len(f)-1] != "counter" {
				rows++
			}
			if strings.Contains(l, "... and") {
				more = l
			}
		}
		return
	}
	for _, tc := range []struct {
		max, rows int
		more      string
	}{{DefaultTableOptions.SideMetrics, 10, "... and 20 more (--side-metrics all"}, {3, 3, "... and 27 more"}, {AllSideMetrics, 30, ""}} {
		rows, more := count(SideMetricTables(c, tc.max))
		if rows != tc.rows || !strings.Contains(more, tc.more) || (tc.more == "") != (more == "") {
			t.Errorf("max %d: %d rows, %q", tc.max, rows, more)
		}
	}
	if lines := SideMetricTables(c, 0); len(lines) != 0 {
		t.Errorf("--side-metrics 0: %v", lines)
	}
	rows, _ := count(SideMetricTables(c, 10))
	if rows != 10 || !strings.Contains(SideMetricTables(c, 10)[2], "counter00") {
		t.Errorf("the strongest first: %v", SideMetricTables(c, 10)[:3])
	}
}
