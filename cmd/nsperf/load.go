package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/nsperf/nsperf/scenarios"
)

// loadScenario loads a scenario file or shipped name, validated against this machine; a name
// that is neither is a usage error (exit 2), like an invalid scenario.
func loadScenario(arg string) (*scenarios.Scenario, error) {
	s, err := scenarios.Load(arg, scenarios.Options{CPUs: runtime.NumCPU()})
	var problems scenarios.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, usageError{err}
	}
	return s, err
}

// loadGuestScenario loads a scenario to run in a guest: its pinned CPUs are checked against
// the guest's vCPUs (--vm-cpus; by default the guest gets as many as the scenario pins).
func loadGuestScenario(arg string, vmCPUs int) (*scenarios.Scenario, error) {
	if vmCPUs < 0 {
		return nil, usageError{fmt.Errorf("--vm-cpus %d: want a positive number", vmCPUs)}
	}
	s, err := scenarios.Load(arg, scenarios.Options{CPUs: vmCPUs})
	var problems scenarios.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, usageError{err}
	}
	return s, err
}
