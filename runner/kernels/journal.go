package kernels

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/vm"
)

// journalPoll is how often the guests' journals are copied to the host while they measure:
// a kill -9 of the host's nsperf loses at most that much of what they finished.
const journalPoll = 2 * time.Second

// journals brings each guest's journal (the samples it finished, GuestDir/result.json.journal)
// to the host as the run goes, next to the run's result: RESULT.A.journal, RESULT.B.journal.
// A run that ends with a result removes them; one that is interrupted, fails or is killed
// keeps them for `nsperf report`.
type journals struct {
	exchange func(guest int) string // the guest's exchange directory on the host
	paths    []string
	mu       sync.Mutex
	stop     chan struct{}
	done     chan struct{}
}

func keepJournals(session *vm.Session, guests int, result string) *journals {
	j := &journals{exchange: session.Exchange, stop: make(chan struct{}), done: make(chan struct{})}
	for i := 0; i < guests; i++ {
		j.paths = append(j.paths, fmt.Sprintf("%s.%c.journal", result, 'A'+i))
	}
	go func() {
		defer close(j.done)
		for {
			select {
			case <-j.stop:
				return
			case <-time.After(journalPoll):
				j.copy()
			}
		}
	}()
	return j
}

// copy takes each guest's journal as it is now; what the guest wrote is read as untrusted.
func (j *journals) copy() (kept []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, path := range j.paths {
		data, err := safefile.ReadUntrusted(filepath.Join(j.exchange(i), "result.json.journal"), vm.MaxGuestResult)
		if err != nil || len(data) == 0 {
			if _, serr := os.Lstat(path); serr == nil {
				kept = append(kept, path) // an earlier copy
			}
			continue
		}
		// Only a journal nsperf can read is kept: what the kernel under test left there may
		// be anything (the earlier copy stays then).
		if _, _, err := results.Parse("the guest's journal", data); err != nil {
			if _, serr := os.Lstat(path); serr == nil {
				kept = append(kept, path)
			}
			continue
		}
		if err := safefile.Write(path, data, 0o644); err == nil {
			kept = append(kept, path)
		}
	}
	return kept
}

// finish stops the copying after a last copy. With a result, the copies go; without one, they
// stay and progress says where.
func (j *journals) finish(resultWritten bool, progress io.Writer) (kept []string) {
	close(j.stop)
	<-j.done
	kept = j.copy()
	if resultWritten {
		for _, p := range j.paths {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(progress, "vm: %v\n", err)
			}
		}
		return nil
	}
	for _, p := range kept {
		fmt.Fprintf(progress, "vm: the finished runs of guest %s are in %s (nsperf report %s)\n", p[len(p)-len("A.journal"):len(p)-len(".journal")], p, p)
	}
	return kept
}
