package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/scenarios"
)

// MaxResultSize bounds what nsperf reads as a result or journal, by its size before any of
// it is decoded: 1000 runs of each of two states with 62 metrics a sample are 16.5 MB (read
// in about a second), so four times that still holds any run nsperf makes, and a runaway or
// hostile file costs seconds, not minutes and gigabytes.
const MaxResultSize = 64 << 20

// InputError says that a file given to nsperf is not a result it can read: the caller's
// mistake (exit 2), said with the file and the problem.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputError(path, format string, args ...any) error {
	return &InputError{Path: path, Err: fmt.Errorf(format, args...)}
}

// WriteFile stores a result atomically: a new temporary file in the same directory, synced,
// then renamed over the destination, so a reader never sees half a result and a symlink at the
// destination is replaced rather than followed.
func WriteFile(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := safefile.Write(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	return nil
}

// Encode writes a result as indented JSON (`--out -`, `report --format json`).
func Encode(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadFile loads a stored result or the journal of a run that did not finish, checks its
// schema version exactly, and recomputes every summary and expectation from the samples: the
// stored ones are never trusted. A file that is not a readable result is an *InputError.
func ReadFile(path string) (*Result, []string, error) {
	data, err := safefile.ReadRegular(path, MaxResultSize)
	if err != nil {
		if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, &InputError{Path: path, Err: errors.New(strings.TrimPrefix(err.Error(), path+": "))}
		}
		return nil, nil, fmt.Errorf("read result: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a result or a journal already in memory (e.g. a guest's, copied out of its
// directory); path only names it in errors.
func Parse(path string, data []byte) (*Result, []string, error) {
	if isJournal(data) {
		r, warnings, err := parseJournal(path, data)
		if err != nil {
			return nil, warnings, err
		}
		if err := r.checkSize(); err != nil {
			return nil, warnings, inputError(path, "%v", err)
		}
		warnings = append(warnings, r.escapeControls()...)
		if err := r.Recompute(); err != nil {
			return nil, warnings, &InputError{Path: path, Err: err}
		}
		return r, warnings, nil
	}
	r, err := parseResult(path, data)
	if err != nil {
		return nil, nil, err
	}
	if err := r.checkSize(); err != nil {
		return nil, nil, inputError(path, "%v", err)
	}
	warnings := append(r.checkScenarioHash(), r.escapeControls()...)
	if err := r.Recompute(); err != nil {
		return nil, warnings, &InputError{Path: path, Err: err}
	}
	return r, warnings, nil
}

func parseResult(path string, data []byte) (*Result, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, inputError(path, "empty file; not an nsperf result")
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return nil, inputError(path, "not a complete nsperf result (JSON broken at byte %d: %v); a killed run's samples are in its .journal", syntax.Offset, syntax)
		case errors.As(err, &typ):
			return nil, inputError(path, "not an nsperf result: field %s holds a JSON %s", typ.Field, typ.Value)
		}
		return nil, inputError(path, "not an nsperf result: %v", err)
	}
	if r.Schema != Schema {
		return nil, inputError(path, "schema %q; this nsperf reads %s only", r.Schema, Schema)
	}
	return &r, nil
}

// MaxRunsPerState bounds the samples of one state and workload in a case that a result may
// hold: what a run can measure (scenarios.MaxRuns), and what the statistics are sized for.
const MaxRunsPerState = 1000

// checkSize refuses a result (or a kernel's of an A/B run) that holds more samples of one
// state and workload than a run measures, or a value no measurement has (NaN, infinite, or
// beyond MaxMetricValue), naming the sample.
func (r *Result) checkSize() error {
	for _, x := range append([]*Result{r}, r.Kernels...) {
		if err := x.Settings.Policy.check(); err != nil {
			return fmt.Errorf("run %s: settings.policy: %w", x.RunID, err)
		}
		for _, c := range x.Cases {
			n := map[[2]string]int{}
			for _, s := range c.Samples {
				k := [2]string{s.State, s.Workload}
				if n[k]++; n[k] > MaxRunsPerState {
					return fmt.Errorf("run %s holds more than %d samples of state %s, workload %s%s: more than a run measures; not an nsperf result", x.RunID, MaxRunsPerState, s.State, s.Workload, caseName(c))
				}
				for _, m := range s.Metrics {
					if err := m.CheckValue(); err != nil {
						return fmt.Errorf("run %s, sample of round %d, state %s, workload %s%s: %w", x.RunID, s.Round, s.State, s.Workload, caseName(c), err)
					}
				}
			}
		}
	}
	return nil
}

func caseName(c Case) string {
	if c.Label == "" {
		return ""
	}
	return " in case " + c.Label
}

// Printable is s with control characters (ESC, newlines, ...) written as Go escapes: what a
// result says of itself is printed to terminals and reports, and must not drive them.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// escapeControls makes the free text of a stored result (label, kernel, host) printable.
func (r *Result) escapeControls() []string {
	var warnings []string
	for _, x := range append([]*Result{r}, r.Kernels...) {
		id := Printable(x.RunID)
		said := map[string]bool{}
		esc := func(f *string) {
			if p := Printable(*f); p != *f {
				if !said[p] {
					warnings = append(warnings, fmt.Sprintf("run %s: control characters in %q are shown escaped", id, p))
					said[p] = true
				}
				*f = p
			}
		}
		env := &x.Environment
		for _, f := range []*string{&x.RunID, &x.Label, &x.Scenario.Name, &x.Scenario.File, &env.KernelRelease, &env.KernelVersion, &env.Hostname, &env.CPUModel, &env.Machine} {
			esc(f)
		}
		for name, v := range env.Tools {
			esc(&v)
			env.Tools[name] = v
		}
		if v := env.VM; v != nil {
			for _, f := range []*string{&v.QEMU, &v.Image.Path, &v.Image.Release, &v.Image.Version, &v.Modules, &v.Warning, &v.Clock, &v.Icount, &v.IdleGate} {
				esc(f)
			}
		}
		// The names of cases, states, workloads and devices, wherever they stand: the
		// summaries are recomputed from these.
		for i := range x.Cases {
			c := &x.Cases[i]
			esc(&c.Label)
			for j := range c.States {
				st := &c.States[j]
				esc(&st.Name)
				esc(&st.CompareTo)
				st.Devices = escapeKeys(st.Devices, esc)
				st.Features = escapeKeys(st.Features, esc)
			}
			for j := range c.Samples {
				esc(&c.Samples[j].State)
				esc(&c.Samples[j].Workload)
			}
		}
	}
	return warnings
}

// escapeKeys is m with its keys passed through esc.
func escapeKeys[V any](m map[string]V, esc func(*string)) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		esc(&k)
		out[k] = v
	}
	return out
}

