// Package handshake finds the receive window a TCP client announced in the last ACK of its
// handshake (the third packet: `tcpdump -n 'tcp[tcpflags] & tcp-syn != 0 or tcp[tcpflags] ==
// tcp-ack'` in the client's namespace shows it as "win N", scaled by the client's SYN's
// window scale). tcp_info has no field for it: a connection's windows move as soon as data
// flows. The capture itself (an AF_PACKET socket in the namespace) is topo's; what it keeps
// and how its packets are read is here, without privileges.
package handshake

import (
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"golang.org/x/net/bpf"
)

// Snap is how much of a packet the capture keeps: an IPv6 header and the longest TCP header.
const Snap = 128

// Flags of the TCP header's thirteenth byte.
const (
	flagSYN = 0x02
	flagACK = 0x10
)

// Filter is the capture's classic BPF program for a packet socket of type SOCK_DGRAM (the
// packet starts at its network header): IPv4 or IPv6 TCP segments with SYN set, or with ACK
// alone and no payload, Snap bytes of each; nothing of any other packet reaches the socket, so
// that a bulk transfer's data segments cost the capture nothing. IPv6 extension headers are
// not followed (the namespaces' own traffic has none).
func Filter() ([]bpf.RawInstruction, error) {
	const accept, reject = 28, 29 // the two returns at the end; a jump's skip is to - (from + 1)
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: 0, Size: 1}, // version and header length
		/* 1 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
		/* 2 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipTrue: 17 - 3},
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 4, SkipTrue: reject - 4},
		// IPv4
		/* 4 */ bpf.LoadAbsolute{Off: 9, Size: 1}, // protocol
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 6, SkipTrue: reject - 6},
		/* 6 */ bpf.LoadMemShift{Off: 0}, // X: the IPv4 header's length
		/* 7 */ bpf.LoadIndirect{Off: 13, Size: 1}, // TCP flags
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: flagSYN, SkipTrue: accept - 9},
		/* 9 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: flagACK, SkipTrue: reject - 10},
		/* 10 */ bpf.LoadIndirect{Off: 12, Size: 1}, // TCP data offset, in words, high nibble
		/* 11 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
		/* 12 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 2},
		/* 13 */ bpf.ALUOpX{Op: bpf.ALUOpAdd},
		/* 14 */ bpf.TAX{}, // X: both headers' length
		/* 15 */ bpf.LoadAbsolute{Off: 2, Size: 2}, // total length
		/* 16 */ bpf.JumpIfX{Cond: bpf.JumpEqual, SkipTrue: accept - 17, SkipFalse: reject - 17},
		// IPv6
		/* 17 */ bpf.LoadAbsolute{Off: 6, Size: 1}, // next header
		/* 18 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 6, SkipTrue: reject - 19},
		/* 19 */ bpf.LoadAbsolute{Off: 40 + 13, Size: 1},
		/* 20 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: flagSYN, SkipTrue: accept - 21},
		/* 21 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: flagACK, SkipTrue: reject - 22},
		/* 22 */ bpf.LoadAbsolute{Off: 40 + 12, Size: 1},
		/* 23 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
		/* 24 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 2},
		/* 25 */ bpf.TAX{}, // X: the TCP header's length
		/* 26 */ bpf.LoadAbsolute{Off: 4, Size: 2}, // payload length
		/* 27 */ bpf.JumpIfX{Cond: bpf.JumpEqual, SkipTrue: accept - 28, SkipFalse: reject - 28},
		/* 28 */ bpf.RetConstant{Val: Snap},
		/* 29 */ bpf.RetConstant{Val: 0},
	}
	return bpf.Assemble(prog)
}

// Conn is a TCP connection as its client sees it.
type Conn struct{ Local, Remote netip.AddrPort }

// Done is a handshake seen to its end: the connection and the window its last ACK announced,
// in bytes.
type Done struct {
	Conn   Conn
	Window uint32
}

// pending is a handshake whose client's SYN was seen: its window scale (-1: none offered),
// and whether the server's SYN-ACK came back, and with a window scale.
type pending struct {
	clientScale  int
	synAck       bool
	serverScaled bool
}

// MaxPending bounds the handshakes a Tracker waits on: a flood of SYNs that never complete
// does not grow it further.
const MaxPending = 1024

// Tracker follows the handshakes of connections from a namespace to one peer address.
type Tracker struct {
	peer netip.Addr
	open map[Conn]*pending
	done []Done

	// The decoders are kept to decode each packet in place (gopacket's DecodingLayer).
	ip4 layers.IPv4
	ip6 layers.IPv6
	tcp layers.TCP
}

// NewTracker follows connections to peer.
func NewTracker(peer netip.Addr) *Tracker {
	return &Tracker{peer: peer.Unmap(), open: map[Conn]*pending{}}
}

// Complete are the handshakes seen to their end, in the order their last ACKs left.
func (t *Tracker) Complete() []Done { return t.done }

