package runstate

import (
	"encoding/json"
	"io"
	"os"
	"slices"

	"github.com/nsperf/nsperf/internal/procstat"
)

// Proc names one process: its id and its start time, since an id alone is reused.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot (/proc/PID/stat field 22)
}

// Lineage is the process that made a run or a guest and its ancestors, nearest first, up to
// (not including) init. It says who made a leftover once that process is gone: a test tells
// what its own runs left from what other nsperf work on the machine left, and a user reading
// a state file sees which command made the run.
type Lineage []Proc

// maxLineage bounds the walk up the process tree; a real one is a few processes deep.
const maxLineage = 64

// OwnLineage is this process's lineage; empty where /proc cannot be read.
func OwnLineage() Lineage {
	var l Lineage
	for pid := os.Getpid(); pid > 1 && len(l) < maxLineage; {
		st, ok := procstat.ReadPID(pid)
		if !ok {
			break
		}
		l = append(l, Proc{PID: pid, Start: st.StartTime()})
		pid = st.PPID()
	}
	return l
}

// Includes reports whether p is in the lineage.
func (l Lineage) Includes(p Proc) bool { return slices.Contains(l, p) }

// lineageRecord is what a guest's lock file holds (vm's locked directories).
type lineageRecord struct {
	MadeBy Lineage `json:"made_by"`
}

// WriteLineage writes this process's lineage into a lock file it has just created and locked:
// the lock says whether the maker lives, the lineage who it was.
func WriteLineage(w io.Writer) error {
	return json.NewEncoder(w).Encode(lineageRecord{MadeBy: OwnLineage()})
}

// ReadLineage reads the lineage a lock file records; nil when it records none (a lock made by
// an nsperf before lineages, or cut short by a kill).
func ReadLineage(path string) Lineage {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var rec lineageRecord
	if json.NewDecoder(io.LimitReader(f, maxStateFile)).Decode(&rec) != nil {
		return nil
	}
	return rec.MadeBy
}
