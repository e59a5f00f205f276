package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// cappedScenario is one iperf3 flow over a veth whose client end a token bucket caps at
// rate; mtu 0 keeps the veth's default.
func cappedScenario(rate, mtu string) string {
	link := "        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}\n        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}\n"
	if mtu != "" {
		link += "        mtu: " + mtu + "\n"
	}
	return "name: capped\ntopology:\n  namespaces: [client, server]\n  links:\n    - veth:\n" + link +
		"states:\n  - name: base\n    qdiscs:\n      client/eth0: {tbf: {rate: " + rate + ", burst: 1mb}}\n" +
		"workloads:\n  - name: tcp4\n    iperf3: {client: {ns: client, cpu: 0}, server: {ns: server, addr: 198.18.0.2, cpu: 1}, duration: 1s, omit: 0s}\n" +
		"runs: 5\n"
}

// measure runs a scenario text and returns its result file.
func measure(t *testing.T, dir, name, text string, args ...string) string {
	t.Helper()
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".json")
	if _, stderr, code := nsperf(append([]string{"run", file, "--out", out, "--label", name}, args...)...); code != exitOK && code != exitExpectation {
		t.Fatalf("run %s: exit %d\n%s", name, code, stderr)
	}
	return out
}

// TestCompareRealRuns: results of real runs compared across runs. A NEW capped at half the
// BASE's token bucket regresses by about half and exits 1 (both caps far below what a veth
// pair does on this machine when both its CPUs are busy, about 900 Mbit/s: each run measures
// its cap, not the machine); two runs of the same scenario
// (A/A) show no significant change and exit 0; a topology difference is refused with exit
// 2 naming it, and --force compares; the environment is printed; history labels work as
// arguments.
func TestCompareRealRuns(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	dir := t.TempDir()
	t.Setenv("NSPERF_DB", filepath.Join(dir, "history.db"))
	base := measure(t, dir, "base", cappedScenario("400mbit", ""))
	half := measure(t, dir, "half", cappedScenario("200mbit", ""))

	stdout, stderr, code := nsperf("compare", base, half, "--format", "json")
	var rep struct {
		Environment []string        `json:"environment"`
		Result      *results.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Result == nil {
		t.Fatalf("compare --format json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitExpectation {
		t.Errorf("a regression exits %d, want %d\n%s", code, exitExpectation, stderr)
	}
	cmp := comparisonOf(t, rep.Result, "base@B")
	if cmp.Verdict != results.Regressed || cmp.Change < -0.6 || cmp.Change > -0.4 {
		t.Errorf("half the cap: %+v, want regressed by about 50%%", cmp)
	}
	if env := strings.Join(rep.Environment, "\n"); !strings.Contains(env, "label differs: A base, B half") || !strings.Contains(env, "kernel release") {
		t.Errorf("environment:\n%s", env)
	}

	// A/A: a comparison is significant with probability alpha by construction, so a second
	// pair is measured only if the first is; a sound method is significant twice in a row
	// with probability alpha² (0.25%).
	// Only throughput is compared: each further metric would be one more chance of a false
	// verdict (see docs/method.md).
	var aa string
	for try := 0; try < 2; try++ {
		again := measure(t, dir, "again", cappedScenario("400mbit", ""))
		stdout, stderr, code = nsperf("compare", base, again, "--metric", "throughput")
		aa = stdout + stderr
		if code == exitOK {
			break
		}
		base = measure(t, dir, "base", cappedScenario("400mbit", ""))
	}
	if code != exitOK || !strings.Contains(aa, "~ ") || strings.Contains(aa, "retransmits") {
		t.Errorf("A/A: exit %d\n%s", code, aa)
	}
	if !strings.Contains(aa, "base@B vs base@A") {
		t.Errorf("table lacks the comparison column:\n%s", aa)
	}

	// The same measurement with another topology is refused, and forced.
	mtu := measure(t, dir, "mtu", cappedScenario("400mbit", "9000"), "--runs", "3")
	_, stderr, code = nsperf("compare", base, mtu)
	if code != exitUsage || !strings.Contains(stderr, "topology.links[0].veth.mtu: 0 / 9000") || !strings.Contains(stderr, "+        mtu: 9000") {
		t.Errorf("topology difference: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code = nsperf("compare", base, mtu, "--force")
	if (code != exitOK && code != exitExpectation) || !strings.Contains(stdout, "compared with --force") || !strings.Contains(stdout, "base@B vs base@A") {
		t.Errorf("--force: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Runs were recorded in the history: labels stand for their newest run.
	stdout, stderr, code = nsperf("compare", "base", "half", "--format", "csv")
	if code != exitExpectation || !strings.Contains(stdout, "base@B") {
		t.Errorf("compare by history labels: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = nsperf("history", "show", "capped", "--metric", "throughput")
	if code != exitOK || strings.Count(stdout, "capped") != 0 || strings.Count(stdout, "nsp") < 4 {
		t.Errorf("history show: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func comparisonOf(t *testing.T, r *results.Result, state string) results.Comparison {
	t.Helper()
	for _, c := range r.Cases {
		for _, s := range c.Summaries {
			if s.State == state && s.Metric == results.Throughput && s.Comparison != nil {
				return *s.Comparison
			}
		}
	}
	t.Fatalf("no comparison of %s in %+v", state, r.Cases)
	return results.Comparison{}
}

// TestHistoryCommands: import is idempotent and says so; list filters; rm removes; a
// truncated database exits 3 naming its path. No root: results are written by hand.
func TestHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	var files []string
	for i, label := range []string{"base", "patched"} {
		r := &results.Result{Schema: results.Schema, RunID: "nsp000" + string(rune('1'+i)), Label: label, Complete: true,
			Scenario:    results.ScenarioInfo{Name: "pair", Text: "name: pair\n"},
			Environment: results.Environment{KernelRelease: "6.18.44"}}
		r.Start = r.Start.AddDate(2026, 0, i)
		path := filepath.Join(dir, label+".json")
		if err := results.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	if _, stderr, code := nsperf("history", "list", "--db", db); code != exitUsage || !strings.Contains(stderr, "no history here yet") {
		t.Errorf("list of a history not there: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("reading created the database")
	}
	stdout, stderr, code := nsperf(append([]string{"history", "import", "--db", db}, files...)...)
	if code != exitOK || strings.Count(stdout, "imported") != 2 {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = nsperf("history", "import", "--db", db, files[0])
	if code != exitOK || !strings.Contains(stdout, "skipped") || !strings.Contains(stdout, "already in the history") {
		t.Errorf("second import: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = nsperf("history", "list", "--db", db, "--label", "patched")
	if !strings.Contains(stdout, "nsp0002") || strings.Contains(stdout, "nsp0001") {
		t.Errorf("list --label patched:\n%s", stdout)
	}
	if stdout, _, code = nsperf("history", "rm", "--db", db, "nsp0002"); code != exitOK || !strings.Contains(stdout, "untouched") {
		t.Errorf("rm: exit %d %s", code, stdout)
	}
	if _, err := os.Stat(files[1]); err != nil {
		t.Errorf("rm touched the result file: %v", err)
	}
	if _, _, code = nsperf("history", "rm", "--db", db, "nsp0002"); code != exitUsage {
		t.Errorf("rm of a run not there: exit %d", code)
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	if err := os.Truncate(db, 512); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = nsperf("history", "list", "--db", db)
	if code != exitInfra || !strings.Contains(stderr, db) {
		t.Errorf("truncated database: exit %d\n%s", code, stderr)
	}
	if _, _, code = nsperf("compare", files[0], "no-such-run", "--db", filepath.Join(dir, "other.db")); code != exitUsage {
		t.Errorf("compare with an unknown run: exit %d", code)
	}
}

// TestAnalyzeRealRuns: a history of real short runs, the later half with a token bucket in
// force: the change point lands at the first capped run, as a throughput regression;
// --fail-on-new fails on it until it is acknowledged; the reports render as HTML.
func TestAnalyzeRealRuns(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	dir := t.TempDir()
	t.Setenv("NSPERF_DB", filepath.Join(dir, "history.db"))
	// The cap is far below what an uncapped veth gives even on a machine busy with a kernel
	// build beside the suite (a 1gbit cap was not: an uncapped run fell near it there).
	free := strings.Replace(cappedScenario("200mbit", ""), "    qdiscs:\n      client/eth0: {tbf: {rate: 200mbit, burst: 1mb}}\n", "", 1)
	var ids []string
	var last string
	for i := 0; i < 10; i++ {
		text := free
		if i >= 5 {
			text = cappedScenario("200mbit", "")
		}
		last = measure(t, dir, fmt.Sprintf("run%d", i), text, "--runs", "2")
		r, _, err := results.ReadFile(last)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RunID)
	}
	stdout, stderr, code := nsperf("history", "analyze", "capped", "--format", "json")
	if code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", code, stderr)
	}
	var series []struct {
		Metric   string `json:"metric"`
		Findings []struct {
			Kind  string `json:"kind"`
			After struct {
				RunID string `json:"run_id"`
			} `json:"after"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &series); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// The change point lies at the first capped run, within the ± 1 run docs/history-and-ci.md states
	// for change points: on a shared machine an uncapped run can fall far enough to look
	// like the capped ones.
	at := -1
	for _, s := range series {
		if s.Metric != results.Throughput {
			continue
		}
		if len(s.Findings) == 1 && s.Findings[0].Kind == "regression" {
			at = slices.Index(ids, s.Findings[0].After.RunID)
		}
		if at < 4 || at > 6 {
			t.Fatalf("throughput findings %+v, want one regression at run %s (the first capped one) ± 1 run; runs %v", s.Findings, ids[5], ids)
		}
	}
	if at < 0 {
		t.Fatalf("no throughput series with the step:\n%s", stdout)
	}
	age := len(ids) - at // how many runs ago the change began
	if _, stderr, code = nsperf("history", "analyze", "capped", "--fail-on-new", "5", "--metric-is-no-flag"); code != exitUsage {
		t.Errorf("unknown flag: exit %d %s", code, stderr)
	}
	if stdout, stderr, code = nsperf("history", "analyze", "capped", "--fail-on-new", fmt.Sprint(age)); code != exitExpectation || !strings.Contains(stderr, "tcp4 throughput base") {
		t.Errorf("--fail-on-new %d: exit %d\n%s%s", age, code, stdout, stderr)
	}
	if _, _, code = nsperf("history", "analyze", "capped", "--fail-on-new", fmt.Sprint(age-1)); code != exitOK {
		t.Errorf("--fail-on-new %d (the change is %d runs old): exit %d", age-1, age, code)
	}
	if stdout, stderr, code = nsperf("history", "ack", ids[at], "--metric", "throughput", "--reason", "the test capped it"); code != exitOK {
		t.Fatalf("ack: exit %d %s%s", code, stdout, stderr)
	}
	// Throughput is the gate: acknowledged, nothing fails any more, whatever else the cap
	// moved (RTT, CPU per Gbit), which stays listed.
	stdout, stderr, code = nsperf("history", "analyze", "capped", "--fail-on-new", fmt.Sprint(age))
	if code != exitOK || !strings.Contains(stdout, "acknowledged: the test capped it") {
		t.Errorf("after acknowledging throughput: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"history", "analyze", "capped", "--format", "html"},
		{"history", "show", "capped", "--metric", "throughput", "--format", "html"},
		{"report", last, "--format", "html"},
		{"compare", filepath.Join(dir, "run0.json"), last, "--format", "html", "--force"},
	} {
		stdout, stderr, code = nsperf(args...)
		if (code != exitOK && code != exitExpectation) || !strings.Contains(stdout, "<svg") || strings.Contains(stdout, "http") {
			t.Errorf("%v: exit %d, %d bytes\n%s", args, code, len(stdout), stderr)
		}
	}
	stdout, _, _ = nsperf("history", "export", "capped", "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 11 || !strings.HasPrefix(lines[0], "time,run_id,label,kernel,tcp4.") {
		t.Errorf("export:\n%s", stdout)
	}
}
