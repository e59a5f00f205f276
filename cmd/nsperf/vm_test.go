package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nsperf/nsperf/kbuild"
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

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/testenv"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// The guest tests boot Debian's 6.1 kernel (not the host's) under TCG with one vCPU and short
// runs: testdata/veth-bigtcp-short.yaml is veth-bigtcp cut to IPv6 (6.1 has no IPv4 BIG TCP
// knobs), both ends on CPU 0, two alternating runs of 2 s per state.

const shortScenario = "testdata/veth-bigtcp-short.yaml"

// runBinary runs nsperf as a process and returns its output and exit code.
func runBinary(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runBinaryEnv(t, nil, args...)
}

// runBinaryEnv is runBinary with more environment variables (NAME=VALUE).
func runBinaryEnv(t testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// guestTest is the preamble of a guest test: the test kernel, and the check at the end that
// nothing of the run is left, on the host or of the guest.
func guestTest(t *testing.T) (image, modules string) {
	t.Helper()
	image, modules = testenv.TestKernel(t)
	before := testenv.Take(runstate.Dir)
	t.Cleanup(func() {
		testenv.CheckClean(t, before, runstate.Dir)
		noGuestLeft(t)
	})
	return image, modules
}

// noGuestLeft checks that no QEMU process and no guest directory outlived the command.
func noGuestLeft(t *testing.T) {
	t.Helper()
	if left, err := vm.Leftovers(); err != nil || len(left) > 0 {
		t.Errorf("guests left behind: %v %v", left, err)
	}
	if dirs, _ := filepath.Glob(filepath.Join(vm.Dir(), "vm-*")); len(dirs) > 0 {
		t.Errorf("guest directories left behind: %v", dirs)
	}
}

// builtKernels builds a patch's base and patched kernel with `nsperf build` on Debian's 6.12
// (fetched into the kernel cache on first use, about a minute; a module build is about 20 s
// per kernel, cached after) and returns the image and the two module trees. Where it cannot
// build, the test fails in CI and skips elsewhere.
func builtKernels(t testing.TB, patch string) (image, base, patched string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "qemu-system-x86_64")
	testenv.RequireTool(t, "busybox")
	stdout, stderr, code := runBinary(t, "build", "--patch", patch)
	if code != 0 {
		testenv.Unavailable(t, fmt.Sprintf("nsperf build --patch %s: exit %d\n%s", patch, code, stderr))
	}
	trees := map[string][2]string{}
	for _, line := range strings.Split(stdout, "\n") {
		var label, kernel, modules string
		if n, _ := fmt.Sscanf(line, "%s --kernel %s --modules %s", &label, &kernel, &modules); n == 3 {
			trees[strings.TrimSuffix(label, ":")] = [2]string{kernel, modules}
		}
	}
	if trees["base"][0] == "" || trees["base"][0] != trees["patched"][0] {
		t.Fatalf("nsperf build printed no base and patched kernel:\n%s", stdout)
	}
	return trees["base"][0], trees["base"][1], trees["patched"][1]
}

