package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/scenarios"
)

// The kinds of state steps.
const (
	// SetSetting gives a target (a namespace, a device, a route) a setting kind's value in the
	// state (Step.Setting, Step.SettingKey), at one of the kind's phases: the live side's
	// applier of the kind puts back the target's value as built where the state leaves it out.
	SetSetting StepKind = "setting"
	Recreate   StepKind = "recreate" // delete the device and run its build steps again
)

// StateSteps returns the steps that put the topology into a state: each setting kind's,
// namespaces' kinds first, then, on the devices built once, the device kinds' in the order of
// their phases; then the devices marked recreate are created anew, so that they inherit from
// their lower device what this state gave it, and get their own settings. Every device has
// every device kind's steps even where the state sets nothing, and a namespace kind has a step
// for each target any state sets: the live side then puts it back as built, so that no state
// inherits from the one measured before it; the shell rendering prints nothing for it.
func (p *Plan) StateSteps(st scenarios.State) []Step {
	var built, recreated []string
	for _, ep := range p.Scenario.Devices() {
		if p.recreated(ep.Ref()) {
			recreated = append(recreated, ep.Ref())
		} else {
			built = append(built, ep.Ref())
		}
	}
	slices.Sort(built)
	slices.Sort(recreated)
	var out []Step
	for _, ph := range settingPhases(scenarios.NamespaceScope) {
		for _, target := range p.Scenario.SettingTargets(ph.kind.Key()) {
			out = append(out, p.settingStep(st, ph.kind, target, ph.phase))
		}
	}
	out = append(out, p.deviceStateSteps(st, built)...)
	for _, ref := range recreated {
		ns, dev, _ := strings.Cut(ref, "/")
		lines := []string{fmt.Sprintf("%s link del %s  # created anew: it inherits from its lower device as set now", p.ip(ns), shellq.Word(dev))}
		for _, step := range p.DeviceSteps(ns, dev) {
			lines = append(lines, step.Do)
		}
		out = append(out, Step{Kind: Recreate, NS: ns, Dev: dev, Do: strings.Join(lines, "\n")})
	}
	return append(out, p.deviceStateSteps(st, recreated)...)
}

// phasedKind is one phase of a setting kind.
type phasedKind struct {
	phase int
	kind  scenarios.Setting
}

// settingPhases are the phases of the kinds of a scope, in the order they run: by phase,
// then by key.
func settingPhases(scope scenarios.Scope) []phasedKind {
	var out []phasedKind
	for _, kind := range scenarios.SettingKinds() {
		if kind.Scope() != scope {
			continue
		}
		for _, ph := range kind.Phases() {
			out = append(out, phasedKind{ph, kind})
		}
	}
	slices.SortStableFunc(out, func(a, b phasedKind) int {
		return cmp.Or(cmp.Compare(a.phase, b.phase), cmp.Compare(a.kind.Key(), b.kind.Key()))
	})
	return out
}

// settingStep is a kind's step for one target at one phase, with the state's value (nil where
// the state leaves the kind out).
func (p *Plan) settingStep(st scenarios.State, kind scenarios.Setting, target string, phase int) Step {
	value := st.Settings[kind.Key()]
	step := Step{Kind: SetSetting, SettingKey: kind.Key(), Target: target, Phase: phase, Setting: value}
	step.NS, step.Dev = scenarios.SplitTarget(target)
	if kind.Scope() != scenarios.DeviceScope {
		step.Dev = ""
	}
	if value != nil {
		step.Do = value.Command(target, phase, p.SettingShell())
	}
	return step
}

// SettingShell is what a setting's Command writes its lines with: this run's namespaces.
func (p *Plan) SettingShell() scenarios.Shell {
	return scenarios.Shell{Scenario: p.Scenario, NS: p.RunID.Namespace, IP: p.ip}
}

// deviceStateSteps: for a group of devices, each device kind's phases in order, every device
// at each.
func (p *Plan) deviceStateSteps(st scenarios.State, refs []string) []Step {
	var out []Step
	for _, ph := range settingPhases(scenarios.DeviceScope) {
		for _, ref := range refs {
			out = append(out, p.settingStep(st, ph.kind, ref, ph.phase))
		}
	}
	return out
}

func (p *Plan) recreated(ref string) bool {
	for _, l := range p.Scenario.Topology.Links {
		if r, ok := l.Spec().(scenarios.Recreated); ok && r.RecreatedPerState() && l.Spec().Devices()[0].Ref() == ref {
			return true
		}
	}
	return false
}

// StateShell renders a state's steps as shell lines.
func StateShell(steps []Step) []string {
	var out []string
	for _, s := range steps {
		if s.Do != "" {
			out = append(out, strings.Split(s.Do, "\n")...)
		}
	}
	return out
}