// checkScenarioHash recomputes the hash of the stored scenario text (and of the kernels' in an
// A/B run): the text is what the result says it measured, and a hash left over from before an
// edit must not make two different texts look the same.
func (r *Result) checkScenarioHash() []string {
	var warnings []string
	for _, x := range append([]*Result{r}, r.Kernels...) {
		if x.Scenario.Text == "" {
			continue
		}
		if got := scenarios.TextSHA256([]byte(x.Scenario.Text)); got != x.Scenario.SHA256 {
			warnings = append(warnings, fmt.Sprintf("run %s: scenario.sha256 %.12s does not match its text (%.12s): the text was edited after the run; its hash is recomputed", x.RunID, x.Scenario.SHA256, got))
			x.Scenario.SHA256 = got
		}
	}
	return warnings
}

// Recompute derives every summary and expectation from the samples, with the run's policy and
// the expectations of its scenario text. A text that no longer validates still gives its
// expect: list; one whose expect: cannot be read is an error, and the result's stored
// expectations are kept as they are.
func (r *Result) Recompute() error {
	exps, workloads, err := scenarios.StoredExpectations(r.Scenario.File, []byte(r.Scenario.Text))
	if err != nil {
		return fmt.Errorf("run %s: %w", r.RunID, err)
	}
	// An A/B run of two kernels: each kernel's result is a run of its own; the states of both
	// compared with each other carry no expectations (those are about the states of one run).
	for _, k := range r.Kernels {
		if err := k.Recompute(); err != nil {
			return err
		}
	}
	if len(r.Kernels) > 0 {
		exps = nil
	}
	// Gates come from the scenario, never from what the result says of itself: "gates: {}"
	// would gate nothing. A text that no longer validates keeps its stored gates, but none
	// is no gate: every metric then decides, as in results written before gates.
	if g := scenarios.StoredGates(r.Scenario.File, []byte(r.Scenario.Text)); g != nil {
		r.Settings.Gates = g
	} else if len(r.Settings.Gates) == 0 {
		r.Settings.Gates = nil
	}
	policy := r.Settings.Policy
	for i := range r.Cases {
		c := &r.Cases[i]
		names := slices.Clone(workloads)
		for _, s := range c.Samples { // workloads an --aa or edited text does not list
			if !slices.Contains(names, s.Workload) {
				names = append(names, s.Workload)
			}
		}
		if policy.Alpha == 0 { // results written before the policy was stored
			for _, s := range c.Summaries {
				// Only an alpha a run decides with: the summaries are stored text too.
				if s.Comparison != nil && (Policy{Alpha: s.Comparison.Alpha}).check() == nil {
					policy.Alpha = s.Comparison.Alpha
					break
				}
			}
		}
		c.Summaries = Summarize(c.Samples, c.States, names, policy)
		Explain(c, policy)
	}
	r.Settings.Policy.Alpha = policy.Alpha
	r.DecideFamily()
	for i := range r.Cases {
		r.Cases[i].Expectations = Evaluate(r.Cases[i], exps)
	}
	return nil
}

