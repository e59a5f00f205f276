// Package waitlimit bounds how long nsperf waits for daemons, devices, servers and processes,
// and lifts every bound on a guest's virtual clock.
//
// In virtual time (QEMU icount with sleep=off) a bound means nothing: while the guest waits
// for the host, for a file read over 9p say, its vCPU is idle and QEMU moves the virtual
// clock straight to the next timer, so "ten seconds" can pass in a millisecond of the host's
// time on a loaded machine (ovsdb-server "did not create its socket" while its binary was
// still being read). There the host's wall-clock deadline (--vm-deadline) bounds the whole
// guest instead.
package waitlimit

import (
	"context"
	"sync/atomic"
	"time"
)

// None is the bound on a virtual clock: longer than any guest is allowed to live.
const None = 1000 * time.Hour

// Poll is how often a wait for the kernel, a daemon or a process looks again: short beside any
// bound it has, long beside a syscall.
const Poll = 20 * time.Millisecond

// Kill is how long a process gets to be gone after SIGTERM or SIGKILL before nsperf stops
// waiting for it (and, after SIGTERM, sends SIGKILL).
const Kill = 5 * time.Second

var virtual atomic.Bool

// OnVirtualClock says that this process's clock is a guest's virtual one, which lifts every
// bound; restore puts back what was there (in-process tests run more than one command).
func OnVirtualClock() (restore func()) {
	was := virtual.Swap(true)
	return func() { virtual.Store(was) }
}

// Virtual reports whether this process's clock is virtual.
func Virtual() bool { return virtual.Load() }

// Of is the bound to use for a wait of d: d, or None on a virtual clock.
func Of(d time.Duration) time.Duration {
	if virtual.Load() {
		return None
	}
	return d
}

// Context is context.WithTimeout with the bound Of(d).
func Context(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, Of(d))
}
