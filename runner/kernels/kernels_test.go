package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/vm"
)

// TestGuestResultIsOfThisRun: the kernel under test is the code not trusted yet. A result the
// guest left is taken only when it is of the scenario the host loaded and was measured on the
// kernel booted; a result.json that is a link (to another result of the host) is not read.
func TestGuestResultIsOfThisRun(t *testing.T) {
	text := "name: x\n"
	sum := sha256.Sum256([]byte(text))
	sha := hex.EncodeToString(sum[:])
	runID := "nsp0001"
	encode := func(text, kernel string) []byte {
		var b bytes.Buffer
		r := &results.Result{Schema: results.Schema, RunID: runID, Scenario: results.ScenarioInfo{Name: "x", Text: text},
			Environment: results.Environment{KernelRelease: kernel}}
		s := sha256.Sum256([]byte(text))
		r.Scenario.SHA256 = hex.EncodeToString(s[:])
		if err := results.Encode(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	out := func(result []byte) vm.Outcome {
		return vm.Outcome{Result: result, Kernel: vm.Kernel{Image: results.KernelImage{Release: "6.12.117+deb12-amd64"}}}
	}
	if _, err := guestResult(out(encode(text, "6.12.117+deb12-amd64")), "x", sha, 0); err != nil {
		t.Errorf("the run's own result: %v", err)
	}
	if _, err := guestResult(out(encode("name: other\n", "6.12.117+deb12-amd64")), "x", sha, 0); err == nil || !strings.Contains(err.Error(), "not of this run") {
		t.Errorf("another scenario's result: %v", err)
	}
	if _, err := guestResult(out(encode(text, "6.18.44")), "x", sha, 0); err == nil || !strings.Contains(err.Error(), "not measured on the kernel booted") {
		t.Errorf("another kernel's result: %v", err)
	}

	// The run id names the host's files: one that is not a run id is refused.
	for _, bad := range []string{"nsp1/../../../../x", "../x", "nsp00011", "nsp0001\x1b[31m"} {
		runID = bad
		if _, err := guestResult(out(encode(text, "6.12.117+deb12-amd64")), "x", sha, 0); err == nil || !strings.Contains(err.Error(), "which is not a run id") {
			t.Errorf("run id %q: %v", bad, err)
		}
	}
	runID = "nsp0001"

	dir := t.TempDir()
	victim := filepath.Join(dir, "host-result.json")
	os.WriteFile(victim, encode(text, "6.12.117+deb12-amd64"), 0o644)
	link := filepath.Join(dir, "result.json")
	os.Symlink(victim, link)
	if _, err := safefile.ReadUntrusted(link, vm.MaxGuestResult); err == nil || !strings.Contains(err.Error(), "a symlink; not followed") {
		t.Errorf("a linked result.json: %v", err)
	}
}

// TestConsoleLogNotThroughALink: a link planted where a failed guest's console log goes is
// replaced, and what it points to is left as it was.
func TestConsoleLogNotThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	result := filepath.Join(dir, "r.json")
	os.Symlink(victim, result+".A.console.log")
	var progress bytes.Buffer
	keepConsole(&progress, result, "A", []byte("[    0.000000] Linux version 6.12\n"))
	if data, _ := os.ReadFile(victim); string(data) != "keep me\n" {
		t.Errorf("the link's target was written: %q", data)
	}
	if st, err := os.Lstat(result + ".A.console.log"); err != nil || !st.Mode().IsRegular() || !strings.Contains(progress.String(), "console log: ") {
		t.Errorf("console log: %v %v\n%s", st, err, progress.String())
	}
}

// FuzzGuestResult: whatever a guest leaves as result.json, the host takes it only as a result
// of this run's scenario, measured on the booted kernel, and never panics.
func FuzzGuestResult(f *testing.F) {
	text := "name: x\n"
	sum := sha256.Sum256([]byte(text))
	sha := hex.EncodeToString(sum[:])
	var b bytes.Buffer
	results.Encode(&b, &results.Result{Schema: results.Schema, RunID: "nsp0001", Scenario: results.ScenarioInfo{Name: "x", Text: text, SHA256: sha},
		Environment: results.Environment{KernelRelease: "6.12.117+deb12-amd64"}})
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema":"nsperf.result/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := vm.Outcome{Result: data, Kernel: vm.Kernel{Image: results.KernelImage{Release: "6.12.117+deb12-amd64"}}}
		r, err := guestResult(out, "x", sha, 0)
		if err != nil {
			return
		}
		if r.Scenario.SHA256 != sha || r.Environment.KernelRelease != "6.12.117+deb12-amd64" {
			t.Fatalf("accepted a result of another run: %+v", r.Scenario)
		}
	})
}

