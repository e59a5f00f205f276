package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRefusesOtherSchemas: the version is matched exactly, not by prefix.
func TestReadRefusesOtherSchemas(t *testing.T) {
	dir := t.TempDir()
	for _, schema := range []string{"nsperf.result/v10", "nsperf.result/v1-evil", "nsperf.result/v2", ""} {
		r := testResult()
		r.Schema = schema
		path := filepath.Join(dir, "r.json")
		if err := WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadFile(path)
		var input *InputError
		if !errors.As(err, &input) || !strings.Contains(err.Error(), "schema") {
			t.Errorf("schema %q: %v, want an InputError about the schema", schema, err)
		}
	}
}

// TestReadBadFilesSaySo: empty, truncated, not JSON, a directory, a FIFO, /dev/zero: each an
// InputError naming the file, never a raw decoder error or a hang.
func TestReadBadFilesSaySo(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(testResult())
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"empty": "", "truncated": string(good[:len(good)/2]), "text": "hello\n", "array": "[1,2]"} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		_, _, err := ReadFile(path)
		var input *InputError
		if !errors.As(err, &input) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %v, want an InputError starting with the path", name, err)
		}
	}
	for _, path := range []string{dir, fifo, "/dev/zero"} {
		_, _, err := ReadFile(path)
		var input *InputError
		if !errors.As(err, &input) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want an InputError: not a regular file", path, err)
		}
	}
}

// TestReportRecomputesSummaries: the stored summaries are never shown; edited samples change
// what is reported.
func TestReportRecomputesSummaries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	r := testResult()
	stored := r.Cases[0].Summaries[0].Centre.Median
	for i := range r.Cases[0].Samples {
		for j := range r.Cases[0].Samples[i].Metrics {
			r.Cases[0].Samples[i].Metrics[j].Value = 0
		}
	}
	if err := WriteFile(path, r); err != nil { // the summaries still say what they said
		t.Fatal(err)
	}
	got, _, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if stored == 0 || got.Cases[0].Summaries[0].Centre.Median != 0 {
		t.Errorf("median %v after the samples were set to 0 (stored: %v)", got.Cases[0].Summaries[0].Centre.Median, stored)
	}
}

// TestInvalidSamplesLeftOut: a sample taken while the state drifted is kept in the result and
// left out of the statistics.
func TestInvalidSamplesLeftOut(t *testing.T) {
	r := testResult()
	c := &r.Cases[0]
	c.Samples[0].Invalid = "state changed during the sample: client/eth0 gso_max_size is 32000, applied 65536"
	n := 0
	for _, s := range Summarize(c.Samples, c.States, []string{"tcp4"}, Policy{}) {
		if s.State == c.Samples[0].State && s.Metric == Throughput {
			n = s.Stats.N
		}
	}
	if n != 1 {
		t.Errorf("state %s throughput n=%d, want 1 (one of two samples invalid)", c.Samples[0].State, n)
	}
}

func writeJournal(t testing.TB, path string) *Result {
	t.Helper()
	r := testResult()
	j, err := NewJournal(path, r)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.BeginCase(0, r.Cases[0]); err != nil {
		t.Fatal(err)
	}
	for _, st := range r.Cases[0].States {
		st.Devices = map[string]map[string]uint64{"client/eth0": {"gso_max_size": 65536}}
		if err := j.State(0, st); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range r.Cases[0].Samples {
		if err := j.Append(0, s); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestJournalTornLastLine: a run killed while writing (or a full disk) leaves half a line; the
// complete samples are recovered, with a warning.
func TestJournalTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json.journal")
	r := writeJournal(t, path)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-20], 0o644)
	got, warnings, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Cases[0].Samples); n != len(r.Cases[0].Samples)-1 || len(warnings) != 1 || !strings.Contains(warnings[0], "torn") {
		t.Errorf("%d samples, warnings %v; want %d and one about the torn line", n, warnings, len(r.Cases[0].Samples)-1)
	}
	if got.Cases[0].States[0].Devices == nil || len(got.Cases[0].Summaries) == 0 {
		t.Errorf("state read-backs or summaries not recovered: %+v", got.Cases[0])
	}
	// Garbage in the middle is not a torn line.
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = "{garbage\n"
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
	var input *InputError
	if _, _, err := ReadFile(path); !errors.As(err, &input) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("garbage on line 3: %v", err)
	}
}

// TestWritesReplaceSymlinks: a symlink planted at a result or journal path is replaced; the
// file it points to is never written.
func TestWritesReplaceSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	for _, name := range []string{"r.json", "r.json.journal"} {
		path := filepath.Join(dir, name)
		if err := os.Symlink(victim, path); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "r.json"), testResult()); err != nil {
		t.Fatal(err)
	}
	writeJournal(t, filepath.Join(dir, "r.json.journal"))
	if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
		t.Errorf("the symlink's target was written: %q", data)
	}
	for _, name := range []string{"r.json", "r.json.journal"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s is not a regular file now: %v", name, err)
		}
	}
}

