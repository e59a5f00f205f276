package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/testenv"
)

// TestSandbox: a sandboxed program runs as nobody with no capabilities, reads none of the
// hidden places (a file of root's under /root, the shadow file, what another test left in
// /tmp), writes only its own directories, has no network but loopback, sees a directory bound
// back from under a hidden one, and gets SIGINT when its context ends.
func TestSandbox(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bwrap")
	secret := filepath.Join("/root", fmt.Sprintf(".nsperf-sandbox-test-%d", os.Getpid()))
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil { // world-readable: only hiding keeps it
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(secret) })
	cache := t.TempDir() // under /tmp, hidden
	read := filepath.Join(cache, "src")
	write := filepath.Join(cache, "obj")
	for _, d := range []string{read, write} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(read, "a.c"), []byte("int a;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "other-build"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		"id -u; id -g",
		"grep CapEff /proc/self/status",
		"cat " + secret + " && echo READ-SECRET",
		"cat /etc/shadow && echo READ-SHADOW",
		"cat " + filepath.Join(cache, "other-build") + " && echo READ-OTHER",
		"cat " + filepath.Join(read, "a.c"),
		"touch " + filepath.Join(read, "b") + " && echo WROTE-SOURCE",
		"touch /usr/nsperf-x && echo WROTE-USR",
		"echo ok > " + filepath.Join(write, "out"),
		"echo DEVICES $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')",
		"echo HOME=$HOME",
	}, "; ")
	cmd, err := Command(context.Background(), Spec{Hide: []string{cache}, Read: []string{read}, Write: []string{write}, Dir: write}, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	text := string(out)
	for _, want := range []string{"65534\n65534\n", "CapEff:\t0000000000000000", "int a;", "DEVICES lo\n", "HOME=/nonexistent"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"READ-SECRET", "READ-SHADOW", "READ-OTHER", "WROTE-SOURCE", "WROTE-USR"} {
		if strings.Contains(text, bad) {
			t.Errorf("%s:\n%s", bad, text)
		}
	}
	if data, err := os.ReadFile(filepath.Join(write, "out")); err != nil || string(data) != "ok\n" {
		t.Errorf("the writable directory: %q %v", data, err)
	}
	// The context's end is SIGINT to the program (make deletes what it was writing).
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err = Command(ctx, Spec{}, "sh", "-c", `trap "echo interrupted; exit 3" INT; sleep 30 & wait`)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	out, err = cmd.CombinedOutput()
	if !strings.Contains(string(out), "interrupted") || time.Since(start) > 20*time.Second {
		t.Errorf("cancelled: %q %v after %s", out, err, time.Since(start))
	}
}

// TestNoBubblewrap: without bwrap on PATH, nothing runs and the error says how to install it.
func TestNoBubblewrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Command(context.Background(), Spec{}, "true"); !errors.Is(err, ErrNoBubblewrap) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("%v", err)
	}
}
