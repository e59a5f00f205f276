package scenarios

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nsperf/nsperf/internal/shellq"
)

// Qdiscs attach a root qdisc to a device while a state is measured (`tc qdisc replace dev DEV
// root tbf rate 5gbit burst 1mb`), key "ns/dev": a token bucket or netem for effects of known
// size, fq, fq_codel, pfifo_fast or noqueue as the state compared (qdisc.go). A device
// without one in a state has its default.
type Qdiscs map[string]Qdisc

func init() { registerSetting(func() Setting { return Qdiscs{} }) }

// Key implements Setting.
func (Qdiscs) Key() string { return "qdiscs" }

// Scope implements Setting.
func (Qdiscs) Scope() Scope { return DeviceScope }

// Phases implements Setting: after the device's limits.
func (Qdiscs) Phases() []int { return []int{PhaseQdisc} }

// MayDiffer implements Setting: a cap (tbf) is how a known change is injected to calibrate a
// comparison (docs/results-and-formats.md).
func (Qdiscs) MayDiffer() bool { return true }

// Targets implements Setting: the devices.
func (q Qdiscs) Targets() []string { return slices.Sorted(maps.Keys(q)) }

// Check implements Setting: a device of the topology and one qdisc kind, its parameters in
// range.
func (q Qdiscs) Check(c *SettingCheck) {
	for _, ref := range q.Targets() {
		kinds := q[ref].Kinds()
		switch ok, _ := c.Device(ref, ref); {
		case !ok:
		case len(kinds) != 1:
			c.Problem(ref, "a root qdisc is one of %s, e.g. fq: {} or tbf: {rate: 5gbit, burst: 1mb}", qdiscNames())
		case kinds[0].check != nil:
			problems := kinds[0].check(q[ref])
			for _, key := range slices.Sorted(maps.Keys(problems)) {
				c.Problem(ref+"."+kinds[0].Name+"."+key, "%s", problems[key])
			}
		}
	}
}

// Command implements Setting: `ip netns exec NS tc qdisc replace dev DEV root QDISC`.
func (q Qdiscs) Command(ref string, _ int, sh Shell) string {
	want, ok := q[ref]
	if !ok {
		return ""
	}
	ns, dev := SplitTarget(ref)
	return fmt.Sprintf("ip netns exec %s tc qdisc replace dev %s root %s", shellq.Word(sh.NS(ns)), shellq.Word(dev), want)
}

// Kernel implements Setting: each qdisc's module.
func (q Qdiscs) Kernel() KernelNeeds {
	var out KernelNeeds
	for _, ref := range q.Targets() {
		if k := q[ref].Kind(); k.Module != "" {
			out.Modules = append(out.Modules, KernelModule{Name: k.Module, Options: []string{k.Kconfig}})
		}
	}
	return out
}

// Toggles implements Toggler: "qdisc KIND" for each it attaches.
func (q Qdiscs) Toggles() []string {
	var out []string
	for _, ref := range q.Targets() {
		out = append(out, "qdisc "+q[ref].Kind().Name)
	}
	return out
}
