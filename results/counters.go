package results

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/nsperf/nsperf/scenarios"
)

// BigPacket is the size above which an IP packet counts as big, "above 64 KiB": longer than
// 65535 bytes, the most IP carries without BIG TCP.
const BigPacket = 65535

// Counters are the kernel's counters over one sample (their deltas from its start to its
// end), or, while it is taken, a snapshot of them.
type Counters struct {
	// Devices are every topology device's link and root-qdisc statistics, by "ns/dev".
	Devices map[string]DeviceCounters `json:"devices,omitempty"`
	// Namespaces are the SNMP and netstat counters of each namespace (nstat's names:
	// IpInReceives, TcpExtTCPOFOQueue, Ip6InReceives); in a delta only those that moved.
	Namespaces map[string]map[string]uint64 `json:"namespaces,omitempty"`
	// CPUs are the pinned CPUs' softnet_stat and NET_RX/NET_TX softirqs, by CPU number.
	CPUs map[string]CPUCounters `json:"cpus,omitempty"`
	// TCP is the state of the run's TCP connection (tcp_info over inet_diag, `ss -ti`), the
	// one to the server that moved the most bytes, as last seen while it was open: levels at
	// that look, not deltas (TCPInfoNames).
	TCP map[string]float64 `json:"tcp,omitempty"`
	// Errors say which counters could not be read, and why.
	Errors []string `json:"errors,omitempty"`
}

// TCPInfoNames are the fields of tcp_info a sample keeps, with their units: times in µs,
// windows and counts of segments or bytes as the kernel reports them, the delivery rate in
// bit/s; HandshakeWindow, RetransmitsSeen and RetransmitWait beside them.
var TCPInfoNames = []string{"rtt_us", "rttvar_us", "min_rtt_us", "rto_us", "snd_cwnd", "snd_ssthresh", "snd_wnd", "rcv_space", "rcv_ssthresh",
	"total_retrans", "lost", "reordering", "reord_seen", "dsack_dups", "delivery_rate_bps", "bytes_acked", "bytes_retrans",
	"busy_us", "rwnd_limited_us", "sndbuf_limited_us", HandshakeWindow, RetransmitsSeen, RetransmitWait}

// HandshakeWindow is the receive window, in bytes, that the client announced in the last ACK
// of its connection's handshake (scaled by the window scale of its SYN): the window a server
// may fill in its first flight, which tcp_info does not keep. It is captured from the
// client's namespace (`tcpdump 'tcp[tcpflags] == tcp-ack'` after the SYNs); a connection per
// transaction (TCP_CRR) is represented by the latest handshake to the same server port.
const HandshakeWindow = scenarios.SideHandshakeWindow

// RetransmitsSeen and RetransmitWait are the client's retransmissions on the run's connection
// as a capture of each of its segments saw them, where a state drops packets past the client's
// device (scenarios.Scenario.CanRecord): how many, and the median of how long each
// waited, in µs, since the last event that arms TCP's retransmission timers: the client's
// last data segment, or the last segment in that acknowledged new data (tcptrace.Tracker.Waits).
// A loss probe (TLP) or a retransmission timeout waits its timer's time to fire; a fast
// retransmission the time since the data or the ACK before the duplicates that set it off.
const (
	RetransmitsSeen = scenarios.SideRetransmitsSeen
	RetransmitWait  = scenarios.SideRetransmitWait
)

// DeviceCounters are one device's statistics (`ip -s link`, `tc -s qdisc`).
type DeviceCounters struct {
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	// BigTx and BigRx count packets above BigPacket leaving (netdev egress hook, before the
	// qdisc and any software segmentation) and arriving (netdev ingress, after GRO); nil on a
	// device they are not counted on.
	BigTx *uint64 `json:"big_tx,omitempty"`
	BigRx *uint64 `json:"big_rx,omitempty"`
	// The root qdisc's drops, requeues and overlimits; Backlog is its queue in bytes at the
	// end of the sample (a level, not a delta).
	QdiscDrops      uint64 `json:"qdisc_drops"`
	QdiscRequeues   uint64 `json:"qdisc_requeues"`
	QdiscOverlimits uint64 `json:"qdisc_overlimits"`
	QdiscBacklog    uint64 `json:"qdisc_backlog"`
}

