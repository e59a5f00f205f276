// Package tcptrace reads what a capture of a namespace's TCP segments shows of its
// connections to a peer, without privileges: the receive window a client announced in the
// last ACK of its handshake (the third packet: `tcpdump -n 'tcp[tcpflags] & tcp-syn != 0 or
// tcp[tcpflags] == tcp-ack'` in the client's namespace shows it as "win N", scaled by the
// client's SYN's window scale), which tcp_info does not keep; and, when every segment is
// captured, how long each of the client's retransmissions waited since its timers were last
// armed: a loss probe's or a retransmission timeout's time to fire. The capture
// itself (an AF_PACKET socket in the namespace) is topo's.
package tcptrace

import (
	"net/netip"
	"time"

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
// packet starts at its network header), Snap bytes of each packet it passes: with every,
// every IPv4 or IPv6 TCP segment; else only those with SYN set, or with ACK alone and no
// payload, so that a bulk transfer's data segments cost a capture of handshakes nothing. IPv6
// extension headers are not followed (the namespaces' own traffic has none).
func Filter(every bool) ([]bpf.RawInstruction, error) {
	if every {
		return bpf.Assemble([]bpf.Instruction{
			/* 0 */ bpf.LoadAbsolute{Off: 0, Size: 1},
			/* 1 */ bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
			/* 2 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipTrue: 3},
			/* 3 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 4, SkipTrue: 5},
			/* 4 */ bpf.LoadAbsolute{Off: 9, Size: 1}, // IPv4's protocol
			/* 5 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipTrue: 2, SkipFalse: 3},
			/* 6 */ bpf.LoadAbsolute{Off: 6, Size: 1}, // IPv6's next header
			/* 7 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 6, SkipTrue: 1},
			/* 8 */ bpf.RetConstant{Val: Snap},
			/* 9 */ bpf.RetConstant{Val: 0},
		})
	}
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

// flow is what the retransmissions of one connection need: the end of the highest data the
// client sent and the highest acknowledgement it got (sequence space), when a retransmission
// timer was last armed, and the waits of the retransmissions so far.
type flow struct {
	sent, acked      bool
	highest, ackHigh uint32
	armed            time.Time
	waits            []time.Duration
}

// MaxFlows bounds the connections a Tracker follows for retransmissions; MaxWaits the waits
// it keeps of each.
const (
	MaxFlows = 1024
	MaxWaits = 4096
)

// Tracker follows the handshakes of connections from a namespace to one peer address, and
// their retransmissions where it is given every segment.
type Tracker struct {
	peer  netip.Addr
	open  map[Conn]*pending
	done  []Done
	flows map[Conn]*flow

	// The decoders are kept to decode each packet in place (gopacket's DecodingLayer).
	ip4 layers.IPv4
	ip6 layers.IPv6
	tcp layers.TCP
}

// NewTracker follows connections to peer.
func NewTracker(peer netip.Addr) *Tracker {
	return &Tracker{peer: peer.Unmap(), open: map[Conn]*pending{}, flows: map[Conn]*flow{}}
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

// Waits are how long each of the client's retransmissions on the connection between the
// ports waited, in the order they left, since the events that arm TCP's retransmission timers
// (tcp_rearm_rto, tcp_schedule_loss_probe): the client's last data segment, new or sent again,
// or the last segment in that acknowledged new data, whichever came later. A loss probe or a
// retransmission timeout waits its timer's time; a fast retransmission, the time since the
// data or the ACK before the duplicate ones that set it off. A peer's own retransmission
// that comes in, or a bare ACK the client sends, arms nothing.
func (t *Tracker) Waits(local, remote uint16) []time.Duration {
	for c, f := range t.flows {
		if c.Local.Port() == local && c.Remote.Port() == remote {
			return f.waits
		}
	}
	return nil
}

// segment is what the tracker needs of one TCP segment.
type segment struct {
	src, dst     netip.AddrPort
	seq, ackNum  uint32
	syn, ack     bool
	fin          bool
	onlyACK      bool // ACK alone, without payload
	window       uint16
	scale        int // the window scale option's shift, -1 without one
	payloadBytes int
}

// Add reads one captured packet, from its network header on (at most Snap bytes of it), seen
// at time at; outgoing says whether it left the namespace. Anything but a TCP segment between
// the namespace and the peer is ignored.
func (t *Tracker) Add(packet []byte, outgoing bool, at time.Time) {
	s, ok := t.decode(packet)
	if !ok {
		return
	}
	t.retransmissions(s, outgoing, at)
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

// retransmissions follows a segment of a connection to the peer: an outgoing one with data, a
// SYN or a FIN that starts below the end of the highest sent before is a retransmission, and waited
// since its timers were last armed (Waits); sequence numbers compare as RFC 1982 serial
// numbers, so that they may wrap.
func (t *Tracker) retransmissions(s segment, outgoing bool, at time.Time) {
	c := Conn{Local: s.src, Remote: s.dst}
	if !outgoing {
		c = Conn{Local: s.dst, Remote: s.src}
	}
	if c.Remote.Addr() != t.peer {
		return
	}
	f := t.flows[c]
	if f == nil {
		if len(t.flows) >= MaxFlows {
			return
		}
		f = &flow{}
		t.flows[c] = f
	}
	// A SYN and a FIN take a sequence number each, as a byte of data does: the kernel
	// retransmits them on the same timers and counts them among its retransmissions.
	length := max(s.payloadBytes, 0)
	if s.syn {
		length++
	}
	if s.fin {
		length++
	}
	switch {
	case outgoing && length > 0:
		end := s.seq + uint32(length)
		if f.sent && int32(s.seq-f.highest) < 0 && !f.armed.IsZero() && len(f.waits) < MaxWaits {
			f.waits = append(f.waits, max(at.Sub(f.armed), 0))
		}
		if !f.sent || int32(end-f.highest) > 0 {
			f.highest = end
		}
		f.sent, f.armed = true, at
	case !outgoing && s.ack && (!f.acked || int32(s.ackNum-f.ackHigh) > 0):
		f.acked, f.ackHigh = true, s.ackNum
		if f.sent {
			f.armed = at
		}
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
		seq: t.tcp.Seq, ackNum: t.tcp.Ack, syn: t.tcp.SYN, fin: t.tcp.FIN, ack: t.tcp.ACK, window: t.tcp.Window, scale: -1,
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
