package handshake

import (
	"net"
	"net/netip"
	"testing"

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
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.src.Port()), DstPort: layers.TCPPort(s.dst.Port()), SYN: s.syn, ACK: s.ack, PSH: s.psh, FIN: s.fin, Window: s.window, Seq: 1000, Ack: 2000}
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

// TestFilter: the kernel's program, run in x/net/bpf's machine, passes the SYNs and the bare
// ACKs of both families, Snap bytes of each, and nothing else: no data segment (with ACK
// alone, as a bulk transfer's are), no FIN, no UDP.
func TestFilter(t *testing.T) {
	prog, err := Filter()
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
		add := func(s seg, out bool) { tr.Add(packet(t, s), out) }
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
		tr.Add(packet(t, seg{src: ap(client4, uint16(10000+port)), dst: ap(server4, 80), syn: true, scale: 7}), true)
	}
	if len(tr.open) != MaxPending {
		t.Errorf("%d pending handshakes, want %d", len(tr.open), MaxPending)
	}
	p := packet(t, seg{src: ap(client4, 1), dst: ap(server4, 80), syn: true, scale: 7})
	for n := range len(p) {
		tr.Add(p[:n], true)
	}
	tr.Add(packet(t, seg{src: ap(client4, 2), dst: ap(server4, 80), syn: true, scale: 7, ipv4Fragment: true}), true)
}

// FuzzTrackerAdd: any bytes, in either direction, leave the tracker consistent: every complete
// handshake's window is what Window returns for it.
func FuzzTrackerAdd(f *testing.F) {
	f.Add(packet(f, seg{src: ap(client4, 40000), dst: ap(server4, 5201), syn: true, scale: 7}), true)
	f.Add(packet(f, seg{src: ap(server6, 5201), dst: ap(client6, 40000), syn: true, ack: true, scale: 14}), false)
	f.Add(packet(f, seg{src: ap(client4, 40000), dst: ap(server4, 5201), ack: true, window: 65535, scale: -1}), true)
	f.Fuzz(func(t *testing.T, data []byte, outgoing bool) {
		tr := NewTracker(server4)
		tr.Add(packet(t, seg{src: ap(client4, 40000), dst: ap(server4, 5201), syn: true, scale: 14}), true)
		tr.Add(packet(t, seg{src: ap(server4, 5201), dst: ap(client4, 40000), syn: true, ack: true, scale: 3}), false)
		tr.Add(data, outgoing)
		for _, d := range tr.Complete() {
			if w, ok := tr.Window(d.Conn.Local.Port(), d.Conn.Remote.Port()); !ok || w > 65535<<14 {
				t.Errorf("window %d %v of %+v", w, ok, d)
			}
		}
	})
}
