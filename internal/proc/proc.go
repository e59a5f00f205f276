// Package proc starts the measuring tools and their servers as child processes and watches
// them: whether they have exited, whether they listen on a port, and what they used.
// Process is also what a fake topology hands the run loop in tests, so nothing here needs
// root or a namespace; the namespace a child runs in is the caller's choice (Start's in).
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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
	// Listening reports whether it has a TCP socket listening on port.
	Listening(port int) bool
	// Usage is the CPU time it used and its context switches, once it has exited; ok is
	// false when that is not known.
	Usage() (cpu time.Duration, switches int64, ok bool)
}

// Exec is a child process.
type Exec struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// Start runs argv through in, which calls its argument with the calling thread in the
// namespace the child must run in (the child inherits the namespace of the thread that forks
// it); the child is killed when ctx ends or nsperf dies.
func Start(ctx context.Context, argv []string, in func(func() error) error) (*Exec, error) {
	p := &Exec{done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.WaitDelay = time.Second
	if err := in(p.cmd.Start); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed (scripts/deps.sh installs it): %w", argv[0], err)
		}
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done implements Process.
func (p *Exec) Done() <-chan struct{} { return p.done }

// Err implements Process.
func (p *Exec) Err() error { return p.err }

// Stdout implements Process.
func (p *Exec) Stdout() []byte { return p.stdout.Bytes() }

// Stderr implements Process.
func (p *Exec) Stderr() string { return p.stderr.String() }

// Stop implements Process.
func (p *Exec) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Usage implements Process, from the rusage of the reaped child.
func (p *Exec) Usage() (time.Duration, int64, bool) {
	select {
	case <-p.done:
	default:
		return 0, 0, false
	}
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw, true
}

// Listening implements Process: a socket in state LISTEN (0A) on port in /proc/PID/net/tcp
// or tcp6, which show the sockets of the process's own namespace (`ss -tln` there). A test
// connection would use up a one-off (iperf3 -s -1) server.
func (p *Exec) Listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/net/" + f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				fh.Close()
				return true
			}
		}
		fh.Close()
	}
	return false
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
