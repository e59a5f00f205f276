package results

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/nsperf/nsperf/scenarios"
)

// Printable is s with control characters (ESC, newlines, ...) written as Go escapes: what a
// result says of itself is printed to terminals and reports, and must not drive them.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// escapeKeys is m with its keys passed through esc.
func escapeKeys[V any](m map[string]V, esc func(*string)) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		esc(&k)
		out[k] = v
	}
	return out
}

// escapeControls makes the free text of a stored result (label, kernel, host) printable.
func (r *Result) escapeControls() []string {
	var warnings []string
	for _, x := range append([]*Result{r}, r.Kernels...) {
		id := Printable(x.RunID)
		said := map[string]bool{}
		esc := func(f *string) {
			if p := Printable(*f); p != *f {
				if !said[p] {
					warnings = append(warnings, fmt.Sprintf("run %s: control characters in %q are shown escaped", id, p))
					said[p] = true
				}
				*f = p
			}
		}
		env := &x.Environment
		for _, f := range []*string{&x.RunID, &x.Label, &x.Scenario.Name, &x.Scenario.File, &env.KernelRelease, &env.KernelVersion, &env.Hostname, &env.CPUModel, &env.Machine} {
			esc(f)
		}
		for name, v := range env.Tools {
			esc(&v)
			env.Tools[name] = v
		}
		if v := env.VM; v != nil {
			for _, f := range []*string{&v.QEMU, &v.Image.Path, &v.Image.Release, &v.Image.Version, &v.Modules, &v.Warning, &v.Clock, &v.Icount, &v.IdleGate, &v.CPUBringUp} {
				esc(f)
			}
		}
		// The names of cases, states, workloads and devices, wherever they stand: the
		// summaries are recomputed from these.
		for i := range x.Cases {
			c := &x.Cases[i]
			esc(&c.Label)
			for j := range c.States {
				st := &c.States[j]
				esc(&st.Name)
				esc(&st.CompareTo)
				st.Devices = escapeKeys(st.Devices, esc)
				st.Features = escapeKeys(st.Features, esc)
			}
			for j := range c.Samples {
				esc(&c.Samples[j].State)
				esc(&c.Samples[j].Workload)
			}
		}
	}
	return warnings
}

// checkScenarioHash recomputes the hash of the stored scenario text (and of the kernels' in an
// A/B run): the text is what the result says it measured, and a hash left over from before an
// edit must not make two different texts look the same.
func (r *Result) checkScenarioHash() []string {
	var warnings []string
	for _, x := range append([]*Result{r}, r.Kernels...) {
		if x.Scenario.Text == "" {
			continue
		}
		if got := scenarios.TextSHA256([]byte(x.Scenario.Text)); got != x.Scenario.SHA256 {
			warnings = append(warnings, fmt.Sprintf("run %s: scenario.sha256 %.12s does not match its text (%.12s): the text was edited after the run; its hash is recomputed", x.RunID, x.Scenario.SHA256, got))
			x.Scenario.SHA256 = got
		}
	}
	return warnings
}
