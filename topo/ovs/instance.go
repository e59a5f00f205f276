package ovs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/version"
)

// SchemaPaths are where distributions install the Open_vSwitch schema (openvswitch-common).
var SchemaPaths = []string{"/usr/share/openvswitch/vswitch.ovsschema", "/usr/local/share/openvswitch/vswitch.ovsschema"}

// Instance is a private Open vSwitch: ovsdb-server and ovs-vswitchd run by nsperf as its
// children, with their database, sockets, logs and pid files in Dir, never touching a system
// OVS. Equivalent: `ovsdb-tool create DIR/conf.db SCHEMA; ovsdb-server DIR/conf.db
// --remote=punix:DIR/db.sock ...; ovs-vswitchd unix:DIR/db.sock ...`.
type Instance struct {
	Dir      string
	Endpoint string // unix:DIR/db.sock
	Client   *Client

	mu       sync.Mutex
	daemons  []*daemon
	stopping bool
	died     chan error
}

type daemon struct {
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
}

// Start creates the database in dir and starts both daemons; start runs a function that
// starts a process (it may do so inside a network namespace, where ovs-vswitchd then creates
// its devices). It returns once ovsdb-server answers and holds the root row.
func Start(ctx context.Context, dir string, start func(func() error) error) (*Instance, error) {
	schema := ""
	for _, p := range SchemaPaths {
		if _, err := os.Stat(p); err == nil {
			schema = p
			break
		}
	}
	if schema == "" {
		return nil, fmt.Errorf("no Open_vSwitch schema in %s: install openvswitch-switch (scripts/deps.sh)", strings.Join(SchemaPaths, ", "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	in := &Instance{Dir: dir, Endpoint: "unix:" + filepath.Join(dir, "db.sock"), died: make(chan error, 2)}
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ovsdb-tool create %s: %w: %s", db, err, bytes.TrimSpace(out))
	}
	if err := in.run(start, "ovsdb-server", db, "--remote=punix:"+filepath.Join(dir, "db.sock"),
		"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
		"--log-file="+filepath.Join(dir, "ovsdb-server.log")); err != nil {
		return nil, in.fail(err)
	}
	// A server that exits ends the wait at once: on a guest's virtual clock the wait has no
	// bound of its own (internal/waitlimit).
	server := in.daemons[0]
	// The socket's file exists from bind(2) on, but connections are refused until listen(2):
	// wait until one is accepted, not until the file appears.
	if err := waitFor(ctx, func() bool {
		return accepts(filepath.Join(dir, "db.sock")) || isClosed(server.done)
	}); err != nil {
		return nil, in.fail(fmt.Errorf("ovsdb-server did not listen on its socket: %w%s", err, in.logTail("ovsdb-server")))
	}
	if isClosed(server.done) {
		return nil, in.fail(fmt.Errorf("ovsdb-server exited before it created its socket: %w", <-in.died))
	}
	c, err := Connect(ctx, in.Endpoint)
	if err != nil {
		return nil, in.fail(err)
	}
	in.Client = c
	if err := c.EnsureRoot(ctx); err != nil {
		return nil, in.fail(err)
	}
	if err := waitCPUCount(ctx); err != nil {
		return nil, in.fail(err)
	}
	if err := in.run(start, "ovs-vswitchd", in.Endpoint, "--unixctl="+filepath.Join(dir, "ovs-vswitchd.ctl"),
		"--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"), "--log-file="+filepath.Join(dir, "ovs-vswitchd.log")); err != nil {
		return nil, in.fail(err)
	}
	return in, nil
}

// accepts reports whether a server listens on the unix socket at path.
func accepts(path string) bool {
	c, err := net.Dial("unix", path)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// cpuCountAfter is the uptime before which ovs-vswitchd must not start. Open vSwitch before
// 3.2 (Debian 12 has 3.1) reads the CPU count only once CLOCK_MONOTONIC is past 10 s
// (lib/ovs-thread.c, count_cpu_cores; fixed by "ovs-thread: Fix cpus not read for the first
// 10s"): started earlier, as in a guest that booted seconds ago, it runs the kernel
// datapath's per-CPU upcall dispatch with no handler thread ("Overriding n-handler-threads
// to 0") and forwards no packet at all.
const cpuCountAfter = 10*time.Second + 500*time.Millisecond

// waitCPUCount waits until the machine has been up for cpuCountAfter: on a host at once, in a
// guest just booted for a few seconds.
func waitCPUCount(ctx context.Context) error {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return nil // cannot tell: start it
	}
	wait := cpuCountWait(time.Duration(ts.Nano()))
	if wait == 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// cpuCountWait is how long to wait before starting ovs-vswitchd after uptime.
func cpuCountWait(uptime time.Duration) time.Duration { return max(cpuCountAfter-uptime, 0) }

// run starts one daemon in the foreground, as nsperf's child; it dies with nsperf.
func (in *Instance) run(start func(func() error) error, name string, args ...string) error {
	d := &daemon{name: name, done: make(chan struct{})}
	d.cmd = exec.Command(name, args...)
	d.cmd.Env = append(os.Environ(), "OVS_RUNDIR="+in.Dir, "OVS_LOGDIR="+in.Dir, "OVS_DBDIR="+in.Dir, "OVS_SYSCONFDIR="+in.Dir)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := start(d.cmd.Start); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("%s is not installed (scripts/deps.sh installs openvswitch-switch): %w", name, err)
		}
		return fmt.Errorf("start %s: %w", name, err)
	}
	in.mu.Lock()
	in.daemons = append(in.daemons, d)
	in.mu.Unlock()
	go func() {
		err := d.cmd.Wait()
		close(d.done)
		in.mu.Lock()
		stopping := in.stopping
		in.mu.Unlock()
		if !stopping {
			in.died <- fmt.Errorf("%s exited unexpectedly (%v)%s", name, err, in.logTail(name))
		}
	}()
	return nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Died delivers an error when a daemon exits before Stop.
func (in *Instance) Died() <-chan error { return in.died }

// logTail returns the last lines of a daemon's log, to explain a failure.
func (in *Instance) logTail(name string) string {
	data, err := os.ReadFile(filepath.Join(in.Dir, name+".log"))
	if err != nil || len(data) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return "; " + name + ".log ends: " + strings.Join(lines, " | ")
}

// PID returns the process id of a running daemon, or 0.
func (in *Instance) PID(name string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, d := range in.daemons {
		if d.name == name && d.cmd.Process != nil {
			return d.cmd.Process.Pid
		}
	}
	return 0
}

func (in *Instance) fail(err error) error { return errors.Join(err, in.Stop()) }

// Stop ends both daemons (SIGTERM, then SIGKILL after 5 seconds), ovs-vswitchd first, and
// removes the directory. The devices ovs-vswitchd created stay in its namespace, which the
// caller deletes. Stop is idempotent.
func (in *Instance) Stop() error {
	in.mu.Lock()
	in.stopping = true
	daemons := in.daemons
	in.daemons = nil
	in.mu.Unlock()
	if in.Client != nil {
		in.Client.Close()
		in.Client = nil
	}
	for i := len(daemons) - 1; i >= 0; i-- {
		d := daemons[i]
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(waitlimit.Of(waitlimit.Kill)):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	}
	return os.RemoveAll(in.Dir)
}

// Detach lets the daemons run on without this Instance, as they do when nsperf is killed;
// tests use it to leave what a killed run leaves.
func (in *Instance) Detach() {
	in.mu.Lock()
	in.stopping = true
	in.daemons = nil
	in.mu.Unlock()
	if in.Client != nil {
		in.Client.Close()
		in.Client = nil
	}
}

// Version returns the version of the installed ovs-vswitchd ("3.1.0").
func Version() string {
	out, err := exec.Command("ovs-vswitchd", "--version").Output()
	if err != nil {
		return ""
	}
	return version.LastField(string(out))
}

// DetectDatapath returns system when the openvswitch kernel module is loaded, else netdev
// (the userspace datapath).
func DetectDatapath() string {
	if _, err := os.Stat("/sys/module/openvswitch"); err == nil {
		return "system"
	}
	return "netdev"
}
