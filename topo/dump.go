package topo

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// dumpAttempts bounds how often a netlink dump is read again after the kernel said it was
// interrupted.
const dumpAttempts = 5

// retryDump reads a netlink dump (`ip link show`, `tc qdisc show`) again while the kernel
// marks it interrupted (NLM_F_DUMP_INTR, netlink.ErrDumpInterrupted): the table changed while
// it was read, so what came back may miss entries or hold stale ones. It happens when devices
// come and go, for example another run's, during a read; a second read almost always succeeds.
func retryDump[T any](dump func() (T, error)) (T, error) {
	var v T
	var err error
	for range dumpAttempts {
		if v, err = dump(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return v, err
		}
	}
	return v, fmt.Errorf("%w, %d times in a row", err, dumpAttempts)
}
