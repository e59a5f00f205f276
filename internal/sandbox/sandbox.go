// Package sandbox runs the programs that compile code nsperf did not write (a patch from a
// mail, a stranger's tree) as an unprivileged user in a private view of the machine, with
// bubblewrap: everything read-only, the places that hold secrets hidden, no network, an
// environment of its own and a session keyring of its own, and limits on time, space, memory,
// processes and output. A `#include "/root/.ssh/id_ed25519"` or an `.incbin` in a patch then
// finds nothing to read, and a build cannot write anywhere but its own directories.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Nobody is the identity builds run as (Debian's nobody:nogroup).
const (
	NobodyUID = 65534
	NobodyGID = 65534
)

// Hidden are what a build never sees, each replaced by an empty directory (or, for a file, an
// empty file): the home directories (SSH keys, the history database under ~/.local), the
// machine's SSH keys and password hashes, nsperf's run state and every cache (the caller binds
// back what a build reads), and the shared temporary directories.
var Hidden = []string{"/root", "/home", "/etc/ssh", "/etc/shadow", "/etc/gshadow", "/run", "/var/cache/nsperf", "/var/lib/nsperf", "/tmp", "/var/tmp"}

// Spec is what a sandboxed program may touch besides the read-only system.
type Spec struct {
	// Hide are more paths to hide (a cache outside /var/cache/nsperf: NSPERF_KERNEL_CACHE).
	Hide []string
	// Read are paths under hidden ones bound back read-only (the source tree, the headers).
	Read []string
	// Write are directories the build writes (its objects); they are given to nobody first
	// (chown -R), so that nothing else of them needs to be. What is written in them counts
	// against Limits.Space.
	Write []string
	// CompilerCache is a directory written besides Write and not counted (ccache bounds
	// its own size: max_size), given to nobody as Write's are.
	CompilerCache string
	// Overlay, when set, puts an overlay over a directory for this command alone: the program
	// sees Lower as it is, and what it writes there goes to Upper (counted against
	// Limits.Space); Lower itself is never written. Lower is bound writable, as Write's are.
	Overlay *Overlay
	// Dir is the working directory.
	Dir string
	// Env are variables the program gets besides Environment's (CCACHE_DIR=...): nothing of
	// nsperf's own environment reaches it (a password in NSPERF_DB, a token).
	Env []string
	// Limits bound the program; zero fields take DefaultLimits'.
	Limits Limits
}

// Overlay is `mount -t overlay -o lowerdir=Lower,upperdir=Upper,workdir=Work overlay Lower`,
// in a mount namespace of the command's own: Upper and Work are directories of the caller's
// on one file system, Upper empty or left by an earlier command of the same build.
type Overlay struct {
	Lower, Upper, Work string
}

// Environment is all of the environment a sandboxed program gets but Spec.Env: a fixed PATH
// (the host's could name a directory someone else writes), the C locale (the compiler's
// "error:" lines are read back) and a home nobody can write.
var Environment = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LANG=C", "HOME=/nonexistent"}

// Limits bound a sandboxed program.
type Limits struct {
	// Time is how long it may run (NSPERF_BUILD_TIMEOUT, default 4 hours: a distribution's
	// config on two CPUs).
	Time time.Duration
	// Space is how many bytes it may leave in its Write directories and its Overlay's Upper
	// (NSPERF_BUILD_SPACE, default 32 GiB); it is also stopped when less than 1 GiB is left
	// on their file system, so that a build never fills the disk the cache is on.
	Space int64
	// Output is how many bytes of its standard output and error are kept (64 MiB); the
	// rest is dropped with a line that says so.
	Output int64
}

// Per process, set with prlimit before the drop to nobody: a file of at most FileSize bytes
// (a vmlinux with debug information is about 1 GiB), at most Memory bytes of address space
// (ld of a distribution kernel takes a few GiB), at most Processes processes of nobody's, no
// core dumps; the sandbox's /tmp holds at most TmpSize bytes.
const (
	FileSize  = 8 << 30
	Memory    = 16 << 30
	Processes = 4096
	TmpSize   = 2 << 30
	// reserve is the free space a build never takes from its file system.
	reserve = 1 << 30
)

