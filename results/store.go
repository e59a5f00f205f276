package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile stores a result atomically: a temporary file in the same directory, synced, then
// renamed over the destination, so a reader never sees half a result.
func WriteFile(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing to remove
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ReadFile loads a stored result and checks its schema version.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("result %s: %w", path, err)
	}
	if !strings.HasPrefix(r.Schema, "nsperf.result/v1") {
		return nil, fmt.Errorf("result %s: schema %q; this nsperf reads %s", path, r.Schema, Schema)
	}
	return &r, nil
}

// Journal appends each finished sample to a file as one JSON line, synced, so that an
// interrupted run keeps every sample it finished. The first line names the run.
type Journal struct {
	f    *os.File
	Path string
}

// JournalHeader is the first line of a journal.
type JournalHeader struct {
	Journal  string `json:"journal"`
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
}

// OpenJournal creates a journal for a run.
func OpenJournal(path, runID, scenario string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{f: f, Path: path}
	return j, j.append(JournalHeader{Journal: Schema, RunID: runID, Scenario: scenario})
}

// Append records one sample.
func (j *Journal) Append(s Sample) error { return j.append(s) }

func (j *Journal) append(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("journal %s: %w", j.Path, err)
	}
	return j.f.Sync()
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadJournal returns the samples of a journal.
func ReadJournal(path string) ([]Sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i == 0 || line == "" {
			continue
		}
		var s Sample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return out, fmt.Errorf("journal %s line %d: %w", path, i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}
