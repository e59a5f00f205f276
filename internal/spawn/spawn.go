// Package spawn starts the measuring tools and their servers as child processes in a network
// namespace and watches them, as proc.Process: whether they have exited, whether they listen
// on a port (from /proc), and what they used (rusage).
package spawn

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

	"github.com/nsperf/nsperf/internal/proc"
)

// Exec is a child process; it implements proc.Process.
var _ proc.Process = (*Exec)(nil)

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

// Done implements proc.Process.
func (p *Exec) Done() <-chan struct{} { return p.done }

// Err implements proc.Process.
func (p *Exec) Err() error { return p.err }

// Stdout implements proc.Process.
func (p *Exec) Stdout() []byte { return p.stdout.Bytes() }

// Stderr implements proc.Process.
func (p *Exec) Stderr() string { return p.stderr.String() }

// Stop implements proc.Process.
func (p *Exec) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Interrupt implements proc.Process.
func (p *Exec) Interrupt(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Stop()
	}
}

// Usage implements proc.Process, from the rusage of the reaped child.
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

// Listening implements proc.Process: a TCP socket in state LISTEN (0A) on port in
// /proc/PID/net/tcp or tcp6, or a UDP socket bound to it (state 07, unconnected) in udp or
// udp6, which show the sockets of the process's own namespace (`ss -tuln` there). A test
// connection would use up a one-off (iperf3 -s -1) server.
func (p *Exec) Listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []struct{ file, state string }{{"tcp", "0A"}, {"tcp6", "0A"}, {"udp", "07"}, {"udp6", "07"}} {
		fh, err := os.Open("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/net/" + f.file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == f.state {
				fh.Close()
				return true
			}
		}
		fh.Close()
	}
	return false
}