// DefaultLimits are the limits of NSPERF_BUILD_TIMEOUT (a Go duration: 90m) and
// NSPERF_BUILD_SPACE (bytes, or with K, M, G or T: 64G), else 4 hours and 32 GiB.
func DefaultLimits() (Limits, error) {
	l := Limits{Time: 4 * time.Hour, Space: 32 << 30, Output: 64 << 20}
	if v := os.Getenv("NSPERF_BUILD_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return l, fmt.Errorf("NSPERF_BUILD_TIMEOUT=%s: want a duration such as 90m or 4h", v)
		}
		l.Time = d
	}
	if v := os.Getenv("NSPERF_BUILD_SPACE"); v != "" {
		n, err := parseBytes(v)
		if err != nil {
			return l, fmt.Errorf("NSPERF_BUILD_SPACE=%s: %w", v, err)
		}
		l.Space = n
	}
	return l, nil
}

// parseBytes reads 1048576, 512M or 64G (powers of 1024).
func parseBytes(s string) (int64, error) {
	shift := 0
	if i := strings.IndexByte("KMGT", strings.ToUpper(s[len(s)-1:])[0]); i >= 0 {
		shift, s = 10*(i+1), s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, errors.New("want a number of bytes such as 64G, 512M or 1048576")
	}
	return n << shift, nil
}

// LimitError is a program stopped at one of its limits.
type LimitError struct {
	// Why says which limit, in a sentence ("it ran longer than 4h0m0s, its limit ...").
	Why string
}

func (e *LimitError) Error() string { return "stopped: " + e.Why }

// ErrNoBubblewrap is a machine without bubblewrap (Debian: apt-get install bubblewrap).
var ErrNoBubblewrap = errors.New("bwrap (bubblewrap) is not installed, and nsperf compiles a patch's code only in its sandbox (Debian: apt-get install bubblewrap; scripts/deps.sh installs it)")

// Cmd is a sandboxed command: an exec.Cmd whose Start, Run, Wait, Output and CombinedOutput
// set up what the sandbox needs and enforce its limits. Use only these to run it.
type Cmd struct {
	*exec.Cmd
	spec   Spec
	limits Limits
	// parent is the caller's context, timed the command's (parent with Limits.Time).
	parent, timed context.Context
	cancel        context.CancelFunc
	// exited ends the thread that started the command, once it has been waited for.
	exited chan struct{}
	// stopped says why the watchdog stopped the command; watch ends the watchdog.
	stopped atomic.Pointer[string]
	watch   chan struct{}
}

