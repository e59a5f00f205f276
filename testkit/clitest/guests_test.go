package clitest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/testkit/testenv"
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

// TestNoGuestLeftSparesFixtures: a killed run's guest directory is a leftover, unless a test
// beside makes it on purpose and holds it (the cleanup test in the guests lane, while a build
// test of another lane ends).
func TestNoGuestLeftSparesFixtures(t *testing.T) {
	testenv.RequireRoot(t)
	name := fmt.Sprintf("vm-fixturetest%04x", rand.IntN(1<<16))
	dir := filepath.Join(vm.Dir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Run("held", func(t *testing.T) {
		testenv.HoldFixture(t, name)
		check := &errorsOf{TB: t}
		NoGuestLeft(check)
		for _, e := range check.errs {
			if strings.Contains(e, name) {
				t.Errorf("a fixture held by another test was reported: %s", e)
			}
		}
	})
	check := &errorsOf{TB: t}
	NoGuestLeft(check)
	found := false
	for _, e := range check.errs {
		found = found || strings.Contains(e, name)
	}
	if !found {
		t.Errorf("an unheld killed guest's directory %s was not reported: %v", dir, check.errs)
	}
}
