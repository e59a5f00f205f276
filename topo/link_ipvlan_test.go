package topo

import (
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

// TestIpvlanLink: the ipvlan link kind's validation and plan, through the link kinds' seam.
// Its build runs in a guest (this machine's kernel may lack ipvlan): TestVMIpvlan.
func TestIpvlanLink(t *testing.T) {
	s, err := scenarios.Load("ipvlan-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := NewPlan(s, "nsp0000").Shell(); !strings.Contains(got, "ip -n nsp0000-client link add iv0 link eth0 type ipvlan mode l2 && ip -n nsp0000-client link set iv0 alias nsperf:nsp0000\n") {
		t.Errorf("plan:\n%s", got)
	}
	bad := strings.NewReplacer("lower: eth0", "lower: eth9", "mode: l2", "mode: l4").Replace(string(s.Text))
	_, err = scenarios.Parse("ipvlan.yaml", []byte(bad), scenarios.Options{})
	for _, want := range []string{"topology.links[1].ipvlan.lower: no device client/eth9", `topology.links[1].ipvlan.mode: "l4": want l2, l3 or l3s`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("invalid ipvlan: %v, want %q", err, want)
		}
	}
}
