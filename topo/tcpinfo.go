package topo

import (
	"fmt"
	"net/netip"

	"github.com/nsperf/nsperf/machine"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TCPInfo is the busiest TCP connection in namespace ns to peer (busier), from tcp_info over
// inet_diag (`ip netns exec NS ss -tin dst PEER`), its state by the names of
// results.TCPInfoNames; nil where there is none.
func (l *Live) TCPInfo(ns string, peer netip.Addr) (*machine.TCPConnection, error) {
	family := uint8(unix.AF_INET)
	if peer.Is6() {
		family = unix.AF_INET6
	}
	var best *netlink.InetDiagTCPInfoResp
	err := l.Do(ns, func() error {
		// The package function opens its netlink socket in the calling thread's namespace,
		// which Do has switched to.
		socks, err := netlink.SocketDiagTCPInfo(family)
		if err != nil {
			return fmt.Errorf("list TCP sockets: %w", err)
		}
		for _, s := range socks {
			if s.InetDiagMsg == nil || s.TCPInfo == nil {
				continue
			}
			dst, ok := netip.AddrFromSlice(s.InetDiagMsg.ID.Destination)
			if !ok || dst.Unmap() != peer.Unmap() {
				continue
			}
			if best == nil || busier(s.TCPInfo, best.TCPInfo) {
				best = s
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ns, err)
	}
	if best == nil {
		return nil, nil
	}
	id := best.InetDiagMsg.ID
	return &machine.TCPConnection{LocalPort: id.SourcePort, RemotePort: id.DestinationPort, Moved: moved(best.TCPInfo), DataSegments: dataSegments(best.TCPInfo), Info: tcpInfoFields(best.TCPInfo)}, nil
}

// busier says whether connection a is busier than b: it carried more data segments, or as
// many and more bytes. A tool's control connection (netperf's, iperf3's) carries a few
// messages of hundreds of bytes; a request/response test's data connection a segment of a
// byte or so each way per transaction: by bytes, the control connection would be taken.
func busier(a, b *netlink.TCPInfo) bool {
	if sa, sb := dataSegments(a), dataSegments(b); sa != sb {
		return sa > sb
	}
	return moved(a) > moved(b)
}

// dataSegments are the segments with data a connection has sent and received.
func dataSegments(i *netlink.TCPInfo) uint64 { return uint64(i.Data_segs_in) + uint64(i.Data_segs_out) }

// moved is the bytes a connection has sent and received.
func moved(i *netlink.TCPInfo) uint64 { return i.Bytes_acked + i.Bytes_received }

// unsetThreshold is tcp_info's slow-start threshold before the first loss
// (TCP_INFINITE_SSTHRESH): no threshold, not a window.
const unsetThreshold = 0x7fffffff

// tcpInfoFields are the fields of results.TCPInfoNames of one tcp_info.
func tcpInfoFields(i *netlink.TCPInfo) map[string]float64 {
	out := map[string]float64{
		"rtt_us": float64(i.Rtt), "rttvar_us": float64(i.Rttvar), "min_rtt_us": float64(i.Min_rtt), "rto_us": float64(i.Rto),
		"snd_cwnd": float64(i.Snd_cwnd), "snd_wnd": float64(i.Snd_wnd), "rcv_space": float64(i.Rcv_space), "rcv_ssthresh": float64(i.Rcv_ssthresh),
		"total_retrans": float64(i.Total_retrans), "lost": float64(i.Lost), "reordering": float64(i.Reordering), "reord_seen": float64(i.Reord_seen),
		"dsack_dups": float64(i.Dsack_dups), "delivery_rate_bps": 8 * float64(i.Delivery_rate), "bytes_acked": float64(i.Bytes_acked),
		"bytes_retrans": float64(i.Bytes_retrans), "busy_us": float64(i.Busy_time), "rwnd_limited_us": float64(i.Rwnd_limited),
		"sndbuf_limited_us": float64(i.Sndbuf_limited),
	}
	if i.Snd_ssthresh < unsetThreshold {
		out["snd_ssthresh"] = float64(i.Snd_ssthresh)
	}
	return out
}
