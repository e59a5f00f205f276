package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/testkit/clitest"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// binary is nsperf built once for the tests that need a process of their own (signals, kill).
func TestMain(m *testing.M) { clitest.Main(m) }

func nsperf(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{scenarios.Problems{{File: "f", Msg: "m"}}, exitUsage},
		{usageError{errors.New("x")}, exitUsage},
		{&capability.Error{Reasons: []string{"gso_max_size 185000 > tso_max_size 65536 of client/eth0"}}, exitSkipped},
		{fmt.Errorf("state on: %w", &capability.Error{}), exitSkipped},
		{host.ErrNotRoot, exitSkipped},
		// Every "this machine cannot do it" error is capability.ErrMissing, however deep.
		{fmt.Errorf("run: %w", host.ErrNotRoot), exitSkipped},
		{fmt.Errorf("run: %w", host.MissingCapabilities{"CAP_NET_ADMIN"}), exitSkipped},
		{fmt.Errorf("vm A: %w", &vm.MissingModulesError{Dir: "/m", Modules: []string{"veth"}}), exitSkipped},
		{fmt.Errorf("vm A: %w", &vm.MissingConfigError{Config: ".config", Missing: []vm.Option{{Name: "VXLAN", Why: "vxlan"}}}), exitSkipped},
		{fmt.Errorf("guest: %w", capability.Missing("iperf3 is not installed")), exitSkipped},
		{expectationError{[]string{"expectation failed: tcp6 throughput on: change >= +10%"}}, exitExpectation},
		{fmt.Errorf("interrupted: %w", context.Canceled), exitInterrupted},
		{fmt.Errorf("%w: 1 of 8", runner.ErrRunsFailed), exitInfra},
		{errors.New("netlink: invalid argument"), exitInfra},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestValidateCLI(t *testing.T) {
	out, errOut, code := nsperf("validate", "veth-bigtcp", "../../scenarios/testdata/invalid/family.yaml")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(out, "veth-bigtcp.yaml: ok") {
		t.Errorf("stdout: %q", out)
	}
	want := "../../scenarios/testdata/invalid/family.yaml:14:23: workloads[0].iperf3.client.addr: 198.18.0.1 and the server address 2001:2::2 are of different families"
	if !strings.Contains(errOut, want) || strings.Contains(errOut, "goroutine") {
		t.Errorf("stderr: %q", errOut)
	}
	if _, _, code := nsperf("validate", "veth-bigtcp"); code != exitOK {
		t.Errorf("valid scenario: exit %d", code)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "no-such-scenario"},
		{"run", "--runs", "x", "veth-bigtcp"},
		{"run", "--duration", "1500ms", "veth-bigtcp"},
		{"run"},
		{"plan", "--run-id", "bad", "veth-bigtcp"},
		{"down", "not-a-run-id"},
		{"nosuchcommand"},
		{"report", "--format", "pdf", "x.json"},
		{"run", "--label", "red\x1b[31m", "veth-bigtcp"}, // control characters in a label
		{"run", "--min-change", "-0.5", "veth-bigtcp"},
		{"history", "list", "--db", ":memory:"},
	} {
		_, errOut, code := nsperf(args...)
		if code != exitUsage && !(args[0] == "report" && code == exitInfra) {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, errOut)
		}
		if errOut == "" || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: stderr %q", args, errOut)
		}
	}
}

func TestListAndPlan(t *testing.T) {
	out, _, code := nsperf("list")
	if code != 0 || !regexp.MustCompile(`(?m)^veth-bigtcp +BIG TCP`).MatchString(out) {
		t.Errorf("list: %d %q", code, out)
	}
	out, _, code = nsperf("plan", "--run-id", "nsp0000", "veth-bigtcp")
	s, _ := scenarios.Load("veth-bigtcp", scenarios.Options{})
	if code != 0 || out != runner.Script(s, "nsp0000", topo.PlanFacts()) {
		t.Errorf("plan: exit %d, output differs from runner.Script", code)
	}
}

