package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/exitcode"
	"github.com/nsperf/nsperf/testkit/clitest"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// TestReproduceNoNumbers: a message without numbers has nothing to reproduce (exit 4).
func TestReproduceNoNumbers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "msg.txt")
	if err := os.WriteFile(path, []byte("net: faster\n\nThis lowers latencies and increases the transaction rate.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := clitest.Run(t, "reproduce", path); code != exitSkipped || !strings.Contains(stderr, "makes no claim with numbers") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestReproduceMerge: the BIG TCP merge message has no diff: its toggle (gso/gro_max_size
// 185000 against 64K) runs here, with netperf TCP_RR 80000/80000 (big-tcp-rr), and each of
// its four claims (transactions and the three latency percentiles) is set beside the
// measured on against off. Figures and outcomes are not asserted: the machine is shared.
func TestReproduceMerge(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "netperf")
	before := testenv.Take(runstate.Dir)
	t.Cleanup(func() { testenv.CheckClean(t, before, runstate.Dir) })
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := clitest.Run(t, "reproduce", clitest.Seeds+"big-tcp-merge.txt", "--runs", "3", "--duration", "1s", "--out", out, "--", "--db", filepath.Join(t.TempDir(), "h.db"))
	if code != exitOK && code != exitExpectation && code != exitUndecided {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "scenario big-tcp-rr") {
		t.Errorf("scenario not chosen as big-tcp-rr:\n%s", stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reproduction == nil || len(r.Reproduction.Claims) != 4 || len(r.Reproduction.SHA256) != 64 {
		t.Fatalf("reproduction: %+v", r.Reproduction)
	}
	for _, ch := range r.Reproduction.Claims {
		if ch.Measured == nil || ch.Workload != "rr6" || ch.State != "on" || ch.Baseline != "off" || ch.Outcome == "" {
			t.Errorf("claim %d (%s): %+v", ch.Claim, ch.Metric, ch)
		}
	}
	for _, want := range []string{"transaction_rate", "min_latency", "p90_latency", "p99_latency", "rr6 on vs off", "magnitudes differ by machine"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
}

// TestReproduceWriteScenario: --write-scenario writes the scenario drafted from the merge
// message (its toggle as states before and after, netperf TCP_RR over IPv6), which validates,
// and runs nothing; a second call does not overwrite it.
func TestReproduceWriteScenario(t *testing.T) {
	out := filepath.Join(t.TempDir(), "merge.yaml")
	_, stderr, code := clitest.Run(t, "reproduce", clitest.Seeds+"big-tcp-merge.txt", "--write-scenario", out)
	if code != 0 || !strings.Contains(stderr, "nsperf reproduce "+clitest.Seeds+"big-tcp-merge.txt --scenario "+out) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, stderr, code := clitest.Run(t, "validate", out); code != 0 {
		t.Errorf("the draft does not validate: exit %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(out)
	for _, want := range []string{"name: merge\n", "test: TCP_RR", "gso_max_size: 185000", `addr: "2001:2::2"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the draft lacks %q:\n%s", want, data)
		}
	}
	if _, stderr, code := clitest.Run(t, "reproduce", clitest.Seeds+"big-tcp-merge.txt", "--write-scenario", out); code != exitUsage || !strings.Contains(stderr, "does not overwrite") {
		t.Errorf("a second draft over the first: exit %d\n%s", code, stderr)
	}
}

// TestReproduceRunFlags: run's flags after -- go through run's own parser; the flags
// reproduce sets itself (--out, --patch, --runs ...) are refused there, and so is anything
// that is not a flag, before anything is measured or built.
func TestReproduceRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "a.json", "--", "--out", "b.json"}, "--out after --: reproduce sets it itself"},
		{[]string{"--", "--patch", "x.patch"}, "--patch after --: reproduce sets it itself"},
		{[]string{"--", "--runs", "3"}, "--runs after --: reproduce sets it itself"},
		{[]string{"--", "--no-such-flag"}, "run's flags after --: unknown flag: --no-such-flag"},
		{[]string{"--", "--no-history", "extra"}, `after -- come run's flags only, not ["extra"]`},
		{[]string{"--format", "yaml"}, `"yaml": want table or json`},
	} {
		args := append([]string{"reproduce", clitest.Seeds + "ovs-internal-port-tso-v2.mbox"}, tc.args...)
		_, stderr, code := clitest.Run(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "build:") {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
}

// TestReproduceHardwareDriver: a patch to a NIC driver alone is not reproducible here (exit
// 4), says which driver, and builds nothing.
func TestReproduceHardwareDriver(t *testing.T) {
	dir := t.TempDir()
	mail := "From: a <a@b>\nSubject: [PATCH] mlx5: faster\n\nBefore: 8.5Mpps\nAfter: 10.1Mpps\n---\n" +
		"diff --git a/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c b/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n" +
		"--- a/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n+++ b/drivers/net/ethernet/mellanox/mlx5/core/en_tx.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"
	file := filepath.Join(dir, "mlx5.mbox")
	if err := os.WriteFile(file, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := clitest.Run(t, "reproduce", file, "--out", filepath.Join(dir, "r.json"))
	if code != exitcode.Skipped || !strings.Contains(stderr, "it changes only drivers/net/ethernet/mellanox") || strings.Contains(stderr, "build:") {
		t.Errorf("exit %d, want %d\n%s", code, exitcode.Skipped, stderr)
	}
}

// TestReproduceNothingToMeasure: a message nsperf cannot measure says why at once (exit 4,
// nothing built, nothing run): a diffstat without its diff, no diff and no setting it
// changes, claims only of quantities nsperf does not record (and the program they were
// measured with, which nsperf does not drive).
func TestReproduceNothingToMeasure(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, mail, want string }{
		{"diffstat", "From: a <a@b>\nSubject: [PATCH 0/2] tcp: faster\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n\n net/ipv4/tcp_output.c | 33 ++++++----\n 1 file changed, 20 insertions(+), 13 deletions(-)\n",
			"a diffstat"},
		{"nodiff", "From: a <a@b>\nSubject: Re: tcp: faster\n\nBefore: 10 Gbps\nAfter: 12 Gbps\n", "shows no setting it changes"},
		{"share", "From: a <a@b>\nSubject: xdp: faster\n\nMeasured with xdpsock.\n\nip link set dev eth0 gso_max_size 185000\n\nBefore: 12.1% CPU in skb_release_data\nAfter: 9.8% CPU in skb_release_data\n",
			"nsperf measures none of what it claims (share); it was measured with xdpsock, which nsperf does not drive (it drives iperf3, netperf, pktgen, sockperf, udpgso)"},
	} {
		file := filepath.Join(dir, tc.name+".mbox")
		if err := os.WriteFile(file, []byte(tc.mail), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := clitest.Run(t, "reproduce", file, "--out", filepath.Join(dir, tc.name+".json"))
		if code != exitcode.Skipped || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "build:") || strings.Contains(stderr, "runs (") {
			t.Errorf("%s: exit %d, want %d and %q\n%s", tc.name, code, exitcode.Skipped, tc.want, stderr)
		}
	}
}
