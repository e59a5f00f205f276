package kernels

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// CoverageRun is what nsperf coverage measures, every argument checked: the scenarios, each
// loaded for a guest with coverage.Schedule applied, and the guests' settings.
type CoverageRun struct {
	Args      []string              // the scenarios as given (a name or a file), in order
	Scenarios []*scenarios.Scenario // Args' scenarios
	VM        vm.Options            // without the kernel: the default one, fetched by Measure
	Machine   machine.Machine
	Progress  io.Writer
}

// CoverageOf is the coverage run of the scenarios named (a name or a file; none: every
// shipped one), each loaded for a guest of vmCPUs (0: as many as it pins) with
// coverage.Schedule: every argument checked before anything is fetched.
func CoverageOf(args []string, vmCPUs int) (CoverageRun, error) {
	var c CoverageRun
	if len(args) == 0 {
		shipped, err := scenarios.Shipped()
		if err != nil {
			return c, err
		}
		for _, s := range shipped {
			args = append(args, s.Name)
		}
	}
	for _, arg := range args {
		s, err := LoadScenario(arg, vmCPUs)
		if err != nil {
			return c, err
		}
		if err := coverage.Schedule.Apply(s); err != nil {
			return c, inputerr.Error{Err: fmt.Errorf("%s: %w", arg, err)}
		}
		c.Args = append(c.Args, arg)
		c.Scenarios = append(c.Scenarios, s)
	}
	return c, nil
}

// Measure fetches the default kernel and its source (once, into the kernel cache), traces
// each scenario in a guest on it with the function tracer on every function the source
// defines under coverage.SourceRoots, and makes the map of the functions that ran, by file.
func (c CoverageRun) Measure(ctx context.Context) (*coverage.Map, error) {
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	tree, identity, err := kbuild.DefaultSource(ctx, progress)
	if err != nil {
		return nil, err
	}
	index, err := coverage.IndexSource(os.DirFS(tree))
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(index))
	image, modules, release, err := kbuild.DefaultKernel(ctx, progress)
	if err != nil {
		return nil, err
	}
	m := &coverage.Map{Version: coverage.MapVersion, Kernel: release, Source: identity, SourceFiles: coverage.IndexedFiles(index), Scenarios: map[string]coverage.ScenarioMap{}}
	fmt.Fprintf(progress, "coverage: %d functions of %s under %v, traced in %d scenario(s) on %s\n", len(names), identity, coverage.SourceRoots, len(c.Args), release)
	for i, arg := range c.Args {
		p := Plan{Scenario: c.Scenarios[i], ScenarioArg: arg, Overrides: coverage.Schedule, Trace: names, VM: c.VM,
			Run:     runner.Options{Machine: c.Machine, Progress: progress, Label: "coverage"},
			Kernels: Request{Kernels: []string{image}, Modules: []string{modules}}}
		r, err := p.trace(ctx)
		if err != nil {
			return nil, fmt.Errorf("coverage of %s: %w", arg, err)
		}
		if r.Trace == nil || r.Trace.Error != "" {
			return nil, fmt.Errorf("coverage of %s: the trace failed: %+v", arg, r.Trace)
		}
		m.Method = r.Trace.Method
		sm := coverage.ScenarioOf(r.Trace.Functions, r.Trace.LostEvents, index)
		m.Scenarios[r.Scenario.Name] = sm
		fmt.Fprintf(progress, "coverage: %s ran %d functions in %d files (trace lost events %d times)\n", r.Scenario.Name, len(r.Trace.Functions), len(sm.Files), r.Trace.LostEvents)
	}
	return m, nil
}

// trace runs the plan once in its guest with the tracer on, its result in a directory of its
// own that is removed after.
func (p Plan) trace(ctx context.Context) (*results.Result, error) {
	dir, err := os.MkdirTemp("", "nsperf-coverage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p.Run.Out = filepath.Join(dir, "trace.json")
	return Execute(ctx, p)
}