// Command is argv run as nobody in the sandbox: bwrap binds / read-only, puts empty
// directories over Hidden and spec.Hide, binds spec.Read back read-only and spec.Write
// read-write, with its own /dev, /proc and /tmp, and its own network (none), IPC, PID and UTS
// namespaces; prlimit then bounds it and setpriv drops to nobody with no capabilities and no
// way to gain any (no_new_privs). The command dies with nsperf.
func Command(ctx context.Context, spec Spec, argv ...string) (*Cmd, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, ErrNoBubblewrap
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, errors.New("setpriv (util-linux) is not installed: builds drop to nobody with it")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, errors.New("prlimit (util-linux) is not installed: builds are bounded with it")
	}
	limits, err := spec.limits()
	if err != nil {
		return nil, err
	}
	write, err := spec.writable()
	if err != nil {
		return nil, err
	}
	hidden := append(slices.Clone(Hidden), spec.Hide...)
	args, err := hide(hidden)
	if err != nil {
		return nil, err
	}
	// Bound back after the hiding, shortest path first, so that a writable directory inside
	// a readable tree stays writable.
	made := map[string]bool{}
	binds := func(flag string, paths []string) {
		sorted := slices.Clone(paths)
		slices.SortFunc(sorted, func(a, b string) int { return len(a) - len(b) })
		for _, p := range sorted {
			// The directories between a hidden one and p are made in its empty
			// replacement, searchable by nobody (bwrap's own are not always).
			for _, h := range hidden {
				rel, err := filepath.Rel(h, p)
				if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
					continue
				}
				dir := h
				parts := strings.Split(rel, string(filepath.Separator))
				for _, part := range parts[:len(parts)-1] {
					dir = filepath.Join(dir, part)
					if !made[dir] {
						made[dir] = true
						args = append(args, "--perms", "0755", "--dir", dir)
					}
				}
			}
			args = append(args, flag, p, p)
		}
	}
	binds("--ro-bind", spec.Read)
	binds("--bind", write)
	// No --new-session: the command is started in a session of its own (Setsid, so no
	// terminal to inject into), whose process group Interrupt reaches, make included.
	args = append(args, "--unshare-net", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--die-with-parent")
	if spec.Dir != "" {
		args = append(args, "--chdir", spec.Dir)
	}
	args = append(args, "--", prlimit, fmt.Sprintf("--fsize=%d", int64(FileSize)), fmt.Sprintf("--as=%d", int64(Memory)),
		fmt.Sprintf("--nproc=%d", Processes), "--core=0", "--",
		setpriv, fmt.Sprintf("--reuid=%d", NobodyUID), fmt.Sprintf("--regid=%d", NobodyGID), "--clear-groups",
		"--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--")
	timed, cancel := context.WithTimeout(ctx, limits.Time)
	c := &Cmd{Cmd: exec.CommandContext(timed, bwrap, append(args, argv...)...), spec: spec, limits: limits, parent: ctx, timed: timed, cancel: cancel}
	c.Dir = spec.Dir
	c.Env = append(slices.Clone(Environment), spec.Env...)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Cancelled as from a terminal: make deletes the targets it was writing, so that a cut
	// object never looks built to the next make.
	c.Cancel = func() error { return interrupt(c.Process.Pid) }
	c.WaitDelay = time.Minute
	return c, nil
}

// hide are bwrap's arguments for the system read-only with each of hidden replaced by an
// empty directory (a file by an empty file), /tmp and /var/tmp the program's own and bounded.
func hide(hidden []string) ([]string, error) {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, h := range hidden {
		fi, err := os.Lstat(h)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("sandbox: %w", err)
		case h == "/tmp" || h == "/var/tmp":
			// Empty, the build's to use, and bounded: it is memory.
			args = append(args, "--perms", "01777", "--size", strconv.Itoa(TmpSize), "--tmpfs", h)
		case fi.IsDir():
			args = append(args, "--tmpfs", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	return args, nil
}

// writable are the directories the program writes, made ready: Write's and the compiler
// cache given to nobody, the overlay's upper and work directories made (the upper nobody's:
// the overlay's root is its) and its Lower bound writable.
func (spec Spec) writable() ([]string, error) {
	write := slices.Clone(spec.Write)
	if spec.CompilerCache != "" {
		write = append(write, spec.CompilerCache)
	}
	for _, dir := range write {
		if err := giveToNobody(dir); err != nil {
			return nil, err
		}
	}
	o := spec.Overlay
	if o == nil {
		return write, nil
	}
	for _, p := range []string{o.Lower, o.Upper, o.Work} {
		if strings.ContainsAny(p, ",:\\") {
			return nil, fmt.Errorf("sandbox: overlay path %q: a comma, colon or backslash would be read as mount options", p)
		}
	}
	for _, d := range []string{o.Upper, o.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := os.Chown(o.Upper, NobodyUID, NobodyGID); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return append(write, o.Lower), nil
}

// limits are the spec's, with DefaultLimits' where it sets none.
func (s Spec) limits() (Limits, error) {
	l, err := DefaultLimits()
	if err != nil {
		return l, err
	}
	if s.Limits.Time > 0 {
		l.Time = s.Limits.Time
	}
	if s.Limits.Space > 0 {
		l.Space = s.Limits.Space
	}
	if s.Limits.Output > 0 {
		l.Output = s.Limits.Output
	}
	return l, nil
}

// Start starts the command from a thread of its own, which it keeps until Wait:
//   - the thread joins a new session keyring (`keyctl session -`), so that nothing in
//     nsperf's own (a key root added) is the build's to read;
//   - with an Overlay, the thread has a mount namespace of its own where the overlay is
//     mounted (`unshare -m`, `mount --make-rprivate /`, `mount -t overlay`): no other process
//     sees it, and it goes when the command and the thread have ended, however nsperf ends;
//   - bwrap's --die-with-parent is the death of the thread that started it, not of nsperf.
//
// Only the standard input, output and error are passed on (closeOnExec);
// what the program writes to a file or a buffer given as either is bounded to Limits.Output
// bytes in all (a pipe's reader bounds what it reads itself).
func (c *Cmd) Start() error {
	out := &bounded{left: c.limits.Output}
	same := sameWriter(c.Stdout, c.Stderr)
	c.Stdout = out.wrap(c.Stdout)
	if same {
		c.Stderr = c.Stdout
	} else {
		c.Stderr = out.wrap(c.Stderr)
	}
	c.exited = make(chan struct{})
	started := make(chan error, 1)
	onThreadOfItsOwn(func() {
		err := closeOnExec()
		if err == nil {
			err = c.prepareThread()
		}
		if err == nil {
			err = c.Cmd.Start()
		}
		started <- err
		if err == nil {
			<-c.exited
		}
	})
	if err := <-started; err != nil {
		c.cancel()
		return err
	}
	c.watch = make(chan struct{})
	go c.watchSpace()
	return nil
}

// onThreadOfItsOwn runs fn on a thread locked to it and ended after it (the goroutine exits
// locked), so that what fn changes of its thread (keyring, mounts) goes with it. Not on the
// main thread, which the runtime never ends: while one goroutine holds it, fn runs on another.
func onThreadOfItsOwn(fn func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			fn()
			return // never unlocked: the thread ends here
		}
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer close(done)
			fn()
		}()
		<-done
		runtime.UnlockOSThread() // the main thread, unchanged
	}()
}