// JournalSchema is the version of the journal's line format.
const JournalSchema = "nsperf.journal/v1"

// journalLine is one line of a journal: the header (the result without its cases), a case as
// it begins, a state as read back after it was first applied, or a sample.
type journalLine struct {
	Journal string       `json:"journal,omitempty"`
	Result  *Result      `json:"result,omitempty"`
	Case    *int         `json:"case,omitempty"`
	Begin   *Case        `json:"begin,omitempty"`
	State   *StateRecord `json:"state,omitempty"`
	Sample  *Sample      `json:"sample,omitempty"`
}

// Journal appends what a run finishes, one JSON line each, synced, so that a killed run keeps
// every sample it finished (`nsperf report RESULT.journal` reads it). The file is created only
// with the first sample: a run that measures nothing never touches an existing file, and a
// symlink at the path is replaced, never followed.
type Journal struct {
	Path    string
	f       *safefile.Temp
	pending [][]byte
	samples int // samples on disk (synced)
}

// NewJournal prepares the journal of a run whose header (no cases yet) is r.
func NewJournal(path string, r *Result) (*Journal, error) {
	j := &Journal{Path: path}
	header := *r
	header.Cases = nil
	return j, j.add(journalLine{Journal: JournalSchema, Result: &header}, false)
}

// BeginCase records a case's matrix values, states and schedule as it starts.
func (j *Journal) BeginCase(i int, c Case) error {
	c.Samples, c.Summaries, c.Expectations = nil, nil, nil
	return j.add(journalLine{Case: &i, Begin: &c}, false)
}

// State records a state of case i as read back.
func (j *Journal) State(i int, rec StateRecord) error {
	return j.add(journalLine{Case: &i, State: &rec}, false)
}

// Append records one sample of case i; the first one creates the file.
func (j *Journal) Append(i int, s Sample) error {
	if err := j.add(journalLine{Case: &i, Sample: &s}, true); err != nil {
		return err
	}
	j.samples++
	return nil
}

// Written reports whether the journal file exists (a sample was recorded).
func (j *Journal) Written() bool { return j.f != nil }