// CPUCounters are one CPU's softnet_stat columns, softirqs and interrupts: what else the CPU
// was asked to do while a sample ran (a sample that differs from its series shows here what
// differed: its timers, another CPU's calls, a device's interrupts; in a guest the devices
// are the host's: 9p's virtio queue and the serial lines).
type CPUCounters struct {
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	NetRX       uint64 `json:"net_rx"`
	NetTX       uint64 `json:"net_tx"`
	// TimerSoftirqs, SchedSoftirqs and RCUSoftirqs are /proc/softirqs' TIMER, SCHED and RCU.
	TimerSoftirqs uint64 `json:"timer_softirqs,omitempty"`
	SchedSoftirqs uint64 `json:"sched_softirqs,omitempty"`
	RCUSoftirqs   uint64 `json:"rcu_softirqs,omitempty"`
	// LocalTimerIRQs, ReschedIPIs and CallIPIs are /proc/interrupts' LOC, RES and CAL;
	// DeviceIRQs the sum of its numbered rows (every device's interrupts). These seven are
	// recorded for a look at single samples, not compared between states (Flat).
	LocalTimerIRQs uint64 `json:"local_timer_irqs,omitempty"`
	ReschedIPIs    uint64 `json:"resched_ipis,omitempty"`
	CallIPIs       uint64 `json:"call_ipis,omitempty"`
	DeviceIRQs     uint64 `json:"device_irqs,omitempty"`
}

// sub is what moved from b to a (a counter that went backwards moved 0).
func (a CPUCounters) sub(b CPUCounters) CPUCounters {
	d := func(x, y uint64) uint64 { return x - min(x, y) }
	return CPUCounters{Processed: d(a.Processed, b.Processed), Dropped: d(a.Dropped, b.Dropped), TimeSqueeze: d(a.TimeSqueeze, b.TimeSqueeze),
		NetRX: d(a.NetRX, b.NetRX), NetTX: d(a.NetTX, b.NetTX),
		TimerSoftirqs: d(a.TimerSoftirqs, b.TimerSoftirqs), SchedSoftirqs: d(a.SchedSoftirqs, b.SchedSoftirqs), RCUSoftirqs: d(a.RCUSoftirqs, b.RCUSoftirqs),
		LocalTimerIRQs: d(a.LocalTimerIRQs, b.LocalTimerIRQs), ReschedIPIs: d(a.ReschedIPIs, b.ReschedIPIs), CallIPIs: d(a.CallIPIs, b.CallIPIs),
		DeviceIRQs: d(a.DeviceIRQs, b.DeviceIRQs)}
}

// Delta is what moved from before to c. A device whose counters went backwards (recreated
// in between) is left out and named in Errors; namespace counters that did not move are
// left out.
func (c Counters) Delta(before Counters) Counters {
	d := Counters{Errors: append(append([]string{}, before.Errors...), c.Errors...)}
	for ref, a := range c.Devices {
		b, ok := before.Devices[ref]
		if !ok {
			continue
		}
		dc, ok := a.sub(b)
		if !ok {
			d.Errors = append(d.Errors, ref+": counters went backwards (the device was recreated)")
			continue
		}
		if d.Devices == nil {
			d.Devices = map[string]DeviceCounters{}
		}
		d.Devices[ref] = dc
	}
	for ns, after := range c.Namespaces {
		for name, v := range after {
			if w, ok := before.Namespaces[ns][name]; ok && v > w {
				if d.Namespaces == nil {
					d.Namespaces = map[string]map[string]uint64{}
				}
				if d.Namespaces[ns] == nil {
					d.Namespaces[ns] = map[string]uint64{}
				}
				d.Namespaces[ns][name] = v - w
			}
		}
	}
	for cpu, a := range c.CPUs {
		if b, ok := before.CPUs[cpu]; ok {
			if d.CPUs == nil {
				d.CPUs = map[string]CPUCounters{}
			}
			d.CPUs[cpu] = a.sub(b)
		}
	}
	return d
}