// waitJournal waits until the journal at path of the run cmd holds at least n samples; where
// the run ends first or the time is up, the test fails with what the run printed on stderr.
func waitJournal(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer, path string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if journalHas(path, n, 0) {
			return
		}
		if !runstate.Running(cmd.Process.Pid) {
			err := cmd.Wait()
			t.Fatalf("the run ended (%v) before its journal %s held %d samples:\n%s", err, path, n, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("journal %s has fewer than %d samples after %s; the run printed:\n%s", path, n, within, stderr.String())
}

// journalHas waits until the journal at path holds n samples, for at most within (0: looks
// once).
func journalHas(path string, n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for first := true; first || time.Now().Before(deadline); first = false {
		if r, _, err := results.ReadJournal(path); err == nil && len(r.Cases) > 0 && len(r.Cases[0].Samples) >= n {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func TestRunCLI(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := nsperf("run", "veth-bigtcp", "--runs", "2", "--duration", "1s", "--omit", "0s", "--out", out, "--label", "test")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"workload", "CV off / on", "on vs off", "tcp4", "tcp6", "throughput"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Label != "test" || len(r.Cases[0].States) != 2 {
		t.Errorf("label %q, states %v", r.Label, r.Cases[0].States)
	}
	for _, s := range r.Cases[0].Summaries {
		if s.Metric == results.Throughput && (s.Stats.N != 2 || s.Stats.CV == 0) {
			t.Errorf("%s/%s: n=%d cv=%v", s.Workload, s.State, s.Stats.N, s.Stats.CV)
		}
	}
	rep, _, code := nsperf("report", out)
	if code != 0 || rep != stdout {
		t.Errorf("report differs from the run's table (exit %d):\n%s", code, rep)
	}
}

// TestInterrupt: SIGINT or SIGTERM during a run tears down, keeps the journal and the partial
// result, and exits 130.
func TestInterrupt(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "iperf3")
	for _, tc := range []struct {
		scenario string
		sig      syscall.Signal
	}{{"veth-bigtcp", syscall.SIGINT}, {"veth-bigtcp", syscall.SIGTERM}, {"../../topo/testdata/ovs.yaml", syscall.SIGINT}, {"big-tcp-rr", syscall.SIGINT}} {
		sig := tc.sig
		t.Run(filepath.Base(tc.scenario)+"/"+sig.String(), func(t *testing.T) {
			if strings.Contains(tc.scenario, "ovs") {
				testenv.RequireTool(t, "ovs-vswitchd")
			}
			before := testenv.Take(runstate.Dir)
			defer testenv.CheckClean(t, before, runstate.Dir)
			out := filepath.Join(t.TempDir(), "r.json")
			// --concurrent: the test is about the signal, not the figures; it must not queue behind
			// another nsperf run measuring beside it.
			cmd := exec.Command(clitest.Binary, "run", tc.scenario, "--runs", "5", "--duration", "2s", "--omit", "0s", "--concurrent", "--out", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !journalHas(out+".journal", 1, 60*time.Second) {
				// The run is stopped as any interrupted run is, and says why it had no sample.
				cmd.Process.Signal(syscall.SIGINT)
				cmd.Wait()
				t.Fatalf("no sample in the journal after 60 s; the run said:\n%s", stderr.String())
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
				t.Fatalf("exit: %v, want 130\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
			}
			journal, _, err := results.ReadJournal(out + ".journal")
			if err != nil || len(journal.Cases) == 0 || len(journal.Cases[0].Samples) == 0 {
				t.Fatalf("journal: %v, %v", journal, err)
			}
			samples := journal.Cases[0].Samples
			r, _, err := results.ReadFile(out)
			if err != nil || r.Complete || len(r.Cases[0].Samples) != len(samples) {
				t.Errorf("partial result: %v complete=%v", err, r != nil && r.Complete)
			}
		})
	}
}

func TestUpDown(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	// A baseline that differs from the kernel's defaults shows that up applied it.
	s, err := os.ReadFile("../../scenarios/library/veth-bigtcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "up.yaml")
	os.WriteFile(file, []byte(strings.Replace(string(s), "{gso_max_size: 65536,", "{gso_max_size: 185000,", 1)), 0o644)
	out, errOut, code := nsperf("up", file)
	if code != 0 {
		t.Fatalf("up: exit %d\n%s", code, errOut)
	}
	id := regexp.MustCompile(`run (nsp[0-9a-f]{4}) is up`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("up printed no run id:\n%s", out)
	}
	if !strings.Contains(out, "ip netns exec "+id[1]+"-client bash") || !strings.Contains(out, "nsperf down "+id[1]) {
		t.Errorf("up does not say how to enter and remove it:\n%s", out)
	}
	// It stays up, in the baseline state, and is not a leftover for a plain cleanup.
	if _, err := os.Stat("/run/netns/" + id[1] + "-server"); err != nil {
		t.Fatal(err)
	}
	if cl, _, _ := nsperf("cleanup", "--dry-run"); strings.Contains(cl, id[1]) {
		t.Errorf("cleanup would remove a topology kept up on purpose:\n%s", cl)
	}
	show, err := exec.Command("ip", "-n", id[1]+"-client", "-d", "link", "show", "eth0").CombinedOutput()
	if err != nil || !strings.Contains(string(show), "gso_max_size 185000") || !strings.Contains(string(show), "alias nsperf:"+id[1]) {
		t.Errorf("client/eth0 after up: %v\n%s", err, show)
	}
	if out, errOut, code := nsperf("down", id[1]); code != 0 || !strings.Contains(out, "removed run "+id[1]) {
		t.Fatalf("down: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := nsperf("down", id[1]); code == 0 || !strings.Contains(errOut, "no state file") {
		t.Errorf("second down: exit %d %s", code, errOut)
	}
}

// TestUpXDP: `nsperf up` of a baseline with an XDP program leaves it attached after the nsperf
// process is gone (its bpf_link pinned in bpffs, which the read-back before "is up" checked),
// and `nsperf down` takes it away, pin and all.
func TestUpXDP(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	s, err := os.ReadFile("../../scenarios/library/veth-xdp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "up.yaml")
	os.WriteFile(file, []byte(strings.Replace(string(s), "  - name: no-xdp\n", "", 1)), 0o644)
	// A process of its own: what it held dies with it, as a user's nsperf up's does.
	out, err := exec.Command(clitest.Binary, "up", file).CombinedOutput()
	id := regexp.MustCompile(`run (nsp[0-9a-f]{4}) is up in state xdp-pass`).FindSubmatch(out)
	if err != nil || id == nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	run := string(id[1])
	downed := false
	t.Cleanup(func() {
		if !downed {
			nsperf("down", run)
		}
	})
	show, err := exec.Command("ip", "-n", run+"-server", "-d", "link", "show", "eth0").CombinedOutput()
	if err != nil || !strings.Contains(string(show), "prog/xdp id ") {
		t.Errorf("server/eth0 after up has no XDP program (%v):\n%s", err, show)
	}
	if _, err := os.Lstat(runstate.PinDir(plan.RunID(run))); err != nil {
		t.Errorf("no pins of the run: %v", err)
	}
	stdout, errOut, code := nsperf("down", run)
	downed = code == 0
	if code != 0 || !strings.Contains(stdout, runstate.PinDir(plan.RunID(run))) {
		t.Errorf("down: exit %d %s %s", code, stdout, errOut)
	}
	if _, err := os.Lstat(runstate.PinDir(plan.RunID(run))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pins after down: %v", err)
	}
}

// TestCleanupAfterKill: a run killed with SIGKILL cannot tear down; `nsperf cleanup` removes
// what it left, and its tools died with it.
func TestCleanupAfterKill(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "iperf3")
	before := testenv.Take(runstate.Dir)
	// A cleanup, not a defer: it runs after the killed run's fixture is let go, so that what
	// cleanup misses counts as this test's.
	t.Cleanup(func() { testenv.CheckClean(t, before, runstate.Dir) })
	out := filepath.Join(t.TempDir(), "r.json")
	// --concurrent: not behind another nsperf run measuring beside the test.
	cmd := exec.Command(clitest.Binary, "run", "veth-bigtcp", "--runs", "5", "--duration", "3s", "--omit", "0s", "--concurrent", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitJournal(t, cmd, &stderr, out+".journal", 1, 60*time.Second)
	testenv.HoldKilled(t, before, runstate.Dir) // what the killed run leaves is this test's, not a test's beside it
	cmd.Process.Kill()
	cmd.Wait()
	// The finished samples live only in the journal: report reads it.
	rep, repErr, code := nsperf("report", out+".journal")
	// Exit 1 only for the expectation on "on", which the killed run may not have reached.
	if (code != 0 && !(code == exitExpectation && strings.Contains(repErr, "expectation failed: client/eth0 big_tx > 0"))) || !strings.Contains(rep, "tcp4") {
		t.Errorf("report of the killed run's journal: exit %d\n%s%s", code, rep, repErr)
	}
	left := testenv.Take(runstate.Dir)
	if len(left.Namespaces) <= len(before.Namespaces) {
		t.Fatalf("the killed run left no namespaces: the test proves nothing (%v)", left.Namespaces)
	}
	var killed string // the killed run's id, of a namespace it made
	for _, ns := range left.Namespaces {
		if !slices.Contains(before.Namespaces, ns) {
			killed, _, _ = strings.Cut(ns, "-")
		}
	}
	stdout, errOut, code := nsperf("cleanup")
	if code != 0 || !strings.Contains(stdout, "removed run "+killed) {
		t.Fatalf("cleanup: exit %d, want the killed run %s removed\n%s%s", code, killed, stdout, errOut)
	}
	// Once: a second cleanup finds nothing of it (other work on the machine may have left
	// something of its own meanwhile).
	if stdout, _, _ := nsperf("cleanup"); strings.Contains(stdout, killed) {
		t.Errorf("second cleanup: %s", stdout)
	}
}

func TestProbeCLI(t *testing.T) {
	testenv.RootTest(t, runstate.Dir)
	out, errOut, code := nsperf("probe", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r topo.ProbeReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("probe --format json: %v\n%s", err, out)
	}
	for _, kind := range []string{topo.ProbeVeth, topo.ProbeVxlanNoLower, topo.ProbeVxlanVeth, topo.ProbeTap, topo.ProbeBridge, topo.ProbeBridgePort} {
		if d := r.Device(kind); d == nil || d.Attrs == nil || d.Attrs["tso_max_size"] == 0 {
			t.Errorf("%s: %+v", kind, d)
		}
	}
	if len(r.Changes) != 7 || r.KernelRelease == "" || r.Tools["iperf3"] == "" {
		t.Errorf("changes %d, kernel %q, tools %v", len(r.Changes), r.KernelRelease, r.Tools)
	}
	text, _, code := nsperf("probe")
	if code != 0 || !strings.Contains(text, "kernel changes:") {
		t.Errorf("probe text: exit %d\n%s", code, text)
	}
}

// TestRefusedStateExits4: a state the kernel cannot apply (BIG TCP on a vxlan without a lower
// device, on a kernel without "vxlan: Enable BIG TCP packets") ends the run before measuring,
// with exit 4 and the reason; a kernel with the change takes it.
func TestRefusedStateExits4(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	data, err := os.ReadFile("../../scenarios/library/vxlan-bigtcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "required.yaml")
	os.WriteFile(file, []byte(strings.ReplaceAll(string(data), "optional: true", "optional: false")), 0o644)
	probe, err := topo.Probe(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	// An earlier run's files at the same path: a run that measures nothing touches neither.
	os.WriteFile(out, []byte("earlier result\n"), 0o644)
	os.WriteFile(out+".journal", []byte("earlier journal\n"), 0o644)
	_, errOut, code := nsperf("run", file, "--runs", "1", "--duration", "1s", "--omit", "0s", "--out", out)
	if probe.Device(topo.ProbeVxlanNoLower).Attrs["tso_max_size"] >= 185000 {
		if code != 0 {
			t.Fatalf("kernel with the vxlan change: exit %d\n%s", code, errOut)
		}
		return
	}
	if code != exitSkipped || !strings.Contains(errOut, "state on: gso_max_size 185000 > tso_max_size 65536 of client/vx0") {
		t.Fatalf("exit %d, want 4 with the reason:\n%s", code, errOut)
	}
	for path, want := range map[string]string{out: "earlier result\n", out + ".journal": "earlier journal\n"} {
		if data, err := os.ReadFile(path); err != nil || string(data) != want {
			t.Errorf("%s changed by a run that measured nothing: %q, %v", path, data, err)
		}
	}
}

// TestMissingLinkKindExits4: a shipped scenario with a link kind this kernel lacks (the probe
// says which) ends at its build with exit 4 naming the kind's config option, and leaves
// nothing behind; one whose kinds are all here runs.
func TestMissingLinkKindExits4(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	probe, err := topo.Probe(nil)
	if err != nil {
		t.Fatal(err)
	}
	probed := func(l scenarios.Link) string {
		switch spec := l.Spec().(type) {
		case *scenarios.Geneve:
			return topo.ProbeGeneve
		case *scenarios.Ipvlan:
			return topo.ProbeIpvlan
		case *scenarios.Netkit:
			return topo.ProbeNetkit
		case *scenarios.IPTunnel:
			return topo.ProbeTunnel(spec.Mode)
		}
		return ""
	}
	for _, name := range []string{"geneve-bigtcp", "ipvlan-l3", "netkit-bigtcp", "ip-tunnels"} {
		s, err := scenarios.Load(name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "" // the first missing kind's own option
		for _, l := range s.Topology.Links {
			if d := probe.Device(probed(l)); want == "" && d != nil && d.Attrs == nil {
				want = fmt.Sprintf("this kernel has no %s devices", strings.TrimSuffix(d.Kind, " (l2) over a veth"))
				want += " (operation not supported): it needs CONFIG_" + l.Spec().Modules()[0].Options[0]
			}
		}
		// --concurrent: not behind another nsperf run measuring beside the test.
		_, errOut, code := nsperf("run", name, "--runs", "1", "--duration", "1s", "--omit", "0s", "--concurrent", "--out", filepath.Join(t.TempDir(), "r.json"))
		switch {
		case want == "" && code != 0:
			t.Errorf("%s, every link kind here: exit %d\n%s", name, code, errOut)
		case want != "" && (code != exitSkipped || !strings.Contains(errOut, want)):
			t.Errorf("%s: exit %d, want %d with %q:\n%s", name, code, exitSkipped, want, errOut)
		}
	}
}

// TestMissingCongestionControlExits4: a namespace's congestion control the kernel lacks, set
// by the topology, ends the run at the build with exit 4 naming the option that builds it (the
// kernel answers the write with ENOENT); a host-wide sysctl is invalid, exit 2 naming it.
func TestMissingCongestionControlExits4(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	scenario := func(sysctl string) string {
		file := filepath.Join(t.TempDir(), "cc.yaml")
		os.WriteFile(file, []byte(`name: cc
topology:
  namespaces: [client, server]
  links:
    - veth:
        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}
        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}
  sysctls: {client: {`+sysctl+`}}
states: [{name: base}]
workloads:
  - name: tcp
    iperf3: {client: {ns: client}, server: {ns: server, addr: 198.18.0.2}}
`), 0o644)
		return file
	}
	run := func(file string) (string, int) {
		_, errOut, code := nsperf("run", file, "--runs", "1", "--duration", "1s", "--omit", "0s", "--concurrent", "--out", filepath.Join(t.TempDir(), "r.json"))
		return errOut, code
	}
	want := "sysctl net.ipv4.tcp_congestion_control=nosuchcc in client: this kernel has no nosuchcc congestion control: it needs CONFIG_TCP_CONG_NOSUCHCC"
	if errOut, code := run(scenario("net.ipv4.tcp_congestion_control: nosuchcc")); code != exitSkipped || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, want %d with %q:\n%s", code, exitSkipped, want, errOut)
	}
	want = "topology.sysctls.client.net.core.rmem_max: net.core.rmem_max is host-wide"
	if errOut, code := run(scenario("net.core.rmem_max: 8388608")); code != exitUsage || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, want %d with %q:\n%s", code, exitUsage, want, errOut)
	}
}

// TestOVSVswitchdKilled: ovs-vswitchd dying mid-run ends the run with exit 3 and its reason,
// keeps the finished samples, and leaves nothing behind.
func TestOVSVswitchdKilled(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "iperf3")
	testenv.RequireTool(t, "ovs-vswitchd")
	before := testenv.Take(runstate.Dir)
	defer testenv.CheckClean(t, before, runstate.Dir)
	out := filepath.Join(t.TempDir(), "r.json")
	// --concurrent: not behind another nsperf run measuring beside the test.
	cmd := exec.Command(clitest.Binary, "run", "../../topo/testdata/ovs.yaml", "--runs", "5", "--duration", "2s", "--omit", "0s", "--concurrent", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitJournal(t, cmd, &stderr, out+".journal", 1, 60*time.Second)
	killed := false
	for _, p := range testenv.Take(runstate.Dir).Processes { // "PID NAME", new since the test began
		var pid int
		if strings.HasSuffix(p, " ovs-vswitchd") && !slices.Contains(before.Processes, p) {
			fmt.Sscan(p, &pid)
			killed = syscall.Kill(pid, syscall.SIGKILL) == nil
		}
	}
	if !killed {
		t.Fatal("found no ovs-vswitchd of the run to kill")
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInfra || !strings.Contains(stderr.String(), "ovs-vswitchd exited unexpectedly") {
		t.Fatalf("exit %v, want 3 naming ovs-vswitchd:\n%s", err, stderr.String())
	}
	if r, _, err := results.ReadFile(out); err != nil || r.Complete || len(r.Cases[0].Samples) == 0 {
		t.Errorf("partial result: %v", err)
	}
}

// TestNetdevFormat: `run big-tcp-rr --format netdev` prints per state the commands and one
// row of MIN_LATENCY P90_LATENCY P99_LATENCY THROUGHPUT per run, then the summary.
func TestNetdevFormat(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "netperf")
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := nsperf("run", "big-tcp-rr", "--runs", "2", "--duration", "1s", "--format", "netdev", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	row := regexp.MustCompile(`(?m)^\d+ +\d+ +\d+ +[\d.]+$`)
	for _, state := range []string{"off", "on"} {
		section := stdout[strings.Index(stdout, "# state "+state):]
		if end := strings.Index(section[1:], "# state "); end > 0 {
			section = section[:end]
		}
		if !strings.Contains(section, "link set dev eth0 gso_max_size") || !strings.Contains(section, "-O MIN_LATENCY,P90_LATENCY,P99_LATENCY,THROUGHPUT|tail -1") {
			t.Errorf("state %s lacks its commands:\n%s", state, section)
		}
		if n := len(row.FindAllString(section, -1)); n != 2 {
			t.Errorf("state %s: %d rows, want 2:\n%s", state, n, section)
		}
	}
	for _, metric := range []string{"rr6 throughput: off", "rr6 min_latency: off", "rr6 p90_latency", "rr6 p99_latency"} {
		if !strings.Contains(stdout, metric) {
			t.Errorf("summary lacks %q:\n%s", metric, stdout)
		}
	}
	for _, format := range []string{"markdown", "csv", "netdev", "table"} {
		if rep, _, code := nsperf("report", "--format", format, out); code != 0 || len(rep) == 0 {
			t.Errorf("report --format %s: exit %d", format, code)
		}
	}
}

// TestExpectationExit1: a run whose expectation fails exits 1, says why, and writes the JUnit
// report with the failure and its figures; `report` gives the same verdict without root.
func TestExpectationExit1(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	data, err := os.ReadFile("../../scenarios/library/veth-bigtcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "expect.yaml")
	// veth-bigtcp ends with its expect: list; these items join it.
	os.WriteFile(file, append(data, []byte(`  - {workload: tcp4, change: ">= +1000%"}
  - {device: client/eth0, state: "on", attr: gso_max_size, value: "== 185000"}
`)...), 0o644)
	out, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "junit.xml")
	stdout, stderr, code := nsperf("run", file, "--runs", "1", "--duration", "1s", "--omit", "0s", "--out", out, "--junit", junit)
	if code != exitExpectation || !strings.Contains(stderr, "expectation failed: tcp4 throughput on: change >= +1000%") {
		t.Fatalf("exit %d, want 1 naming the expectation:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "expect client/eth0 gso_max_size == 185000: PASS (measured: 185000 in on)") {
		t.Errorf("table lacks the passing expectation:\n%s", stdout)
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), `<failure message="expectation failed: tcp4 throughput on: change &gt;= +1000%"`) {
		t.Errorf("junit: %v\n%s", err, x)
	}
	if _, errOut, code := nsperf("report", out); code != exitExpectation || !strings.Contains(errOut, "expectation failed") {
		t.Errorf("report: exit %d %s", code, errOut)
	}
}

// TestCheck: nsperf check reads this machine and prints every item, OK or with what to change
// (the items themselves are a golden over a fake tree in internal/syscheck).
func TestCheck(t *testing.T) {
	out, errOut, code := nsperf("check", "--cpus", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, item := range []string{"CPU governor", "turbo", "SMT", "irqbalance", "IRQs on the pinned CPUs", "isolcpus", "transparent huge pages", "steal time", "KVM for guests"} {
		if !strings.Contains(out, item) {
			t.Errorf("check lacks %q:\n%s", item, out)
		}
	}
	out, _, code = nsperf("check", "--format", "json")
	var items []struct{ Name, Value string }
	if err := json.Unmarshal([]byte(out), &items); code != 0 || err != nil || len(items) < 9 {
		t.Errorf("check --format json: exit %d, %v\n%s", code, err, out)
	}
}

// TestVMClockUsage: a clock no guest can run with is refused before anything is read or
// booted, with the reason (exit 2).
func TestVMClockUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "veth-bigtcp", "--kernel", "/nonexistent/bzImage", "--vm-clock", "fast"}, `--vm-clock "fast": want auto (virtual under TCG, wall under KVM), virtual or wall`},
		{[]string{"run", "veth-bigtcp", "--kernel", "/nonexistent/bzImage", "--vm-clock", "virtual", "--vm-accel", "kvm"}, "virtual time (QEMU's icount) exists under TCG only"},
		{[]string{"probe", "--kernel", "/nonexistent/bzImage", "--vm-clock", "virtual", "--vm-accel", "kvm"}, "virtual time (QEMU's icount) exists under TCG only"},
		{[]string{"run", "veth-bigtcp", "--vm-clock", "wall"}, "--vm-* need --kernel"},
	} {
		_, errOut, code := nsperf(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "nonexistent") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestKconfigFileNameCannotInject: a scenario file whose name holds a newline and an option
// adds no line to the fragment (issue 31, item 19).
func TestKconfigFileNameCannotInject(t *testing.T) {
	data, err := os.ReadFile(bisectScenario)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "s\nCONFIG_INJECTED=y\n.yaml")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := nsperf("kconfig", name)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "CONFIG_INJECTED") {
			t.Errorf("the file name added a line:\n%s", stdout)
		}
	}
	if !strings.Contains(stdout, `\nCONFIG_INJECTED=y\n.yaml`) {
		t.Errorf("the header does not show the name escaped:\n%s", stdout)
	}
}

// TestCheckRefusesOfflineCPUs: nsperf check --cpus names CPUs that are online (issue 31,
// item 21).
func TestCheckRefusesOfflineCPUs(t *testing.T) {
	_, stderr, code := nsperf("check", "--cpus", "999999")
	if code != exitUsage || !strings.Contains(stderr, "CPU 999999 is not online") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
