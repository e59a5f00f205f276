// Package clitest runs the nsperf binary the way a user does, for the tests of the command
// line in several packages (cmd/nsperf, and its guest and build integration tests, split off
// so that no test package comes near go test's time limit). Only tests import it.
package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/testenv"
)

// Binary is the nsperf binary Main built.
var Binary string

// Main builds nsperf into a directory of its own, points the history at a database there
// (the tests' own, never the user's), runs the tests and removes the directory: a package's
// TestMain.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "nsperf-cli-test")
	if err != nil {
		panic(err)
	}
	Binary = filepath.Join(dir, "nsperf")
	os.Setenv("NSPERF_DB", filepath.Join(dir, "history.db"))
	testenv.QuickIdleGate()
	module, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err == nil {
		var out []byte
		cmd := exec.Command("go", "build", "-o", Binary, "./cmd/nsperf")
		cmd.Dir = strings.TrimSpace(string(module))
		if out, err = cmd.CombinedOutput(); err != nil {
			err = fmt.Errorf("%w\n%s", err, out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "build nsperf: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Run runs nsperf as a process and returns its output and exit code.
func Run(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunEnv(t, nil, args...)
}

// RunEnv is Run with more environment variables (NAME=VALUE).
func RunEnv(t testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(Binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}
