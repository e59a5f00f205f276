package netnsx

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/vishvananda/netns"
)

// A child started with Pdeathsig (the daemons, the measuring tools, QEMU: killed when nsperf
// dies) is signalled when the *thread* that forked it ends, not the process (prctl(2),
// PR_SET_PDEATHSIG). WithSysfs ends its thread on purpose, and the runtime may have run an
// earlier fork on that very thread: the child then got SIGKILL in the middle of a run (an OVS
// daemon, after a state that writes rps_cpus). So every child is forked on one thread that
// stays locked for nsperf's life and that no other goroutine can run on: Fork.

// forkRequest is a child to start, inside target when enter is set.
type forkRequest struct {
	target netns.NsHandle
	enter  bool
	start  func() error
	done   chan error
}

var (
	forkerOnce sync.Once
	forks      = make(chan forkRequest)
)

// Fork runs start, which starts a child process (exec.Cmd.Start), on nsperf's forking
// thread inside target: the child inherits target (`ip netns exec NS CMD`), and its
// Pdeathsig fires only when nsperf ends.
func Fork(target netns.NsHandle, start func() error) error {
	return fork(forkRequest{target: target, enter: true, start: start})
}

// ForkHere runs start on the forking thread in nsperf's own network namespace.
func ForkHere(start func() error) error {
	return fork(forkRequest{start: start})
}

func fork(req forkRequest) error {
	forkerOnce.Do(func() { go forker() })
	req.done = make(chan error, 1)
	forks <- req
	return <-req.done
}

// forker serves forks on its locked thread until it cannot put that thread back into its own
// namespace; then it hands the work to a new forker and keeps its thread, and the children
// forked on it, alive without doing anything more.
func forker() {
	runtime.LockOSThread() // never unlocked: the children's Pdeathsig is this thread's end
	origin, err := netns.Get()
	for req := range forks {
		if err != nil {
			req.done <- fmt.Errorf("read the forking thread's network namespace: %w", err)
			continue
		}
		if req.enter {
			if err := netns.Set(req.target); err != nil {
				req.done <- fmt.Errorf("enter network namespace: %w", err)
				continue
			}
		}
		startErr := startCatching(req.start)
		if req.enter {
			if err := netns.Set(origin); err != nil {
				go forker()
				req.done <- startErr
				select {} // in the wrong namespace for good: serve nothing, keep the thread
			}
		}
		req.done <- startErr
	}
}

// startCatching runs start, a panic in it returned as an error.
func startCatching(start func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic while starting a process: %v", p)
		}
	}()
	return start()
}
