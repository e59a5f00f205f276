package topo

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// closing are the TCP states of a connection that is being closed: a finished run leaves them
// behind on its ports, without a process, until the kernel times them out.
var closing = map[uint8]bool{
	netlink.TCP_TIME_WAIT: true, netlink.TCP_FIN_WAIT1: true, netlink.TCP_FIN_WAIT2: true,
	netlink.TCP_CLOSING: true, netlink.TCP_LAST_ACK: true, netlink.TCP_CLOSE_WAIT: true,
}

// ClearTimeWait removes the sockets of closing connections (TIME_WAIT, and the FIN_WAIT and
// LAST_ACK states a loaded machine catches them in) on a local TCP port in a namespace of the
// topology, so that a client bound to a fixed port (iperf3 --cport) can connect again at once:
// the previous run's connection on the same port may still be closing, and bind() then fails
// with "Address already in use" (net.ipv4.tcp_tw_reuse does not help an explicit bind). It is
// called between runs, when no tool of the topology runs. Equivalent: `ip netns exec NS ss -K
// state closing '( sport = :PORT )'`. Returns how many it removed.
func (l *Live) ClearTimeWait(ns string, port int) (int, error) {
	n := 0
	err := l.Do(ns, func() error {
		for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
			// The package functions open their netlink socket in the calling thread's
			// namespace, which Do has switched to.
			socks, err := netlink.SocketDiagTCP(family)
			if err != nil {
				return fmt.Errorf("list sockets: %w", err)
			}
			for _, s := range socks {
				if !closing[s.State] || int(s.ID.SourcePort) != port {
					continue
				}
				// A closing connection may finish between the listing and the destroy: a
				// socket already gone (ENOENT) is what was wanted.
				if err := destroySocket(family, s.State, s.ID); err != nil && !errors.Is(err, unix.ENOENT) {
					return fmt.Errorf("remove closing socket %s:%d -> %s:%d: %w", s.ID.Source, s.ID.SourcePort, s.ID.Destination, s.ID.DestinationPort, err)
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("namespace %s: %w", ns, err)
	}
	return n, nil
}

// destroySocket sends SOCK_DESTROY for one TCP socket (kernels with CONFIG_INET_DIAG_DESTROY).
// netlink.SocketDestroy would do it for IPv4 only.
func destroySocket(family, state uint8, id netlink.SocketID) error {
	req := nl.NewNetlinkRequest(nl.SOCK_DESTROY, unix.NLM_F_ACK)
	req.AddData(&diagRequest{family: family, state: state, id: id})
	_, err := req.Execute(unix.NETLINK_INET_DIAG, 0)
	return err
}

// diagRequest is struct inet_diag_req_v2 for one TCP socket.
type diagRequest struct {
	family, state uint8
	id            netlink.SocketID
}

func (r *diagRequest) Len() int { return 56 }

func (r *diagRequest) Serialize() []byte {
	b := make([]byte, 56)
	b[0], b[1] = r.family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(b[4:], 1<<r.state)
	binary.BigEndian.PutUint16(b[8:], r.id.SourcePort)
	binary.BigEndian.PutUint16(b[10:], r.id.DestinationPort)
	src, dst := r.id.Source.To16(), r.id.Destination.To16()
	if r.family == unix.AF_INET {
		src, dst = r.id.Source.To4(), r.id.Destination.To4()
	}
	copy(b[12:28], src)
	copy(b[28:44], dst)
	binary.NativeEndian.PutUint32(b[44:], r.id.Interface)
	binary.NativeEndian.PutUint32(b[48:], r.id.Cookie[0])
	binary.NativeEndian.PutUint32(b[52:], r.id.Cookie[1])
	return b
}
