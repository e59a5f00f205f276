// Package clitest runs the nsperf binary the way a user does, for the tests of the command
// line in several packages (cmd/nsperf, and its guest and build integration tests, split off
// so that no test package comes near go test's time limit). Only tests import it.
package clitest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/testkit/testenv"
)

// Binary is the nsperf binary Main built.
var Binary string

// Main builds nsperf into a directory of its own, points the history at a database there
// (the tests' own, never the user's), runs the tests and removes the directory: a package's
// TestMain.
func Main(m *testing.M) {
	mainWith(m, func() func() { return func() {} })
}

// mainWith is Main with start run once nsperf is built; what it returns runs when the tests
// have ended.
func mainWith(m *testing.M, start func() (stop func())) {
	dir, err := os.MkdirTemp("", "nsperf-cli-test")
	if err != nil {
		panic(err)
	}
	Binary = filepath.Join(dir, "nsperf")
	os.Setenv("NSPERF_DB", filepath.Join(dir, "history.db"))
	os.Setenv(kernels.AADirEnv, filepath.Join(dir, "aa")) // the A/As of virtual time, as the history
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
	stop := start()
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// MainWithBackground is Main with nsperf ARGS started in the background once nsperf is built,
// when one of the tests named in needed is to run (go test -run): a long build that several
// tests share (a whole kernel, in the kernel cache) goes on while the tests before them run;
// they run nsperf build themselves, and take it from the cache, waiting for it under its lock
// when it is not done. It is stopped with SIGINT when the tests end (as ^C stops a build,
// leaving nothing half-done in the cache) and killed a minute later. Only as root, where
// builds run.
func MainWithBackground(m *testing.M, needed []string, args ...string) {
	background := func() func() { return func() {} }
	flag.Parse()
	if os.Geteuid() == 0 && wanted(needed) {
		background = func() func() {
			// No nice: a sandboxed build runs in a session of its own (the sandbox starts bwrap with setsid),
			// and with the scheduler's autogroups a nice value orders processes only within
			// their session (tried at -5 in a cold suite: the build got no larger share).
			cmd := exec.Command(Binary, args...)
			log, err := os.CreateTemp("", "nsperf-background-*.log")
			if err != nil {
				return func() {}
			}
			cmd.Stdout, cmd.Stderr = log, log
			if err := cmd.Start(); err != nil {
				log.Close()
				os.Remove(log.Name())
				return func() {}
			}
			fmt.Fprintf(os.Stderr, "started in the background for the tests that share it: nsperf %s\n", strings.Join(args, " "))
			return func() {
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				cmd.Process.Signal(syscall.SIGINT)
				select {
				case <-done:
				case <-time.After(time.Minute):
					cmd.Process.Kill()
					<-done
				}
				log.Close()
				os.Remove(log.Name())
			}
		}
	}
	mainWith(m, background)
}

// wanted reports whether go test's -run pattern selects one of the tests named.
func wanted(names []string) bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	re, err := regexp.Compile(f.Value.String())
	if err != nil {
		return false
	}
	for _, n := range names {
		if re.MatchString(n) {
			return true
		}
	}
	return false
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
