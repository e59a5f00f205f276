package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// coverageRunLength is each run's length while tracing: every path a state's traffic takes is
// taken many times in a second, and the trace of every call is costly.
const coverageRunLength = time.Second

// coverageCmd measures which kernel functions each scenario's traffic runs through: the map
// build and reproduce choose scenarios by (coverage/map.json).
func coverageCmd() *cobra.Command {
	var out string
	var update bool
	var vf vmFlags
	c := &cobra.Command{
		Use:   "coverage [SCENARIO...]",
		Short: "Measure which kernel functions each scenario's traffic runs through, in a guest on the default kernel: the map that chooses scenarios for a patch",
		Long: "coverage runs each scenario (default: every shipped one) once, one 1 s run per state and workload, in a guest on Debian's 6.12 " +
			"kernel with ftrace's function tracer on every function the kernel's source defines under " + fmt.Sprint(coverage.SourceRoots) +
			", and writes the map of the functions that ran, by file, as JSON (make coverage-map writes coverage/map.json, which ships with nsperf).",
		RunE: func(c *cobra.Command, args []string) error {
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			var base *coverage.Map
			if update {
				if out == "" || out == "-" || len(args) == 0 {
					return usageError{fmt.Errorf("--update merges the scenarios named into the map of --out FILE: give both")}
				}
				data, err := os.ReadFile(out)
				if err != nil {
					return usageError{fmt.Errorf("--update: %w", err)}
				}
				base = &coverage.Map{}
				if err := json.Unmarshal(data, base); err != nil {
					return usageError{fmt.Errorf("--update: %s is not a coverage map: %w", out, err)}
				}
			}
			m, err := measureCoverage(ctx, c, args, vf)
			if err != nil {
				return err
			}
			if base != nil {
				if base.Kernel != m.Kernel || base.Source != m.Source || base.Method != m.Method {
					return fmt.Errorf("--update: %s was measured on %s (%s), these on %s (%s): measure every scenario again (make coverage-map)", out, base.Kernel, base.Source, m.Kernel, m.Source)
				}
				for name, sm := range m.Scenarios {
					base.Scenarios[name] = sm
				}
				m = base
			}
			data, err := json.MarshalIndent(m, "", " ")
			if err != nil {
				return err
			}
			data = append(data, '\n')
			if out == "" || out == "-" {
				_, err = c.OutOrStdout().Write(data)
				return err
			}
			// Written whole or not at all: the map ships with nsperf.
			tmp := out + ".tmp"
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "coverage: wrote %s (%d scenarios)\n", out, len(m.Scenarios))
			return os.Rename(tmp, out)
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the map to FILE (default: stdout)")
	c.Flags().BoolVar(&update, "update", false, "merge the scenarios named into the map already in --out FILE (measured on the same kernel and source), replacing theirs")
	vf.add(c.Flags(), false)
	return c
}

// measureCoverage traces each scenario in a guest and makes the map.
func measureCoverage(ctx context.Context, c *cobra.Command, args []string, vf vmFlags) (*coverage.Map, error) {
	stderr := c.ErrOrStderr()
	tree, identity, err := kbuild.DefaultSource(ctx, stderr)
	if err != nil {
		return nil, err
	}
	index, err := coverage.IndexSource(os.DirFS(tree))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(index))
	for n := range index {
		names = append(names, n)
	}
	slices.Sort(names)
	image, modules, release, err := kbuild.DefaultKernel(ctx, stderr)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		shipped, err := scenarios.Shipped()
		if err != nil {
			return nil, err
		}
		for _, s := range shipped {
			args = append(args, s.Name)
		}
	}
	m := &coverage.Map{Version: coverage.MapVersion, Kernel: release, Source: identity, SourceFiles: coverage.IndexedFiles(index), Scenarios: map[string]coverage.ScenarioMap{}}
	fmt.Fprintf(stderr, "coverage: %d functions of %s under %v, traced in %d scenario(s) on %s\n", len(names), identity, coverage.SourceRoots, len(args), release)
	for _, arg := range args {
		r, err := traceScenario(ctx, stderr, arg, names, image, modules, vf)
		if err != nil {
			return nil, fmt.Errorf("coverage of %s: %w", arg, err)
		}
		if r.Trace == nil || r.Trace.Error != "" {
			return nil, fmt.Errorf("coverage of %s: the trace failed: %+v", arg, r.Trace)
		}
		m.Method = r.Trace.Method
		sm := coverage.ScenarioOf(r.Trace.Functions, r.Trace.LostEvents, index)
		m.Scenarios[r.Scenario.Name] = sm
		fmt.Fprintf(stderr, "coverage: %s ran %d functions in %d files (trace lost events %d times)\n", r.Scenario.Name, len(r.Trace.Functions), len(sm.Files), r.Trace.LostEvents)
	}
	return m, nil
}

// traceScenario runs one scenario once in a guest on the default kernel with the tracer on.
func traceScenario(ctx context.Context, stderr io.Writer, arg string, names []string, image, modules string, vf vmFlags) (*results.Result, error) {
	s, err := loadScenario(arg)
	if err != nil {
		return nil, err
	}
	ov := scenarios.Overrides{Runs: 1, Duration: coverageRunLength, Omit: 0}
	if err := ov.Apply(s); err != nil {
		return nil, err
	}
	if vf.accel == "" || vf.accel == "auto" {
		vf.accel = vm.AccelTCG // virtual time: the trace's cost cannot time a guest's waits out
	}
	o, err := vf.options(stderr, nil, vf.cpus)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nsperf-coverage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := kernels.Plan{Scenario: s, ScenarioArg: arg, Overrides: ov, VM: o, Trace: names,
		Run:     runner.Options{Machine: host.Machine{}, Out: filepath.Join(dir, "trace.json"), Progress: stderr, Label: "coverage"},
		Kernels: kernels.Request{Kernels: []string{image}, Modules: []string{modules}}}
	return kernels.Execute(ctx, p)
}
