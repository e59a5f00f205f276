package topo

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// reaches opens a TCP connection from the client namespace to addr, served in the server
// namespace: the path between them carries traffic.
func reaches(t *testing.T, l *Live, addr string) {
	t.Helper()
	var ln net.Listener
	if err := l.Do("server", func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(addr, "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	err := l.Do("client", func() error {
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
		// An IPv6 connection across the router right after the build failed its first
		// neighbour resolution (3 s, then EHOSTUNREACH) twice in thirteen runs on 6.18; the next
		// one resolved. Not yet explained: the run's own first sample would see the same.
		if errors.Is(err, unix.EHOSTUNREACH) {
			c, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
		}
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(buf)
		return err
	})
	if err != nil {
		t.Errorf("client -> %s: %v", ln.Addr(), err)
	}
}

// TestRoutedNamespace builds the shipped routed-bigtcp: the router forwards (its topology
// sysctls, in its namespace only), the client's and server's routes go through it with their
// attributes, and a TCP connection crosses it over IPv4 and IPv6.
func TestRoutedNamespace(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s, err := scenarios.Load("routed-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Route attributes, as TCP patches are measured with them.
	s.Topology.Routes[0].InitCwnd, s.Topology.Routes[0].QuickACK, s.Topology.Routes[0].Congctl = 20, true, "reno"
	hostForward, _ := os.ReadFile(knobs.SysctlPath("net.ipv4.ip_forward"))
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Teardown(); err != nil {
			t.Error(err)
		}
		if now, _ := os.ReadFile(knobs.SysctlPath("net.ipv4.ip_forward")); string(now) != string(hostForward) {
			t.Errorf("the machine's ip_forward is %q, was %q", now, hostForward)
		}
	}()
	for ns, want := range map[string]string{"router": "1", "client": "0"} {
		var got string
		l.Do(ns, func() error { got, err = readSysctl(ns, "net.ipv4.ip_forward"); return err })
		if got != want {
			t.Errorf("%s: ip_forward %q, want %q (%v)", ns, got, want, err)
		}
	}
	routes, err := l.spaces["client"].nl.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range routes {
		if r.Dst != nil && r.Dst.String() == "198.19.0.0/24" {
			found = true
			if r.Gw.String() != "198.18.0.254" || r.InitCwnd != 20 || r.QuickACK != 1 || r.Congctl != "reno" {
				t.Errorf("route %+v: want via 198.18.0.254 initcwnd 20 quickack 1 congctl reno", r)
			}
		}
	}
	if !found {
		t.Errorf("no route to 198.19.0.0/24 in client: %v", routes)
	}
	reaches(t, l, "198.19.0.2")
	reaches(t, l, "2001:3::2")
}

// TestLinuxBridge builds the shipped bridge-bigtcp: both ports are the bridge's, the bridge
// is up and forwards at once (no STP), and a TCP connection crosses it over IPv4 and IPv6.
func TestLinuxBridge(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s, err := scenarios.Load("bridge-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Teardown()
	br, err := l.lookup("br", "br0")
	if err != nil || br.Type() != "bridge" || br.Attrs().Alias != l.ID.Alias() {
		t.Fatalf("br0: %+v %v", br, err)
	}
	for _, p := range []string{"p0", "p1"} {
		port, err := l.lookup("br", p)
		if err != nil || port.Attrs().MasterIndex != br.Attrs().Index {
			t.Errorf("%s: master %d, want br0 (%d) %v", p, port.Attrs().MasterIndex, br.Attrs().Index, err)
		}
	}
	reaches(t, l, "198.18.0.2")
	reaches(t, l, "2001:2::2")
	if _, err := l.Apply(s.States[1]); err != nil {
		t.Fatal(err)
	}
	reaches(t, l, "198.18.0.2")
}