// FuzzReadJournal: any bytes give a result or an error, never a panic.
func FuzzReadJournal(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.journal")
	writeJournal(f, path)
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte(`{"journal":"nsperf.journal/v1","result":{"schema":"nsperf.result/v1"}}` + "\n" + `{"case":3,"sample":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := parseJournal("fuzz.journal", data)
		if err == nil {
			r.Recompute()
		}
	})
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// FuzzParseResult: whatever a result file or a guest's result.json holds, Parse does not
// panic, and what it accepts has no value the statistics cannot take, no more samples of a
// state than a run measures, printable labels and a scenario hash that is its text's.
func FuzzParseResult(f *testing.F) {
	var b bytes.Buffer
	Encode(&b, testResult())
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema":"nsperf.result/v1","label":"\u001b[2J","cases":[{"samples":[{"state":"off","metrics":[{"name":"throughput","value":1e300}]}]}]}`))
	f.Add([]byte(`{"schema":"nsperf.result/v1","kernels":[{"schema":"nsperf.result/v1","kernels":[{}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		if err := r.checkSize(); err != nil {
			t.Fatalf("accepted: %v", err)
		}
		if Printable(r.Label) != r.Label {
			t.Fatalf("accepted a label with control characters: %q", r.Label)
		}
		var out bytes.Buffer
		for _, write := range writers {
			out.Reset()
			write(&out, r)
		}
	})
}

// Text a stored result carries reaches terminals, KTAP and spreadsheets: control characters
// are escaped when it is read, a run id cannot add KTAP lines, and no CSV cell of a name
// starts a formula (issue 31, item 11).
func TestStoredNamesAreEscapedAtEverySink(t *testing.T) {
	r := benchstatResult()
	r.RunID = "nsp0001\nok 1 planted # SKIP"
	c := &r.Cases[0]
	for i := range c.States {
		c.States[i].Name = "=" + c.States[i].Name + "\x1b[31m"
		if c.States[i].CompareTo != "" {
			c.States[i].CompareTo = "=" + c.States[i].CompareTo + "\x1b[31m"
		}
	}
	for i := range c.Samples {
		c.Samples[i].State = "=" + c.Samples[i].State + "\x1b[31m"
		c.Samples[i].Workload = "@" + c.Samples[i].Workload
	}
	r.Environment.CPUModel = "CPU\x1b]0;owned\x07"
	var stored bytes.Buffer
	if err := Encode(&stored, r); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Parse("r.json", stored.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 {
		t.Error("no warning about the escaped text")
	}
	var table, ktap, csv bytes.Buffer
	for _, w := range []struct {
		b      *bytes.Buffer
		render func(io.Writer, *Result) error
	}{{&table, Table}, {&ktap, KTAP}, {&csv, CSV}} {
		if err := w.render(w.b, got); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"table": table.String(), "ktap": ktap.String(), "csv": csv.String()} {
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s prints raw control characters:\n%q", name, out)
		}
	}
	for _, line := range strings.Split(ktap.String(), "\n") {
		if strings.HasPrefix(line, "ok 1 planted") {
			t.Errorf("the run id added a KTAP line:\n%s", ktap.String())
		}
	}
	for _, line := range strings.Split(csv.String(), "\n")[1:] {
		for _, cell := range strings.Split(line, ",") {
			if cell != "" && strings.ContainsRune("=+@", rune(cell[0])) {
				t.Errorf("CSV cell %q starts a formula:\n%s", cell, csv.String())
			}
		}
	}
}

// A stored result's say about how it is decided is bounded, and its gates are its scenario's:
// gates {}, min_change 1e300 or alpha 1e-300 in a baseline cannot turn a regression into a
// pass, and a negative throughput is no measurement (issue 31, item 16).
func TestStoredPolicyIsBounded(t *testing.T) {
	text := "name: pair\ntopology:\n  namespaces: [client, server]\n  links:\n    - veth:\n        a: {ns: client, name: eth0, addrs: [198.18.0.1/24]}\n        b: {ns: server, name: eth0, addrs: [198.18.0.2/24]}\nstates:\n  - name: \"off\"\n  - name: \"on\"\n    devices: {client/eth0: {gso_max_size: 185000}}\nworkloads:\n  - name: tcp4\n    iperf3: {client: {ns: client}, server: {ns: server, addr: 198.18.0.2}}\n"
	regressed := func(edit func(*Result)) *Result {
		r := &Result{Schema: Schema, RunID: "nsp0001", Complete: true, Scenario: ScenarioInfo{Name: "pair", Text: text},
			Settings: Settings{Runs: 5, Policy: Policy{Alpha: 0.05, CVLimit: 0.05, MinChange: 0.02}}}
		c := Case{States: []StateRecord{{Name: "off"}, {Name: "on", CompareTo: "off"}}}
		for i := range 5 {
			c.Samples = append(c.Samples, Sample{Round: i + 1, State: "off", Workload: "tcp4", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: (10 + 0.1*float64(i)) * 1e9}}},
				Sample{Round: i + 1, State: "on", Workload: "tcp4", Metrics: []Metric{{Name: Throughput, Unit: "bit/s", Value: (6 + 0.1*float64(i)) * 1e9}}})
		}
		r.Cases = []Case{c}
		edit(r)
		return r
	}
	parse := func(r *Result) (*Result, error) {
		var b bytes.Buffer
		if err := Encode(&b, r); err != nil {
			t.Fatal(err)
		}
		got, _, err := Parse("r.json", b.Bytes())
		return got, err
	}
	got, err := parse(regressed(func(r *Result) { r.Settings.Gates = map[string][]string{} }))
	if err != nil || len(got.Failures()) == 0 {
		t.Errorf("gates {}: %v, failures %v", err, got.Failures())
	}
	for name, edit := range map[string]func(*Result){
		"min_change 1e300": func(r *Result) { r.Settings.Policy.MinChange = 1e300 },
		"alpha 1e-300":     func(r *Result) { r.Settings.Policy.Alpha = 1e-300 },
		"negative":         func(r *Result) { r.Cases[0].Samples[0].Metrics[0].Value = -1e9 },
	} {
		var input *InputError
		if _, err := parse(regressed(edit)); !errors.As(err, &input) {
			t.Errorf("%s: %v, want the result refused", name, err)
		}
	}
}
