package clitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
	"github.com/nsperf/nsperf/vm"
)

// errorsOf records a check's errors instead of failing the test that runs it.
type errorsOf struct {
	testing.TB
	errs []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestNoGuestLeftSparesOthers: a killed run's guest directory made while a test runs is its
// leftover, unless a test beside makes it on purpose and holds it (the cleanup test in the
// guests lane, while a build test of another lane ends), or another process made it (other
// nsperf work on the machine, killed); one that was there before the test began is not the
// test's (CI found seven of other work's guests and failed three tests with them).
func TestNoGuestLeftSparesOthers(t *testing.T) {
	testenv.RequireRoot(t)
	newGuest := func(lock []byte) string {
		name := fmt.Sprintf("vm-lefttest%04x", rand.IntN(1<<16))
		dir := filepath.Join(vm.Dir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if lock != nil {
			os.WriteFile(filepath.Join(dir, "lock"), lock, 0o600)
		}
		old := time.Now().Add(-time.Minute)
		os.Chtimes(dir, old, old) // not a run that is just starting
		t.Cleanup(func() { os.RemoveAll(dir) })
		return name
	}
	reported := func(before map[string]bool, name string) bool {
		check := &errorsOf{TB: t}
		guestsLeftSince(check, before)
		return strings.Contains(strings.Join(check.errs, "\n"), name)
	}
	var own bytes.Buffer
	runstate.WriteLineage(&own)
	initProc, _ := procstat.ReadPID(1)
	others, _ := json.Marshal(map[string]any{"made_by": runstate.Lineage{{PID: 1, Start: initProc.StartTime()}}})

	earlier := newGuest(nil)
	before := guestNames()
	if reported(before, earlier) {
		t.Errorf("a guest directory there before the test began was reported")
	}
	for _, c := range []struct {
		what string
		lock []byte
		want bool
	}{
		{"made by this process", own.Bytes(), true},
		{"of unknown maker", nil, true},
		{"made by another process", others, false},
	} {
		if name := newGuest(c.lock); reported(before, name) != c.want {
			t.Errorf("a killed guest's directory %s: reported %v, want %v", c.what, !c.want, c.want)
		}
	}
	held := newGuest(own.Bytes())
	t.Run("held", func(t *testing.T) {
		testenv.HoldFixture(t, held)
		if reported(before, held) {
			t.Errorf("a fixture held by another test was reported")
		}
	})
	if !reported(before, held) {
		t.Errorf("a killed guest's directory no test holds any longer was not reported")
	}
}
