package topo

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
)

// routeStates: a topology route and the kernel's routes to the pair's subnets (IPv4 and
// IPv6) given attributes by one state, left as built by another; a third names a congestion
// control the kernel lacks.
const routeStates = `name: t
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24, "2001:db8::1/64"]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24, "2001:db8::2/64"]}
  routes:
    - {ns: client, to: 198.19.0.0/24, via: 198.18.0.2, initcwnd: 10}
states:
  - name: built
  - name: tuned
    routes:
      client: {198.18.0.0/24: {initcwnd: 40, quickack: true}, 198.19.0.0/24: {initrwnd: 30}}
      server: {"2001:db8::/64": {initcwnd: 20, congctl: reno}}
  - name: unknown-cc
    optional: true
    routes:
      server: {198.18.0.0/24: {congctl: nosuchcc}}
workloads:
  - name: tcp
    iperf3:
      client: {ns: client}
      server: {ns: server, addr: 198.18.0.2}
`

// TestStateRoutes: a state's route attributes are set and read back (by iproute2 too), a
// state that leaves them out has the routes as built, a change from outside is drift, and a
// congestion control the kernel lacks is a capability.
func TestStateRoutes(t *testing.T) {
	s, err := scenarios.Parse("t.yaml", []byte(routeStates), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := buildRoot(t, s)
	show := func(ns, to string) string {
		family := "-4"
		if strings.Contains(to, ":") {
			family = "-6"
		}
		out, err := exec.Command("ip", family, "-n", l.Namespace(ns), "route", "show", to).CombinedOutput()
		if err != nil {
			t.Fatalf("ip route show: %v: %s", err, out)
		}
		return string(out)
	}
	built, tuned, unknown := s.States[0], s.States[1], s.States[2]
	for _, st := range []scenarios.State{tuned, built, tuned, built} {
		rec, err := l.Apply(st)
		if err != nil {
			t.Fatalf("state %s: %v", st.Name, err)
		}
		want := map[[2]string][]string{ // what `ip route show` prints, and what it must not
			{"client", "198.18.0.0/24"}: {"!initcwnd", "!quickack"},
			{"client", "198.19.0.0/24"}: {"initcwnd 10", "!initrwnd"},
			{"server", "2001:db8::/64"}: {"!initcwnd", "!congctl"},
		}
		recorded := map[[2]string]string{{"client", "198.18.0.0/24"}: "(none)", {"client", "198.19.0.0/24"}: "initcwnd 10", {"server", "2001:db8::/64"}: "(none)"}
		if st.Name == "tuned" {
			want = map[[2]string][]string{
				{"client", "198.18.0.0/24"}: {"initcwnd 40", "quickack 1"},
				{"client", "198.19.0.0/24"}: {"initcwnd 10", "initrwnd 30"},
				{"server", "2001:db8::/64"}: {"initcwnd 20", "congctl reno"},
			}
			recorded = map[[2]string]string{{"client", "198.18.0.0/24"}: "initcwnd 40 quickack 1", {"client", "198.19.0.0/24"}: "initcwnd 10 initrwnd 30", {"server", "2001:db8::/64"}: "initcwnd 20 congctl reno"}
		}
		for key, words := range want {
			text := show(key[0], key[1])
			for _, w := range words {
				if absent, ok := strings.CutPrefix(w, "!"); ok && strings.Contains(text, absent) || !ok && !strings.Contains(text, w) {
					t.Errorf("state %s: route %s in %s: %q, want %s", st.Name, key[1], key[0], text, w)
				}
			}
			if got := rec.Routes[key[0]][key[1]]; got != recorded[key] {
				t.Errorf("state %s: route %s in %s recorded %q, want %q", st.Name, key[1], key[0], got, recorded[key])
			}
		}
	}
	// A route changed from outside during a sample is drift.
	if _, err := l.Apply(tuned); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "-n", l.Namespace("client"), "route", "change", "198.18.0.0/24", "dev", "eth0", "initcwnd", "7").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	drift, err := l.Drift()
	if err != nil || len(drift) != 1 || !strings.Contains(drift[0], "route 198.18.0.0/24 in client has initcwnd 7, applied initcwnd 40 quickack 1") {
		t.Errorf("drift %q, %v", drift, err)
	}
	// The plan's line for the state, as `ip route change` takes it.
	if cmds := strings.Join(l.StateCommands(tuned), "\n"); !strings.Contains(cmds, "route change 198.18.0.0/24 dev eth0 initcwnd 40 quickack 1") ||
		!strings.Contains(cmds, "route change 198.19.0.0/24 via 198.18.0.2 initrwnd 30") {
		t.Errorf("state commands:\n%s", cmds)
	}
	var capErr *capability.Error
	if _, err := l.Apply(unknown); !errors.As(err, &capErr) || !strings.Contains(err.Error(), "congctl nosuchcc: this kernel has no nosuchcc congestion control: it needs CONFIG_TCP_CONG_NOSUCHCC") {
		t.Errorf("unknown congestion control: %v", err)
	}
}
