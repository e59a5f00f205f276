// Package netnsx owns every switch of the calling thread between network namespaces.
//
// Go schedules goroutines on any OS thread, while a network namespace belongs to a thread. So a
// switch must lock the goroutine to its thread, switch, run the work, and switch back. If
// switching back fails the thread is left locked: when the goroutine ends the runtime then
// destroys the thread instead of reusing it in the wrong namespace.
package netnsx

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn with the calling thread inside target and restores the original namespace.
// Processes started by fn (os/exec) inherit target. `ip netns exec NAME ...` is the shell
// equivalent.
func Do(target netns.NsHandle, fn func() error) (err error) {
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("read current network namespace: %w", err)
	}
	defer origin.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace: %w", err)
	}
	defer func() {
		if rerr := netns.Set(origin); rerr != nil {
			// Stay locked: the runtime discards this thread when the goroutine exits.
			if err == nil {
				err = fmt.Errorf("restore network namespace: %w", rerr)
			}
			return
		}
		runtime.UnlockOSThread()
	}()
	return fn()
}

// NewNamed creates a persistent named namespace (`ip netns add NAME`) and returns a handle to
// it, leaving the calling thread in its original namespace.
func NewNamed(name string) (netns.NsHandle, error) {
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), fmt.Errorf("read current network namespace: %w", err)
	}
	defer origin.Close()
	// netns.NewNamed switches the calling thread into the new namespace.
	h, err := netns.NewNamed(name)
	if rerr := netns.Set(origin); rerr != nil {
		if err == nil {
			h.Close()
		}
		return netns.None(), fmt.Errorf("restore network namespace after creating %s: %w", name, rerr)
	}
	runtime.UnlockOSThread()
	if err != nil {
		return netns.None(), fmt.Errorf("create network namespace %s: %w", name, err)
	}
	return h, nil
}
