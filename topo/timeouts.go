package topo

import "time"

// How long topo waits for the kernel, Open vSwitch and processes, and how often it looks:
// generous for a loaded two-CPU CI machine, never part of a measurement, and lifted on a
// guest's virtual clock (internal/waitlimit).
const (
	// OVSTimeout bounds starting a private OVS, one transaction, an internal port appearing,
	// and finding a finished run's bridges.
	OVSTimeout = 20 * time.Second
	// ovsRemoveTimeout bounds deleting a run's bridges from an OVS.
	ovsRemoveTimeout = 10 * time.Second
)