// closeOnExec marks every descriptor of nsperf's above standard error close-on-exec: Go opens
// its own so, but one opened otherwise (a raw open(2), a library's) would be the build's to
// read. exec.Cmd's ExtraFiles are unaffected (they are duplicated into the child).
func closeOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("sandbox: list nsperf's descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
		}
	}
	return nil
}

// prepareThread gives the calling (locked) thread a new session keyring and, for an
// overlay, a private mount namespace with the overlay mounted.
func (c *Cmd) prepareThread() error {
	// keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a new anonymous keyring.
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: a session keyring of the build's own: %w", errno)
	}
	o := c.spec.Overlay
	if o == nil {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("sandbox: a mount namespace for the overlay: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: mount --make-rprivate /: %w", err)
	}
	// No redirects or metacopy: a directory renamed or a file's owner changed is copied up
	// whole, so that Upper alone says what changed (MergeUpper reads it).
	opts := "lowerdir=" + o.Lower + ",upperdir=" + o.Upper + ",workdir=" + o.Work + ",redirect_dir=off,metacopy=off,index=off"
	if err := unix.Mount("overlay", o.Lower, "overlay", 0, opts); err != nil {
		return fmt.Errorf("sandbox: mount -t overlay -o %s overlay %s: %w", opts, o.Lower, err)
	}
	return nil
}

// Wait waits for the command and says which limit stopped it, if one did.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	close(c.exited)
	if c.watch != nil {
		close(c.watch)
	}
	timedOut := c.timed.Err() == context.DeadlineExceeded && c.parent.Err() == nil
	c.cancel()
	if err == nil {
		return nil
	}
	if why := c.stopped.Load(); why != nil {
		return &LimitError{Why: *why}
	}
	if timedOut {
		return &LimitError{Why: fmt.Sprintf("it ran longer than %s, its limit (NSPERF_BUILD_TIMEOUT)", c.limits.Time)}
	}
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// CombinedOutput runs the command and returns its standard output and error, bounded.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// Output runs the command and returns its standard output, bounded.
func (c *Cmd) Output() ([]byte, error) {
	var b bytes.Buffer
	c.Stdout = &b
	err := c.Run()
	return b.Bytes(), err
}