// Window is the window announced by the handshake of the connection from local port local to
// the peer's port remote.
func (t *Tracker) Window(local, remote uint16) (uint32, bool) {
	for _, d := range t.done {
		if d.Conn.Local.Port() == local && d.Conn.Remote.Port() == remote {
			return d.Window, true
		}
	}
	return 0, false
}

// Latest is the window of the last complete handshake to the peer's port remote: what stands
// for a connection whose own handshake was not kept, when a tool opens one per transaction
// (TCP_CRR) and opens them all alike.
func (t *Tracker) Latest(remote uint16) (uint32, bool) {
	for i := len(t.done) - 1; i >= 0; i-- {
		if t.done[i].Conn.Remote.Port() == remote {
			return t.done[i].Window, true
		}
	}
	return 0, false
}

// segment is what a handshake needs of one TCP segment.
type segment struct {
	src, dst     netip.AddrPort
	syn, ack     bool
	onlyACK      bool // ACK alone, without payload
	window       uint16
	scale        int // the window scale option's shift, -1 without one
	payloadBytes int
}

// Add reads one captured packet, from its network header on (at most Snap bytes of it);
// outgoing says whether it left the namespace. Anything but a TCP segment between the
// namespace and the peer is ignored.
func (t *Tracker) Add(packet []byte, outgoing bool) {
	s, ok := t.decode(packet)
	if !ok {
		return
	}
	switch {
	case outgoing && s.dst.Addr() == t.peer && s.syn && !s.ack:
		c := Conn{Local: s.src, Remote: s.dst}
		if _, seen := t.open[c]; !seen && len(t.open) < MaxPending {
			t.open[c] = &pending{clientScale: s.scale}
		}
	case !outgoing && s.src.Addr() == t.peer && s.syn && s.ack:
		if p := t.open[Conn{Local: s.dst, Remote: s.src}]; p != nil {
			p.synAck, p.serverScaled = true, s.scale >= 0
		}
	case outgoing && s.dst.Addr() == t.peer && s.onlyACK:
		c := Conn{Local: s.src, Remote: s.dst}
		p := t.open[c]
		if p == nil || !p.synAck {
			return
		}
		window := uint32(s.window)
		// RFC 7323 2.2: the shift applies to every segment after the SYNs, when both sides
		// offered one.
		if p.clientScale >= 0 && p.serverScaled {
			window <<= min(p.clientScale, 14)
		}
		t.done = append(t.done, Done{Conn: c, Window: window})
		delete(t.open, c)
	}
}

// decode reads a segment from an IPv4 or IPv6 packet that may be cut at Snap bytes.
func (t *Tracker) decode(packet []byte) (segment, bool) {
	if len(packet) == 0 {
		return segment{}, false
	}
	var src, dst netip.Addr
	var payload []byte
	var ipPayloadLen int
	df := gopacket.NilDecodeFeedback
	switch packet[0] >> 4 {
	case 4:
		if err := t.ip4.DecodeFromBytes(packet, df); err != nil || t.ip4.Protocol != layers.IPProtocolTCP || t.ip4.FragOffset != 0 {
			return segment{}, false
		}
		src, _ = netip.AddrFromSlice(t.ip4.SrcIP.To4())
		dst, _ = netip.AddrFromSlice(t.ip4.DstIP.To4())
		payload, ipPayloadLen = t.ip4.Payload, int(t.ip4.Length)-int(t.ip4.IHL)*4
	case 6:
		if err := t.ip6.DecodeFromBytes(packet, df); err != nil || t.ip6.NextHeader != layers.IPProtocolTCP {
			return segment{}, false
		}
		src, _ = netip.AddrFromSlice(t.ip6.SrcIP)
		dst, _ = netip.AddrFromSlice(t.ip6.DstIP)
		payload, ipPayloadLen = t.ip6.Payload, int(t.ip6.Length)
	default:
		return segment{}, false
	}
	if err := t.tcp.DecodeFromBytes(payload, df); err != nil {
		return segment{}, false
	}
	s := segment{
		src: netip.AddrPortFrom(src.Unmap(), uint16(t.tcp.SrcPort)), dst: netip.AddrPortFrom(dst.Unmap(), uint16(t.tcp.DstPort)),
		syn: t.tcp.SYN, ack: t.tcp.ACK, window: t.tcp.Window, scale: -1,
		payloadBytes: ipPayloadLen - int(t.tcp.DataOffset)*4,
	}
	s.onlyACK = s.ack && !s.syn && !t.tcp.FIN && !t.tcp.RST && !t.tcp.PSH && !t.tcp.URG && s.payloadBytes == 0
	for _, o := range t.tcp.Options {
		if o.OptionType == layers.TCPOptionKindWindowScale && len(o.OptionData) == 1 {
			s.scale = int(o.OptionData[0])
		}
	}
	return s, true
}
