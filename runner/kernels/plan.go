package kernels

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"time"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// Plan is one run, decided once: the scenario, loaded once with the command line's changes
// applied, the run's options, and where it runs: here, in guests on kernels under test, or in
// guests on the base and the patched kernel of a patch that is built first. `nsperf run` makes
// one from its flags, `nsperf guest` from its request, `nsperf reproduce` from a message; no
// command constructs another to run.
type Plan struct {
	Scenario *scenarios.Scenario
	// ScenarioArg is the scenario as the user named it: a shipped name, or a file the guests
	// are given.
	ScenarioArg string
	// Overrides are the command line's changes to the scenario (already applied to Scenario),
	// which each guest applies to its own load of it.
	Overrides scenarios.Overrides
	// Run are the run's options; Run.Machine is required (host.Machine on this machine).
	Run runner.Options
	// Kernels are the kernels under test as given (--kernel, --modules, --label). Without
	// them and without Patch, the run is here.
	Kernels Request
	// Patch is a series to build first: the base and the patched kernel are then the two
	// kernels of an A/B run, labelled base and patched unless Kernels.Labels names them, and
	// each kernel's result records how it was built. A whole kernel built small is configured
	// for Scenario alone.
	Patch *kbuild.BuildRequest
	// Builder builds Patch: kbuild.Build, or a test's fake.
	Builder func(context.Context, kbuild.BuildRequest) (*kbuild.Manifest, error)
	// SelftestTree finds the kernel tree a tool's programs are built from when no patch names
	// a base (nil: the default kernel's source, kbuild.DefaultSource).
	SelftestTree func(context.Context) (string, error)
	// baseTree is the patch's base tree, once built.
	baseTree string
	// VM are the guests' settings; Execute fills in the kernels, the modules the scenario
	// needs and, where CPUs is 0, as many vCPUs as the scenario pins.
	VM vm.Options
	// AADir is where the scenarios' A/As in virtual time are kept ("": AADir()).
	AADir string
	// Deadline bounds the guests' measuring in wall time; 0: Deadline(...).
	Deadline time.Duration
	// Baseline is a bisection step's known-good result.
	Baseline string
	// Count are the functions whose calls a counting pass counts before the measured runs
	// (the patch's; a guest's from its request); CountTruncated says the patch changes more.
	Count          []coverage.Target
	CountTruncated bool
	// NoCount: a patch's functions are not counted (run --no-count).
	NoCount bool
	// Trace are the functions whose running a trace records while the scenario runs (nsperf
	// coverage: every function of the source's network stack); its result's Trace says which.
	Trace []string
}

// InGuests reports whether the plan runs in guests: on kernels under test, or a patch's.
func (p Plan) InGuests() bool { return len(p.Kernels.Kernels) > 0 || p.Patch != nil }

// Load loads the plan's scenario (ScenarioArg) for where the plan runs, pinned CPUs checked
// against a guest's vCPUs (vmCPUs; 0: as many as the scenario pins) or this machine's, and
// applies the plan's changes to it, once its parts are known to go together: a build's
// settings with a series, at most two kernels, labels for the kernels (a single one labels
// the run). The result file must be writable: a run of minutes must not end in a result it
// cannot write. A scenario that does not load is its scenarios.Problems; anything else
// refused is an inputerr.Error.
func (p *Plan) Load(vmCPUs int) error {
	k := p.Kernels
	switch {
	case p.Patch != nil && len(p.Patch.Patches) == 0:
		return inputerr.Error{Err: errors.New("--source, --config, --fuzz and --no-count say how to build and run --patch: give --patch too")}
	case len(k.Kernels) > 2:
		return inputerr.Error{Err: fmt.Errorf("--kernel given %d times: an A/B run compares two kernels", len(k.Kernels))}
	case len(k.Kernels) == 0 && p.Patch == nil && len(k.Labels) > 1:
		return inputerr.Error{Err: errors.New("--label given more than once: only an A/B run (--kernel twice) takes one per kernel")}
	case len(k.Labels) == 1 && len(k.Kernels) < 2 && p.Patch == nil:
		p.Run.Label = k.Labels[0]
	}
	if !p.InGuests() {
		vmCPUs = runtime.NumCPU() // this machine's
	}
	s, err := LoadScenario(p.ScenarioArg, vmCPUs)
	if err != nil {
		return err
	}
	if err := p.Overrides.Apply(s); err != nil {
		return inputerr.Error{Err: err}
	}
	if out := p.Run.Out; out != "" && out != "-" {
		if err := safefile.CheckWritable(out); err != nil {
			return inputerr.Error{Err: fmt.Errorf("--out: %w", err)}
		}
	}
	p.Scenario = s
	return nil
}

