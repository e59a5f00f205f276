package results

import (
	"fmt"
	"io"
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
			for _, f := range []*string{&v.QEMU, &v.Image.Path, &v.Image.Release, &v.Image.Version, &v.Modules, &v.Warning, &v.Clock, &v.Icount, &v.RTC, &v.IdleGate, &v.CPUBringUp, &v.CPU} {
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

// PrintableWriter passes what nsperf writes to a terminal or a pipe with every control
// character but newline and tab written as an escape (\x1b, \u0085): a stranger's text that
// reached a message (a file name of a diff, a tool's error) cannot move the cursor, clear the
// screen or add a line of its own ("ok 1" into KTAP read from stdout). nsperf itself writes
// none, and its JSON escapes them already.
func PrintableWriter(w io.Writer) io.Writer { return &printableWriter{w: w} }

type printableWriter struct {
	w io.Writer
	// afterC2: the last write ended in 0xc2, the first byte of a C1 control's UTF-8. It was
	// written; a C1 byte that starts the next write is escaped (what shows is then a broken
	// character, never a control).
	afterC2 bool
}

func (p *printableWriter) Write(data []byte) (int, error) {
	out := make([]byte, 0, len(data)+8)
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
		case c < 0x20 || c == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, c)
		case i == 0 && p.afterC2 && c >= 0x80 && c <= 0x9f:
			out = fmt.Appendf(out, `\x%02x`, c)
		case c == 0xc2 && i+1 < len(data) && data[i+1] >= 0x80 && data[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, data[i+1])
			i++
		default:
			out = append(out, c)
		}
	}
	p.afterC2 = len(data) > 0 && data[len(data)-1] == 0xc2
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(data), nil
}
