package ovs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// bindFirstEnv makes the test binary a stand-in for ovsdb-server that binds the socket of its
// --remote=punix:PATH argument, holds it unlistened for a second, then runs the real server
// found in the PATH of realPathEnv.
const (
	bindFirstEnv = "NSPERF_TEST_OVSDB_BIND_FIRST"
	realPathEnv  = "NSPERF_TEST_OVSDB_REAL_PATH"
)

func TestMain(m *testing.M) {
	if os.Getenv(bindFirstEnv) != "" {
		bindThenRunServer()
		return
	}
	os.Exit(m.Run())
}

// bindThenRunServer does what a server does between bind(2) and listen(2), slowed down, then
// replaces itself with the real ovsdb-server.
func bindThenRunServer() {
	var sock string
	for _, a := range os.Args[1:] {
		if p, ok := strings.CutPrefix(a, "--remote=punix:"); ok {
			sock = p
		}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bind first:", err)
		os.Exit(1)
	}
	time.Sleep(time.Second)
	syscall.Close(fd)
	os.Remove(sock)
	os.Setenv("PATH", os.Getenv(realPathEnv))
	real, err := exec.LookPath("ovsdb-server")
	if err == nil {
		err = syscall.Exec(real, append([]string{"ovsdb-server"}, os.Args[1:]...), os.Environ())
	}
	fmt.Fprintln(os.Stderr, "bind first: run ovsdb-server:", err)
	os.Exit(1)
}

// TestStartWaitsUntilTheServerListens: ovsdb-server's socket exists from bind(2) on but
// refuses connections until listen(2); Start must wait for a connection, not for the file
// (on a busy machine the gap failed a run: "connect: connection refused").
func TestStartWaitsUntilTheServerListens(t *testing.T) {
	testenv.RequireTool(t, "ovsdb-tool")
	testenv.RequireTool(t, "ovsdb-server")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	server := fmt.Sprintf("#!/bin/sh\n%s=1 exec %s \"$@\"\n", bindFirstEnv, self)
	// ovs-vswitchd is not what this test is about (and needs root): a process that waits.
	for name, body := range map[string]string{"ovsdb-server": server, "ovs-vswitchd": "#!/bin/sh\nexec sleep 600\n"} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(realPathEnv, os.Getenv("PATH"))
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "ovs")
	in, err := Start(ctx, dir, func(start func() error) error { return start() })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := in.Stop(); err != nil {
		t.Error(err)
	}
}