// LoadScenario loads a scenario file or shipped name with its pinned CPUs checked against
// cpus (0: not checked; a guest gets as many vCPUs as its scenario pins). A scenario that does
// not load is its scenarios.Problems; a name that is neither, or a count of CPUs below 0, is an
// inputerr.Error.
func LoadScenario(arg string, cpus int) (*scenarios.Scenario, error) {
	if cpus < 0 {
		return nil, inputerr.Error{Err: fmt.Errorf("--vm-cpus %d: want a positive number", cpus)}
	}
	s, err := scenarios.Load(arg, scenarios.Options{CPUs: cpus})
	var problems scenarios.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, inputerr.Error{Err: err}
	}
	return s, err
}

// Execute carries a plan out and returns its result, stored at runner.OutPath: a patch is
// built (or taken from the cache) first, then the scenario is measured here or in guests.
func Execute(ctx context.Context, p Plan) (*results.Result, error) {
	var builds []*results.KernelBuild
	if p.Patch != nil {
		var err error
		if builds, err = p.build(ctx); err != nil {
			return nil, err
		}
	}
	if err := p.buildSelftests(ctx); err != nil {
		return nil, err
	}
	if len(p.Kernels.Kernels) == 0 {
		if len(p.Trace) > 0 {
			return traceRun(ctx, p)
		}
		if len(p.Count) > 0 {
			fmt.Fprintf(progressOf(p.Run), "counting the calls of the %s the patch changes: one %s run per state and workload, before the measured runs\n", plural(len(p.Count), "function"), CountRunLength)
			cov := countCalls(ctx, p)
			annotate := p.Run.Annotate
			p.Run.Annotate = func(r *results.Result) {
				r.Coverage = cov
				if annotate != nil {
					annotate(r)
				}
			}
		}
		return runner.Run(ctx, p.Scenario, p.Run)
	}
	return p.inGuests(ctx, builds)
}

// buildSelftests builds the programs the scenario's tools take from a kernel tree
// (udpgso_bench_tx), unless the run has them (a guest's, built by its host): from the patch's
// base tree, else the default kernel's source (fetched once). Both kernels of an A/B run the
// same build: the tool is the method, the kernel what is measured.
func (p *Plan) buildSelftests(ctx context.Context) error {
	needed := runner.SelftestPrograms(p.Scenario)
	missing := false
	for _, prog := range needed {
		missing = missing || p.Run.Built[prog.Name].Path == ""
	}
	if !missing {
		return nil
	}
	tree := p.baseTree
	if tree == "" {
		fetch := p.SelftestTree
		if fetch == nil {
			fetch = func(ctx context.Context) (string, error) {
				tree, _, err := kbuild.DefaultSource(ctx, progressOf(p.Run))
				return tree, err
			}
		}
		var err error
		if tree, err = fetch(ctx); err != nil {
			return fmt.Errorf("the kernel tree to build %s from: %w", needed[0].Name, err)
		}
	}
	built := maps.Clone(p.Run.Built)
	if built == nil {
		built = map[string]tool.Built{}
	}
	for _, prog := range needed {
		b, err := kbuild.Selftest(ctx, kbuild.CacheDir(), tree, prog.Source)
		if err != nil {
			return err
		}
		fmt.Fprintf(progressOf(p.Run), "%s: %s\n", prog.Name, b.Provenance)
		built[prog.Name] = tool.Built{Path: b.Path, Provenance: b.Provenance}
	}
	p.Run.Built = built
	return nil
}

