package measuring

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// message reads a seed message as reproduce does.
func message(t *testing.T, path string) *reproduce.Message {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := reproduce.Read(path, data, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// load loads the plan's scenario with its changes, as run's loader does.
func load(p kernels.Plan) (kernels.Plan, error) {
	s, err := scenarios.Load(p.ScenarioArg, scenarios.Options{})
	if err != nil {
		return p, err
	}
	p.Scenario = s
	return p, p.Overrides.Apply(s)
}

// where is a machine for Plan's where: its wall clock stable or not, its default kernel; it
// counts what Plan asked of it.
type where struct {
	stable          bool
	probed, fetched int
}

func (w *where) settings(progress io.Writer) Settings {
	return Settings{Runs: "5", Duration: 2 * time.Second, Omit: 0, Source: kbuild.DebianSource, Progress: progress,
		StableWallClock: func() (bool, string) { w.probed++; return w.stable, "no usable KVM" },
		DefaultKernel: func(context.Context, io.Writer) (string, string, string, error) {
			w.fetched++
			return "/cache/vmlinuz-6.12", "/cache/modules-6.12", "6.12.9-amd64", nil
		}}
}

// TestPlanWhere: a message without a diff (its toggle) is measured with the chosen scenario,
// reproduce's schedule and result file, in a guest on the default kernel under TCG where the
// wall clock is not stable, and here where it is or with Here; kernels or an accelerator
// run's flags gave decide themselves; the rest of run's plan is kept; the claims are attached
// to the result.
func TestPlanWhere(t *testing.T) {
	m := message(t, "../../claims/testdata/big-tcp-merge.txt")
	out := filepath.Join(t.TempDir(), "r.json")
	base := kernels.Plan{Overrides: scenarios.Overrides{Omit: -1}, Run: runner.Options{Concurrent: true}}
	var progress strings.Builder
	w := &where{}
	set := w.settings(&progress)
	set.Out = out
	p, err := Plan(context.Background(), m, base, set, load)
	if err != nil {
		t.Fatal(err)
	}
	// reproduce's own short duration gives way to a tool's shortest (pktgen with xdp-bench).
	want := scenarios.Overrides{Runs: 5, Duration: 2 * time.Second, Omit: 0, ToolMinimum: true}
	if p.ScenarioArg != "big-tcp-rr" || p.Scenario.Name != "big-tcp-rr" || !reflect.DeepEqual(p.Overrides, want) || p.Scenario.Runs != 5 || p.Run.Out != out || !p.Run.Concurrent {
		t.Errorf("scenario %q, overrides %+v, out %q, concurrent %v", p.ScenarioArg, p.Overrides, p.Run.Out, p.Run.Concurrent)
	}
	if !reflect.DeepEqual(p.Kernels.Kernels, []string{"/cache/vmlinuz-6.12"}) || !reflect.DeepEqual(p.Kernels.Modules, []string{"/cache/modules-6.12"}) || p.VM.Accel != vm.AccelTCG || p.Patch != nil {
		t.Errorf("not in a guest on the default kernel under TCG: %+v, accel %q", p.Kernels, p.VM.Accel)
	}
	for _, line := range []string{"reproduce: 4 claim(s); scenario big-tcp-rr (", "reproduce: measuring in a guest on Debian's kernel 6.12.9-amd64, in virtual time: no usable KVM"} {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, progress.String())
		}
	}
	r := &results.Result{}
	p.Run.Annotate(r)
	if rp := r.Reproduction; rp == nil || rp.Source != m.File || rp.Scenario != "big-tcp-rr" || len(rp.SHA256) != 64 || len(rp.Claims) != 4 {
		t.Errorf("the claims attached: %+v", r.Reproduction)
	}
	// An accelerator of run's flags is kept.
	kvm := base
	kvm.VM.Accel = vm.AccelKVM
	if p, err := Plan(context.Background(), m, kvm, set, load); err != nil || p.VM.Accel != vm.AccelKVM {
		t.Errorf("--vm-accel kvm after --: %q %v", p.VM.Accel, err)
	}
	// A stable wall clock, Here, or kernels of run's flags: no default kernel.
	w.stable, w.fetched = true, 0
	if p, err := Plan(context.Background(), m, base, set, load); err != nil || len(p.Kernels.Kernels) != 0 || p.VM.Accel != "" || w.fetched != 0 {
		t.Errorf("stable wall clock: %+v %q %v, fetched %d", p.Kernels, p.VM.Accel, err, w.fetched)
	}
	w.stable, w.probed = false, 0
	here := set
	here.Here = true
	if p, err := Plan(context.Background(), m, base, here, load); err != nil || len(p.Kernels.Kernels) != 0 || w.probed != 0 || w.fetched != 0 {
		t.Errorf("Here: %+v %v, probed %d, fetched %d", p.Kernels, err, w.probed, w.fetched)
	}
	given := base
	given.Kernels = kernels.Request{Kernels: []string{"/boot/vmlinuz-test"}}
	if p, err := Plan(context.Background(), m, given, set, load); err != nil || !reflect.DeepEqual(p.Kernels.Kernels, given.Kernels.Kernels) || p.VM.Accel != "" || w.probed != 0 {
		t.Errorf("--kernel after --: %+v %q %v, probed %d", p.Kernels, p.VM.Accel, err, w.probed)
	}
	// A duration the user gave is kept: a tool that cannot measure in it refuses it.
	given2 := set
	given2.DurationGiven = true
	if p, err := Plan(context.Background(), m, base, given2, load); err != nil || p.Overrides.ToolMinimum {
		t.Errorf("--duration given: %+v %v", p.Overrides, err)
	}
	// A schedule that is not one is the caller's mistake.
	bad := set
	bad.Runs = "many"
	var input inputerr.Error
	if _, err := Plan(context.Background(), m, base, bad, load); !errors.As(err, &input) {
		t.Errorf("--runs many: %v, want an input error", err)
	}
}

// TestPlanPatch: a patch is built first, its base and patched kernel the run's two: the
// message as read once, reproduce's base and fuzz, the build settings of run's flags (its
// config) kept; where a message without a diff runs is not asked.
func TestPlanPatch(t *testing.T) {
	m := message(t, "../../patches/testdata/ovs-internal-port-tso-v2.mbox")
	w := &where{}
	set := w.settings(io.Discard)
	set.Out, set.Fuzz, set.Source = filepath.Join(t.TempDir(), "r.json"), 3, "/src/linux"
	base := kernels.Plan{Patch: &kbuild.BuildRequest{Config: kbuild.ConfigMinimal}}
	p, err := Plan(context.Background(), m, base, set, load)
	if err != nil {
		t.Fatal(err)
	}
	b := p.Patch
	if p.ScenarioArg != "ovs-internal-tso" || b == nil || !reflect.DeepEqual(b.Patches, []string{m.File}) || string(b.Inputs[m.File]) != string(m.Data) ||
		b.Source != "/src/linux" || b.Fuzz != 3 || b.Config != kbuild.ConfigMinimal {
		t.Errorf("scenario %q, build %+v", p.ScenarioArg, b)
	}
	if len(p.Kernels.Kernels) != 0 || w.probed != 0 || w.fetched != 0 || base.Patch.Patches != nil {
		t.Errorf("kernels %+v, probed %d, fetched %d, run's build changed %+v", p.Kernels, w.probed, w.fetched, base.Patch)
	}
}
