package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/history/changepoint"
	"github.com/nsperf/nsperf/results"
)

// testResult is a finished run of scenario s: throughput of states off and on (Gbit/s).
func testResult(id, scenario, label, kernel string, start time.Time, off, on float64) *results.Result {
	r := &results.Result{
		Schema: results.Schema, RunID: id, Label: label, Complete: true, Start: start, End: start.Add(time.Minute),
		Scenario:    results.ScenarioInfo{Name: scenario, File: scenario + ".yaml", SHA256: "00", Text: "name: " + scenario + "\n"},
		Settings:    results.Settings{Runs: 3, Order: "alternate", Policy: results.Policy{Alpha: 0.05, CVLimit: 0.05}},
		Environment: results.Environment{KernelRelease: kernel, Hostname: "box", CPUs: 2},
	}
	c := results.Case{States: []results.StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}}
	for i, f := range []float64{0.98, 1.0, 1.02} {
		for st, v := range map[string]float64{"off": off, "on": on} {
			c.Samples = append(c.Samples, results.Sample{Round: i + 1, State: st, Workload: "tcp4", Tool: "iperf3",
				Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: v * f * 1e9}}})
		}
	}
	r.Cases = []results.Case{c}
	r.Recompute()
	return r
}

var t0 = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)

// suite runs the history's behaviour against one database and returns what list and show
// printed, so that SQLite and PostgreSQL can be held to the same output.
func suite(t *testing.T, dsn string) string {
	ctx := context.Background()
	h, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out bytes.Buffer
	runs := []*results.Result{
		testResult("nsp0001", "veth-bigtcp", "base", "6.18.44", t0, 10, 12),
		testResult("nsp0002", "veth-bigtcp", "patched", "6.19.0", t0.Add(24*time.Hour), 10, 14),
		testResult("nsp0003", "vxlan-lowerdev", "base", "6.18.44", t0.Add(48*time.Hour), 5, 6),
		testResult("nsp0004", "veth-bigtcp", "base", "6.18.44", t0.Add(72*time.Hour), 9, 12),
	}
	// nsp0001 and nsp0002 are the base and the patched kernel of a series nsperf built.
	for i, r := range runs[:2] {
		r.Build = &results.KernelBuild{Patched: i == 1, Build: results.Build{Mode: "modules", Patches: []results.BuildPatch{{Subject: "[PATCH] veth: faster", SHA256: "ab"}}}}
	}
	runs[1].Reproduction = &results.Reproduction{Source: "veth.mbox", Claims: []results.ClaimCheck{{Claim: 1, Outcome: results.Reproduced}, {Claim: 2, Outcome: results.Undecided}}}
	for _, r := range runs {
		if added, err := h.Import(ctx, r); err != nil || !added {
			t.Fatalf("import %s: added %v, %v", r.RunID, added, err)
		}
	}
	// Importing again is idempotent: said, and nothing doubles.
	if added, err := h.Import(ctx, runs[0]); err != nil || added {
		t.Fatalf("second import of %s: added %v, %v", runs[0].RunID, added, err)
	}
	listAll, err := h.List(ctx, Filter{})
	if err != nil || len(listAll) != 4 || listAll[0].Patch != `without "[PATCH] veth: faster"` || listAll[1].Patch != `with "[PATCH] veth: faster"` || listAll[2].Patch != "" ||
		listAll[1].Claims != "2 claims: 1 reproduced, 1 undecided" || listAll[0].Claims != "" {
		t.Errorf("the runs' patches: %+v %v", listAll, err)
	}
	var listed bytes.Buffer
	WriteRuns(&listed, listAll)
	if !strings.Contains(listed.String(), `with "[PATCH] veth: faster"`) || !strings.Contains(listed.String(), "2 claims: 1 reproduced, 1 undecided") {
		t.Errorf("history list lacks the patch:\n%s", listed.String())
	}
	for _, f := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"all", Filter{}, []string{"nsp0001", "nsp0002", "nsp0003", "nsp0004"}},
		{"scenario", Filter{Scenario: "veth-bigtcp"}, []string{"nsp0001", "nsp0002", "nsp0004"}},
		{"label", Filter{Label: "base", Scenario: "veth-bigtcp"}, []string{"nsp0001", "nsp0004"}},
		{"kernel prefix", Filter{Kernel: "6.19"}, []string{"nsp0002"}},
		{"kernel prefix by component", Filter{Kernel: "6.1"}, nil}, // not 6.18.44 or 6.19.0
		{"kernel with pattern characters", Filter{Kernel: "%"}, nil},
		{"kernel with an underscore", Filter{Kernel: "6_18"}, nil},
		{"since", Filter{Since: t0.Add(36 * time.Hour)}, []string{"nsp0003", "nsp0004"}},
		{"last", Filter{Last: 2}, []string{"nsp0003", "nsp0004"}},
	} {
		got, err := h.List(ctx, f.filter)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.RunID)
		}
		if strings.Join(ids, " ") != strings.Join(f.want, " ") {
			t.Errorf("list %s: %v, want %v", f.name, ids, f.want)
		}
		fmt.Fprintf(&out, "# list %s\n", f.name)
		WriteRuns(&out, got)
	}
	points, err := h.Show(ctx, Query{Scenario: "veth-bigtcp", Metric: results.Throughput, State: "on"})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 3 || points[0].RunID != "nsp0001" || points[1].Median != 14e9 || points[2].Label != "base" {
		t.Errorf("show: %+v", points)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer, []Point) error
	}{{"table", SeriesTable}, {"csv", SeriesCSV}} {
		fmt.Fprintf(&out, "# show %s\n", f.name)
		if err := f.write(&out, points); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := h.Show(ctx, Query{Scenario: "veth-bigtcp"})
	if len(all) != 6 { // 3 runs x 2 states x 1 metric
		t.Errorf("show without filters: %d points, want 6", len(all))
	}
	got, err := h.Find(ctx, "patched")
	if err != nil || got.RunID != "nsp0002" || len(got.Cases[0].Summaries) == 0 {
		t.Errorf("find by label: %v %v", got, err)
	}
	if _, err := h.Find(ctx, "nsp9999"); !errors.Is(err, ErrNotFound) {
		t.Errorf("find of a missing run: %v", err)
	}
	if n, err := h.Remove(ctx, "nsp0002"); err != nil || n != 1 {
		t.Errorf("rm: %d %v", n, err)
	}
	if left, _ := h.List(ctx, Filter{Scenario: "veth-bigtcp"}); len(left) != 2 {
		t.Errorf("after rm: %d runs", len(left))
	}
	if points, _ := h.Show(ctx, Query{Scenario: "veth-bigtcp"}); len(points) != 4 {
		t.Errorf("after rm: %d points, want 4", len(points))
	}
	// A run in virtual time is a series of its own: its figures count instructions.
	virtual := testResult("nsp0005", "veth-bigtcp", "base", "6.12.117", t0.Add(96*time.Hour), 2.6, 3.1)
	virtual.Environment.VM = &results.VMInfo{Accel: "tcg", QEMU: "7.2.22", Clock: "virtual", Icount: "shift=2,sleep=off,align=off"}
	if _, err := h.Import(ctx, virtual); err != nil {
		t.Fatal(err)
	}
	series, err := h.Analyze(ctx, []string{"veth-bigtcp"}, changepoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clocks := map[string]int{}
	for _, s := range series {
		if s.Workload == "tcp4" && s.Metric == results.Throughput && s.State == "on" {
			clocks[s.Clock] = len(s.Points)
			if s.Clock != "wall" && !strings.HasSuffix(s.Name(), "(virtual icount=shift=2,sleep=off,align=off qemu=7.2.22)") {
				t.Errorf("series name %q", s.Name())
			}
		}
	}
	if len(clocks) != 2 || clocks["wall"] != 2 || clocks["virtual icount=shift=2,sleep=off,align=off qemu=7.2.22"] != 1 {
		t.Errorf("tcp4 throughput on: points by clock %v, want 2 wall and 1 virtual apart", clocks)
	}
	return out.String()
}

func TestSQLite(t *testing.T) {
	out := suite(t, filepath.Join(t.TempDir(), "sub", "history.db"))
	if !strings.Contains(out, "nsp0002  patched  6.19.0") || !strings.Contains(out, "14.000 Gbps") {
		t.Errorf("output:\n%s", out)
	}
}

// TestConcurrentWriters: two processes import into one new database at once; every run of
// both lands.
func TestConcurrentWriters(t *testing.T) {
	if dsn := os.Getenv("NSPERF_TEST_WRITER_DB"); dsn != "" {
		writer(t, dsn)
		return
	}
	concurrentWriters(t, filepath.Join(t.TempDir(), "history.db"))
}

func concurrentWriters(t *testing.T, dsn string) {
	const perWriter = 25
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for w := 0; w < 2; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWriters$")
		cmd.Env = append(os.Environ(), "NSPERF_TEST_WRITER_DB="+dsn, "NSPERF_TEST_WRITER="+strconv.Itoa(w), "NSPERF_TEST_WRITES="+strconv.Itoa(perWriter))
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	h, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	runs, err := h.List(context.Background(), Filter{Scenario: "concurrent"})
	if err != nil || len(runs) != 2*perWriter {
		t.Errorf("%d runs after two writers of %d each: %v", len(runs), perWriter, err)
	}
}

// writer is one of the processes of TestConcurrentWriters.
func writer(t *testing.T, dsn string) {
	w, _ := strconv.Atoi(os.Getenv("NSPERF_TEST_WRITER"))
	n, _ := strconv.Atoi(os.Getenv("NSPERF_TEST_WRITES"))
	for i := 0; i < n; i++ {
		// Each import opens the database anew, as each `nsperf run` does.
		h, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		r := testResult(fmt.Sprintf("nsp%d%03d", w+1, i), "concurrent", "", "6.18.44", t0.Add(time.Duration(i)*time.Minute), 10, 12)
		if added, err := h.Import(context.Background(), r); err != nil || !added {
			t.Fatalf("import %s: %v %v", r.RunID, added, err)
		}
		h.Close()
	}
}

// TestCorruptAndNewerDatabases: a truncated file is an Error naming the path; a database of
// a newer schema is refused and left as it was.
func TestCorruptAndNewerDatabases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	h, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		h.Import(ctx, testResult(fmt.Sprintf("nsp%04d", i), "s", "", "k", t0.Add(time.Duration(i)*time.Hour), 1, 2))
	}
	h.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path)
	var herr *Error
	if !errors.As(err, &herr) || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated database: %v", err)
	}

	newer := filepath.Join(dir, "newer.db")
	h, err = Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	h.db.Exec(`UPDATE nsperf_schema SET version = 99`)
	h.Close()
	before, _ := os.ReadFile(newer)
	if _, err := Open(ctx, newer); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("newer schema: %v", err)
	}
	db, _ := sql.Open("sqlite", newer)
	var v int
	db.QueryRow(`SELECT version FROM nsperf_schema`).Scan(&v)
	db.Close()
	if after, _ := os.ReadFile(newer); v != 99 || !bytes.Equal(before, after) {
		t.Errorf("the newer database was altered: version %d", v)
	}
}

