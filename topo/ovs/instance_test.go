package ovs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestStartEndsWhenTheServerExits: on a guest's virtual clock the wait for ovsdb-server's
// socket has no bound, so a server that exits must end it, with its words.
func TestStartEndsWhenTheServerExits(t *testing.T) {
	testenv.RequireTool(t, "ovsdb-tool")
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "ovsdb-server"), []byte("#!/bin/sh\necho 'fake ovsdb-server: cannot start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	defer waitlimit.OnVirtualClock()()
	dir := filepath.Join(t.TempDir(), "ovs")
	done := make(chan error, 1)
	go func() {
		in, err := Start(context.Background(), dir, func(start func() error) error { return start() })
		if in != nil {
			in.Stop()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "ovsdb-server exited before it created its socket") || !strings.Contains(err.Error(), "exited unexpectedly") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Start still waits for the socket of an ovsdb-server that exited")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the instance's directory is left: %v", err)
	}
}
