package topo

import (
	"os"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestMacvlanLink: the macvlan link kind, added through the link kinds' seam (its spec in
// scenarios, its maker here): planned, validated, built on its lower device with its MTU and
// the run's marker, inheriting the veth's TSO limit, set in a state, and torn down.
func TestMacvlanLink(t *testing.T) {
	data, err := os.ReadFile("testdata/macvlan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	macvlanScenario := string(data)
	bad := strings.NewReplacer("lower: eth0", "lower: eth9", "mtu: 1400", "mode: nat").Replace(macvlanScenario)
	_, err = scenarios.Parse("macvlan.yaml", []byte(bad), scenarios.Options{})
	for _, want := range []string{"topology.links[1].macvlan.lower: no device client/eth9", `topology.links[1].macvlan.mode: "nat": want bridge, private, vepa or passthru`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("invalid macvlan: %v, want %q", err, want)
		}
	}
	s, err := scenarios.Parse("macvlan.yaml", []byte(macvlanScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := NewPlan(s, "nsp0000").Shell(); !strings.Contains(got, "ip -n nsp0000-client link add mv0 link eth0 mtu 1400 type macvlan mode bridge && ip -n nsp0000-client link set mv0 alias nsperf:nsp0000\n") {
		t.Errorf("plan:\n%s", got)
	}
	testenv.RequireRoot(t)
	l := buildChecked(t, s)
	defer l.Teardown()
	link, err := l.lookup("client", "mv0")
	if err != nil {
		t.Fatal(err)
	}
	if link.Type() != "macvlan" || link.Attrs().MTU != 1400 || link.Attrs().Alias != l.ID.Alias() {
		t.Errorf("client/mv0: type %s, mtu %d, alias %q", link.Type(), link.Attrs().MTU, link.Attrs().Alias)
	}
	if got := l.Pristine()["client/mv0"]["tso_max_size"]; got != 524280 {
		t.Errorf("client/mv0 tso_max_size %d, want the veth's 524280", got)
	}
	eff, err := l.Apply(s.States[1])
	if err != nil {
		t.Fatal(err)
	}
	if got := eff.Devices["client/mv0"]; got["gso_max_size"] != 185000 || eff.Lower["client/mv0"] != "client/eth0" {
		t.Errorf("client/mv0 in state on: gso_max_size %d, lower %q", got["gso_max_size"], eff.Lower["client/mv0"])
	}
}