// Saved is how many samples the journal file holds, synced to disk.
func (j *Journal) Saved() int { return j.samples }

func (j *Journal) add(line journalLine, flush bool) error {
	data, err := json.Marshal(line)
	if err != nil {
		return err
	}
	j.pending = append(j.pending, append(data, '\n'))
	if j.f == nil && !flush {
		return nil
	}
	if j.f == nil {
		f, err := safefile.Create(j.Path, 0o644)
		if err != nil {
			return fmt.Errorf("journal %s: %w", j.Path, err)
		}
		j.f = f
		err = j.write()
		if err == nil {
			err = f.Commit()
		}
		if err != nil {
			// Not created after all (a full disk): no file, no temporary file, and Written
			// says so.
			f.Abort()
			j.f = nil
			return fmt.Errorf("journal %s: not created: %w", j.Path, err)
		}
		return nil
	}
	if err := j.write(); err != nil {
		return fmt.Errorf("journal %s: %w", j.Path, err)
	}
	return j.f.Sync()
}

func (j *Journal) write() error {
	for _, p := range j.pending {
		if _, err := j.f.Write(p); err != nil {
			return err
		}
	}
	j.pending = nil
	return nil
}

// Close closes the journal file.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	j.f.Abort() // committed already: only closes
	return nil
}

func isJournal(data []byte) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var l journalLine
	return json.Unmarshal(first, &l) == nil && l.Journal != ""
}

// ReadJournal rebuilds the result of a run from its journal: every complete line counts; a
// torn last line (the run died while writing it, or the disk was full) is skipped with a
// warning. Anything else that does not parse is an *InputError.
func ReadJournal(path string) (*Result, []string, error) {
	data, err := safefile.ReadRegular(path, MaxResultSize)
	if err != nil {
		return nil, nil, &InputError{Path: path, Err: err}
	}
	return parseJournal(path, data)
}

func parseJournal(path string, data []byte) (*Result, []string, error) {
	lines := strings.SplitAfter(string(data), "\n")
	var r *Result
	var warnings []string
	for n, text := range lines {
		if strings.TrimSpace(text) == "" {
			continue
		}
		var l journalLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			if n == len(lines)-1 && !strings.HasSuffix(text, "\n") {
				warnings = append(warnings, fmt.Sprintf("%s: line %d is torn (the run died while writing it); skipped", path, n+1))
				continue
			}
			return nil, warnings, inputError(path, "line %d: not a journal line: %v", n+1, err)
		}
		switch {
		case r == nil:
			if l.Journal != JournalSchema || l.Result == nil {
				return nil, nil, inputError(path, "journal version %q; this nsperf reads %s only", l.Journal, JournalSchema)
			}
			r = l.Result
			if r.Schema != Schema {
				return nil, nil, inputError(path, "schema %q; this nsperf reads %s only", r.Schema, Schema)
			}
			r.Cases = nil
			r.Complete = false
		case l.Case == nil || *l.Case < 0 || *l.Case > len(r.Cases) || (*l.Case == len(r.Cases) && l.Begin == nil):
			return nil, warnings, inputError(path, "line %d: names no case that began before it", n+1)
		case l.Begin != nil:
			if *l.Case != len(r.Cases) {
				return nil, warnings, inputError(path, "line %d: case %d begins twice", n+1, *l.Case)
			}
			r.Cases = append(r.Cases, *l.Begin)
		case l.State != nil:
			c := &r.Cases[*l.Case]
			for i := range c.States {
				if c.States[i].Name == l.State.Name {
					c.States[i] = *l.State
				}
			}
		case l.Sample != nil:
			c := &r.Cases[*l.Case]
			c.Samples = append(c.Samples, *l.Sample)
			if l.Sample.Start.After(r.End) {
				r.End = l.Sample.Start
			}
		default:
			return nil, warnings, inputError(path, "line %d: an empty journal line", n+1)
		}
	}
	if r == nil {
		return nil, warnings, inputError(path, "empty journal")
	}
	return r, warnings, nil
}
