// Package cleanup removes what killed runs left behind: their namespaces with what is in
// them, the bridges of private OVS runs in an existing OVS, and the guests of --kernel runs.
// It says on out what it removed (or, dry, would remove) and on errw what it leaves alone.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/vm"
)

// OVS removes the bridges of finished runs from an existing OVS (`ovs-vsctl del-br` of each).
func OVS(out io.Writer, ovsdb string, dryRun bool) error {
	ctx, cancel := waitlimit.Context(context.Background(), topo.OVSTimeout)
	defer cancel()
	bridges, err := topo.OVSLeftovers(ctx, ovsdb)
	if err != nil {
		return err
	}
	var errs []error
	for id, names := range bridges {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else if err := topo.RemoveOVSRun(ctx, ovsdb, id); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s run %s: bridges %s in %s\n", verb, id, strings.Join(names, ", "), ovsdb)
	}
	return errors.Join(errs...)
}

// Runs removes what killed runs left (`ip netns del` and the rest), except what a state file
// it cannot trust names.
func Runs(out, errw io.Writer, left []topo.Leftover, dryRun bool) error {
	var errs []error
	untrusted := 0
	for _, l := range left {
		if l.Problem != nil {
			fmt.Fprintf(errw, "left alone: run %s: %v\n", l.RunID, l.Problem)
			untrusted++
			continue
		}
		if dryRun {
			fmt.Fprintf(out, "would remove run %s: %s (%s)\n", l.RunID, strings.Join(l.Namespaces, ", "), l.Reason)
			continue
		}
		rm, err := l.Remove()
		for _, a := range rm.LeftAlone {
			fmt.Fprintf(errw, "left alone: %s\n", a)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(rm.Removed) > 0 || len(rm.LeftAlone) == 0 {
			fmt.Fprintf(out, "removed run %s: %s (%s)\n", l.RunID, strings.Join(rm.Removed, ", "), l.Reason)
		}
	}
	if untrusted > 0 {
		errs = append(errs, fmt.Errorf("%d state files not trusted, listed above: nothing they name was touched", untrusted))
	}
	return errors.Join(errs...)
}

// Guests removes the guests of killed --kernel runs: their QEMU and their directory.
func Guests(out io.Writer, guests []vm.Leftover, dryRun bool) error {
	var errs []error
	for _, g := range guests {
		if dryRun {
			fmt.Fprintf(out, "would remove %s %s\n", g.Kind(), g)
			continue
		}
		if err := g.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "removed %s %s\n", g.Kind(), g)
	}
	return errors.Join(errs...)
}
