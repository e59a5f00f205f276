package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
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
	r.placeSides()
	return &r, nil
}

// placeSides gives the states and samples of an A/B result written before they carried
// their side (results.SideOf) the side their merged name STATE@SIDE shows: the one place a
// merged name is read back, for those files only.
func (r *Result) placeSides() {
	if len(r.Kernels) == 0 {
		return
	}
	place := func(name string, at *SideOf) {
		if at.Side != "" {
			return
		}
		if i := strings.LastIndex(name, "@"); i > 0 {
			at.Of, at.Side = name[:i], name[i+1:]
		}
	}
	for ci := range r.Cases {
		c := &r.Cases[ci]
		for i := range c.States {
			place(c.States[i].Name, &c.States[i].SideOf)
		}
		for i := range c.Samples {
			place(c.Samples[i].State, &c.Samples[i].SideOf)
		}
	}
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
