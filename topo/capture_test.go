package topo

import (
	"net"
	"net/netip"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/scenarios"
	"golang.org/x/sys/unix"
)

const handshakePair = `name: t
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24, "2001:db8::1/64"]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24, "2001:db8::2/64"]}
states:
  - name: built
workloads:
  - name: tcp
    iperf3:
      client: {ns: client}
      server: {ns: server, addr: 198.18.0.2}
`

// TestCaptureHandshakes: the window the capture reads from the client's last ACK is the one
// the server's socket took from it (tcp_info's snd_wnd right after accept, before any data),
// for IPv4 and IPv6 and for a client whose receive buffer is small, default or large; a
// smaller buffer announces a smaller window.
func TestCaptureHandshakes(t *testing.T) {
	s, err := scenarios.Parse("t.yaml", []byte(handshakePair), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := buildRoot(t, s)
	for _, server := range []string{"198.18.0.2", "2001:db8::2"} {
		peer := netip.MustParseAddr(server)
		var ln net.Listener
		if err := l.Do("server", func() (err error) {
			ln, err = net.Listen("tcp", net.JoinHostPort(server, "0"))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		remote := uint16(ln.Addr().(*net.TCPAddr).Port)
		capture, err := l.CaptureTCP("client", peer, false)
		if err != nil {
			t.Fatal(err)
		}
		windows := map[int]uint32{}
		for _, rcvbuf := range []int{4096, 0, 4 << 20} {
			local, serverSaw := connectOnce(t, l, ln, rcvbuf)
			got, ok := waitWindow(capture, local, remote)
			if !ok {
				t.Fatalf("%s rcvbuf %d: no handshake captured for port %d", server, rcvbuf, local)
			}
			if got != serverSaw {
				t.Errorf("%s rcvbuf %d: the capture read a window of %d, the server's socket took %d", server, rcvbuf, got, serverSaw)
			}
			windows[rcvbuf] = got
		}
		t.Logf("%s: windows by receive buffer %v", server, windows)
		if !(windows[4096] < windows[0] && windows[0] < windows[4<<20]) {
			t.Errorf("%s: windows by receive buffer %v: want them in the buffers' order", server, windows)
		}
		if err := capture.Close(); err != nil {
			t.Error(err)
		}
		ln.Close()
	}
}

// connectOnce connects from the client's namespace to ln with a receive buffer of rcvbuf
// bytes (0: the default), and returns the client's port and the window the accepted socket
// holds as the peer's (tcp_info snd_wnd) before any data moved.
func connectOnce(t *testing.T, l *Live, ln net.Listener, rcvbuf int) (uint16, uint32) {
	t.Helper()
	dialer := net.Dialer{Timeout: time.Minute, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if rcvbuf > 0 {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	var conn net.Conn
	if err := l.Do("client", func() (err error) {
		conn, err = dialer.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	return localPort(conn), tcpInfoOf(t, accepted).Snd_wnd
}

// tcpInfoOf is a connection's tcp_info (getsockopt TCP_INFO).
func tcpInfoOf(t *testing.T, c net.Conn) *unix.TCPInfo {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil {
		t.Fatal(err, ierr)
	}
	return info
}

// localPort is a connection's own port.
func localPort(c net.Conn) uint16 { return uint16(c.LocalAddr().(*net.TCPAddr).Port) }

// waitWindow waits for the capture to have read the handshake: its packets are read as they
// come, after the connection is up.
func waitWindow(c interface {
	Window(local, remote uint16) (uint32, bool)
}, local, remote uint16) (uint32, bool) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if w, ok := c.Window(local, remote); ok {
			return w, true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, false
}

const lossyRoute = `name: t
topology:
  namespaces: [client, router, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: router, name: r0, addrs: [198.18.0.254/24]}
    - veth:
        a: {ns: router, name: r1, addrs: [198.19.0.254/24]}
        b: {ns: server, name: eth0, addrs: [198.19.0.2/24]}
  routes:
    - {ns: client, to: 198.19.0.0/24, via: 198.18.0.254}
    - {ns: server, to: 198.18.0.0/24, via: 198.19.0.254}
  sysctls:
    router: {net.ipv4.ip_forward: 1}
states:
  - name: built
workloads:
  - name: tcp
    iperf3:
      client: {ns: client}
      server: {ns: server, addr: 198.19.0.2}
`

// dropOneInTen is a classic BPF program for a tc classifier in direct-action mode (`tc filter
// add dev DEV egress bpf da bytecode ...`): an IPv4 TCP segment with a payload is dropped
// (TC_ACT_SHOT) at random one time in ten, anything else passes.
const dropOneInTen = "11,40 0 0 12,21 0 7 2048,48 0 0 23,21 0 5 6,40 0 0 16,37 0 3 52,32 0 0 4294963256,148 0 0 10,21 1 0 0,6 0 0 0,6 0 0 2"

// TestCaptureRetransmitWaits: a request/response exchange through a router that drops one
// request in ten past the client's device: every retransmission the client's kernel counts
// (tcp_info's total_retrans) is one the capture saw, and each waited for a timer (the loss
// probe's or the retransmission timeout's, both at least the minimum RTO of 200 ms with one
// packet in flight), not for an ACK.
func TestCaptureRetransmitWaits(t *testing.T) {
	s, err := scenarios.Parse("t.yaml", []byte(lossyRoute), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := buildRoot(t, s)
	if out, err := exec.Command("tc", "-n", l.Namespace("router"), "qdisc", "add", "dev", "r1", "clsact").CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc add clsact: %v: %s", err, out)
	}
	if out, err := exec.Command("tc", "-n", l.Namespace("router"), "filter", "add", "dev", "r1", "egress", "bpf", "da", "bytecode", dropOneInTen).CombinedOutput(); err != nil {
		t.Fatalf("tc filter add: %v: %s", err, out)
	}
	var ln net.Listener
	if err := l.Do("server", func() (err error) {
		ln, err = net.Listen("tcp", "198.19.0.2:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	capture, err := l.CaptureTCP("client", netip.MustParseAddr("198.19.0.2"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer capture.Close()
	var conn net.Conn
	if err := l.Do("client", func() (err error) {
		conn, err = net.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := make([]byte, 1)
	for range 100 {
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Read(b); err != nil {
			t.Fatal(err)
		}
	}
	info, p := tcpInfoOf(t, conn), localPort(conn)
	remote := uint16(ln.Addr().(*net.TCPAddr).Port)
	var waits []time.Duration
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if waits = capture.Waits(p, remote); len(waits) >= int(info.Total_retrans) {
			break
		}
	}
	t.Logf("total_retrans %d, waits %v", info.Total_retrans, waits)
	if info.Total_retrans == 0 || len(waits) != int(info.Total_retrans) {
		t.Errorf("the kernel counts %d retransmissions, the capture saw %d: %v", info.Total_retrans, len(waits), waits)
	}
	for _, w := range waits {
		if w < 100*time.Millisecond || w > 30*time.Second {
			t.Errorf("a retransmission waited %v, want a timer's wait (at least the 200 ms minimum RTO)", w)
		}
	}
}
