// Package measuring turns a message whose claims can be measured (reproduce.Read) into the run
// that measures them, a kernels.Plan: the scenario, the schedule, the result file, and where
// (a patch's base against patched in guests; a message without a diff here, or in a guest on
// the default kernel where this machine's wall clock is not stable). Above runner/kernels,
// so that package reproduce stays pure.
package measuring

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/vm"
)

// Settings are how a message is measured (reproduce's flags).
type Settings struct {
	// Scenario measures the message; "": the shipped one Choose names, or one drafted from
	// the claims where they toggle what no shipped scenario sets.
	Scenario string
	// Runs (as run's --runs), Duration and Omit are the schedule of each state.
	Runs           string
	Duration, Omit time.Duration
	// DurationGiven: the user chose Duration; otherwise a tool that measures only in longer
	// runs (pktgen with xdp-bench) takes its shortest (scenarios.Overrides.ToolMinimum).
	DurationGiven bool
	// Out is the result file; "": nsperf-results/SCENARIO-reproduce-TIME.json.
	Out string
	// Source and Fuzz are a patch's base and the fuzz its hunks may apply with.
	Source string
	Fuzz   int
	// Here measures a message without a diff on this machine, even where its wall clock is
	// not stable.
	Here bool
	// Progress is where reproduce says what it chose and where it measures.
	Progress io.Writer
	// StableWallClock and DefaultKernel decide where a message without a diff is measured
	// (nil: vm.StableWallClock, kbuild.DefaultKernel).
	StableWallClock func() (bool, string)
	DefaultKernel   func(context.Context, io.Writer) (image, modules, release string, err error)
}

// Plan is the run that measures the claims of m: base (run's plan of the flags given
// after --, its scenario not yet loaded) with the scenario, the schedule, the result file, and
// where: a patch's base against patched in guests, else here or in a guest on the default
// kernel (where). load loads the scenario for where the plan runs and checks run's flags
// against it; the claims are attached to the result before it is written.
func Plan(ctx context.Context, m *reproduce.Message, base kernels.Plan, set Settings, load func(kernels.Plan) (kernels.Plan, error)) (kernels.Plan, error) {
	p := base
	p.Run.Out = set.Out
	name, why, err := m.Scenario(set.Scenario, &p.Run.Out)
	if err != nil {
		return kernels.Plan{}, err
	}
	fmt.Fprintf(set.progress(), "reproduce: %d claim(s); scenario %s (%s)\n", len(m.Claims.Claims), name, why)
	if p.Run.Out == "" {
		p.Run.Out = filepath.Join("nsperf-results", name+"-reproduce-"+time.Now().Format("20060102-150405")+".json")
	}
	p.ScenarioArg = name
	if err := p.Overrides.SetRuns(set.Runs); err != nil {
		return kernels.Plan{}, inputerr.Error{Err: err}
	}
	p.Overrides.Duration, p.Overrides.Omit = set.Duration, set.Omit
	p.Overrides.ToolMinimum = !set.DurationGiven
	p.Overrides.RecordClaimed = m.SideRecords() // a capture runs only for claims that need it
	if len(m.Touched()) > 0 {
		var build kbuild.BuildRequest // with the settings of run's flags after -- (--config)
		if p.Patch != nil {
			build = *p.Patch
		}
		build.Patches, build.Source, build.Fuzz = []string{m.File}, set.Source, set.Fuzz
		build.Inputs = map[string][]byte{m.File: m.Data} // the message is read once
		p.Patch = &build
	} else if err := set.where(ctx, &p); err != nil {
		return kernels.Plan{}, err
	}
	if p, err = load(p); err != nil {
		return kernels.Plan{}, err
	}
	s := p.Scenario
	p.Run.Annotate = func(r *results.Result) { reproduce.Attach(r, m.Claims, m.File, m.Data, s, why) }
	return p, nil
}

// where decides where a message without a diff is measured, and says so: on this machine
// with Here, or where its wall clock is stable (a usable KVM and a quiet host); else in a
// guest on the default kernel in virtual time, where host load cannot move a figure. Kernels
// the plan already has (--kernel after --) decide themselves, and so does an accelerator.
func (set Settings) where(ctx context.Context, p *kernels.Plan) error {
	w := set.progress()
	switch {
	case len(p.Kernels.Kernels) > 0:
		return nil
	case set.Here:
		fmt.Fprintln(w, "reproduce: measuring on this machine (--here)")
		return nil
	}
	stableWallClock, defaultKernel := set.StableWallClock, set.DefaultKernel
	if stableWallClock == nil {
		stableWallClock = vm.StableWallClock
	}
	if defaultKernel == nil {
		defaultKernel = kbuild.DefaultKernel
	}
	stable, why := stableWallClock()
	if stable {
		fmt.Fprintln(w, "reproduce: measuring on this machine: KVM works and the host is quiet")
		return nil
	}
	image, modules, release, err := defaultKernel(ctx, w)
	if err != nil {
		return err
	}
	p.Kernels.Kernels, p.Kernels.Modules = []string{image}, []string{modules}
	if p.VM.Accel == "" {
		p.VM.Accel = vm.AccelTCG // virtual time is TCG's
	}
	fmt.Fprintf(w, "reproduce: measuring in a guest on Debian's kernel %s, in virtual time: %s (--here measures on this machine)\n", release, why)
	return nil
}

// progress is where reproduce's lines go: Progress, or nowhere.
func (set Settings) progress() io.Writer {
	if set.Progress == nil {
		return io.Discard
	}
	return set.Progress
}
