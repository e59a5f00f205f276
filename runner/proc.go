package runner

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

	"github.com/nsperf/nsperf/topo"
)

// listenPoll is how often waitListening looks for the server's socket.
const listenPoll = 10 * time.Millisecond

// process is a tool started inside one of the topology's namespaces.
type process struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// start runs argv in namespace ns of the topology (`ip netns exec NS argv...`). The child
// inherits the namespace of the thread that forks it, and is killed if nsperf dies.
func start(ctx context.Context, live *topo.Live, ns string, argv []string) (*process, error) {
	p := &process{done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.WaitDelay = time.Second
	if err := live.Do(ns, p.cmd.Start); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed (scripts/deps.sh installs it): %w", argv[0], err)
		}
		return nil, fmt.Errorf("start %s in %s: %w", argv[0], ns, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop kills the process if it still runs and waits for it.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitListening waits until the process has a TCP socket listening on port, read from
// /proc/PID/net/tcp{,6}, which show the sockets of the process's own namespace. A test
// connection would use up a one-off (-1) server.
func (p *process) waitListening(ctx context.Context, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if p.exited() {
			return fmt.Errorf("server exited before listening: %v: %s", p.err, strings.TrimSpace(p.stderr.String()))
		}
		if listening(p.cmd.Process.Pid, port) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not listening on port %d after %s", port, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(listenPoll):
		}
	}
}

// listening reads /proc/PID/net/tcp and tcp6 for a socket in state LISTEN (0A) on port.
func listening(pid, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open("/proc/" + strconv.Itoa(pid) + "/net/" + f)
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