func (a DeviceCounters) sub(b DeviceCounters) (DeviceCounters, bool) {
	if a.TxPackets < b.TxPackets || a.RxPackets < b.RxPackets || a.TxBytes < b.TxBytes || a.RxBytes < b.RxBytes {
		return DeviceCounters{}, false
	}
	big := func(x, y *uint64) *uint64 {
		if x == nil || y == nil || *x < *y {
			return nil
		}
		v := *x - *y
		return &v
	}
	return DeviceCounters{
		TxPackets: a.TxPackets - b.TxPackets, TxBytes: a.TxBytes - b.TxBytes, RxPackets: a.RxPackets - b.RxPackets, RxBytes: a.RxBytes - b.RxBytes,
		BigTx: big(a.BigTx, b.BigTx), BigRx: big(a.BigRx, b.BigRx),
		QdiscDrops: a.QdiscDrops - min(a.QdiscDrops, b.QdiscDrops), QdiscRequeues: a.QdiscRequeues - min(a.QdiscRequeues, b.QdiscRequeues),
		QdiscOverlimits: a.QdiscOverlimits - min(a.QdiscOverlimits, b.QdiscOverlimits), QdiscBacklog: a.QdiscBacklog,
	}, true
}

// Flat names every counter of a delta once, as the side-metric table shows it:
// "client/eth0 tx_packets", "client/eth0 tx_bytes_per_packet", "ns server TcpExtTCPOFOQueue",
// "cpu 1 net_rx".
func (c Counters) Flat() map[string]float64 {
	out := map[string]float64{}
	for ref, d := range c.Devices {
		for name, v := range map[string]uint64{"tx_packets": d.TxPackets, "tx_bytes": d.TxBytes, "rx_packets": d.RxPackets, "rx_bytes": d.RxBytes,
			"qdisc_drops": d.QdiscDrops, "qdisc_requeues": d.QdiscRequeues, "qdisc_overlimits": d.QdiscOverlimits, "qdisc_backlog": d.QdiscBacklog} {
			out[ref+" "+name] = float64(v)
		}
		if d.TxPackets > 0 {
			out[ref+" tx_bytes_per_packet"] = float64(d.TxBytes) / float64(d.TxPackets)
		}
		if d.RxPackets > 0 {
			out[ref+" rx_bytes_per_packet"] = float64(d.RxBytes) / float64(d.RxPackets)
		}
		if d.BigTx != nil {
			out[ref+" big_tx"] = float64(*d.BigTx)
		}
		if d.BigRx != nil {
			out[ref+" big_rx"] = float64(*d.BigRx)
		}
	}
	for ns, m := range c.Namespaces {
		for name, v := range m {
			out["ns "+ns+" "+name] = float64(v)
		}
	}
	for cpu, x := range c.CPUs {
		for name, v := range map[string]uint64{"processed": x.Processed, "dropped": x.Dropped, "time_squeeze": x.TimeSqueeze, "net_rx": x.NetRX, "net_tx": x.NetTX} {
			out["cpu "+cpu+" "+name] = float64(v)
		}
	}
	for name, v := range c.TCP {
		out["tcp "+name] = v
	}
	return out
}

// CPUKey is a CPU's key in Counters.CPUs.
func CPUKey(cpu int) string { return strconv.Itoa(cpu) }

// sortedKeys are a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FormatBytes writes a byte count as the evidence lines do: 1.5 KB, 171 KB, 2.1 MB (SI).
func FormatBytes(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1f MB", v/1e6)
	case v >= 100e3:
		return fmt.Sprintf("%.0f KB", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1f KB", v/1e3)
	}
	return fmt.Sprintf("%.0f B", v)
}
