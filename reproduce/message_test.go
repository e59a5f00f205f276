package reproduce

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/results"
)

// TestRead: what can be measured of a message is read once: the claims and the series of a
// toggle or a patch; what cannot is said (capability.ErrMissing) with why and the claims
// read, and what cannot be read is an input error.
func TestRead(t *testing.T) {
	for _, tc := range []struct{ file, scenario string }{
		{"../claims/testdata/big-tcp-merge.txt", ""},
		{"../patches/testdata/ovs-internal-port-tso-v2.mbox", "net/openvswitch/vport-internal_dev.c"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Read(tc.file, data, nil)
		if err != nil || m.File != tc.file || string(m.Data) != string(data) || len(m.Claims.Claims) == 0 || strings.Join(m.Touched(), " ") != tc.scenario {
			t.Errorf("%s: %+v %v", tc.file, m, err)
		}
	}
	mlx5 := "From: a <a@b>\nSubject: [PATCH] mlx5: faster\n\nBefore: 8.5Mpps\nAfter: 10.1Mpps\n---\n" +
		"diff --git a/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c b/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n" +
		"--- a/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n+++ b/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"
	for _, tc := range []struct{ mail, want string }{
		{"net: faster\n\nThis lowers latencies.\n", "m: nothing in it can be reproduced here: it makes no claim with numbers"},
		{mlx5, "m cannot be reproduced here: it changes only drivers/net/ethernet/mellanox"},
		{"From: a <a@b>\nSubject: [PATCH 0/2] tcp: faster\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n\n net/ipv4/tcp_output.c | 33 ++++++----\n 1 file changed, 20 insertions(+), 13 deletions(-)\n", "it lists changed files (a diffstat) but carries no diff"},
		{"From: a <a@b>\nSubject: Re: tcp: faster\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n", "m cannot be reproduced here: it carries no diff and shows no setting it changes"},
		{"From: a <a@b>\nSubject: xdp: faster\n\nMeasured with xdpsock.\n\nip link set dev eth0 gso_max_size 185000\n\nBefore: 12.1% CPU in skb_release_data\nAfter: 9.8% CPU in skb_release_data\n",
			"nsperf measures none of what it claims (share); it was measured with xdpsock"},
	} {
		var said strings.Builder
		m, err := Read("m", []byte(tc.mail), &said)
		if m != nil || !errors.Is(err, capability.ErrMissing) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.30q: %v, want %q", tc.mail, err, tc.want)
		}
		if strings.Contains(tc.mail, "Before") && said.Len() == 0 {
			t.Errorf("%.30q: the claims were not said", tc.mail)
		}
	}
	// A timer's firing time, read from a fresh message (a TCP loss probe's, "instead of
	// mostly firing at 240ms on a 20ms path, the probe now mostly fires at 42ms"): the pair
	// is a retransmission's wait, which a run records where packets are lost past the
	// client's device, so the message can be measured.
	data, err := os.ReadFile("testdata/tlp-timer-ms.mbox")
	if err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	m, err := Read("tlp-timer-ms.mbox", data, &said)
	if err != nil || len(m.Claims.Claims) != 1 {
		t.Fatalf("a timer's firing time: %v\n%s", err, said.String())
	}
	if c := m.Claims.Claims[0]; c.Quantity != results.RetransmitWait || c.Before.Median != 240000 || c.After.Median != 42000 {
		t.Errorf("a timer's firing time: %+v", c)
	}
}

// readMessage reads a message that can be measured.
func readMessage(t *testing.T, file string) *Message {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSideRecords: a message's claims of a handshake's window or a timer's wait ask the run
// to capture them (scenarios.Overrides.RecordClaimed); claims of throughput ask nothing, so
// that no capture costs their packets.
func TestSideRecords(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/initrwnd-handshake-window.mbox":           {results.HandshakeWindow},
		"testdata/tlp-timer-ms.mbox":                        {results.RetransmitWait},
		"../patches/testdata/ovs-internal-port-tso-v2.mbox": nil,
	} {
		if got := readMessage(t, file).SideRecords(); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
}

// TestExplain: an input a patch's build cannot use is a patch not reproducible here, with the
// scenario that models it; any other error, or one of a message without a diff, is the run's.
func TestExplain(t *testing.T) {
	m := readMessage(t, "../patches/testdata/ovs-internal-port-tso-v2.mbox")
	input := inputerr.Error{Err: errors.New("net/openvswitch/x.c: not in the source")}
	if err := m.Explain(input, "ovs-internal-tso"); !errors.Is(err, capability.ErrMissing) || !strings.Contains(err.Error(), "not in the source\n") || !strings.HasSuffix(err.Error(), "nsperf run ovs-internal-tso") {
		t.Errorf("a patch that does not build here: %v", err)
	}
	other := errors.New("the guest did not boot")
	if err := m.Explain(other, "ovs-internal-tso"); err != other {
		t.Errorf("another error: %v", err)
	}
	toggle := &Message{File: "t", Claims: m.Claims}
	if err := toggle.Explain(input, "big-tcp-rr"); err != error(input) {
		t.Errorf("a message without a diff: %v", err)
	}
}

// TestScenarioAndDrafts: a given scenario is taken as given; the merge message chooses a
// shipped one; WriteDraft writes its draft once and never over a file.
func TestScenarioAndDrafts(t *testing.T) {
	file := "../claims/testdata/big-tcp-merge.txt"
	m := readMessage(t, file)
	out := ""
	if name, why, err := m.Scenario("my.yaml", &out); name != "my.yaml" || why != "--scenario" || err != nil || out != "" {
		t.Errorf("given: %s (%s) %v, out %q", name, why, err, out)
	}
	if name, why, err := m.Scenario("", &out); name != "big-tcp-rr" || why == "" || err != nil || out != "" {
		t.Errorf("chosen: %s (%s) %v, out %q", name, why, err, out)
	}
	draft := filepath.Join(t.TempDir(), "merge.yaml")
	var said strings.Builder
	if err := m.WriteDraft(draft, &said); err != nil || !strings.Contains(said.String(), "nsperf reproduce "+file+" --scenario "+draft) {
		t.Fatalf("%v\n%s", err, said.String())
	}
	var input inputerr.Error
	if err := m.WriteDraft(draft, &said); !errors.As(err, &input) || !strings.Contains(err.Error(), "does not overwrite") {
		t.Errorf("a second draft: %v", err)
	}
}