// watchSpace stops the command when its directories hold more than Limits.Space bytes, or
// their file system has less than reserve left: checked every second, so a program writing
// as fast as a disk can goes over by at most a second's writing (and by no more than
// FileSize in one file).
func (c *Cmd) watchSpace() {
	dirs := slices.Clone(c.spec.Write)
	if c.spec.Overlay != nil {
		dirs = append(dirs, c.spec.Overlay.Upper)
	}
	if len(dirs) == 0 {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.watch:
			return
		case <-tick.C:
		}
		why := ""
		if used := usage(dirs); used > c.limits.Space {
			why = fmt.Sprintf("it wrote more than %s into %s, its limit (NSPERF_BUILD_SPACE)", size(c.limits.Space), strings.Join(dirs, ", "))
		} else if free, ok := freeSpace(dirs[0]); ok && free < reserve {
			why = fmt.Sprintf("%s had less than %s left", dirs[0], size(reserve))
		}
		if why != "" {
			c.stopped.Store(&why)
			interrupt(c.Process.Pid)
			return
		}
	}
}

// usage is the bytes the files under dirs take on disk (du -s), links not followed.
func usage(dirs []string) int64 {
	var n int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			var st unix.Stat_t
			if unix.Lstat(p, &st) == nil {
				n += st.Blocks * 512
			}
			return nil
		})
	}
	return n
}

func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}

// size is n bytes as 32 GiB, 512 MiB or 1000 bytes.
func size(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// bounded is the output a command may leave, shared by its standard output and error.
type bounded struct {
	mu   sync.Mutex
	left int64
	cut  bool
}

// wrap bounds w, unless it is nil or a pipe (its reader bounds what it reads).
func (b *bounded) wrap(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			return w
		}
	}
	return &boundedWriter{b: b, w: w}
}

type boundedWriter struct {
	b *bounded
	w io.Writer
}

// Write passes on what fits and drops the rest, saying so once; it never fails the
// program's write (a build stopped by a full log would be a puzzle).
func (bw *boundedWriter) Write(p []byte) (int, error) {
	bw.b.mu.Lock()
	defer bw.b.mu.Unlock()
	n := len(p)
	if bw.b.cut {
		return n, nil
	}
	if int64(len(p)) > bw.b.left {
		p = p[:bw.b.left]
		bw.b.cut = true
	}
	bw.b.left -= int64(len(p))
	if _, err := bw.w.Write(p); err != nil {
		return 0, err
	}
	if bw.b.cut {
		bw.w.Write([]byte("\n[nsperf: the rest of this output was dropped: more than its limit]\n"))
	}
	return n, nil
}

// sameWriter is exec's test of one writer given as both outputs (== on interfaces that may
// hold an uncomparable value).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { recover() }()
	return a != nil && a == b
}

// interrupt sends SIGINT to a process group, and again each second until the group is empty
// (kill: ESRCH), then SIGKILL after a minute. Once is not enough: a SIGINT that comes while bwrap
// is still setting up kills bwrap before its child has asked to die with it, and the child
// then runs the command to its end (seen: a cancelled `sleep 30` ran 30 s). The group outlives
// bwrap, and while it has members no other process can take its ID.
func interrupt(group int) error {
	go func() {
		for range time.Minute / time.Second {
			time.Sleep(time.Second)
			if syscall.Kill(-group, syscall.SIGINT) != nil {
				return
			}
		}
		syscall.Kill(-group, syscall.SIGKILL)
	}()
	return syscall.Kill(-group, syscall.SIGINT)
}

// giveToNobody makes dir and everything in it nobody's (`chown -R nobody:nogroup DIR`),
// without following links.
func giveToNobody(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir) // bwrap binds where a link leads
	if err != nil {
		return err
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, NobodyUID, NobodyGID)
	})
}

// Describe says in a line what the sandbox is, for logs and the README.
const Describe = "as nobody under bubblewrap: the system read-only, /root, /home, /tmp, /run, SSH keys, password hashes and nsperf's caches hidden, no network, an environment and a session keyring of its own, bounded in time, space, memory, processes and output"