// TestVMRun is the guest test on the wall clock (--vm-clock wall), which keeps that path
// alive: multi-threaded TCG, each vCPU pinned.
func TestVMRun(t *testing.T) {
	image, modules := guestTest(t)
	out := filepath.Join(t.TempDir(), "r.json")
	watch := watchAffinity(t)
	stdout, stderr, code := runBinary(t, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--vm-clock", "wall", "--no-history", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := r.Environment
	// Pinned (the default), with multi-threaded TCG: one vCPU on the last CPU this test may
	// use, QEMU's other threads on the rest; what the kernel enforced is what was recorded.
	watch.checkPinning(t, false, env.VM.Pinning)
	if env.VM.TCGThreads != "multi" || !strings.Contains(stdout, "TCG (multi-threaded)") || !strings.Contains(stdout, "pinned: vCPU 0 on host CPU") {
		t.Errorf("tcg threads %q, table:\n%s", env.VM.TCGThreads, stdout)
	}
	if !strings.HasPrefix(env.KernelRelease, "6.1.") || env.VM == nil || env.VM.Accel != "tcg" || env.VM.CPUs != 1 ||
		env.VM.Image.Path != image || len(env.VM.Image.SHA256) != 64 || !strings.Contains(env.VM.QEMU, ".") || !slices.Contains(env.VM.Loaded, "veth") {
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
// with the fixed icount options, its one thread pinned to the last CPU and QEMU's other
// threads to the rest, the idle gate skipped, and every place that shows the guest says so.
func TestVMRunVirtual(t *testing.T) {
	image, modules := guestTest(t)
	out := filepath.Join(t.TempDir(), "r.json")
	watch := watchAffinity(t)
	stdout, stderr, code := runBinary(t, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Environment.VM
	watch.checkPinning(t, false, v.Pinning)
	if v.Clock != "virtual" || v.Icount != vm.IcountOptions || v.TCGThreads != "single" || v.IdleGate != vm.IdleGateSkipped {
		t.Errorf("vm %+v", v)
	}
	for _, want := range []string{"TCG (single-threaded)", "virtual time (icount shift=2,sleep=off,align=off)", "idle gate skipped: virtual time",
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
	}
	var ktap strings.Builder
	if err := results.KTAP(&ktap, r); err != nil || !strings.Contains(ktap.String(), "# vm: QEMU ") || !strings.Contains(ktap.String(), "virtual time (icount") {
		t.Errorf("KTAP: %v\n%s", err, ktap.String())
	}
}

func TestVMProbe(t *testing.T) {
	image, modules := guestTest(t)
	stdout, stderr, code := runBinary(t, "probe", "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--format", "json")
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
}

// TestVMOVSSeed runs the shipped ovs-internal-tso seed in the guest, where the openvswitch
// module gives the kernel datapath: 6.1 has not got the September 2026 change, so the "on"
// state cannot be applied (tso_max_size 65536 of the internal port): exit 4, as promised.
func TestVMOVSSeed(t *testing.T) {
	image, modules := guestTest(t)
	// On the wall clock: 6.1 does not bring up a second CPU in virtual time
	// (TestVMVirtualSMPHang).
	stdout, stderr, code := runBinary(t, "run", "ovs-internal-tso", "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--vm-clock", "wall",
		"--no-history", "--runs", "2", "--duration", "1s", "--omit", "0s", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != exitSkipped {
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
	image, modules := guestTest(t)
	out := filepath.Join(t.TempDir(), "ab.json")
	db := filepath.Join(t.TempDir(), "h.db")
	watch := watchAffinity(t)
	stdout, stderr, code := runBinary(t, "run", shortScenario, "--kernel", image, "--kernel", image, "--modules", modules, "--vm-accel", "tcg",
		"--runs", "5", "--alpha", "0.01", "--label", "base", "--label", "patched", "--db", db, "--out", out)
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
	for _, want := range []string{"kernel A: base", "kernel B: patched", "on@B vs on@A", "turns: 10 (1A 1B 2B 2A"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	// compare reads the A/B result as its two kernels; the history holds both as runs.
	cmpOut, cmpErr, cmpCode := runBinary(t, "compare", out)
	if cmpCode != 0 || !strings.Contains(cmpOut, "on@B vs on@A") {
		t.Errorf("compare of the A/B result: exit %d\n%s\n%s", cmpCode, cmpOut, cmpErr)
	}
	hist, herr, hcode := runBinary(t, "history", "list", "--db", db)
	if hcode != 0 || !strings.Contains(hist, "base") || !strings.Contains(hist, "patched") {
		t.Errorf("history list: exit %d\n%s\n%s", hcode, hist, herr)
	}
}

// TestVMInterrupt stops a guest run with SIGINT once it measures: exit 130, no QEMU, no guest
// directory, nothing of the run left.
func TestVMInterrupt(t *testing.T) {
	image, modules := guestTest(t)
	tmp := t.TempDir()
	cmd := exec.Command(binary, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history", "--runs", "20", "--out", filepath.Join(tmp, "r.json"))
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
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
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
	cmd = exec.Command(binary, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history", "--runs", "20", "--out", filepath.Join(tmp, "r.json"))
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
	cmd.Process.Kill()
	cmd.Wait()
	if _, stderr, code := runBinary(t, "cleanup"); code != 0 {
		t.Errorf("cleanup: exit %d\n%s", code, stderr)
	}
	journalHolds(t, journal)
}

// journalHolds checks that a guest's journal kept on the host reads as a result with samples.
func journalHolds(t *testing.T, path string) {
	t.Helper()
	r, _, err := results.ReadFile(path)
	if err != nil || len(r.Cases) == 0 || len(r.Cases[0].Samples) == 0 {
		t.Errorf("the kept journal %s: %v", path, err)
	}
}

func TestVMBadInput(t *testing.T) {
	image, modules := testenv.TestKernel(t)
	defer noGuestLeft(t)
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
		{"no such image", []string{"--kernel", filepath.Join(tmp, "bzImage")}, exitUsage, []string{"--kernel " + filepath.Join(tmp, "bzImage"), "no such file"}},
		{"not a kernel", []string{"--kernel", text}, exitUsage, []string{"not an x86 kernel image (bzImage)"}},
		{"modules of another kernel", []string{"--kernel", image, "--modules", filepath.Join(tmp, "nothing")}, exitUsage, []string{"no modules of 6.1.0-57-amd64"}},
		{"missing modules", []string{"--kernel", image, "--modules", tmp}, exitSkipped, []string{"missing modules virtio_pci, 9pnet_virtio, tcp_diag, veth"}},
		{"boot timeout", []string{"--kernel", image, "--modules", modules, "--boot-timeout", "1s"}, exitInfra, []string{"boot timeout: the guest was not running after 1s", "console"}},
		{"three kernels", []string{"--kernel", image, "--kernel", image, "--kernel", image}, exitUsage, []string{"an A/B run compares two kernels"}},
		{"a relative --vm-hide", []string{"--kernel", image, "--modules", modules, "--vm-hide", "etc/passwd"}, exitUsage, []string{`--vm-hide "etc/passwd": give an absolute path`}},
		// The guest sees the host's root with what nsperf hides covered (issue 31, item 13):
		// a hidden iperf3 is not there for the guest, which says so (the host has it).
		{"a hidden path", []string{"--kernel", image, "--modules", modules, "--vm-hide", "/usr/bin/iperf3"}, exitSkipped, []string{"iperf3 is not installed", "nsperf in the guest exited 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", shortScenario, "--vm-accel", "tcg", "--no-history", "--out", filepath.Join(tmp, "r.json")}, tc.args...)
			stdout, stderr, code := runBinary(t, args...)
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
	testenv.RequireRoot(t)
	testenv.RequireTool(t, vm.QEMU)
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
	stdout, stderr, code := runBinary(t, "cleanup")
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
	image, modules := guestTest(t)
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
	stdout, stderr, code := runBinaryEnv(t, env, "run", shortScenario, "--kernel", image, "--modules", modules, "--runs", "1", "--duration", "1s", "--no-history", "--out", out)
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
	_, stderr2, _ := runBinaryEnv(t, env, "run", shortScenario, "--kernel", image, "--modules", modules, "--boot-timeout", "1s", "--no-history", "--out", filepath.Join(t.TempDir(), "r2.json"))
	if !strings.Contains(stderr2, "KVM hung after the BIOS in an earlier run") || !strings.Contains(stderr2, "with tcg") || strings.Contains(stderr2, "with kvm") {
		t.Errorf("second run:\n%s", stderr2)
	}
}

// TestVMPatchAB validates a real kernel patch end to end, from the mail it came as, and
// reproduces its claims: `nsperf reproduce` chooses ovs-internal-tso and runs `run --patch`, which builds Debian's 6.12 net/openvswitch from its source twice, as it is (base, A)
// and with "openvswitch: raise internal port TSO limit" (patched, B), each into a copy of the
// image's module tree (or takes both from the cache, which it says). The shipped
// ovs-internal-tso seed runs as a short A/B: "on" is unavailable on A with the tso_max_size
// reason and applies on B, where int0 reads back 524280; the result holds both kernels with
// how they were built (the patch's subject and sha256), both claims (+18.1% IPv4, +34.7%
// IPv6) reproduced by on@B against off@A, the capability, on@B against off@A and off@B against off@A. Figures are not asserted.
func TestVMPatchAB(t *testing.T) {
	const mbox = "../../patches/testdata/ovs-internal-port-tso-v2.mbox"
	builtKernels(t, mbox) // built or cached before the run: the run below must find it cached
	before := testenv.Take(runstate.Dir)
	t.Cleanup(func() {
		testenv.CheckClean(t, before, runstate.Dir)
		noGuestLeft(t)
	})
	out := filepath.Join(t.TempDir(), "ab.json")
	junit := filepath.Join(t.TempDir(), "ab.xml")
	db := filepath.Join(t.TempDir(), "h.db")
	// Every guest's bridge must pass traffic: the fault that once stopped about one guest in
	// five (Open vSwitch 3.1 started in a guest up for under 10 s runs without upcall
	// handlers) is waited out by topo/ovs, not retried here.
	// nsperf reproduce runs it: run --patch on the mail, with run's own flags after --; the
	// run's table goes to stderr, the claims' table to stdout.
	claimsTable, runOutput, code := runBinary(t, "reproduce", mbox, "--runs", "5", "--duration", "1s", "--out", out,
		"--", "--vm-accel", "tcg", "--db", db, "--junit", junit)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (both claims reproduced)\n%s\n%s", code, claimsTable, runOutput)
	}
	if !strings.Contains(runOutput, "build: cached") {
		t.Errorf("the second build was not taken from the cache:\n%s", runOutput)
	}
	if strings.Count(claimsTable, "reproduced") != 2 || !strings.Contains(claimsTable, "+18.1%") || !strings.Contains(claimsTable, "+34.7%") {
		t.Errorf("the claims' table:\n%s", claimsTable)
	}
	r := readAB(t, out)
	for i, k := range r.Kernels {
		if k.Build == nil || k.Build.Patched != (i == 1) || len(k.Build.Patches) != 1 || k.Build.Patches[0].Subject != "[PATCH net-next v2] openvswitch: raise internal port TSO limit" ||
			len(k.Build.Patches[0].SHA256) != 64 || k.Build.Mode != "modules" || !slices.Equal(k.Build.Modules, []string{"openvswitch"}) {
			t.Errorf("kernel %s's build: %+v", k.Label, k.Build)
		}
	}
	if !strings.Contains(runOutput, `built by nsperf from debian linux-source-6.12`) || !strings.Contains(runOutput, `with "[PATCH net-next v2] openvswitch: raise internal port TSO limit"`) {
		t.Errorf("the table does not say how the kernels were built:\n%s", runOutput)
	}
	a, b := r.Kernels[0].Cases[0], r.Kernels[1].Cases[0]
	if on := stateRecord(a, "on"); on == nil || !strings.Contains(on.Unavailable, "gso_max_size 524280 > tso_max_size 65536 of ovs/int0") {
		t.Errorf("on on kernel A: %+v", on)
	}
	if on := stateRecord(b, "on"); on == nil || on.Unavailable != "" || on.Devices["ovs/int0"]["tso_max_size"] != 524280 || on.Devices["ovs/int0"]["gso_max_size"] != 524280 {
		t.Errorf("on on kernel B: %+v", on)
	}
	if off := stateRecord(b, "off"); off == nil || off.Devices["ovs/p0"]["gso_max_size"] != 524280 {
		t.Errorf("the bridge's veth end on kernel B in off: %+v", off)
	}
	if len(r.Capabilities) != 1 || !strings.Contains(r.Capabilities[0].Line(), "on: unavailable on A (gso_max_size 524280 > tso_max_size 65536 of ovs/int0") ||
		!strings.Contains(r.Capabilities[0].Line(), "applies on B; on@B compared with off@A") {
		t.Errorf("capabilities: %+v", r.Capabilities)
	}
	// In virtual time (the default under TCG) the patch is decided in 5 runs of 1 s: the
	// patched kernel's on against the stock kernel's off improves both families, and the two
	// kernels' off, the same code, is no regression.
	if r.Reproduction == nil || len(r.Reproduction.Claims) != 2 {
		t.Fatalf("reproduction: %+v", r.Reproduction)
	}
	for i, w := range []string{"tcp4", "tcp6"} {
		if ch := r.Reproduction.Claims[i]; ch.Workload != w || ch.State != "on@B" || ch.Baseline != "off@A" || ch.Outcome != results.Reproduced {
			t.Errorf("claim %d: %+v", i+1, ch)
		}
	}
	for _, k := range r.Kernels {
		if k.Environment.VM == nil || k.Environment.VM.Clock != "virtual" {
			t.Errorf("kernel %s not in virtual time: %+v", k.Label, k.Environment.VM)
		}
	}
	verdicts := map[string]string{}
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Metric == results.Throughput {
			verdicts[s.Workload+" "+s.State+" vs "+s.Comparison.Baseline] = s.Comparison.Verdict
		}
	}
	for want, verdict := range map[string]string{"tcp4 on@B vs off@A": results.Improved, "tcp6 on@B vs off@A": results.Improved, "tcp4 off@B vs off@A": "", "tcp6 off@B vs off@A": ""} {
		got, ok := verdicts[want]
		if !ok || (verdict != "" && got != verdict) || (verdict == "" && got == results.Regressed) {
			t.Errorf("%s: %q, want %q (all: %v)\n%s", want, got, verdict, verdicts, runOutput)
		}
	}
	if !strings.Contains(runOutput, "capability: on: unavailable on A") {
		t.Errorf("the table lacks the capability line:\n%s", runOutput)
	}
	if data, err := os.ReadFile(junit); err != nil || !strings.Contains(string(data), `name="capability on"`) {
		t.Errorf("junit: %v", err)
	}
	// The history keeps the two kernels as two runs; compared again from there, and from the
	// result file, they say the same.
	for _, args := range [][]string{{"compare", "base", "patched", "--db", db}, {"compare", out}} {
		stdout, stderr, code := runBinary(t, args...)
		if (code != 0 && code != exitExpectation) || !strings.Contains(stdout, "capability: on: unavailable on A (gso_max_size 524280 > tso_max_size 65536 of ovs/int0") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
}

func stateRecord(c results.Case, name string) *results.StateRecord {
	for i := range c.States {
		if c.States[i].Name == name {
			return &c.States[i]
		}
	}
	return nil
}

// TestVMKernelBuildTree boots --kernel DIR, a built kernel tree: its arch/x86/boot/bzImage and
// the modules its modules.order lists, without --modules. The tree is laid out from the test
// kernel's package as a kernel build leaves it (linked, not copied); nothing of the modules
// installed for the guest is left afterwards.
func TestVMKernelBuildTree(t *testing.T) {
	image, modules := guestTest(t)
	kdir := buildTree(t, image, modules)
	tmps, _ := filepath.Glob(filepath.Join(os.TempDir(), "nsperf-kdir-*"))
	stdout, stderr, code := runBinary(t, "probe", "--kernel", kdir, "--vm-accel", "tcg")
	if code != 0 || !strings.Contains(stdout, "probed in QEMU") || !strings.Contains(stdout, "modules loaded:") || !strings.Contains(stdout, " veth ") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "nsperf-kdir-*")); len(after) != len(tmps) {
		t.Errorf("installed modules left behind: %v", after)
	}
}

// affinityWatch reads, every 50 ms while a guest test runs, the Cpus_allowed_list of every
// thread of every QEMU nsperf started (/proc/PID/task/TID/status): what the kernel enforced,
// to hold against what the result recorded.
type affinityWatch struct {
	mu   sync.Mutex
	seen map[int][]string // thread id -> the distinct lists seen, in order
	last map[int]string
	stop chan struct{}
	done chan struct{}
}

func watchAffinity(t *testing.T) *affinityWatch {
	w := &affinityWatch{seen: map[int][]string{}, last: map[int]string{}, stop: make(chan struct{}), done: make(chan struct{})}
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
	for tid, got := range w.last {
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

// TestVMConfigRefusedBeforeBoot: a tree whose .config lacks CONFIG_VXLAN is refused for a
// vxlan scenario before anything boots, the option named (exit 4); an image with a
// config-RELEASE beside it likewise.
func TestVMConfigRefusedBeforeBoot(t *testing.T) {
	image, modules := guestTest(t)
	kdir := buildTree(t, image, modules)
	configs, _ := filepath.Glob(filepath.Join(filepath.Dir(image), "config-*"))
	if len(configs) != 1 {
		t.Fatalf("configs beside %s: %v", image, configs)
	}
	data, err := os.ReadFile(configs[0])
	if err != nil {
		t.Fatal(err)
	}
	without := regexp.MustCompile(`(?m)^CONFIG_VXLAN=.*$`).ReplaceAll(data, []byte("# CONFIG_VXLAN is not set"))
	os.WriteFile(filepath.Join(kdir, ".config"), without, 0o644)
	idir := t.TempDir()
	img := filepath.Join(idir, filepath.Base(image))
	os.Link(image, img)
	os.WriteFile(filepath.Join(idir, filepath.Base(configs[0])), without, 0o644)
	for _, tc := range []struct{ kernel, config string }{{kdir, ".config"}, {img, filepath.Base(configs[0])}} {
		stdout, stderr, code := runBinary(t, "run", "vxlan-lowerdev", "--kernel", tc.kernel, "--vm-accel", "tcg", "--no-history", "--out", filepath.Join(t.TempDir(), "r.json"))
		if code != 4 || !strings.Contains(stderr, "CONFIG_VXLAN is not set in "+tc.config+": the scenario needs vxlan") || strings.Contains(stderr, "booting") {
			t.Errorf("%s: exit %d, want 4 naming CONFIG_VXLAN before any boot\n%s\n%s", tc.kernel, code, stdout, stderr)
		}
	}
	// The same tree with its config whole passes the check (and veth-bigtcp needs no vxlan).
	_, stderr, code := runBinary(t, "run", shortScenario, "--kernel", kdir, "--vm-accel", "tcg", "--runs", "1", "--duration", "1s", "--no-history", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != 0 || strings.Contains(stderr, "is not set") {
		t.Errorf("a vxlan-free scenario on the tree: exit %d\n%s", code, stderr)
	}
}

// TestVMVirtualSMP: Debian 12's 6.1 hangs bringing up its second vCPU at boot in virtual
// time; the guest boots on one (maxcpus=1) and /init brings the second online, so that a
// scenario pinned to CPUs 0 and 1 runs on 6.1 with two vCPUs in virtual time, and the result
// says how its CPUs came up.
func TestVMVirtualSMP(t *testing.T) {
	image, modules := guestTest(t)
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
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runBinary(t, "run", scenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--runs", "1", "--duration", "1s", "--no-history", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Environment.VM
	if v == nil || v.CPUs != 2 || r.Environment.CPUs != 2 || v.Clock != vm.ClockVirtual || v.CPUBringUp != vm.CPUBringUpAfterBoot {
		t.Errorf("the guest: %d CPUs in it, %+v", r.Environment.CPUs, v)
	}
	if !strings.Contains(stdout+stderr, "2 vCPU (CPUs brought up "+vm.CPUBringUpAfterBoot+")") {
		t.Errorf("the table does not say how the CPUs came up:\n%s\n%s", stdout, stderr)
	}
}

// TestVMDeadline: guests still measuring at their wall-time deadline (a kernel that hangs
// without an oops) are stopped: exit 3, the console log kept, nothing of the run left (issue
// 31, item 12).
func TestVMDeadline(t *testing.T) {
	image, modules := guestTest(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runBinary(t, "run", shortScenario, "--kernel", image, "--modules", modules, "--vm-accel", "tcg", "--no-history",
		"--runs", "20", "--vm-deadline", "3s", "--out", out)
	if code != exitInfra || !strings.Contains(stderr, "the guests did not finish in time: still measuring 3s after the end of boot") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.A.console.log"))
	if len(logs) == 0 || !strings.Contains(stderr, "console log: ") {
		t.Errorf("no console log kept (%v):\n%s", logs, stderr)
	}
}

// TestVMPatchWholeKernel: a built-in change (net/ipv4/tcp_output.c: TSO packets of two
// segments) is built by nsperf build as two whole kernels with the minimal config, in the
// cache's lasting tree (a fresh machine pays the cold base build once, the patched build
// recompiles the one file), then booted as an A/B in virtual time: both kernels record the
// whole build, the config and the patch, and the patched kernel's flow is decided slower.
func TestVMPatchWholeKernel(t *testing.T) {
	const patch = "testdata/tcp-tso-2-segments.patch"
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "qemu-system-x86_64")
	testenv.RequireTool(t, "busybox")
	for _, tool := range []string{"make", "flex", "bison", "bc"} {
		testenv.RequireTool(t, tool)
	}
	// The minimal config of the scenario the run below measures: run --patch builds for its
	// own scenario, and finds this build in the cache.
	stdout, stderr, code := runBinary(t, "build", "--patch", patch, "--scenario", "testdata/tcp-tso.yaml")
	if code != 0 {
		t.Fatalf("nsperf build: exit %d\n%s\n%s", code, stdout, stderr)
	}
	trees := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		var label, kernel string
		if n, _ := fmt.Sscanf(line, "%s --kernel %s", &label, &kernel); n == 2 && !strings.Contains(line, "--modules") {
			trees[strings.TrimSuffix(label, ":")] = kernel
		}
	}
	if trees["base"] == "" || trees["patched"] == "" || trees["base"] == trees["patched"] {
		t.Fatalf("nsperf build printed no two whole kernels:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "whole kernels") || !strings.Contains(stderr, "config minimal") {
		t.Errorf("the build does not say it built whole kernels with the minimal config:\n%s", stderr)
	}
	before := testenv.Take(runstate.Dir)
	t.Cleanup(func() {
		testenv.CheckClean(t, before, runstate.Dir)
		noGuestLeft(t)
	})
	out := filepath.Join(t.TempDir(), "ab.json")
	runOut, runErr, code := runBinary(t, "run", "testdata/tcp-tso.yaml", "--patch", patch, "--vm-accel", "tcg", "--no-history", "--out", out)
	if code != 0 && code != 1 {
		t.Fatalf("run --patch: exit %d\n%s\n%s", code, runOut, runErr)
	}
	if !strings.Contains(runErr, "build: cached") {
		t.Errorf("run --patch did not take the build from the cache:\n%s", runErr)
	}
	r := readAB(t, out)
	for i, k := range r.Kernels {
		if k.Build == nil || k.Build.Mode != "whole" || k.Build.Config != "minimal" || k.Build.Patched != (i == 1) || len(k.Build.Patches) != 1 ||
			k.Build.Patches[0].Subject != "[PATCH] tcp: a stand-in built-in regression: TSO packets of 2 segments" || len(k.Build.ConfigSHA256) != 64 {
			t.Errorf("kernel %s's build: %+v", k.Label, k.Build)
		}
	}
	if r.Kernels[0].Environment.KernelRelease != r.Kernels[1].Environment.KernelRelease || strings.Contains(r.Kernels[0].Environment.KernelRelease, "deb12") {
		t.Errorf("releases %q and %q: want the same, built from the source", r.Kernels[0].Environment.KernelRelease, r.Kernels[1].Environment.KernelRelease)
	}
	var verdict string
	for _, s := range r.Cases[0].Summaries {
		if s.Comparison != nil && s.Metric == results.Throughput && s.State == "default@B" && s.Comparison.Baseline == "default@A" {
			verdict = s.Comparison.Verdict
		}
	}
	if verdict != results.Regressed {
		t.Errorf("default@B vs default@A: %q, want %s (TSO packets of two segments)\n%s", verdict, results.Regressed, runOut)
	}
	if !strings.Contains(runOut, "whole kernel") {
		t.Errorf("the table does not say the kernels were built whole:\n%s", runOut)
	}
}

// readAB reads the result of an A/B run of two kernels.
func readAB(t *testing.T, path string) *results.Result {
	t.Helper()
	r, _, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kernels) != 2 {
		t.Fatalf("%d kernels in the result", len(r.Kernels))
	}
	return r
}

// TestBuildWholeInterrupted: Ctrl-C during the patched kernel's make, in the cache's lasting
// tree, exits 130, caches no build and leaves the tree as the base: the patched file put
// back, no journal. The next build of the series builds both kernels (not "cached").
func TestBuildWholeInterrupted(t *testing.T) {
	testenv.RequireRoot(t)
	for _, tool := range []string{"make", "flex", "bison", "bc"} {
		testenv.RequireTool(t, tool)
	}
	orig, err := os.ReadFile("testdata/tcp-tso-2-segments.patch")
	if err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(t.TempDir(), "tcp-tso-3-segments.patch")
	os.WriteFile(patch, []byte(strings.Replace(string(orig), "min_tso_segs), 2);", "min_tso_segs), 3);", 1)), 0o644)
	cache := kbuild.CacheDir()
	before := buildsIn(t, cache)
	cmd := exec.Command(binary, "build", "--patch", patch, "--scenario", "testdata/tcp-tso.yaml")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said []string
	tree := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said = append(said, sc.Text())
		if m := regexp.MustCompile(`^build: base: make bzImage in (\S+)/obj `).FindStringSubmatch(sc.Text()); m != nil {
			tree = m[1]
		}
		if strings.HasPrefix(sc.Text(), "build: patched: make bzImage") {
			time.Sleep(2 * time.Second) // into make, compiling tcp_output.c
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted || tree == "" {
		t.Fatalf("exit %v, want %d; tree %q\n%s", err, exitInterrupted, tree, strings.Join(said, "\n"))
	}
	if after := buildsIn(t, cache); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("the interrupted build left %v in the cache (before: %v)", after, before)
	}
	if _, err := os.Stat(filepath.Join(tree, "patched-files.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is left: %v", err)
	}
	pristine, _ := filepath.Glob(filepath.Join(cache, "sources", "debian-*", "src", "linux-source-6.12", "net", "ipv4", "tcp_output.c"))
	want, _ := os.ReadFile(pristine[0])
	if got, _ := os.ReadFile(filepath.Join(tree, "src", "net", "ipv4", "tcp_output.c")); !bytes.Equal(got, want) {
		t.Error("the tree's tcp_output.c is not the base's after the interruption")
	}
	stdout, stderr2, code := runBinary(t, "build", "--patch", patch, "--scenario", "testdata/tcp-tso.yaml")
	if code != 0 || strings.Contains(stderr2, "build: cached") {
		t.Fatalf("the build after the interrupted one: exit %d\n%s", code, stderr2)
	}
	if m := regexp.MustCompile(`(?m)^manifest: (\S+)/manifest.json$`).FindStringSubmatch(stdout); m != nil {
		os.RemoveAll(m[1])
		os.RemoveAll(m[1] + ".logs")
	}
}
