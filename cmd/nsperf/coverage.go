package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/safefile"
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

// coverageSchedule is each scenario's schedule while tracing: one run of coverageRunLength per
// state and workload, nothing omitted.
var coverageSchedule = scenarios.Overrides{Runs: 1, Duration: coverageRunLength, Omit: 0}

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
			", and writes the map of the functions that ran, by file, as JSON (make coverage-map writes coverage/map.json, which ships with nsperf). " +
			"The kernel is always that one, whose source the map's functions are of: --kernel and --modules are refused. " +
			"Every argument is checked before the kernel is fetched.",
		RunE: func(c *cobra.Command, args []string) error {
			job, err := planCoverage(c.Flags(), c.ErrOrStderr(), args, out, update, vf)
			if err != nil {
				return err
			}
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			m, err := measureCoverage(ctx, c.ErrOrStderr(), job)
			if err != nil {
				return err
			}
			if base := job.base; base != nil {
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
			if err := safefile.Write(out, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "coverage: wrote %s (%d scenarios)\n", out, len(m.Scenarios))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the map to FILE (default: stdout)")
	c.Flags().BoolVar(&update, "update", false, "merge the scenarios named into the map already in --out FILE (measured on the same kernel and source), replacing theirs")
	vf.add(c.Flags(), false)
	c.Flags().Lookup("vm-cpus").Usage = "vCPUs of the guest (default: enough for every CPU the scenario pins)"
	c.Flags().Lookup("vm-accel").Usage = "auto (TCG: in virtual time the trace's cost cannot time a guest's waits out), kvm or tcg"
	for _, name := range refusedCoverageFlags {
		c.Flags().MarkHidden(name) // taken only to be refused with a sentence: see planCoverage
	}
	return c
}

// refusedCoverageFlags are the guest flags coverage shares with run and probe but cannot
// honour: the kernel traced is the one whose source the map indexes.
var refusedCoverageFlags = []string{"kernel", "modules"}

// coverageJob is what coverage measures, every argument checked: the scenarios loaded (for
// the guest's vCPUs) with the tracing schedule applied, the guest's settings, and with --update
// the map the measurements merge into.
type coverageJob struct {
	args      []string              // as given (a name or a file), in order
	scenarios []*scenarios.Scenario // args' scenarios
	vm        vm.Options            // without the kernel: the default one, fetched after the checks
	base      *coverage.Map         // --update: the map of --out
}

// maxCoverageMap bounds the map --update reads: the shipped one is about 1 MB.
const maxCoverageMap = 64 << 20

// planCoverage checks every argument and flag before anything is fetched, so that a typo
// costs nothing: refused flags, --update's map, --out, each scenario (it exists, parses and
// takes the tracing schedule) and the guest's flags.
func planCoverage(flags *pflag.FlagSet, stderr io.Writer, args []string, out string, update bool, vf vmFlags) (coverageJob, error) {
	for _, name := range refusedCoverageFlags {
		if flags.Changed(name) {
			return coverageJob{}, usageError{fmt.Errorf("--%s: coverage traces only Debian's 6.12 kernel (%s, fetched into the kernel cache), whose source its map's functions are of; it takes no other kernel or modules", name, kbuild.DebianSource)}
		}
	}
	var job coverageJob
	switch {
	case update && (out == "" || out == "-" || len(args) == 0):
		return coverageJob{}, usageError{fmt.Errorf("--update merges the scenarios named into the map of --out FILE: give both")}
	case update:
		data, err := safefile.ReadRegular(out, maxCoverageMap)
		if err != nil {
			return coverageJob{}, usageError{fmt.Errorf("--update: %w", err)}
		}
		job.base = &coverage.Map{}
		if err := json.Unmarshal(data, job.base); err != nil {
			return coverageJob{}, usageError{fmt.Errorf("--update: %s is not a coverage map: %w", out, err)}
		}
		if job.base.Scenarios == nil {
			job.base.Scenarios = map[string]coverage.ScenarioMap{}
		}
	}
	if out != "" && out != "-" {
		if err := safefile.CheckWritable(out); err != nil {
			return coverageJob{}, usageError{fmt.Errorf("--out: %w", err)}
		}
	}
	if len(args) == 0 {
		shipped, err := scenarios.Shipped()
		if err != nil {
			return coverageJob{}, err
		}
		for _, s := range shipped {
			args = append(args, s.Name)
		}
	}
	for _, arg := range args {
		s, err := loadGuestScenario(arg, vf.cpus)
		if err != nil {
			return coverageJob{}, err
		}
		if err := coverageSchedule.Apply(s); err != nil {
			return coverageJob{}, usageError{fmt.Errorf("%s: %w", arg, err)}
		}
		job.args = append(job.args, arg)
		job.scenarios = append(job.scenarios, s)
	}
	if vf.accel == "" || vf.accel == "auto" {
		vf.accel = vm.AccelTCG // virtual time: the trace's cost cannot time a guest's waits out
	}
	var err error
	if job.vm, err = vf.options(stderr, nil, vf.cpus); err != nil {
		return coverageJob{}, err
	}
	return job, nil
}

// measureCoverage fetches the default kernel and its source (once, into the kernel cache),
// traces each scenario in a guest on it and makes the map.
func measureCoverage(ctx context.Context, stderr io.Writer, job coverageJob) (*coverage.Map, error) {
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
	m := &coverage.Map{Version: coverage.MapVersion, Kernel: release, Source: identity, SourceFiles: coverage.IndexedFiles(index), Scenarios: map[string]coverage.ScenarioMap{}}
	fmt.Fprintf(stderr, "coverage: %d functions of %s under %v, traced in %d scenario(s) on %s\n", len(names), identity, coverage.SourceRoots, len(job.args), release)
	for i, arg := range job.args {
		r, err := traceScenario(ctx, stderr, arg, job.scenarios[i], names, image, modules, job.vm)
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

// traceScenario runs one scenario (loaded, with the tracing schedule) once in a guest on the
// default kernel with the tracer on.
func traceScenario(ctx context.Context, stderr io.Writer, arg string, s *scenarios.Scenario, names []string, image, modules string, o vm.Options) (*results.Result, error) {
	o.Files = maps.Clone(o.Files) // each guest's own
	dir, err := os.MkdirTemp("", "nsperf-coverage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := kernels.Plan{Scenario: s, ScenarioArg: arg, Overrides: coverageSchedule, VM: o, Trace: names,
		Run:     runner.Options{Machine: host.Machine{}, Out: filepath.Join(dir, "trace.json"), Progress: stderr, Label: "coverage"},
		Kernels: kernels.Request{Kernels: []string{image}, Modules: []string{modules}}}
	return kernels.Execute(ctx, p)
}
