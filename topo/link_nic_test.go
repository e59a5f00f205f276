package topo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// nicPairsScenario is two NIC pairs whose ends share names in each namespace; tag makes the
// namespaces' names, and so the NICs' MAC addresses, the test's own.
func nicPairsScenario(t *testing.T, tag string) *scenarios.Scenario {
	t.Helper()
	text := strings.NewReplacer("LEFT", "l"+tag, "RIGHT", "r"+tag).Replace(`name: nic-pairs
topology:
  namespaces: [LEFT, RIGHT]
  links:
    - nic:
        a: {ns: LEFT, name: eth0, addrs: [198.18.1.1/24]}
        b: {ns: RIGHT, name: eth0, addrs: [198.18.1.2/24]}
    - nic:
        model: e1000e
        a: {ns: LEFT, name: eth1, addrs: [198.18.2.1/24]}
        b: {ns: RIGHT, name: eth1, addrs: [198.18.2.2/24]}
states:
  - name: plain
workloads:
  - name: tcp
    iperf3:
      client: {ns: LEFT}
      server: {ns: RIGHT, addr: 198.18.1.2}
`)
	s, err := scenarios.Parse("nic-pairs.yaml", []byte(text), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNICPairTakesDevicesByMAC: a NIC pair's ends are the machine's devices with the MAC
// addresses the scenario gives them (a guest's emulated NICs; here veth pairs standing in for
// them in nsperf's namespace), moved into their namespaces under their names, and given back
// at teardown under names of their own, where a second build finds them again. Without them
// the build is a missing capability that names --kernel.
func TestNICPairTakesDevicesByMAC(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	tag := fmt.Sprintf("%04x", rand.IntN(0x10000))
	s := nicPairsScenario(t, tag)
	if shell := NewPlan(s, "nsp0000").Shell(); !strings.Contains(shell, "grep -lx "+scenarios.NICMAC(s.Topology.Links[0].NIC.A)+" /sys/class/net/*/address") {
		t.Errorf("plan:\n%s", shell)
	}
	_, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if !errors.Is(err, capability.ErrMissing) || !strings.Contains(err.Error(), "--kernel") {
		t.Fatalf("build without the NICs: %v, want a missing capability naming --kernel", err)
	}
	// The stand-ins: two veth pairs in nsperf's namespace with the ends' MAC addresses.
	var macs []net.HardwareAddr
	for i, l := range s.Topology.Links {
		a, _ := net.ParseMAC(scenarios.NICMAC(l.NIC.A))
		b, _ := net.ParseMAC(scenarios.NICMAC(l.NIC.B))
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("nt%s%da", tag, i), HardwareAddr: a}, PeerName: fmt.Sprintf("nt%s%db", tag, i), PeerHardwareAddr: b}
		if err := netlink.LinkAdd(v); err != nil {
			t.Fatal(err)
		}
		macs = append(macs, a, b)
	}
	t.Cleanup(func() {
		links, _ := netlink.LinkList()
		for _, link := range links {
			for _, mac := range macs {
				if link.Attrs().HardwareAddr.String() == mac.String() {
					netlink.LinkDel(link)
				}
			}
		}
	})
	for build := 1; build <= 2; build++ {
		l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
		if err != nil {
			t.Fatalf("build %d: %v", build, err)
		}
		for _, link := range s.Topology.Links {
			for _, end := range link.NIC.Devices() {
				dev, err := l.lookup(end.NS, end.Name)
				if err != nil {
					t.Errorf("build %d: %v", build, err)
					continue
				}
				if got := dev.Attrs().HardwareAddr.String(); got != scenarios.NICMAC(end) || dev.Attrs().Alias != l.ID.Alias() || dev.Attrs().OperState == netlink.OperDown {
					t.Errorf("build %d: %s/%s: mac %s alias %q state %s", build, end.NS, end.Name, got, dev.Attrs().Alias, dev.Attrs().OperState)
				}
			}
		}
		if build == 1 {
			checkAwaitsCarrier(t, l, s)
		}
		if err := l.Teardown(); err != nil {
			t.Fatalf("build %d: teardown: %v", build, err)
		}
		for _, mac := range macs {
			home := "nic" + strings.ReplaceAll(mac.String()[9:], ":", "")
			if link, err := netlink.LinkByName(home); err != nil || link.Attrs().HardwareAddr.String() != mac.String() {
				t.Errorf("build %d: %s not given back as %s: %v", build, mac, home, err)
			}
		}
	}
}

// checkAwaitsCarrier: a state is applied once every NIC has its link (an emulated e1000e's
// comes up a moment after a reset): with one end down for two seconds, as a NIC's link
// negotiating, its peer has carrier when Apply returns.
func checkAwaitsCarrier(t *testing.T, l *Live, s *scenarios.Scenario) {
	t.Helper()
	end, peer := s.Topology.Links[0].NIC.A, s.Topology.Links[0].NIC.B
	setPeer := func(up bool) error {
		return l.withLink(peer.NS, peer.Name, func(h *netlink.Handle, dev netlink.Link) error {
			if up {
				return h.LinkSetUp(dev)
			}
			return h.LinkSetDown(dev)
		})
	}
	if err := setPeer(false); err != nil {
		t.Fatal(err)
	}
	up := make(chan error, 1)
	time.AfterFunc(2*time.Second, func() { up <- setPeer(true) })
	if _, err := l.Apply(s.States[0]); err != nil {
		t.Errorf("apply while a link comes up: %v", err)
	}
	dev, err := l.lookup(end.NS, end.Name)
	if err != nil || dev.Attrs().RawFlags&unix.IFF_LOWER_UP == 0 {
		t.Errorf("%s/%s has no carrier when the state is applied: %v", end.NS, end.Name, err)
	}
	if err := <-up; err != nil {
		t.Fatal(err)
	}
}
