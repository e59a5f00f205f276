package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nsperf/nsperf/internal/safefile"
)

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
