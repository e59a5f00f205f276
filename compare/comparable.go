package compare

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"gopkg.in/yaml.v3"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// environmentDiff says, attribute by attribute, where the machines and runs of the sides
// differ: kernel, CPU, host, tool versions, OVS datapath, label. Equal attributes are one
// line at the end.
func environmentDiff(sides []Side) []string {
	type attr struct {
		name string
		of   func(*results.Result) string
	}
	attrs := []attr{
		{"label", func(r *results.Result) string { return r.Label }},
		{"kernel release", func(r *results.Result) string { return r.Environment.KernelRelease }},
		{"kernel version", func(r *results.Result) string { return r.Environment.KernelVersion }},
		{"cpu model", func(r *results.Result) string { return r.Environment.CPUModel }},
		{"cpus", func(r *results.Result) string { return fmt.Sprint(r.Environment.CPUs) }},
		{"hostname", func(r *results.Result) string { return r.Environment.Hostname }},
		{"ovs datapath", func(r *results.Result) string {
			if o := r.Environment.OVS; o != nil {
				return o.Datapath
			}
			return ""
		}},
	}
	for _, s := range sides {
		if s.Result.Environment.VM != nil { // where a guest measured, its clock
			attrs = append(attrs, attr{"vm clock", func(r *results.Result) string {
				if v := r.Environment.VM; v != nil {
					return results.DescribeClock(v)
				}
				return "host"
			}})
			break
		}
	}
	tools := map[string]bool{}
	for _, s := range sides {
		for name := range s.Result.Environment.Tools {
			tools[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		attrs = append(attrs, attr{name + " version", func(r *results.Result) string { return r.Environment.Tools[name] }})
	}
	// How each machine was tuned (nsperf check), item by item, where any side recorded it.
	var system []string
	for _, s := range sides {
		for _, f := range s.Result.Environment.System {
			if !slices.Contains(system, f.Name) {
				system = append(system, f.Name)
			}
		}
	}
	for _, name := range system {
		attrs = append(attrs, attr{name, func(r *results.Result) string {
			for _, f := range r.Environment.System {
				if f.Name == name {
					return f.Value
				}
			}
			return ""
		}})
	}
	var out, same []string
	for _, a := range attrs {
		var values []string
		differ := false
		for _, s := range sides {
			v := a.of(s.Result)
			differ = differ || v != a.of(sides[0].Result)
			values = append(values, fmt.Sprintf("%s %s", s.Name, orNone(v)))
		}
		if differ {
			out = append(out, fmt.Sprintf("%s differs: %s", a.name, strings.Join(values, ", ")))
		} else {
			same = append(same, a.name)
		}
	}
	if len(same) > 0 {
		out = append(out, "same: "+strings.Join(same, ", "))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// checkComparable decides whether the sides measure the same thing. Results of the same
// scenario text are comparable. Otherwise it returns the unified diff of the texts, and an
// IncomparableError naming the first difference in the topology, in the device settings of
// paired states of the same name, or in the tool arguments of the workloads (their duration
// and warm-up aside, which are method). Differing method is a warning.
func checkComparable(sides []Side, pairs []StatePair, explicitPairs bool) (diff string, warnings []string, err error) {
	base := sides[0]
	for _, s := range sides[1:] {
		warnings = append(warnings, methodDiff(base, s)...)
		if d := clockDifference(base, s); d != "" && err == nil {
			err = &IncomparableError{Difference: d, Forceable: true}
		}
		// The texts themselves, not their stored hashes: a text edited after the run keeps
		// a hash that no longer says what it is.
		if s.Result.Scenario.Text == base.Result.Scenario.Text {
			continue
		}
		d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(base.Result.Scenario.Text), B: difflib.SplitLines(s.Result.Scenario.Text),
			FromFile: base.Name + ": " + base.Result.Scenario.File, ToFile: s.Name + ": " + s.Result.Scenario.File, Context: 2,
		})
		diff += d
		if err == nil {
			err = sameMeasurement(base, s, pairs, explicitPairs)
		}
	}
	return diff, warnings, err
}

// clockDifference names how the clocks of two results differ, "" when their figures are of
// the same kind: virtual-time figures count the instructions a guest executed, and compare
// only with figures of the same clock, icount options, QEMU (whose translation decides
// the instructions) and guest CPU model; wall-clock figures of a host and of a guest are both time.
func clockDifference(a, b Side) string {
	ca, cb := results.ClockOf(a.Result), results.ClockOf(b.Result)
	switch {
	case ca.Name != cb.Name:
		return fmt.Sprintf("clock: %s in %s, %s in %s (virtual-time figures count the instructions a guest executes, wall-clock figures its time)", ca.Name, a.Name, cb.Name, b.Name)
	case ca.Icount != cb.Icount:
		return fmt.Sprintf("icount options: %s in %s, %s in %s", ca.Icount, a.Name, cb.Icount, b.Name)
	case ca.QEMU != cb.QEMU:
		return fmt.Sprintf("QEMU version in virtual time: %s in %s, %s in %s (its translation decides the instructions counted)", ca.QEMU, a.Name, cb.QEMU, b.Name)
	case ca.CPU != cb.CPU:
		return fmt.Sprintf("guest CPU in virtual time: %s in %s, %s in %s (the instructions the kernel may use decide the ones counted)", cpuName(ca.CPU), a.Name, cpuName(cb.CPU), b.Name)
	}
	return ""
}

// cpuName is a guest's -cpu for a message: QEMU's default model where none was passed.
func cpuName(model string) string {
	if model == "" {
		return "QEMU's default (qemu64)"
	}
	return model
}

// sameMeasurement compares what two scenario texts measure, case by case.
func sameMeasurement(a, b Side, pairs []StatePair, explicitPairs bool) error {
	sa, errA := scenarios.Parse(a.Result.Scenario.File, []byte(a.Result.Scenario.Text), scenarios.Options{})
	sb, errB := scenarios.Parse(b.Result.Scenario.File, []byte(b.Result.Scenario.Text), scenarios.Options{})
	if errA != nil || errB != nil {
		return &IncomparableError{Difference: fmt.Sprintf("the scenario texts cannot both be read (%v; %v)", errA, errB), Forceable: true}
	}
	for _, ca := range sa.Expand() {
		var cb *scenarios.Scenario
		for _, c := range sb.Expand() {
			if c.Label() == ca.Label() {
				cb = c.Scenario
			}
		}
		if cb == nil {
			continue // a case only one has is left out of the comparison
		}
		where := ""
		if ca.Label() != "" {
			where = " (case " + ca.Label() + ")"
		}
		if d := firstDifference("topology", ca.Scenario.Topology, cb.Topology); d != "" {
			return &IncomparableError{Difference: fmt.Sprintf("%s%s in %s and %s", d, where, a.Name, b.Name), Forceable: true}
		}
		if !explicitPairs {
			// States compared by name should be the same settings; states a user pairs
			// explicitly differ on purpose.
			for _, p := range pairs {
				if p.Base != p.New {
					continue // a state one side cannot apply, compared with the baseline
				}
				sta, stb := stateOf(ca.Scenario, p.Base), stateOf(cb, p.New)
				if sta == nil || stb == nil {
					continue
				}
				// What a state sets: the same name with other settings is another state, but
				// for the kinds that may differ (a qdisc cap injecting a known change).
				of := func(st *scenarios.State) map[string]any {
					out := map[string]any{}
					for _, kind := range scenarios.SettingKinds() {
						if !kind.MayDiffer() {
							out[kind.Key()] = toTree(st.Settings.Of(kind.Key()))
						}
					}
					return out
				}
				if d := firstDifference("states."+p.Base, of(sta), of(stb)); d != "" {
					return &IncomparableError{Difference: fmt.Sprintf("%s%s in %s and %s", d, where, a.Name, b.Name), Forceable: true}
				}
			}
		}
		for _, wa := range ca.Scenario.Workloads {
			for _, wb := range cb.Workloads {
				if wa.Name != wb.Name {
					continue
				}
				if wa.Tool() != wb.Tool() {
					return &IncomparableError{Difference: fmt.Sprintf("workloads.%s: tool %s in %s, %s in %s%s", wa.Name, wa.Tool(), a.Name, wb.Tool(), b.Name, where), Forceable: true}
				}
				if d := firstDifference("workloads."+wa.Name+"."+wa.Tool(), withoutMethod(wa.Spec()), withoutMethod(wb.Spec())); d != "" {
					return &IncomparableError{Difference: fmt.Sprintf("%s%s in %s and %s", d, where, a.Name, b.Name), Forceable: true}
				}
				if d := firstDifference("workloads."+wa.Name+".clients", wa.Clients, wb.Clients); d != "" {
					return &IncomparableError{Difference: fmt.Sprintf("%s%s in %s and %s", d, where, a.Name, b.Name), Forceable: true}
				}
			}
		}
	}
	return nil
}

func stateOf(s *scenarios.Scenario, name string) *scenarios.State {
	for i := range s.States {
		if s.States[i].Name == name {
			return &s.States[i]
		}
	}
	return nil
}

// withoutMethod is a tool's settings as a tree without the keys the tool declares method
// (how long and how many: ToolSpec.MethodKeys), which differ between comparable runs.
func withoutMethod(spec scenarios.ToolSpec) any {
	tree := toTree(spec)
	if m, ok := tree.(map[string]any); ok {
		for _, k := range spec.MethodKeys() {
			delete(m, k)
		}
	}
	return tree
}

// toTree turns a value into maps, lists and scalars under its YAML names.
func toTree(v any) any {
	if t, ok := v.(map[string]any); ok {
		return t
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var tree any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return string(data)
	}
	return tree
}

// firstDifference walks two values as YAML trees and names the first place they differ:
// "topology.links[0].veth.mtu: 1500 / 9000"; "" when they are equal.
func firstDifference(path string, a, b any) string {
	return diffTree(path, toTree(a), toTree(b))
}

func diffTree(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if d := diffTree(path+"."+k, x[k], y[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			var xi, yi any
			if i < len(x) {
				xi = x[i]
			}
			if i < len(y) {
				yi = y[i]
			}
			if d := diffTree(fmt.Sprintf("%s[%d]", path, i), xi, yi); d != "" {
				return d
			}
		}
		return ""
	}
	if fmt.Sprint(a) == fmt.Sprint(b) {
		return ""
	}
	return fmt.Sprintf("%s: %s / %s", path, show(a), show(b))
}

func show(v any) string {
	if v == nil {
		return "(not set)"
	}
	if _, ok := v.(map[string]any); ok {
		data, _ := yaml.Marshal(v)
		return "{" + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "; ") + "}"
	}
	return fmt.Sprint(v)
}

// methodDiff warns where two runs measured the same thing differently: runs, order, and the
// workloads' duration and warm-up.
func methodDiff(a, b Side) []string {
	var out []string
	ra, rb := a.Result, b.Result
	if ra.Settings.Runs != rb.Settings.Runs {
		out = append(out, fmt.Sprintf("method differs: %d runs per state in %s, %d in %s", ra.Settings.Runs, a.Name, rb.Settings.Runs, b.Name))
	}
	if ra.Settings.Order != rb.Settings.Order {
		out = append(out, fmt.Sprintf("method differs: order %s in %s, %s in %s", ra.Settings.Order, a.Name, rb.Settings.Order, b.Name))
	}
	la, lb := ra.Settings.RunLength, rb.Settings.RunLength
	for _, w := range slices.Sorted(maps.Keys(la)) {
		if v, ok := lb[w]; ok && v != la[w] {
			out = append(out, fmt.Sprintf("method differs: a run of workload %s takes %s in %s, %s in %s", w, la[w], a.Name, v, b.Name))
		}
	}
	return out
}
