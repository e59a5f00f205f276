package runstate

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/topo/plan"
)

// ErrNotMarked: a namespace named like a run's that does not carry that run's marker; nsperf
// did not make it (or had not marked it yet) and leaves it alone.
var ErrNotMarked = errors.New("does not carry nsperf's marker for this run; left alone")

// Mark sets the run's marker on a namespace nsperf just created: the alias of its
// Loopback device (`ip -n NAME link set lo alias nsperf:RUNID`). Only nsperf sets it, and
// cleanup removes only namespaces that carry it.
func Mark(h *netlink.Handle, id plan.RunID) error {
	if err := h.LinkSetAlias(Loopback, id.Alias()); err != nil {
		return fmt.Errorf("mark namespace: %w", err)
	}
	return nil
}

// Loopback is lo of a new namespace: the kernel always gives it index 1.
var Loopback = &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}

// Marker reads the marker of a mounted named namespace: the alias of its Loopback.
func Marker(path string) (string, error) {
	fd, err := netns.GetFromPath(path)
	if err != nil {
		return "", err
	}
	defer fd.Close()
	h, err := netlink.NewHandleAt(fd, unix.NETLINK_ROUTE)
	if err != nil {
		return "", err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return "", err
	}
	return lo.Attrs().Alias, nil
}

// IsNamespaceMount reports whether path is a mounted network namespace (nsfs), not the empty
// file a deletion interrupted between unmount and unlink leaves behind.
func IsNamespaceMount(path string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && fs.Type == unix.NSFS_MAGIC
}
