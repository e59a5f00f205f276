package tcptrace

import (
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"golang.org/x/net/bpf"
)

var (
	client4, server4 = netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")
	client6, server6 = netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2")
)

// seg describes a segment to build.
type seg struct {
	src, dst      netip.AddrPort
	seq, ackNum   uint32
	syn, ack, psh bool
	fin           bool
	window        uint16
	scale         int // -1: no window scale option
	payload       int
	udp           bool
	ipv4Fragment  bool
}

// packet serialises s as an IP packet (`scapy`'s IP()/TCP()), network header first.
func packet(t testing.TB, s seg) []byte {
	t.Helper()
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.src.Port()), DstPort: layers.TCPPort(s.dst.Port()), SYN: s.syn, ACK: s.ack, PSH: s.psh, FIN: s.fin, Window: s.window, Seq: s.seq, Ack: s.ackNum}
	tcp.Options = append(tcp.Options, layers.TCPOption{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{0x05, 0xb4}})
	if s.scale >= 0 {
		tcp.Options = append(tcp.Options, layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
			layers.TCPOption{OptionType: layers.TCPOptionKindWindowScale, OptionLength: 3, OptionData: []byte{byte(s.scale)}})
	}
	var network gopacket.SerializableLayer
	var next gopacket.SerializableLayer = tcp
	if s.udp {
		next = &layers.UDP{SrcPort: layers.UDPPort(s.src.Port()), DstPort: layers.UDPPort(s.dst.Port())}
	}
	if s.src.Addr().Is4() {
		proto := layers.IPProtocolTCP
		if s.udp {
			proto = layers.IPProtocolUDP
		}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		if s.ipv4Fragment {
			ip.FragOffset = 100
		}
		network = ip
	} else {
		proto := layers.IPProtocolTCP
		if s.udp {
			proto = layers.IPProtocolUDP
		}
		network = &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
	}
	buf := gopacket.NewSerializeBuffer()
	ls := []gopacket.SerializableLayer{network, next, gopacket.Payload(make([]byte, s.payload))}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ap(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }

