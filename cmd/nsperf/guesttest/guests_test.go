// Package guesttest holds nsperf's guest tests (QEMU, --kernel: runs, A/B, probe, bisect, the clock, the link kinds and tools on Debian's 6.12), which run the binary as a user does: split off from
// cmd/nsperf so that no test package comes near go test's time limit on a busy machine.
package guesttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/exitcode"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/clitest"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// Every guest test runs beside the others (t.Parallel: as many at once as go test's -parallel,
// GOMAXPROCS by default). A guest measures in virtual time, which another guest cannot move,
// and pins its vCPU to a CPU no other guest is on where there is one (vm's preferFree); each
// test looks only at what it made (its guests are its process's descendants, its
// namespaces and state files its own). One guest test at a time left a CPU idle for the last
// third of make test, after the host and builds lanes had ended. Go starts parallel tests in
// the order of the files and of the functions in them: the longest (TestVMBisect) comes first,
// so that the short ones fill the end.

// The guest tests boot Debian's 6.1 kernel (not the host's) under TCG with one vCPU and short
// runs: ../testdata/veth-bigtcp-short.yaml is veth-bigtcp cut to IPv6 (6.1 has no IPv4 BIG TCP
// knobs), both ends on CPU 0, two alternating runs of 2 s per state.

const shortScenario = "../testdata/veth-bigtcp-short.yaml"

const bisectScenario = "../testdata/bisect.yaml"

// affinityWatch reads, every 50 ms while a guest test runs, the Cpus_allowed_list of every
// thread of every QEMU nsperf started (/proc/PID/task/TID/status): what the kernel enforced,
// to hold against what the result recorded.
type affinityWatch struct {
	mu   sync.Mutex
	seen map[int][]string // thread id -> the distinct lists seen, in order
	last map[int]string
	// pidOf is each thread's QEMU process: the tests run at once in one process, so a test's
	// guests are those whose process has a vCPU thread its result records.
	pidOf map[int]string
	stop  chan struct{}
	done  chan struct{}
}

