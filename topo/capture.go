package topo

import (
	"fmt"
	"net/netip"
	"os"
	"sync"
	"unsafe"

	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/topo/handshake"
	"golang.org/x/sys/unix"
)

// MaxHandshakes is how many complete handshakes a capture keeps before it stops on its own: a
// tool that opens a connection per transaction (TCP_CRR) would otherwise be captured for its
// whole run.
const MaxHandshakes = 64

// HandshakeCapture watches the handshakes of connections from a namespace to a peer
// (CaptureHandshakes).
type HandshakeCapture struct {
	file    *os.File
	mu      sync.Mutex
	tracker *handshake.Tracker
	ended   chan struct{}
	err     error
	close   sync.Once
}

// CaptureHandshakes starts a capture, in namespace ns, of the handshakes of TCP connections to
// peer (`tcpdump -i any -s 128` with handshake.Filter's program): an AF_PACKET socket of the
// namespace, of which the kernel passes only SYNs and bare ACKs, read until Close or until it
// has MaxHandshakes complete handshakes.
func (l *Live) CaptureHandshakes(ns string, peer netip.Addr) (machine.HandshakeCapture, error) {
	prog, err := handshake.Filter()
	if err != nil {
		return nil, fmt.Errorf("handshake capture: %w", err)
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
		return nil, fmt.Errorf("handshake capture in %s: packet socket: %w", ns, err)
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: unsafe.SliceData(filter)}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("handshake capture in %s: attach filter: %w", ns, err)
	}
	c := &HandshakeCapture{file: os.NewFile(uintptr(fd), "handshake-capture"), tracker: handshake.NewTracker(peer), ended: make(chan struct{})}
	go c.read()
	return c, nil
}

// htons is a 16-bit value in network order, as a packet socket's protocol is given.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// read reads packets until the socket is closed or enough handshakes are complete.
func (c *HandshakeCapture) read() {
	defer close(c.ended)
	raw, err := c.file.SyscallConn()
	if err != nil {
		c.err = err
		return
	}
	buf := make([]byte, handshake.Snap)
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err := raw.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil {
			return // closed (the poller says so, whatever the last recvfrom said)
		}
		if rerr != nil {
			c.err = fmt.Errorf("handshake capture: %w", rerr)
			return
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		c.mu.Lock()
		if ok {
			c.tracker.Add(buf[:n], ll.Pkttype == unix.PACKET_OUTGOING)
		}
		full := len(c.tracker.Complete()) >= MaxHandshakes
		c.mu.Unlock()
		if full {
			c.file.Close()
			return
		}
	}
}

// Window is the window the handshake of the connection from local port local to the peer's
// port remote announced (handshake.Tracker.Window).
func (c *HandshakeCapture) Window(local, remote uint16) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker.Window(local, remote)
}

// Latest is the window of the latest handshake seen to the peer's port remote
// (handshake.Tracker.Latest).
func (c *HandshakeCapture) Latest(remote uint16) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker.Latest(remote)
}

// Close stops the capture and returns the error that stopped it early, if any.
func (c *HandshakeCapture) Close() error {
	c.close.Do(func() { c.file.Close() })
	<-c.ended
	return c.err
}