func TestRedact(t *testing.T) {
	if got := redact("postgres://nsperf:secret@db.lab:5432/nsperf"); got != "postgres://nsperf:***@db.lab:5432/nsperf" {
		t.Error(got)
	}
	if got := redact("postgres:///nsperf?host=/tmp/x"); got != "postgres:///nsperf?host=/tmp/x" {
		t.Error(got)
	}
	// A short password is taken out where it stands, not from every word of the text.
	if got := redact("postgres://u:p@db.lab/nsperf?password=p"); got != "postgres://u:***@db.lab/nsperf?password=***" {
		t.Error(got)
	}
	// URLs refused for their scheme are printed in the refusal, without the password
	// (issue 31, item 18).
	for _, dsn := range []string{"POSTGRES://nsperf:hunter2@db.lab/nsperf", "mysql://root:hunter2@db.lab/nsperf", "mysql://db.lab/nsperf?password=hunter2"} {
		_, err := Open(context.Background(), dsn)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !errors.Is(err, ErrBadDSN) {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

// TestCSVFormulaInjection: a label or kernel string that a spreadsheet would run as a formula
// comes out of every CSV as text ('=...), still readable.
func TestCSVFormulaInjection(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	evil, kernel := `=HYPERLINK("http://example.invalid","x")`, "+6.18.44"
	for i := 0; i < 2; i++ {
		if _, err := h.Import(ctx, testResult(fmt.Sprintf("nsp000%d", i), "csv", evil, kernel, t0.Add(time.Duration(i)*time.Hour), 10, 12)); err != nil {
			t.Fatal(err)
		}
	}
	points, err := h.Show(ctx, Query{Scenario: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	var show, export bytes.Buffer
	if err := SeriesCSV(&show, points); err != nil {
		t.Fatal(err)
	}
	series, err := h.Analyze(ctx, []string{"csv"}, changepoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Export(&export, series); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"show": show.String(), "export": export.String()} {
		if !strings.Contains(out, `"'=HYPERLINK(""http://example.invalid"",""x"")"`) || !strings.Contains(out, ",'+6.18.44") {
			t.Errorf("%s --format csv:\n%s", name, out)
		}
	}
}

// TestDSNs: a path is a file of that very name (?, # and % are no URI syntax), an in-memory
// database, a symlink, a device, a keyword DSN and other URLs are refused, and no message
// prints a password, wherever the URL carries it.
func TestDSNs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"a?b.db", "c#d.db", "e%41.db", "x.db?_pragma=journal_mode(off)"} {
		h, err := Open(ctx, filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		h.Close()
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: the file of that name was not created: %v", name, err)
		}
	}
	os.Symlink(filepath.Join(dir, "nowhere", "target.db"), filepath.Join(dir, "dangling.db"))
	for dsn, want := range map[string]string{
		":memory:":                        "keeps nothing",
		"/dev/null":                       "not a regular file",
		filepath.Join(dir, "dangling.db"): "not a regular file",
		"host=db.lab user=nsperf password=s3cret": "keyword DSN",
		"mysql://u:p@h/db":                        "neither a file path nor a postgres:// URL",
	} {
		_, err := Open(ctx, dsn)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want %q", dsn, err, want)
		}
		if _, err := OpenExisting(ctx, dsn); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s, reading: %v", dsn, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the dangling symlink's target directory was created")
	}
	if _, err := os.Stat("/dev/null-journal"); err == nil {
		t.Error("/dev/null-journal exists")
	}
	for _, dsn := range []string{
		"postgres://nsperf@127.0.0.1:1/nsperf?password=s3cret&connect_timeout=1",
		"postgres://nsperf:p@ss@s3cret@127.0.0.1:1/nsperf?connect_timeout=1",
	} {
		h, err := Open(ctx, dsn)
		if err == nil {
			h.Close()
			t.Fatalf("%s: connected to nothing", dsn)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the password is in the message: %v", err)
		}
	}
}

// TestMigrateToClock: a database of schema 2 (before clocks) opens as schema 3, its runs on
// the wall clock, which is what every run before virtual time measured on.
func TestMigrateToClock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", sqliteURI(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(migrations[0]+";"+migrations[1], ";") {
		if strings.TrimSpace(stmt) != "" {
			if _, err := old.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, stmt := range []string{
		`CREATE TABLE nsperf_schema (version INTEGER NOT NULL)`, `INSERT INTO nsperf_schema (version) VALUES (2)`,
		`INSERT INTO runs (run_id, started, scenario, sha256, label, kernel, hostname, complete, result) VALUES ('nsp0001', '2026-11-01T08:00:00.000000000Z', 'veth-bigtcp', '', '', 'k', 'h', 1, '{"settings":{}}')`,
		`INSERT INTO series (run_id, started, case_label, workload, metric, state, unit, n, median, cv) VALUES ('nsp0001', '2026-11-01T08:00:00.000000000Z', '', 'tcp4', 'throughput', 'on', 'bit/s', 6, 1e10, 0.05)`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	h, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	points, err := h.Show(ctx, Query{Scenario: "veth-bigtcp"})
	if err != nil || len(points) != 1 || points[0].Clock != "wall" {
		t.Errorf("after the migration: %+v %v", points, err)
	}
}
