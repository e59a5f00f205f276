// Package netnsx owns every switch of a thread between network namespaces.
//
// Go schedules goroutines on any OS thread, while a network namespace belongs to a thread. So
// a switch must lock a goroutine to its thread, switch, run the work, and switch back. The
// work runs on a goroutine of its own, as CNI's ns.Do does: the caller's goroutine and thread
// never change namespace, and if switching back fails, the new goroutine ends with its thread
// still locked, so the runtime destroys that thread instead of reusing it in the wrong
// namespace. Only this package calls netns.Set (internal/layers checks it).
package netnsx

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Do runs fn on a fresh goroutine locked to its thread inside target, then restores the
// thread's namespace. Processes started by fn (os/exec) inherit target. A panic in fn is
// raised again in the caller. `ip netns exec NAME ...` is the shell equivalent.
func Do(target netns.NsHandle, fn func() error) error {
	return onFreshThread(func() (func(), error) {
		if err := netns.Set(target); err != nil {
			return nil, fmt.Errorf("enter network namespace: %w", err)
		}
		return nil, fn()
	})
}

// RunDir is where named network namespaces are bind-mounted, as iproute2's NETNS_RUN_DIR.
const RunDir = "/run/netns"

// NewNamed creates a network namespace bind-mounted at /run/netns/NAME, as `ip netns add
// NAME` does, without moving the caller into it.
func NewNamed(name string) (netns.NsHandle, error) {
	if err := shareRunDir(); err != nil {
		return netns.None(), err
	}
	h := netns.None()
	err := onFreshThread(func() (func(), error) {
		var err error
		if h, err = netns.NewNamed(name); err != nil {
			return nil, fmt.Errorf("create network namespace %s: %w", name, err)
		}
		return func() { h.Close(); netns.DeleteNamed(name) }, nil
	})
	if err != nil {
		return netns.None(), err
	}
	return h, nil
}

// shareRunDir makes /run/netns a mount point of its own with shared propagation, as `ip netns
// add` does first (`mount --make-rshared /run/netns`, and where that fails because it is no
// mount point, `mount --rbind /run/netns /run/netns` before it). Without it, an `ip netns add`
// run by anyone while nsperf's namespaces exist would bind the directory over itself: the
// namespaces' mounts would then lie under that bind, and deleting one would unmount only its
// copy on top and fail with "device or resource busy", leaving the namespace behind.
func shareRunDir() error {
	if err := os.MkdirAll(RunDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", RunDir, err)
	}
	err := unix.Mount("", RunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err := unix.Mount(RunDir, RunDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount --rbind %s %s: %w", RunDir, RunDir, err)
		}
		err = unix.Mount("", RunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("mount --make-rshared %s: %w", RunDir, err)
	}
	return nil
}

// onFreshThread runs work on a new goroutine locked to its OS thread, then puts the thread
// back into the namespace it started in. work may change the thread's namespace; the undo it
// returns, if any, releases what it made when the thread cannot be put back (then the result
// is an error). The thread is unlocked, and so reused by the runtime, only once it is back.
func onFreshThread(work func() (undo func(), err error)) error {
	type outcome struct {
		err      error
		panicked bool
		panic    any
	}
	done := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- outcome{err: fmt.Errorf("read current network namespace: %w", err)}
			return
		}
		defer origin.Close()
		var out outcome
		var undo func()
		func() {
			defer func() {
				if p := recover(); p != nil {
					out.panicked, out.panic = true, p
				}
			}()
			undo, out.err = work()
		}()
		if err := netns.Set(origin); err != nil {
			if undo != nil {
				undo()
			}
			if out.err == nil {
				out.err = fmt.Errorf("restore network namespace: %w", err)
			}
			done <- out
			return // still locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		done <- out
	}()
	out := <-done
	if out.panicked {
		panic(out.panic)
	}
	return out.err
}

// WithSysfs runs fn on a fresh thread inside target with target's own sysfs mounted at /sys
// in a private mount namespace, as `ip netns exec` remounts it: a sysfs lists under
// class/net the devices of the namespace that mounted it, so the host's /sys shows none of
// target's. The thread leaves its mount namespace by ending: its goroutine never unlocks it,
// and the runtime destroys it.
func WithSysfs(target netns.NsHandle, fn func(sys string) error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread's namespaces are never reused
		done <- func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic in a namespace's sysfs: %v", p)
				}
			}()
			if err := netns.Set(target); err != nil {
				return fmt.Errorf("enter network namespace: %w", err)
			}
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("unshare the mount namespace: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return fmt.Errorf("make the thread's mounts private: %w", err)
			}
			if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
				return fmt.Errorf("mount the namespace's sysfs: %w", err)
			}
			return fn("/sys")
		}()
	}()
	return <-done
}
