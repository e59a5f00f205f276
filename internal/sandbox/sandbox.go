// Package sandbox runs the programs that compile code nsperf did not write (a patch from a
// mail, a stranger's tree) as an unprivileged user in a private view of the machine, with
// bubblewrap: everything read-only, the places that hold secrets hidden, no network. A
// `#include "/root/.ssh/id_ed25519"` or an `.incbin` in a patch then finds nothing to read,
// and a build cannot write anywhere but its own directories.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
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
	// Write are directories the build writes (its objects, ccache's directory); they are
	// given to nobody first (chown -R), so that nothing else of them needs to be.
	Write []string
	// Dir is the working directory.
	Dir string
	// Env is the command's environment (nil: nsperf's), less what names the caller's files.
	Env []string
}

// ErrNoBubblewrap is a machine without bubblewrap (Debian: apt-get install bubblewrap).
var ErrNoBubblewrap = errors.New("bwrap (bubblewrap) is not installed, and nsperf compiles a patch's code only in its sandbox (Debian: apt-get install bubblewrap; scripts/deps.sh installs it)")

// Command is argv run as nobody in the sandbox: bwrap binds / read-only, puts empty
// directories over Hidden and spec.Hide, binds spec.Read back read-only and spec.Write
// read-write, with its own /dev, /proc and /tmp, and its own network (none), IPC, PID and UTS
// namespaces; setpriv then drops to nobody with no capabilities and no way to gain any
// (no_new_privs). The command dies with nsperf.
func Command(ctx context.Context, spec Spec, argv ...string) (*exec.Cmd, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, ErrNoBubblewrap
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, errors.New("setpriv (util-linux) is not installed: builds drop to nobody with it")
	}
	for _, dir := range spec.Write {
		if err := giveToNobody(dir); err != nil {
			return nil, err
		}
	}
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	hidden := append(slices.Clone(Hidden), spec.Hide...)
	for _, h := range hidden {
		fi, err := os.Lstat(h)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("sandbox: %w", err)
		case h == "/tmp" || h == "/var/tmp":
			args = append(args, "--perms", "01777", "--tmpfs", h) // empty, and the build's to use
		case fi.IsDir():
			args = append(args, "--tmpfs", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
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
	binds("--bind", spec.Write)
	// No --new-session: the command is started in a session of its own (Setsid, so no
	// terminal to inject into), whose process group Interrupt reaches, make included.
	args = append(args, "--unshare-net", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--die-with-parent")
	if spec.Dir != "" {
		args = append(args, "--chdir", spec.Dir)
	}
	args = append(args, "--", setpriv, fmt.Sprintf("--reuid=%d", NobodyUID), fmt.Sprintf("--regid=%d", NobodyGID), "--clear-groups",
		"--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--")
	cmd := exec.CommandContext(ctx, bwrap, append(args, argv...)...)
	cmd.Dir = spec.Dir
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	// A home nobody can write, and nothing of the caller's environment that names its files.
	cmd.Env = append(clean(env), "HOME=/nonexistent")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Cancelled as from a terminal: make deletes the targets it was writing, so that a cut
	// object never looks built to the next make.
	cmd.Cancel = func() error { return interrupt(cmd.Process.Pid) }
	cmd.WaitDelay = time.Minute
	return cmd, nil
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

// clean is the environment without what points into hidden places or changes who runs.
func clean(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GNUPGHOME", "DBUS_SESSION_BUS_ADDRESS":
			continue
		}
		out = append(out, kv)
	}
	return out
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
const Describe = "as nobody under bubblewrap: the system read-only, /root, /home, /tmp, /run, SSH keys, password hashes and nsperf's caches hidden, no network"