// TestVMBisect: git bisect run, with the recipe of docs/history-and-ci.md as written, finds the first bad
// commit of a small repository whose commits stand in for kernel builds: each one's build.sh
// points ./modules at Debian's 6.12 module tree or at the same tree with a veth of
// tso_max_size 8192, and one in the good part does not build (skipped: `|| exit 125`; with
// `&&` git would take its exit 1 for bad). Each step measures the kernel in a guest against
// the known-good result and stops at the first look that decides.
func TestVMBisect(t *testing.T) {
	t.Parallel()
	image, stock, slow := clitest.BuiltKernels(t, "../testdata/veth-tso-8192.patch")
	clitest.GuestTest(t)
	testenv.RequireTool(t, "git")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	// Exit 0, or 1 where its state small differs from default: neither judges a commit.
	if stdout, stderr, code := clitest.Run(t, "run", bisectScenario, "--kernel", image, "--modules", stock, "--vm-accel", "tcg", "--no-history", "--out", good); code != 0 && code != 1 {
		t.Fatalf("the good kernel's run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	repo := filepath.Join(dir, "linux")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(repo, 0o755)
	git("init", "-q")
	var commits []string
	for i, tree := range []string{stock, stock, stock, "", stock, slow, slow} {
		build := fmt.Sprintf("#!/bin/sh\n# build %d\nln -sfn %s modules\n", i+1, tree)
		if tree == "" {
			build = "#!/bin/sh\necho 'error: this commit does not build' >&2\nexit 2\n"
		}
		os.WriteFile(filepath.Join(repo, "build.sh"), []byte(build), 0o755)
		git("add", "build.sh")
		git("commit", "-q", "-m", fmt.Sprintf("step %d", i+1))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	scenario, _ := filepath.Abs(bisectScenario)
	step := fmt.Sprintf("./build.sh || exit 125; %s run %s --kernel %s --modules ./modules --vm-accel tcg --baseline %s --bisect --no-history --out %s/step.json",
		clitest.Binary, scenario, image, good, dir)
	git("bisect", "start", commits[6], commits[0])
	cmd := exec.Command("git", "bisect", "run", "sh", "-c", step)
	cmd.Dir = repo
	out, _ := cmd.CombinedOutput()
	git("bisect", "reset")
	if !strings.Contains(string(out), commits[5]+" is the first bad commit") || !strings.Contains(string(out), "error: this commit does not build") {
		t.Fatalf("git bisect run did not skip step 4 and find step 6 (%s):\n%s", commits[5], out)
	}
	t.Logf("git bisect run:\n%s", out)
	if !strings.Contains(string(out), "bisect: bad:") || !strings.Contains(string(out), "bisect: good: no gated regression") ||
		!strings.Contains(string(out), "every gated comparison decided at look 1") {
		t.Errorf("the steps do not say why, or did not stop at the first look:\n%s", out)
	}
}

// TestVMRun is the guest test on the wall clock (--vm-clock wall), which keeps that path
// alive: multi-threaded TCG, each vCPU pinned.
func TestVMRun(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	out := filepath.Join(t.TempDir(), "r.json")
	watch := watchAffinity(t)
	stdout, stderr, code := clitest.Run(t, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--vm-clock", "wall", "--duration", "1s", "--no-history", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := r.Environment
	// Pinned (the default), with multi-threaded TCG: one vCPU on a CPU this test may
	// use, QEMU's other threads on the rest; what the kernel enforced is what was recorded.
	watch.checkPinning(t, false, env.VM.Pinning)
	if env.VM.TCGThreads != "multi" || env.VM.CPU != vm.TCGCPUModel || !strings.Contains(stdout, "TCG (multi-threaded, CPU qemu64,-cx16)") || !strings.Contains(stdout, "pinned: vCPU 0 on host CPU") {
		t.Errorf("tcg threads %q, table:\n%s", env.VM.TCGThreads, stdout)
	}
	if !strings.HasPrefix(env.KernelRelease, "6.1.") || env.VM == nil || env.VM.Accel != "tcg" || env.VM.CPUs != 1 ||
		env.VM.Image.Path != image || len(env.VM.Image.SHA256) != 64 || !strings.Contains(env.VM.QEMU, ".") || !slices.Contains(env.VM.Loaded, "veth") ||
		env.VM.Boot != vm.BootPVH { // Debian's kernel (xz, CONFIG_PVH): its vmlinux, decompressed on the host
		t.Errorf("environment: kernel %q, vm %+v", env.KernelRelease, env.VM)
	}
	if r.Label != env.KernelRelease || r.Scenario.File != shortScenario {
		t.Errorf("label %q, scenario file %q", r.Label, r.Scenario.File)
	}
	states := map[string]int{}
	for _, s := range r.Cases[0].Samples {
		if s.Error != "" {
			t.Errorf("sample failed: %s", s.Error)
		}
		if _, ok := s.Value("throughput"); ok {
			states[s.State]++
		}
	}
	if states["off"] != 2 || states["on"] != 2 {
		t.Errorf("samples per state: %v, want 2 each", states)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "TCG") }) || !strings.Contains(stdout, "WARNING: measured in a QEMU guest with TCG") {
		t.Errorf("no TCG warning: %v\n%s", r.Warnings, stdout)
	}
	if !strings.Contains(stdout, "vm: guest kernel 6.1.") || !strings.Contains(stdout, "wall clock") || env.VM.Clock != "wall" || env.VM.Icount != "" || env.VM.IdleGate != "" {
		t.Errorf("the table does not name the guest on the wall clock (clock %q, icount %q, idle gate %q):\n%s", env.VM.Clock, env.VM.Icount, env.VM.IdleGate, stdout)
	}
}

// TestVMRunVirtual: with no clock flag a TCG guest runs in virtual time: single-threaded TCG
// with the fixed icount options, its one thread pinned to a CPU of its own and QEMU's other
// threads to the rest, the idle gate skipped, and every place that shows the guest says so.
// One guest checks three things more:
//   - SMP in virtual time: Debian 12's 6.1 hangs bringing up its second vCPU at boot in
//     virtual time; the guest boots on one (maxcpus=1) and /init brings the second online, so
//     that a scenario pinned to CPUs 0 and 1 runs with two vCPUs, and the result says how its
//     CPUs came up;
//   - --kernel DIR, a built kernel tree: its arch/x86/boot/bzImage and the modules its
//     modules.order lists, without --modules;
//   - the config check lets a scenario run on a tree whose .config lacks an option the
//     scenario does not need (CONFIG_VXLAN; TestVMConfigRefusedBeforeBoot refuses a vxlan
//     scenario on the same tree).
func TestVMRunVirtual(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	kdir := buildTree(t, image, modules)
	os.WriteFile(filepath.Join(kdir, ".config"), configWithout(t, image, "VXLAN"), 0o644)
	out := filepath.Join(t.TempDir(), "r.json")
	watch := watchAffinity(t)
	stdout, stderr, code := clitest.Run(t, "run", twoCPUScenario(t), "--kernel", kdir, "--vm-accel", "tcg", "--duration", "1s", "--no-history", "--out", out)
	if code != 0 || strings.Contains(stderr, "is not set") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Environment.VM
	watch.checkPinning(t, false, v.Pinning)
	if v.Clock != "virtual" || v.Icount != vm.IcountOptions || v.TCGThreads != "single" || v.IdleGate != vm.IdleGateSkipped || v.CPU != vm.TCGCPUModel || !strings.HasSuffix(v.RTC, ","+vm.VirtualRTC) {
		t.Errorf("vm %+v", v)
	}
	for _, want := range []string{"TCG (single-threaded, CPU qemu64,-cx16)", "virtual time (icount shift=2,sleep=off,align=off; rtc base=", ",clock=vm)", "idle gate skipped: virtual time",
		"WARNING: virtual time: figures count the instructions the guest executes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "of virtual time left)") {
		t.Errorf("progress does not say its time is virtual:\n%s", stderr)
	}
	for _, s := range r.Cases[0].Samples {
		if s.Error != "" || s.IdleWaitSeconds != 0 {
			t.Errorf("sample: error %q, idle wait %g s", s.Error, s.IdleWaitSeconds)
		}
		// No page of nsperf's own code came from the host inside a sample: the guest locked
		// them in its memory before measuring (vm.LockOwnPages). Unlocked, the first sample
		// reads the code it runs first from the host over 9p.
		// Nor did its garbage collector run there (runner's collectBeforeSample).
		if s.Noise == nil || s.Noise.SelfMajorFaults != 0 || s.Noise.SelfGCCycles != 0 {
			t.Errorf("sample %d %s %s: nsperf's major faults or collections in the guest: %+v", s.Round, s.State, s.Workload, s.Noise)
		}
	}
	if !strings.Contains(stderr, "nsperf's pages locked in guest memory") {
		t.Errorf("progress does not say that nsperf's pages were locked in guest memory:\n%s", stderr)
	}
	var ktap strings.Builder
	if err := results.KTAP(&ktap, r); err != nil || !strings.Contains(ktap.String(), "# vm: QEMU ") || !strings.Contains(ktap.String(), "virtual time (icount") {
		t.Errorf("KTAP: %v\n%s", err, ktap.String())
	}
	// Two vCPUs, the second brought up after boot.
	if v.CPUs != 2 || r.Environment.CPUs != 2 || v.CPUBringUp != vm.CPUBringUpAfterBoot {
		t.Errorf("the guest: %d CPUs in it, %+v", r.Environment.CPUs, v)
	}
	if !strings.Contains(stdout+stderr, "2 vCPU (CPUs brought up "+vm.CPUBringUpAfterBoot+")") {
		t.Errorf("the table does not say how the CPUs came up:\n%s\n%s", stdout, stderr)
	}
	// The tree's modules were loaded: veth from its modules.order.
	if !slices.Contains(v.Loaded, "veth") {
		t.Errorf("modules loaded from the tree: %v", v.Loaded)
	}
}

// twoCPUScenario is the short scenario with its server on CPU 1: a guest of two vCPUs.
func twoCPUScenario(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(shortScenario)
	if err != nil {
		t.Fatal(err)
	}
	twoCPUs := strings.Replace(string(data), `server: {ns: server, addr: "2001:2::2", cpu: 0}`, `server: {ns: server, addr: "2001:2::2", cpu: 1}`, 1)
	if twoCPUs == string(data) {
		t.Fatal("the short scenario's server is not pinned to CPU 0 any more")
	}
	scenario := filepath.Join(t.TempDir(), "two-cpus.yaml")
	os.WriteFile(scenario, []byte(twoCPUs), 0o644)
	return scenario
}

// configWithout is the test kernel's config (config-RELEASE beside its image) with an option
// turned off.
func configWithout(t *testing.T, image, option string) []byte {
	t.Helper()
	configs, _ := filepath.Glob(filepath.Join(filepath.Dir(image), "config-*"))
	if len(configs) != 1 {
		t.Fatalf("configs beside %s: %v", image, configs)
	}
	data, err := os.ReadFile(configs[0])
	if err != nil {
		t.Fatal(err)
	}
	without := regexp.MustCompile(`(?m)^CONFIG_`+option+`=.*$`).ReplaceAll(data, []byte("# CONFIG_"+option+" is not set"))
	if bytes.Equal(without, data) {
		t.Fatalf("%s does not set CONFIG_%s", configs[0], option)
	}
	return without
}

// TestVMProbe probes the test kernel in a guest, as a built kernel tree (--kernel DIR: its
// bzImage and the modules of its modules.order, as a kernel build leaves them): the OVS
// datapath, the tunnels and ipvlan need the tree's modules.
func TestVMProbe(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	kdir := buildTree(t, image, modules)
	stdout, stderr, code := clitest.Run(t, "probe", "--kernel", kdir, "--vm-accel", "tcg", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var report topo.ProbeReport
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !strings.HasPrefix(report.KernelRelease, "6.1.") {
		t.Errorf("probed kernel %q, want the guest's 6.1", report.KernelRelease)
	}
	d := report.Device(topo.ProbeOVSInternal)
	if d == nil || d.Error != "" || d.Attrs["tso_max_size"] != 65536 {
		t.Fatalf("OVS internal port of the kernel datapath: %+v", d)
	}
	for _, c := range report.Changes {
		if c.Change == topo.ChangeOVSInternal && c.Verdict != topo.Absent {
			t.Errorf("6.1 has not got the internal port change: %+v", c)
		}
	}
	// Debian's 6.1 builds every IP tunnel as a module the guest loads, and has no netkit
	// (Linux 6.7): the rows the host cannot fill.
	for _, m := range scenarios.TunnelModes {
		if d := report.Device(topo.ProbeTunnel(m.Name)); d == nil || d.Attrs["mtu"] == 0 {
			t.Errorf("%s tunnel: %+v", m.Name, d)
		}
	}
	if d := report.Device(topo.ProbeNetkit); d == nil || d.Attrs != nil || !strings.Contains(d.Error, "CONFIG_NETKIT") {
		t.Errorf("netkit on 6.1: %+v", d)
	}
	// An ipvlan and a macvlan take their veth's TSO limit when created.
	for _, kind := range []string{topo.ProbeIpvlan, topo.ProbeMacvlan} {
		if d, veth := report.Device(kind), report.Device(topo.ProbeVeth); d == nil || veth == nil || d.Attrs["tso_max_size"] != veth.Attrs["tso_max_size"] {
			t.Errorf("%s on 6.1: %+v", kind, d)
		}
	}
}

// TestVMOVSSeed runs the shipped ovs-internal-tso seed in the guest, where the openvswitch
// module gives the kernel datapath: 6.1 has not got the September 2026 change, so the "on"
// state cannot be applied (tso_max_size 65536 of the internal port): exit 4, as promised.
func TestVMOVSSeed(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	// In virtual time, the default under TCG: 6.1 brings its second CPU up after boot
	// (TestVMVirtualSMP).
	stdout, stderr, code := clitest.Run(t, "run", "ovs-internal-tso", "--kernel", image, "--modules", modules, "--vm-accel", "tcg",
		"--no-history", "--runs", "2", "--duration", "1s", "--omit", "0s", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != exitcode.Skipped {
		t.Fatalf("exit %d, want 4\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"(OVS datapath system)", "gso_max_size 524280 > tso_max_size 65536 of ovs/int0"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestVMKernelsAB runs the same image as kernel A and kernel B: the rounds alternate ABBA, the
// waiting guest is paused (its QEMU uses next to no CPU during the other's turn), and with
// alpha 0.01 the two alike kernels show no significant change.
func TestVMKernelsAB(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	out := filepath.Join(t.TempDir(), "ab.json")
	db := filepath.Join(t.TempDir(), "h.db")
	watch := watchAffinity(t)
	// In turns (--vm-turns alternate): the schedule this test checks, which together (the
	// default in virtual time with a CPU for each guest; TestVMPatchAB) does not use.
	stdout, stderr, code := clitest.Run(t, "run", shortScenario, "--kernel", image, "--kernel", image, "--modules", modules, "--vm-accel", "tcg",
		"--vm-turns", "alternate", "--runs", "5", "--duration", "1s", "--alpha", "0.01", "--label", "base", "--label", "patched", "--db", db, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Both guests pinned alike; a paused guest's vCPU waited on the CPUs that measure nothing.
	var pins []*results.VMPinning
	for _, k := range r.Kernels {
		if k.Environment.VM == nil {
			t.Fatalf("kernel %s: no vm", k.Label)
		}
		pins = append(pins, k.Environment.VM.Pinning)
	}
	watch.checkPinning(t, true, pins...)
	if len(r.Kernels) != 2 || r.Kernels[0].Label != "base" || r.Kernels[1].Label != "patched" || r.Kernels[0].RunID == r.Kernels[1].RunID {
		t.Fatalf("kernels: %d", len(r.Kernels))
	}
	// Turns: round 1 A then B, round 2 B then A, ...; each kernel ran every round once.
	var order []string
	for _, turn := range r.Turns {
		order = append(order, turn.Kernel)
		if turn.PausedCPUSeconds > 0.1*turn.Seconds {
			t.Errorf("the paused guest used %.2f s of CPU during a %.1f s turn", turn.PausedCPUSeconds, turn.Seconds)
		}
	}
	if got := strings.Join(order, ""); !strings.HasPrefix(got, "ABBAABBAAB") {
		t.Errorf("turn order %s, want ABBA...", got)
	}
	states := map[string]int{}
	for _, c := range r.Cases {
		for _, s := range c.Samples {
			states[s.State]++
		}
		for _, s := range c.Summaries {
			if s.Comparison != nil && s.Comparison.Gated && (s.Comparison.Verdict == results.Regressed || s.Comparison.Verdict == results.Improved) {
				t.Errorf("%s %s %s vs %s: %s between identical kernels", s.Workload, s.Metric, s.State, s.Comparison.Baseline, s.Comparison.Verdict)
			}
		}
	}
	if states["off@A"] != 5 || states["on@B"] != 5 {
		t.Errorf("samples per merged state: %v", states)
	}
	// In virtual time the floor follows the instrument: the table says where it comes from,
	// and this A/A (one image twice) is kept for the scenario's later runs.
	if !strings.Contains(stdout, "min change from: virtual time: ") || !strings.Contains(stderr, "A/A: virtual time: an A/A of veth-bigtcp-short") {
		t.Errorf("the floor of virtual time is not said, or the A/A not kept:\n%s\n%s", stdout, stderr)
	}
	for _, want := range []string{"kernel A: base", "kernel B: patched", "on@B vs on@A", "turns: 10 (1A 1B 2B 2A"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	// compare reads the A/B result as its two kernels; the history holds both as runs.
	cmpOut, cmpErr, cmpCode := clitest.Run(t, "compare", out)
	if cmpCode != 0 || !strings.Contains(cmpOut, "on@B vs on@A") {
		t.Errorf("compare of the A/B result: exit %d\n%s\n%s", cmpCode, cmpOut, cmpErr)
	}
	hist, herr, hcode := clitest.Run(t, "history", "list", "--db", db)
	if hcode != 0 || !strings.Contains(hist, "base") || !strings.Contains(hist, "patched") {
		t.Errorf("history list: exit %d\n%s\n%s", hcode, hist, herr)
	}
}

// TestVMInterrupt stops a guest run with SIGINT once it measures: exit 130, no QEMU, no guest
// directory, nothing of the run left.
func TestVMInterrupt(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	tmp := t.TempDir()
	cmd := exec.Command(clitest.Binary, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history", "--runs", "20", "--out", filepath.Join(tmp, "r.json"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "[1/") { // the guest measured its first run
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Interrupted {
		t.Fatalf("exit %v, want 130\n%s", err, seen.String())
	}
	if !strings.Contains(seen.String(), "interrupted; the guests were stopped and their finished runs kept") {
		t.Errorf("stderr:\n%s", seen.String())
	}
	// What the guest finished is on the host, and nothing else: its journal, for report.
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 || entries[0].Name() != "r.json.A.journal" {
		t.Errorf("files left: %v", entries)
	}
	journalHolds(t, filepath.Join(tmp, "r.json.A.journal"))

	// kill -9 of the host's nsperf, then cleanup: the copy the run made as it went is kept.
	tmp = t.TempDir()
	before := testenv.Take(runstate.Dir)
	cmd = exec.Command(clitest.Binary, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history", "--runs", "20", "--out", filepath.Join(tmp, "r.json"))
	if stderr, err = cmd.StderrPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr)
	journal := filepath.Join(tmp, "r.json.A.journal")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if data, err := os.ReadFile(journal); err == nil && strings.Count(string(data), "\n") >= 3 { // header, case, a sample
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no journal copy on the host while the guest measured")
		}
	}
	testenv.HoldKilled(t, before, runstate.Dir) // what the killed run leaves is this test's, not a test's beside it
	cmd.Process.Kill()
	cmd.Wait()
	// The killed run's guest and its scratch directory (kept beside the guests, not in /tmp
	// where nothing would find it) are removed by cleanup; GuestTest checks nothing is left.
	if stdout, stderr, code := clitest.Run(t, "cleanup"); code != 0 || !strings.Contains(stdout, "removed modules installed for a guest vm-modules-") {
		t.Errorf("cleanup: exit %d\n%s\n%s", code, stdout, stderr)
	}
	journalHolds(t, journal)
}

func TestVMBadInput(t *testing.T) {
	t.Parallel()
	image, modules := testenv.TestKernel(t)
	clitest.NoGuestLeft(t)
	tmp := t.TempDir()
	text := filepath.Join(tmp, "notes.txt")
	os.WriteFile(text, []byte("not a kernel\n"), 0o644)
	// A module tree of the right release that lacks veth and the rest.
	partial := filepath.Join(tmp, "lib", "modules", "6.1.0-57-amd64")
	os.MkdirAll(filepath.Join(partial, "kernel"), 0o755)
	os.WriteFile(filepath.Join(partial, "modules.dep"), []byte("kernel/fs/9p/9p.ko:\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no such image", []string{"--kernel", filepath.Join(tmp, "bzImage")}, exitcode.Usage, []string{"--kernel " + filepath.Join(tmp, "bzImage"), "no such file"}},
		{"not a kernel", []string{"--kernel", text}, exitcode.Usage, []string{"not an x86 kernel image (bzImage)"}},
		{"modules of another kernel", []string{"--kernel", image, "--modules", filepath.Join(tmp, "nothing")}, exitcode.Usage, []string{"no modules of 6.1.0-57-amd64"}},
		{"missing modules", []string{"--kernel", image, "--modules", tmp}, exitcode.Skipped, []string{"missing modules virtio_pci, 9pnet_virtio, tcp_diag, veth"}},
		{"boot timeout", []string{"--kernel", image, "--modules", modules, "--boot-timeout", "1s"}, exitcode.Infra, []string{"boot timeout: the guest was not running after 1s", "console"}},
		{"three kernels", []string{"--kernel", image, "--kernel", image, "--kernel", image}, exitcode.Usage, []string{"an A/B run compares two kernels"}},
		{"a relative --vm-hide", []string{"--kernel", image, "--modules", modules, "--vm-hide", "etc/passwd"}, exitcode.Usage, []string{`--vm-hide "etc/passwd": give an absolute path`}},
		// The guest sees the host's root with what nsperf hides covered (issue 31, item 13):
		// a hidden iperf3 is not there for the guest, which says so (the host has it).
		{"a hidden path", []string{"--kernel", image, "--modules", modules, "--vm-hide", "/usr/bin/iperf3"}, exitcode.Skipped, []string{"iperf3 is not installed", "nsperf in the guest exited 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", shortScenario, "--vm-accel", "tcg", "--no-history", "--out", filepath.Join(tmp, "r.json")}, tc.args...)
			stdout, stderr, code := clitest.Run(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestVMCleanupFindsKilledGuest: a QEMU of a run that was killed (its directory unlocked) is
// found and stopped by nsperf cleanup; a QEMU that nsperf did not start is left alone.
func TestVMCleanupFindsKilledGuest(t *testing.T) {
	t.Parallel()
	testenv.RequireRoot(t)
	testenv.RequireTool(t, vm.QEMU)
	testenv.HoldFixture(t, "vm-killedtest") // the other lanes' leftover checks leave it to this test
	dir := filepath.Join(vm.Dir(), "vm-killedtest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(dir, old, old) // not a run that is just starting
	start := func(name string) (*exec.Cmd, chan error) {
		cmd := exec.Command(vm.QEMU, "-name", name, "-S", "-display", "none", "-nodefaults", "-accel", "tcg", "-m", "64")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		return cmd, exited
	}
	_, exited := start("nsperf-vm-killedtest")
	theirs, _ := start("somebody-elses-vm")
	time.Sleep(200 * time.Millisecond) // QEMU has exec'd: its command line is readable
	stdout, stderr, code := clitest.Run(t, "cleanup")
	if code != 0 || !strings.Contains(stdout, "removed guest vm-killedtest") {
		t.Fatalf("cleanup: exit %d\n%s\n%s", code, stdout, stderr)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the killed run's QEMU still runs")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists", dir)
	}
	if err := theirs.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("somebody else's QEMU was touched: %v", err)
	}
}

// TestVMAccelAuto: with --vm-accel auto, KVM is tried when its device opens; where it hangs
// after the BIOS (nested virtualization on the development VMs) the guest is prepared again
// and restarted under TCG in virtual time, saying so, so that the first run after a host boot
// measures on the clock every later run does; the next run goes straight to TCG. The KVM is
// the test's own: a device file of its own (NSPERF_KVM_DEVICE, whose hang has a marker of
// its own) and a QEMU wrapper (NSPERF_QEMU) whose KVM guests never leave the BIOS (-S: QEMU
// starts them stopped, and nothing lets them go). The host's marker is not touched.
func TestVMAccelAuto(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	dir := t.TempDir()
	device := filepath.Join(dir, "kvm")
	os.WriteFile(device, nil, 0o600)
	qemu := filepath.Join(dir, "qemu-kvm-hangs")
	real, err := exec.LookPath(vm.QEMU)
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/bash\n# A QEMU whose KVM hangs after the BIOS: -accel kvm becomes a TCG guest stopped at its first instruction.\n" +
		"a=(\"$@\"); hang=\nfor i in \"${!a[@]}\"; do if [ \"${a[$i]}\" = kvm ]; then a[$i]=tcg; hang=1; fi; done\n" +
		"[ -n \"$hang\" ] && a+=(-S)\nexec " + real + " \"${a[@]}\"\n"
	if err := os.WriteFile(qemu, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"NSPERF_KVM_DEVICE=" + device, "NSPERF_QEMU=" + qemu}
	marker := vm.KVMHangMarkerOf(device) // keyed by the device: this test's, removed with it
	t.Cleanup(func() { os.Remove(marker) })
	hostMarker, _ := os.ReadFile(vm.KVMHangMarker())
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := clitest.RunEnv(t, env, "run", shortScenario, "--kernel", image, "--modules", modules, "--runs", "1", "--duration", "1s", "--no-history", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "with kvm") || !strings.Contains(stderr, "fell back to TCG, in virtual time") {
		t.Errorf("the KVM probe and its fallback are not said:\n%s", stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Environment.VM
	if v == nil || v.Accel != vm.AccelTCG || v.Clock != vm.ClockVirtual || v.Icount != vm.IcountOptions || v.IdleGate != vm.IdleGateSkipped ||
		!strings.Contains(v.Warning, "fell back to TCG, in virtual time") {
		t.Errorf("the result's guest: %+v", v)
	}
	if !strings.Contains(stdout+stderr, "virtual time") || strings.Contains(stdout+stderr, "on the wall clock the run was prepared for") {
		t.Errorf("the table does not say virtual time:\n%s\n%s", stdout, stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the KVM hang is not remembered for the test's device: %v", err)
	}
	if now, _ := os.ReadFile(vm.KVMHangMarker()); !bytes.Equal(now, hostMarker) {
		t.Errorf("the host's own marker changed: %q -> %q", hostMarker, now)
	}
	// The next run does not wait for KVM again (it stops at the boot timeout of 1 s).
	_, stderr2, _ := clitest.RunEnv(t, env, "run", shortScenario, "--kernel", image, "--modules", modules, "--boot-timeout", "1s", "--no-history", "--out", filepath.Join(t.TempDir(), "r2.json"))
	if !strings.Contains(stderr2, "KVM hung after the BIOS in an earlier run") || !strings.Contains(stderr2, "with tcg") || strings.Contains(stderr2, "with kvm") {
		t.Errorf("second run:\n%s", stderr2)
	}
}

// TestVMQdiscsAndSysctls: in a guest on Debian 12's kernel, which has the qdiscs this host
// lacks, a state attaches fq, fq_codel or netem to a veth end, one nsperf's XDP_PASS program,
// one sets NAPI's knobs in the device's sysfs, and one sets sysctls in the client's namespace; each is read back into the result, and
// every sample measured. The measuring lock is held by another run meanwhile (the test's, or
// one beside it): a guest in
// virtual time does not wait for it.
func TestVMQdiscsAndSysctls(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	if lock, _, err := runstate.LockMeasuring(context.Background(), "held-by-the-test", true, nil); err != nil {
		t.Fatal(err)
	} else if lock != nil {
		defer lock.Release()
	}
	out := filepath.Join(t.TempDir(), "r.json")
	// One run per state: each state is applied and read back whatever the runs.
	_, stderr, code := clitest.Run(t, "run", "../testdata/qdiscs-sysctls.yaml", "--kernel", image, "--modules", modules, "--vm-accel", "tcg",
		"--runs", "1", "--omit", "0", "--no-history", "--out", out)
	if code != 0 || strings.Contains(stderr, "waiting: another nsperf run is measuring") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	for state, want := range map[string]string{"fq": "fq maxrate 2gbit", "fq-codel": "fq_codel target 2ms interval 40ms", "netem": "netem delay 1ms loss 1%"} {
		if rec := clitest.StateRecord(c, state); rec == nil || rec.Unavailable != "" || rec.Qdiscs["client/eth0"] != want {
			t.Errorf("state %s: %+v, want the qdisc %q", state, rec, want)
		}
	}
	if rec := clitest.StateRecord(c, "no-autocork"); rec == nil || rec.Sysctls["client"]["net.ipv4.tcp_autocorking"] != "0" || rec.Sysctls["client"]["net.ipv4.tcp_rmem"] != "4096 65536 1048576" {
		t.Errorf("no-autocork: %+v", rec)
	}
	if rec := clitest.StateRecord(c, "default"); rec == nil || len(rec.Qdiscs) != 0 || rec.Sysctls["client"]["net.ipv4.tcp_autocorking"] != "1" {
		t.Errorf("default: %+v", rec)
	}
	if rec := clitest.StateRecord(c, "xdp"); rec == nil || !strings.HasPrefix(rec.XDP["server/eth0"], "pass (id ") {
		t.Errorf("xdp: %+v", rec)
	}
	if rec := clitest.StateRecord(c, "threaded"); rec == nil || rec.Devices["server/eth0"]["threaded"] != 1 || rec.Devices["server/eth0"]["gro_flush_timeout"] != 20000 {
		t.Errorf("threaded: %+v", rec)
	}
	if len(c.Samples) != 7 {
		t.Errorf("%d samples, want 7", len(c.Samples))
	}
	for _, s := range c.Samples {
		if s.Error != "" || len(s.Metrics) == 0 || s.Metrics[0].Value <= 0 {
			t.Errorf("%s/%s: %v %s", s.State, s.Workload, s.Metrics, s.Error)
		}
	}
}

// TestVMConfigRefusedBeforeBoot: a tree whose .config lacks CONFIG_VXLAN is refused for a
// vxlan scenario before anything boots, the option named (exit 4); an image with a
// config-RELEASE beside it likewise. (TestVMRunVirtual runs a scenario that needs no vxlan on
// such a tree.)
func TestVMConfigRefusedBeforeBoot(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	kdir := buildTree(t, image, modules)
	without := configWithout(t, image, "VXLAN")
	os.WriteFile(filepath.Join(kdir, ".config"), without, 0o644)
	configs, _ := filepath.Glob(filepath.Join(filepath.Dir(image), "config-*"))
	idir := t.TempDir()
	img := filepath.Join(idir, filepath.Base(image))
	os.Link(image, img)
	os.WriteFile(filepath.Join(idir, filepath.Base(configs[0])), without, 0o644)
	for _, tc := range []struct{ kernel, config string }{{kdir, ".config"}, {img, filepath.Base(configs[0])}} {
		stdout, stderr, code := clitest.Run(t, "run", "vxlan-lowerdev", "--kernel", tc.kernel, "--vm-accel", "tcg", "--no-history", "--out", filepath.Join(t.TempDir(), "r.json"))
		if code != 4 || !strings.Contains(stderr, "CONFIG_VXLAN is not set in "+tc.config+": the scenario needs vxlan") || strings.Contains(stderr, "booting") {
			t.Errorf("%s: exit %d, want 4 naming CONFIG_VXLAN before any boot\n%s\n%s", tc.kernel, code, stdout, stderr)
		}
	}
}

// TestVMDeadline: guests still measuring at their wall-time deadline (a kernel that hangs
// without an oops) are stopped: exit 3, the console log kept, nothing of the run left (issue
// 31, item 12).
func TestVMDeadline(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := clitest.Run(t, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history",
		"--runs", "20", "--vm-deadline", "3s", "--out", out)
	if code != exitcode.Infra || !strings.Contains(stderr, "the guests did not finish in time: still measuring 3s after the end of boot") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.A.console.log"))
	if len(logs) == 0 || !strings.Contains(stderr, "console log: ") {
		t.Errorf("no console log kept (%v):\n%s", logs, stderr)
	}
}

// journalHolds checks that a guest's journal kept on the host reads as a result with samples.
func journalHolds(t *testing.T, path string) {
	t.Helper()
	r, _, err := results.ReadFile(path)
	if err != nil || len(r.Cases) == 0 || len(r.Cases[0].Samples) == 0 {
		t.Errorf("the kept journal %s: %v", path, err)
	}
}

// descendant reports whether process pid descends from ancestor (QEMU's parent is the nsperf
// the test started).
func descendant(pid string, ancestor int) bool {
	for range 64 {
		data, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(data), "\nPPid:")
		ppid, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		if n, _ := strconv.Atoi(ppid); n == ancestor {
			return true
		} else if n <= 1 {
			return false
		}
		pid = ppid
	}
	return false
}

func watchAffinity(t *testing.T) *affinityWatch {
	w := &affinityWatch{seen: map[int][]string{}, last: map[int]string{}, pidOf: map[int]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			w.look()
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

func (w *affinityWatch) look() {
	pids, _ := filepath.Glob(filepath.Join(vm.Dir(), "vm-*", "qemu.pid"))
	for _, f := range pids {
		pid, _ := os.ReadFile(f)
		if !descendant(strings.TrimSpace(string(pid)), os.Getpid()) {
			continue // another test's guest, or a user's run beside the suite
		}
		tasks, _ := filepath.Glob(filepath.Join("/proc", strings.TrimSpace(string(pid)), "task", "*", "status"))
		for _, status := range tasks {
			data, err := os.ReadFile(status)
			if err != nil {
				continue
			}
			tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(status)))
			for _, line := range strings.Split(string(data), "\n") {
				if list, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
					list = strings.TrimSpace(list)
					w.mu.Lock()
					if w.last[tid] != list {
						w.seen[tid] = append(w.seen[tid], list)
					}
					w.last[tid] = list
					w.pidOf[tid] = strings.TrimSpace(string(pid))
					w.mu.Unlock()
				}
			}
		}
	}
}

func (w *affinityWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// checkPinning holds the recorded pinning against what the watch saw: each vCPU thread's
// last list is its CPUs, every other thread's is the other CPUs; with parked set, each vCPU
// thread was also seen waiting on the paused CPUs.
func (w *affinityWatch) checkPinning(t *testing.T, parked bool, pins ...*results.VMPinning) {
	t.Helper()
	w.end()
	isVCPU := map[int]bool{}
	for _, p := range pins {
		if p == nil || len(p.VCPUs) == 0 {
			t.Fatalf("no pinning recorded: %+v", p)
		}
		for _, v := range p.VCPUs {
			isVCPU[v.ThreadID] = true
		}
	}
	for _, p := range pins {
		w.checkGuest(t, p, parked, isVCPU)
	}
}

func (w *affinityWatch) checkGuest(t *testing.T, p *results.VMPinning, parked bool, isVCPU map[int]bool) {
	t.Helper()
	for _, v := range p.VCPUs {
		want := procstat.FormatCPUList(v.CPUs)
		if got := w.last[v.ThreadID]; got != want {
			t.Errorf("vCPU %d thread %d: Cpus_allowed_list %q (seen %v), recorded %q", v.VCPU, v.ThreadID, got, w.seen[v.ThreadID], want)
		}
		if parked && !slices.Contains(w.seen[v.ThreadID], procstat.FormatCPUList(p.PausedCPUs)) {
			t.Errorf("vCPU %d thread %d never waited on CPU %v while paused: seen %v", v.VCPU, v.ThreadID, p.PausedCPUs, w.seen[v.ThreadID])
		}
	}
	if len(w.last) == 0 {
		t.Fatal("the watch saw no QEMU thread")
	}
	own := map[string]bool{} // the QEMU processes of this guest: those of its vCPU threads
	for _, v := range p.VCPUs {
		own[w.pidOf[v.ThreadID]] = true
	}
	for tid, got := range w.last {
		if !own[w.pidOf[tid]] {
			continue // another guest: of this test, or of a test running beside it
		}
		if !isVCPU[tid] && len(p.OtherCPUs) > 0 && got != procstat.FormatCPUList(p.OtherCPUs) {
			t.Errorf("QEMU thread %d: Cpus_allowed_list %q, recorded other threads on %v", tid, got, p.OtherCPUs)
		}
	}
}

// buildTree lays out a built kernel tree from the test kernel's package: its image as
// arch/x86/boot/bzImage, its modules where the build leaves them, modules.order.
func buildTree(t *testing.T, image, modules string) string {
	t.Helper()
	kdir := t.TempDir()
	os.MkdirAll(filepath.Join(kdir, "arch/x86/boot"), 0o755)
	if err := os.Link(image, filepath.Join(kdir, vm.BuildTreeImage)); err != nil {
		t.Fatal(err)
	}
	trees, _ := filepath.Glob(filepath.Join(modules, "lib/modules/*/kernel"))
	if len(trees) != 1 {
		t.Fatalf("module trees %v", trees)
	}
	var order []string
	err := filepath.WalkDir(trees[0], func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".ko") {
			return err
		}
		rel, _ := filepath.Rel(trees[0], path)
		os.MkdirAll(filepath.Join(kdir, filepath.Dir(rel)), 0o755)
		order = append(order, strings.TrimSuffix(rel, ".ko")+".o")
		return os.Link(path, filepath.Join(kdir, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(kdir, "modules.order"), []byte(strings.Join(order, "\n")+"\n"), 0o644)
	return kdir
}

// TestVMBisectLostCapability: a kernel that cannot apply the scenario's baseline state, which
// the good kernel applied (the slow veth's tso_max_size 8192 under a baseline of
// gso_max_size 65536: its guest exits 4 without a result), is a bad step, exit 1, naming
// what it lost, never a skip (issue 42, item 6).
func TestVMBisectLostCapability(t *testing.T) {
	t.Parallel()
	image, stock, slow := clitest.BuiltKernels(t, "../testdata/veth-tso-8192.patch")
	clitest.GuestTest(t)
	data, err := os.ReadFile(bisectScenario)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "  - name: default\n", "  - name: default\n    devices: {client/eth0: {gso_max_size: 65536}}\n", 1)
	if text == string(data) {
		t.Fatal("the bisect scenario has no state default")
	}
	dir := t.TempDir()
	scenario, good := filepath.Join(dir, "bisect-64k.yaml"), filepath.Join(dir, "good.json")
	os.WriteFile(scenario, []byte(text), 0o644)
	if stdout, stderr, code := clitest.Run(t, "run", scenario, "--kernel", image, "--modules", stock, "--vm-accel", "tcg", "--no-history", "--out", good); code != 0 && code != 1 {
		t.Fatalf("the good kernel's run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code := clitest.Run(t, "run", scenario, "--kernel", image, "--modules", slow, "--vm-accel", "tcg", "--baseline", good, "--bisect", "--no-history", "--out", filepath.Join(dir, "step.json"))
	if code != exitcode.Expectation || !strings.Contains(stdout, "bisect: bad: lost capability") || !strings.Contains(stdout, "tso_max_size 8192") {
		t.Errorf("exit %d, want 1 (bad) naming the lost capability\n%s\n%s", code, stdout, stderr)
	}
}