// TestStoreNamesResultsByHost: a single kernel's result is stored under a run id the host
// chooses, never one at whose default path a file is (a bisect's baseline), whatever the
// guest's run id says (issue 31, item 5).
func TestStoreNamesResultsByHost(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := scenarios.Load("veth-bigtcp", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("nsperf-results", "veth-bigtcp-nsp0001.json")
	os.MkdirAll("nsperf-results", 0o755)
	os.WriteFile(good, []byte("the baseline"), 0o644)
	guest := &results.Result{Schema: results.Schema, RunID: "nsp0001", Scenario: results.ScenarioInfo{Name: "veth-bigtcp"}}
	r, err := store(s, runner.Options{}, []*results.Result{guest}, nil, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(good); string(data) != "the baseline" || r.RunID == "nsp0001" {
		t.Errorf("run id %s; the baseline now holds %q", r.RunID, data)
	}
	if _, err := os.Stat(runner.OutPath(runner.Options{}, s, r.RunID)); err != nil {
		t.Errorf("the result is not at its own path: %v", err)
	}
}

// TestJournalCopiesAreValidated: a guest's journal is copied to the host only when it is one
// nsperf reads; anything else the kernel under test leaves there keeps the earlier copy
// (issue 31, item 22).
func TestJournalCopiesAreValidated(t *testing.T) {
	x, out := t.TempDir(), t.TempDir()
	j := &journals{exchange: func(int) string { return x }, paths: []string{filepath.Join(out, "r.json.A.journal")}}
	journal := filepath.Join(x, "result.json.journal")
	r := &results.Result{Schema: results.Schema, RunID: "nsp0001", Scenario: results.ScenarioInfo{Name: "x"}}
	jr, err := results.NewJournal(journal, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := jr.BeginCase(0, results.Case{States: []results.StateRecord{{Name: "off"}}}); err != nil {
		t.Fatal(err)
	}
	if err := jr.Append(0, results.Sample{Round: 1, State: "off", Workload: "tcp4", Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: 1e9}}}); err != nil {
		t.Fatal(err)
	}
	jr.Close()
	if kept := j.copy(); len(kept) != 1 {
		t.Fatalf("a journal was not copied: %v", kept)
	}
	good, _ := os.ReadFile(j.paths[0])
	os.WriteFile(journal, []byte("\x1b[2J not a journal, or a secret of the host\n"), 0o644)
	if kept := j.copy(); len(kept) != 1 {
		t.Fatalf("the earlier copy is not kept: %v", kept)
	}
	if now, _ := os.ReadFile(j.paths[0]); !bytes.Equal(now, good) {
		t.Errorf("the copy was replaced by what is not a journal: %q", now)
	}
}

// TestFailedGuestConsoleKept: the console log of every guest that failed is kept, by guest
// only: the name is the run's (its start), never a run id the failed guest wrote.
func TestFailedGuestConsoleKept(t *testing.T) {
	outcomes := []vm.Outcome{
		{Exited: true, ExitCode: 4, Console: []byte("A's console"), Result: []byte(`{"run_id": "nsp-0001"}`)},
		{Exited: true, ExitCode: 0, Console: []byte("B's console")},
	}
	kept := map[int]string{}
	_, code, err := guestResults(outcomes, "x.yaml", "sha", 0, func(guest int, console []byte) { kept[guest] = string(console) })
	if err == nil || code != 4 {
		t.Errorf("exit %d, %v: want the guest's 4 and an error", code, err)
	}
	if kept[0] != "A's console" || kept[1] != "B's console" {
		t.Errorf("kept %v", kept)
	}
}
