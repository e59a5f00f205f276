// Package proc is what the run loop knows of a started tool: the Process interface, whether
// one has exited, and the wait for a server to listen. internal/spawn starts real child
// processes; a fake topology hands the run loop stand-ins in tests, so nothing here needs
// root, a namespace or a child process.
package proc

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"
)

// Process is a started tool: a real child process, or a test's stand-in for one.
type Process interface {
	// Done is closed when the process has exited.
	Done() <-chan struct{}
	// Err is how it exited (nil for status 0); meaningful once Done is closed.
	Err() error
	// Stdout and Stderr are what it printed so far.
	Stdout() []byte
	Stderr() string
	// Stop kills it if it still runs and waits for it.
	Stop()
	// Interrupt asks it to end (SIGINT), as a user's ^C would, and waits for it up to grace,
	// then kills it: a program that must undo what it set up (detach an XDP program) and print
	// its summary.
	Interrupt(grace time.Duration)
	// Listening reports whether it has a TCP socket listening on port, or a UDP socket bound
	// to it (a UDP server's readiness).
	Listening(port int) bool
	// Usage is the CPU time it used and its context switches, once it has exited; ok is
	// false when that is not known.
	Usage() (cpu time.Duration, switches int64, ok bool)
}

// Exited reports whether p has ended.
func Exited(p Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// poll is how often WaitListening looks for the server's socket.
const poll = 10 * time.Millisecond

// WaitListening waits until p listens on port, for at most timeout or until ctx ends.
func WaitListening(ctx context.Context, p Process, port int, timeout time.Duration) error {
	deadline := time.Now().Add(waitlimit.Of(timeout))
	for {
		if Exited(p) {
			return fmt.Errorf("server exited before listening: %v: %s", p.Err(), strings.TrimSpace(p.Stderr()))
		}
		if p.Listening(port) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not listening on port %d after %s", port, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// WaitOutput waits until what p printed (stdout, then stderr) matches ready, for at most
// timeout or until ctx ends: the readiness of a server that binds no port (xdp-bench, once its
// program is attached).
func WaitOutput(ctx context.Context, p Process, ready *regexp.Regexp, timeout time.Duration) error {
	deadline := time.Now().Add(waitlimit.Of(timeout))
	for {
		if ready.Match(p.Stdout()) || ready.MatchString(p.Stderr()) {
			return nil
		}
		if Exited(p) {
			return fmt.Errorf("server exited before it was ready: %v: %s", p.Err(), strings.TrimSpace(p.Stderr()))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready after %s (no line matching %s)", timeout, ready)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}
