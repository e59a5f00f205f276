package main

import (
	"slices"
	"testing"

	"github.com/nsperf/nsperf/vm"
)

// TestProbeArgsOnAVirtualClock: a guest probing in virtual time is told so, which lifts its
// waits' bounds (internal/waitlimit); on the wall clock it keeps them.
func TestProbeArgsOnAVirtualClock(t *testing.T) {
	if a := probeArgs("json")(0, vm.ClockVirtual); !slices.Equal(a, []string{"probe", "--format", "json", "--virtual-time"}) {
		t.Errorf("virtual: %q", a)
	}
	if a := probeArgs("table")(0, vm.ClockWall); !slices.Equal(a, []string{"probe", "--format", "table"}) {
		t.Errorf("wall: %q", a)
	}
}
