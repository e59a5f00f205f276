package scenarios

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

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

// DropsOn implements Dropper: the devices with a netem that loses packets.
func (q Qdiscs) DropsOn() []string {
	var out []string
	for _, ref := range q.Targets() {
		if n := q[ref].Netem; n != nil && n.Loss > 0 {
			out = append(out, ref)
		}
	}
	return out
}

// Names implements Named: the kinds of qdisc it attaches (fq, netem, tbf).
func (q Qdiscs) Names() []string {
	var out []string
	for _, ref := range q.Targets() {
		out = append(out, q[ref].Kind().Name)
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

var tcQdiscRe = regexp.MustCompile(`^tc\s+qdisc\s+(add|replace|change|del|delete)\s+dev\s+(\S+)\s+root(?:\s+handle\s+\S+)?(?:\s+(.*))?$`)

// ReadToggle implements ToggleReader: `tc qdisc add|replace|change dev DEV root [handle H]
// KIND [PARAM VALUE...]` as the root qdisc's text in a scenario's words ({fq: {maxrate:
// "1gbit"}}: netem's delay takes a jitter after it, a word alone is a flag such as noecn), and
// `tc qdisc del dev DEV root` as "none". A qdisc nsperf cannot attach as written is no toggle.
func (Qdiscs) ReadToggle(cmd string) (SettingToggle, bool) {
	m := tcQdiscRe.FindStringSubmatch(strings.TrimSpace(cmd))
	if m == nil {
		return SettingToggle{}, false
	}
	t := SettingToggle{Device: m[2], Values: map[string]string{"root": "none"}}
	if m[1] == "del" || m[1] == "delete" {
		return t, true
	}
	f := strings.Fields(m[3])
	if len(f) == 0 {
		return SettingToggle{}, false
	}
	text := fmt.Sprintf("{%s: {%s}}", f[0], strings.Join(tcParams(f), ", "))
	if _, err := ParseQdisc(text); err != nil {
		return SettingToggle{}, false
	}
	t.Values["root"] = text
	return t, true
}

// tcParams are a tc qdisc command's parameters after its kind (f[0]) as YAML pairs.
func tcParams(f []string) []string {
	var params []string
	for i := 1; i < len(f); i++ {
		key := f[i]
		switch {
		case f[0] == "netem" && key == "delay" && i+1 < len(f):
			params = append(params, "delay: "+strconv.Quote(f[i+1]))
			i++
			if i+1 < len(f) && unicode.IsDigit(rune(f[i+1][0])) {
				params = append(params, "jitter: "+strconv.Quote(f[i+1]))
				i++
			}
		case i+1 < len(f) && unicode.IsDigit(rune(f[i+1][0])):
			v := f[i+1]
			if _, err := strconv.Atoi(v); err != nil {
				v = strconv.Quote(v) // 1gbit, 10ms, 1%: scalars of their own type
			}
			params = append(params, key+": "+v)
			i++
		default:
			params = append(params, key+": true")
		}
	}
	return params
}

// DraftToggles implements ToggleDrafter: the root qdiscs the toggles attach, on the sender's
// egress: the first before and the last after when they change it twice or more, else the
// device's default before. Each kind attached needs a shipped scenario whose states attach it.
func (Qdiscs) DraftToggles(shown []SettingToggle, on DraftTopology) SettingDraft {
	var seen []string
	var d SettingDraft
	for _, t := range shown {
		text := t.Values["root"]
		seen = append(seen, text)
		if q, err := ParseQdisc(text); err == nil && !slices.Contains(d.Toggles, "qdisc "+q.Kind().Name) {
			d.Toggles = append(d.Toggles, "qdisc "+q.Kind().Name)
		}
	}
	block := func(text string) string {
		if text == "" || text == "none" {
			return ""
		}
		return "qdiscs: {" + on.Sender + ": " + text + "}  # the sender's egress\n"
	}
	switch len(seen) {
	case 0:
	case 1:
		d.After = block(seen[0])
	default:
		d.Before, d.After = block(seen[0]), block(seen[len(seen)-1])
	}
	return d
}
