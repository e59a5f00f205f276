package topo

import (
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/topo/tcptrace"
	"golang.org/x/sys/unix"
)

// MaxHandshakes is how many complete handshakes a capture of handshakes keeps before it stops
// on its own: a tool that opens a connection per transaction (TCP_CRR) would otherwise be
// captured for its whole run. HandshakeTail is how many packets it reads after the last
// handshake it completed before it stops: the connections' data has begun by then, and a
// receiver's every bare ACK would reach the capture until the first look (a request/response
// test of 80 KB messages sends hundreds in 10 ms, enough to move its p99 latency).
const (
	MaxHandshakes = 64
	HandshakeTail = 64
)

// TCPCapture watches the TCP connections from a namespace to a peer (CaptureTCP).
type TCPCapture struct {
	file    *os.File
	every   bool
	mu      sync.Mutex
	tracker *tcptrace.Tracker
	ended   chan struct{}
	err     error
	close   sync.Once
}

// CaptureTCP starts a capture, in namespace ns, of the TCP connections to peer (`tcpdump -i any
// -s 128 -j adapter_unsynced` with tcptrace.Filter's program): an AF_PACKET socket of the
// namespace. Without every, the kernel passes it only SYNs and bare ACKs, and it stops by
// itself after MaxHandshakes complete handshakes or HandshakeTail packets after the last; with
// every, each segment with the kernel's time of it, for the waits of retransmissions, until
// Close.
func (l *Live) CaptureTCP(ns string, peer netip.Addr, every bool) (machine.TCPCapture, error) {
	prog, err := tcptrace.Filter(every)
	if err != nil {
		return nil, fmt.Errorf("tcp capture: %w", err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	var fd int
	err = l.Do(ns, func() error {
		// A packet socket belongs to the namespace it is made in; protocol ETH_P_ALL sees
		// every device of it, in both directions.
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tcp capture in %s: packet socket: %w", ns, err)
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: unsafe.SliceData(filter)}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tcp capture in %s: attach filter: %w", ns, err)
	}
	// The kernel's time of each packet (SCM_TIMESTAMPNS): as it left or arrived, not when
	// this process came round to read it. Only the waits need it: it makes the kernel time
	// every packet of the machine while the socket is open.
	if every {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("tcp capture in %s: timestamps: %w", ns, err)
		}
	}
	c := &TCPCapture{file: os.NewFile(uintptr(fd), "tcp-capture"), every: every, tracker: tcptrace.NewTracker(peer), ended: make(chan struct{})}
	go c.read()
	return c, nil
}

// htons is a 16-bit value in network order, as a packet socket's protocol is given.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// read reads packets until the socket is closed, or, capturing handshakes, until enough are
// complete.
func (c *TCPCapture) read() {
	defer close(c.ended)
	raw, err := c.file.SyscallConn()
	if err != nil {
		c.err = err
		return
	}
	buf, oob := make([]byte, tcptrace.Snap), make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	completed, since := 0, 0 // handshakes complete, and packets read after the last of them
	for {
		var n, oobn int
		var from unix.Sockaddr
		var rerr error
		err := raw.Read(func(fd uintptr) bool {
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil {
			return // closed (the poller says so, whatever the last recvmsg said)
		}
		if rerr != nil {
			c.err = fmt.Errorf("tcp capture: %w", rerr)
			return
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		c.mu.Lock()
		if ok {
			c.tracker.Add(buf[:n], ll.Pkttype == unix.PACKET_OUTGOING, packetTime(oob[:oobn]))
		}
		if n := len(c.tracker.Complete()); n > completed {
			completed, since = n, 0
		} else if completed > 0 {
			since++
		}
		full := !c.every && (completed >= MaxHandshakes || since >= HandshakeTail)
		c.mu.Unlock()
		if full {
			c.file.Close()
			return
		}
	}
}

// packetTime is the kernel's time of a packet from its control message (SCM_TIMESTAMPNS),
// the time now where there is none.
func packetTime(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
				ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
				return time.Unix(ts.Unix())
			}
		}
	}
	return time.Now()
}

// Window is the window the handshake of the connection from local port local to the peer's
// port remote announced (tcptrace.Tracker.Window).
func (c *TCPCapture) Window(local, remote uint16) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker.Window(local, remote)
}

// Latest is the window of the latest handshake seen to the peer's port remote
// (tcptrace.Tracker.Latest).
func (c *TCPCapture) Latest(remote uint16) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker.Latest(remote)
}

// Waits are the waits of the client's retransmissions on the connection between the ports
// (tcptrace.Tracker.Waits); none without every.
func (c *TCPCapture) Waits(local, remote uint16) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.tracker.Waits(local, remote)...)
}

// Close stops the capture and returns the error that stopped it early, if any.
func (c *TCPCapture) Close() error {
	c.close.Do(func() { c.file.Close() })
	<-c.ended
	return c.err
}