// build builds the patch's two kernels and makes them the plan's kernels.
func (p *Plan) build(ctx context.Context) ([]*results.KernelBuild, error) {
	if len(p.Kernels.Kernels) > 0 || len(p.Kernels.Modules) > 0 {
		return nil, inputerr.Error{Err: fmt.Errorf("--patch builds the two kernels itself: give it without --kernel and --modules")}
	}
	if n := len(p.Kernels.Labels); n != 0 && n != 2 {
		return nil, inputerr.Error{Err: fmt.Errorf("--label with --patch: give two, for the base and the patched kernel (default: base, patched)")}
	}
	builder := p.Builder
	if builder == nil {
		builder = kbuild.Build
	}
	req := *p.Patch
	if len(req.Scenarios) == 0 {
		req.Scenarios = []*scenarios.Scenario{p.Scenario}
	}
	if req.Progress == nil {
		req.Progress = p.Run.Progress
	}
	m, err := builder(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.Progress != nil {
		m.Describe(req.Progress)
	}
	var builds []*results.KernelBuild
	for i, k := range m.Kernels {
		p.Kernels.Kernels = append(p.Kernels.Kernels, k.Image)
		p.Kernels.Modules = append(p.Kernels.Modules, k.Modules)
		builds = append(builds, m.Provenance(i))
	}
	if !p.NoCount {
		p.Count, p.CountTruncated = m.Count, m.CountTruncated
	}
	p.baseTree = m.Tree
	if len(p.Kernels.Labels) == 0 {
		for i := range m.Kernels {
			p.Kernels.Labels = append(p.Kernels.Labels, m.Label(i))
		}
	}
	return builds, nil
}

// inGuests prepares the kernels (labels, module trees), checks their configs against the
// scenario before anything boots, and measures in a guest on each (runGuests).
func (p Plan) inGuests(ctx context.Context, builds []*results.KernelBuild) (*results.Result, error) {
	ks, cleanup, err := Prepare(p.Kernels)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := CheckConfigs(p.Kernels.Kernels, ks, p.Scenario, progressOf(p.Run)); err != nil {
		return nil, err
	}
	p.VM.Kernels = ks
	if p.VM.CPUs == 0 {
		p.VM.CPUs = vm.PinnedCPUs(p.Scenario)
	}
	p.VM.Required, p.VM.Optional = vm.Needs(p.Scenario)
	p.VM.NICs = vm.NICs(p.Scenario)
	return p.runGuests(ctx, builds)
}

// Probe boots the one kernel of req with every module the probe looks at loaded (where the
// module tree has it) and runs `nsperf probe` in it, in format: the guest's report is the
// outcome's Stdout. o are the guest's settings (the kernel is filled in); a guest's non-zero
// exit is an ExitError.
func Probe(ctx context.Context, req Request, o vm.Options, format string) (vm.Outcome, error) {
	if len(req.Kernels) != 1 {
		return vm.Outcome{}, inputerr.Error{Err: fmt.Errorf("probe takes one --kernel, not %d", len(req.Kernels))}
	}
	ks, cleanup, err := Prepare(req)
	if err != nil {
		return vm.Outcome{}, err
	}
	defer cleanup()
	o.Kernels, o.CPUs, o.Optional = ks, max(o.CPUs, 1), vm.ProbeNeeds()
	session, err := vm.Boot(ctx, ProbeOptions(o, format))
	if err != nil {
		return vm.Outcome{}, err
	}
	defer session.Close()
	out := session.Wait(ctx)[0]
	switch {
	case ctx.Err() != nil:
		return out, fmt.Errorf("interrupted; the guest was stopped and its files removed: %w", ctx.Err())
	case out.Err != nil:
		return out, out.Err
	case out.ExitCode != 0:
		return out, ExitError{Code: out.ExitCode, Err: fmt.Errorf("nsperf probe in the guest exited %d", out.ExitCode)}
	}
	return out, nil
}