// filterVM runs Filter(every)'s program in x/net/bpf's machine.
func filterVM(t *testing.T, every bool) *bpf.VM {
	t.Helper()
	prog, err := Filter(every)
	if err != nil {
		t.Fatal(err)
	}
	var ins []bpf.Instruction
	for _, r := range prog {
		ins = append(ins, r.Disassemble())
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// TestFilter: the kernel's program, run in x/net/bpf's machine, passes the SYNs and the bare
// ACKs of both families, Snap bytes of each, and nothing else: no data segment (with ACK
// alone, as a bulk transfer's are), no FIN, no UDP.
func TestFilter(t *testing.T) {
	vm := filterVM(t, false)
	for _, family := range []struct {
		name           string
		client, server netip.Addr
	}{{"ipv4", client4, server4}, {"ipv6", client6, server6}} {
		c, s := ap(family.client, 40000), ap(family.server, 5201)
		cases := []struct {
			name string
			seg  seg
			want bool
		}{
			{"syn", seg{src: c, dst: s, syn: true, scale: 7}, true},
			{"syn-ack", seg{src: s, dst: c, syn: true, ack: true, scale: 7}, true},
			{"bare ack", seg{src: c, dst: s, ack: true, window: 502, scale: -1}, true},
			{"data with ack alone", seg{src: c, dst: s, ack: true, scale: -1, payload: 1448}, false},
			{"one byte of data", seg{src: c, dst: s, ack: true, scale: -1, payload: 1}, false},
			{"data with push", seg{src: c, dst: s, ack: true, psh: true, scale: -1, payload: 100}, false},
			{"fin", seg{src: c, dst: s, ack: true, fin: true, scale: -1}, false},
			{"udp", seg{src: c, dst: s, udp: true, scale: -1, payload: 20}, false},
		}
		for _, tc := range cases {
			got, err := vm.Run(packet(t, tc.seg))
			if err != nil {
				t.Fatalf("%s %s: %v", family.name, tc.name, err)
			}
			if want := map[bool]int{true: Snap, false: 0}[tc.want]; got != want {
				t.Errorf("%s %s: the filter keeps %d bytes, want %d", family.name, tc.name, got, want)
			}
		}
	}
}

// TestTracker: the last ACK's window is scaled by the client's SYN's shift only when the
// server's SYN-ACK offered one too; a data segment, a SYN retransmitted, a segment of another
// peer and one that comes in are not a last ACK; a connection not kept is represented by
// the latest to its port.
func TestTracker(t *testing.T) {
	for _, family := range []struct {
		name           string
		client, server netip.Addr
	}{{"ipv4", client4, server4}, {"ipv6", client6, server6}} {
		tr := NewTracker(family.server)
		add := func(s seg, out bool) { tr.Add(packet(t, s), out, time.Time{}) }
		c1, c2, c3, s := ap(family.client, 40001), ap(family.client, 40002), ap(family.client, 40003), ap(family.server, 5201)
		other := ap(netip.MustParseAddr(map[bool]string{true: "198.18.0.9", false: "2001:db8::9"}[family.client.Is4()]), 5201)

		// c1: both scale; its SYN goes out twice, data comes in before its ACK would.
		add(seg{src: c1, dst: s, syn: true, scale: 7}, true)
		add(seg{src: c1, dst: s, syn: true, scale: 7}, true)
		add(seg{src: c1, dst: s, ack: true, window: 999, scale: -1}, true) // before the SYN-ACK: not the last ACK
		add(seg{src: s, dst: c1, syn: true, ack: true, scale: 9}, false)
		add(seg{src: s, dst: c1, ack: true, window: 7, scale: -1}, false) // comes in
		add(seg{src: c1, dst: s, ack: true, window: 502, scale: -1}, true)
		add(seg{src: c1, dst: s, ack: true, window: 4000, scale: -1}, true) // later ACKs change nothing
		// c2: the server offers no scale, so none applies.
		add(seg{src: c2, dst: s, syn: true, scale: 7}, true)
		add(seg{src: s, dst: c2, syn: true, ack: true, scale: -1}, false)
		add(seg{src: c2, dst: s, ack: true, scale: -1, payload: 100, window: 1}, true) // data, not bare
		add(seg{src: c2, dst: s, ack: true, window: 29200, scale: -1}, true)
		// c3: to another peer.
		add(seg{src: c3, dst: other, syn: true, scale: 7}, true)
		add(seg{src: other, dst: c3, syn: true, ack: true, scale: 7}, false)
		add(seg{src: c3, dst: other, ack: true, window: 100, scale: -1}, true)

		if w, ok := tr.Window(40001, 5201); !ok || w != 502<<7 {
			t.Errorf("%s: c1's window %d %v, want %d", family.name, w, ok, 502<<7)
		}
		if w, ok := tr.Window(40002, 5201); !ok || w != 29200 {
			t.Errorf("%s: c2's window %d %v, want 29200", family.name, w, ok)
		}
		if _, ok := tr.Window(40003, 5201); ok {
			t.Errorf("%s: a handshake with another peer was kept", family.name)
		}
		if w, ok := tr.Latest(5201); !ok || w != 29200 {
			t.Errorf("%s: latest %d %v, want c2's 29200", family.name, w, ok)
		}
		if _, ok := tr.Latest(12865); ok {
			t.Errorf("%s: a window for a port nothing connected to", family.name)
		}
		if n := len(tr.Complete()); n != 2 {
			t.Errorf("%s: %d complete handshakes, want 2: %+v", family.name, n, tr.Complete())
		}
	}
}

// TestTrackerBounded: SYNs that are never answered stop being kept at MaxPending, and a
// packet cut anywhere is read or ignored, never a panic.
func TestTrackerBounded(t *testing.T) {
	tr := NewTracker(server4)
	for port := range MaxPending + 100 {
		tr.Add(packet(t, seg{src: ap(client4, uint16(10000+port)), dst: ap(server4, 80), syn: true, scale: 7}), true, time.Time{})
	}
	if len(tr.open) != MaxPending {
		t.Errorf("%d pending handshakes, want %d", len(tr.open), MaxPending)
	}
	p := packet(t, seg{src: ap(client4, 1), dst: ap(server4, 80), syn: true, scale: 7})
	for n := range len(p) {
		tr.Add(p[:n], true, time.Time{})
	}
	tr.Add(packet(t, seg{src: ap(client4, 2), dst: ap(server4, 80), syn: true, scale: 7, ipv4Fragment: true}), true, time.Time{})
}

// FuzzTrackerAdd: any bytes, in either direction, leave the tracker consistent: every complete
// handshake's window is what Window returns for it.
func FuzzTrackerAdd(f *testing.F) {
	f.Add(packet(f, seg{src: ap(client4, 40000), dst: ap(server4, 5201), syn: true, scale: 7}), true)
	f.Add(packet(f, seg{src: ap(server6, 5201), dst: ap(client6, 40000), syn: true, ack: true, scale: 14}), false)
	f.Add(packet(f, seg{src: ap(client4, 40000), dst: ap(server4, 5201), ack: true, window: 65535, scale: -1}), true)
	f.Fuzz(func(t *testing.T, data []byte, outgoing bool) {
		tr := NewTracker(server4)
		at := time.Unix(1000, 0)
		tr.Add(packet(t, seg{src: ap(client4, 40000), dst: ap(server4, 5201), syn: true, scale: 14}), true, at)
		tr.Add(packet(t, seg{src: ap(server4, 5201), dst: ap(client4, 40000), syn: true, ack: true, scale: 3}), false, at.Add(time.Millisecond))
		tr.Add(packet(t, seg{src: ap(client4, 40000), dst: ap(server4, 5201), ack: true, seq: 1, payload: 100, scale: -1}), true, at.Add(2*time.Millisecond))
		tr.Add(data, outgoing, at.Add(time.Second))
		for _, d := range tr.Complete() {
			if w, ok := tr.Window(d.Conn.Local.Port(), d.Conn.Remote.Port()); !ok || w > 65535<<14 {
				t.Errorf("window %d %v of %+v", w, ok, d)
			}
		}
		for _, w := range tr.Waits(40000, 5201) {
			if w < 0 || w > time.Second {
				t.Errorf("a wait of %v, outside the packets' times", w)
			}
		}
	})
}

// TestFilterEvery: capturing every segment passes each TCP segment of both families, data
// with ACK alone included, and still nothing else.
func TestFilterEvery(t *testing.T) {
	vm := filterVM(t, true)
	for _, pair := range [][2]netip.Addr{{client4, server4}, {client6, server6}} {
		c, s := ap(pair[0], 40000), ap(pair[1], 5201)
		for _, tc := range []struct {
			name string
			seg  seg
			want int
		}{
			{"data", seg{src: c, dst: s, ack: true, scale: -1, payload: 1448}, Snap},
			{"fin", seg{src: c, dst: s, ack: true, fin: true, scale: -1}, Snap},
			{"syn", seg{src: c, dst: s, syn: true, scale: 7}, Snap},
			{"udp", seg{src: c, dst: s, udp: true, scale: -1, payload: 20}, 0},
		} {
			if got, err := vm.Run(packet(t, tc.seg)); err != nil || got != tc.want {
				t.Errorf("%v %s: the filter keeps %d bytes (%v), want %d", pair[0], tc.name, got, err, tc.want)
			}
		}
	}
}

// TestWaits: a retransmission waits from the last event that arms TCP's retransmission
// timers: a loss probe after silence since the last data sent, a retransmission after a
// duplicate ACK since the data before it, a timeout after a peer's own retransmission and the
// client's bare ACK of it since the last data sent; new data and another connection's packets
// are no retransmission; sequence numbers that wrap still order the data; a SYN sent again is
// a retransmission, as the kernel counts it.
func TestWaits(t *testing.T) {
	tr := NewTracker(server4)
	c, s, other := ap(client4, 40000), ap(server4, 5201), ap(client4, 40001)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var start uint32 = 0xffffff00 // the data wraps round 2^32
	out := func(seq uint32, n, ms int) {
		tr.Add(packet(t, seg{src: c, dst: s, ack: true, seq: seq, payload: n, scale: -1}), true, at(ms))
	}
	in := func(ack uint32, n, ms int) {
		tr.Add(packet(t, seg{src: s, dst: c, ack: true, seq: 7, ackNum: ack, payload: n, scale: -1}), false, at(ms))
	}

	out(start, 100, 0)                                                                            // new
	in(start+100, 0, 20)                                                                          // its ACK
	out(start+100, 200, 21)                                                                       // new, across the wrap
	out(start+100, 200, 261)                                                                      // a loss probe after 240 ms of silence
	in(start+300, 0, 281)                                                                         // new data acknowledged
	out(start+300, 100, 282)                                                                      // new
	in(start+300, 0, 300)                                                                         // a duplicate ACK, which arms nothing
	out(start+300, 100, 301)                                                                      // a fast retransmission, 19 ms after the data before
	in(start+300, 1, 350)                                                                         // the peer's own retransmission
	tr.Add(packet(t, seg{src: c, dst: s, ack: true, seq: start + 400, scale: -1}), true, at(351)) // the client's bare ACK of it
	out(start+300, 100, 560)                                                                      // the timeout, 259 ms after the last data sent
	tr.Add(packet(t, seg{src: other, dst: s, ack: true, seq: 5, payload: 10, scale: -1}), true, at(400))
	tr.Add(packet(t, seg{src: other, dst: s, ack: true, seq: 5, payload: 10, scale: -1}), true, at(500))

	// A SYN lost and sent again after the initial timeout, then its data.
	syn := ap(client4, 40003)
	tr.Add(packet(t, seg{src: syn, dst: s, syn: true, seq: 77, scale: 7}), true, at(0))
	tr.Add(packet(t, seg{src: syn, dst: s, syn: true, seq: 77, scale: 7}), true, at(1000))
	tr.Add(packet(t, seg{src: s, dst: syn, syn: true, ack: true, ackNum: 78, scale: 7}), false, at(1020))
	tr.Add(packet(t, seg{src: syn, dst: s, ack: true, seq: 78, payload: 1, scale: -1}), true, at(1021))
	if w := tr.Waits(40003, 5201); !slices.Equal(w, []time.Duration{time.Second}) {
		t.Errorf("a SYN sent again: waits %v, want [1s]", w)
	}

	got := tr.Waits(40000, 5201)
	want := []time.Duration{240 * time.Millisecond, 19 * time.Millisecond, 259 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if w := tr.Waits(40001, 5201); len(w) != 1 || w[0] != 100*time.Millisecond {
		t.Errorf("the other connection's waits %v, want [100ms]", w)
	}
	if w := tr.Waits(40002, 5201); w != nil {
		t.Errorf("waits of a connection never seen: %v", w)
	}
}
