package main

import (
	"runtime"

	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
)

// loadScenario loads a scenario file or shipped name, validated against this machine; a name
// that is neither is a usage error (exit 2), like an invalid scenario.
func loadScenario(arg string) (*scenarios.Scenario, error) {
	return kernels.LoadScenario(arg, runtime.NumCPU())
}
