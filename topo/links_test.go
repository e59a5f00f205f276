package topo

import (
	"errors"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// TestMissingLinkKind: a kernel without a link kind answers its creation with "operation not
// supported", which is a capability the scenario needs (exit 4), named by the options the
// kind declares, not an infrastructure failure; what the build made before is removed
// (RootTest checks). The
// kernel's answer is real on every kernel: the geneve maker asks for a kind none has, as a
// kernel without CONFIG_GENEVE sees geneve.
func TestMissingLinkKind(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s, err := scenarios.Load("geneve-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	geneve := linkMakers["geneve"]
	t.Cleanup(func() { linkMakers["geneve"] = geneve })
	linkMakers["geneve"] = func(l *Live, spec scenarios.LinkSpec, undo *plan.Step) error {
		g := spec.(*scenarios.Geneve)
		return l.addDevice(g.NS, &netlink.GenericLink{LinkAttrs: netlink.LinkAttrs{Name: g.Name}, LinkType: "nsperfnokind"}, undo)
	}
	_, err = Build(NewPlan(s, NewRunID()), BuildOptions{})
	want := "scenario geneve-bigtcp: link client/gnv0: this kernel has no geneve devices (operation not supported): it needs CONFIG_GENEVE (`nsperf kconfig geneve-bigtcp.yaml`"
	if !errors.Is(err, capability.ErrMissing) || !strings.Contains(err.Error(), want) {
		t.Errorf("Build: %v\nwant a missing capability: %s", err, want)
	}

	// An IP tunnel names its mode and the mode's options.
	tunnel := &scenarios.IPTunnel{NS: "client", Name: "gre0", Mode: "gre"}
	err = missingLinkKind(s, plan.Step{NS: "client", Dev: "gre0", LinkKind: "tunnel", Link: tunnel}, errors.New("operation not supported"))
	if want := "this kernel has no gre tunnel devices (operation not supported): it needs CONFIG_NET_IPGRE and CONFIG_NET_IPGRE_DEMUX"; !strings.Contains(err.Error(), want) {
		t.Errorf("tunnel: %v, want %q", err, want)
	}
}
