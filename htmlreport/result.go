package htmlreport

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/results"
)

// Result writes the HTML report of a run: what it decided (verdictSection), the run's
// metadata, then per case, workload and metric the samples of every state (box, points,
// median with its CI), the values in the order they were measured, and the comparisons; then
// the text tables with expectations and warnings.
func Result(w io.Writer, r *results.Result) error {
	d := pageData{Title: fmt.Sprintf("nsperf: %s, run %s", r.Scenario.Name, r.RunID)}
	d.Sections = append(d.Sections, verdictSection(r), metadataSection(resultHeader(r)))
	if err := addCases(&d, r, stateColours(r, nil)); err != nil {
		return err
	}
	return d.write(w)
}

// Compare writes the HTML report of a comparison: what it decided, the sides and their
// differences, then the same plots as for a run, one colour per result.
func Compare(w io.Writer, rep *compare.Report) error {
	d := pageData{Title: "nsperf compare: " + rep.Result.RunID}
	var head bytes.Buffer
	rep.WriteHeader(&head, false)
	var header []string
	for _, l := range strings.Split(strings.TrimSpace(head.String()), "\n") {
		header = append(header, strings.TrimSpace(l))
	}
	d.Sections = append(d.Sections, verdictSection(rep.Result), metadataSection(header))
	bySide := func(st results.StateRecord) string {
		if st.Side != "" {
			return st.Side
		}
		return st.Name
	}
	if err := addCases(&d, rep.Result, stateColours(rep.Result, bySide)); err != nil {
		return err
	}
	return d.write(w)
}

// verdictSection is what a reader looks for first: whether the result passes, and the
// comparisons, expectations and capabilities that decide it, as one table. The reasons are
// the ones the command's exit status comes from (Result.Failures).
func verdictSection(r *results.Result) section {
	sec := section{Title: "Verdict", Table: &table{Head: []string{"what", "of", "measured", "verdict"}}}
	switch failures := r.Failures(); {
	case len(failures) > 0:
		sec.Lines = append(sec.Lines, line{"fail", fmt.Sprintf("the result fails (%d):", len(failures))})
		for _, f := range failures {
			sec.Lines = append(sec.Lines, line{"fail", "  " + f})
		}
	default:
		sec.Lines = append(sec.Lines, line{"pass", "the result passes: no gated regression, no failed expectation"})
	}
	if !r.Complete {
		sec.Lines = append(sec.Lines, line{"warning", "INCOMPLETE: the run ended early; the figures cover the runs that finished"})
	}
	rows := &sec.Table.Rows
	for _, c := range r.Capabilities {
		*rows = append(*rows, row{"", []string{"capability", c.State, c.Line(), ""}})
	}
	for _, c := range r.Cases {
		prefix := ""
		if c.Label != "" {
			prefix = "[" + c.Label + "] "
		}
		for _, s := range c.Summaries {
			if s.Comparison == nil || !s.Comparison.Gated {
				continue
			}
			class := ""
			switch s.Comparison.Verdict {
			case results.Regressed:
				class = "fail"
			case results.Improved:
				class = "pass"
			}
			*rows = append(*rows, row{class, []string{"gated comparison", fmt.Sprintf("%s%s %s: %s vs %s", prefix, s.Workload, s.Metric, s.State, s.Comparison.Baseline),
				results.FormatComparison(*s.Comparison), s.Comparison.Verdict}})
		}
		for _, e := range c.Expectations {
			of := prefix + e.Expectation
			if e.State != "" {
				of += " in " + e.State
			}
			switch {
			case e.NotApplicable != "":
				*rows = append(*rows, row{"na", []string{"expectation", of, e.NotApplicable, "N/A"}})
			case e.Pass:
				*rows = append(*rows, row{"pass", []string{"expectation", of, e.Measured, "pass"}})
			default:
				*rows = append(*rows, row{"fail", []string{"expectation", of, e.Measured, "FAIL"}})
			}
		}
	}
	if len(*rows) == 0 {
		sec.Table = nil
		sec.Lines = append(sec.Lines, line{"na", "nothing is gated or expected: the run compares no states"})
	}
	return sec
}

// metadataSection is the run's metadata, after the verdict.
func metadataSection(header []string) section {
	sec := section{Title: "Run"}
	for _, h := range header {
		sec.Lines = append(sec.Lines, line{"", h})
	}
	return sec
}

func resultHeader(r *results.Result) []string {
	e := r.Environment
	h := []string{
		fmt.Sprintf("scenario %s (%s, sha256 %.12s)", r.Scenario.Name, r.Scenario.File, r.Scenario.SHA256),
		fmt.Sprintf("kernel %s %s on %s, %d CPUs (%s)", e.KernelRelease, e.KernelVersion, e.Hostname, e.CPUs, e.CPUModel),
		fmt.Sprintf("method: %d runs per state, %s order, alpha %g, CV limit %g%%", r.Settings.Runs, r.Settings.Order, r.Settings.Policy.Effective().Alpha, 100*r.Settings.Policy.Effective().CVLimit),
		fmt.Sprintf("measured %s to %s UTC", r.Start.UTC().Format("2006-01-02 15:04:05"), r.End.UTC().Format("15:04:05")),
	}
	if r.Label != "" {
		h = append(h, "label "+r.Label)
	}
	var tools []string
	for name, v := range e.Tools {
		tools = append(tools, name+" "+v)
	}
	sort.Strings(tools)
	if len(tools) > 0 {
		h = append(h, "tools: "+strings.Join(tools, ", "))
	}
	if e.OVS != nil {
		h = append(h, fmt.Sprintf("Open vSwitch %s, %s datapath, %s instance", e.OVS.Version, e.OVS.Datapath, e.OVS.Instance))
	}
	if vm := results.DescribeVM(r); vm != "" {
		h = append(h, vm)
	}
	for i, k := range r.Kernels { // an A/B run of two kernels: the plots show STATE@A and STATE@B
		h = append(h, fmt.Sprintf("kernel %c: %s, %s (its own table below, under Tables)", 'A'+i, k.Label, results.DescribeVM(k)))
		if k.Build != nil {
			h = append(h, fmt.Sprintf("kernel %c: %s", 'A'+i, k.Build.Line()))
		}
		for _, l := range k.Coverage.Lines() {
			h = append(h, fmt.Sprintf("kernel %c: calls of the patch's %s", 'A'+i, l))
		}
	}
	if turns := results.DescribeTurns(r.Turns); turns != "" {
		h = append(h, turns)
	}
	for _, c := range r.Capabilities {
		h = append(h, "capability: "+c.Line())
	}
	h = append(h, r.Reproduction.Lines()...) // claimed beside measured (nsperf reproduce)
	if !r.Complete {
		h = append(h, "INCOMPLETE: the run ended early; the figures cover the runs that finished")
	}
	return h
}

// stateColours gives each state a colour; group, when given, makes states of one group (a
// result of a comparison) share theirs.
func stateColours(r *results.Result, group func(results.StateRecord) string) map[string]color.Color {
	out := map[string]color.Color{}
	groups := map[string]int{}
	for _, c := range r.Cases {
		for _, st := range c.States {
			key := st.Name
			if group != nil {
				key = group(st)
			}
			if _, ok := groups[key]; !ok {
				groups[key] = len(groups)
			}
			out[st.Name] = palette[groups[key]%len(palette)]
		}
	}
	return out
}

func addCases(d *pageData, r *results.Result, colours map[string]color.Color) error {
	gates := 0 // an A/B run's gates count the rounds over all cases
	for _, c := range r.Cases {
		ordered := measuringOrder(c.Samples, r.Turns, gates)
		gates += rounds(c.Samples)
		for _, item := range items(c) {
			sec := section{Title: item.workload + " " + item.metric}
			if c.Label != "" {
				sec.Title = "[" + c.Label + "] " + sec.Title
			}
			for _, s := range c.Summaries {
				if s.Workload == item.workload && s.Metric == item.metric && s.Comparison != nil {
					class := "verdict"
					if s.Comparison.Verdict == results.Regressed {
						class = "verdict fail"
					}
					sec.Lines = append(sec.Lines, line{class, fmt.Sprintf("%s vs %s: %s", s.State, s.Comparison.Baseline, results.FormatComparison(*s.Comparison))})
				}
			}
			dist, err := distributionPlot(c, item, colours)
			if err != nil {
				return err
			}
			order, err := orderPlot(c, ordered, item, colours)
			if err != nil {
				return err
			}
			sec.Figures = append(sec.Figures, dist, order)
			d.Sections = append(d.Sections, sec)
		}
		for _, st := range c.States {
			if st.Unavailable != "" {
				d.Sections = append(d.Sections, section{Title: "state " + st.Name + " unavailable", Lines: []line{{"warning", st.Unavailable}}})
			}
		}
		if sec, ok, err := evidenceSection(c); err != nil {
			return err
		} else if ok {
			d.Sections = append(d.Sections, sec)
		}
	}
	var table bytes.Buffer
	if err := results.Table(&table, r); err != nil {
		return err
	}
	tables := section{Title: "Tables", Pre: table.String()}
	for _, c := range r.Cases {
		for _, e := range c.Expectations {
			switch {
			case e.NotApplicable != "":
				tables.Lines = append(tables.Lines, line{"na", fmt.Sprintf("expectation N/A: %s (%s)", e.Expectation, e.NotApplicable)})
			case e.Pass:
				tables.Lines = append(tables.Lines, line{"pass", fmt.Sprintf("expectation pass: %s (measured: %s)", e.Expectation, e.Measured)})
			default:
				tables.Lines = append(tables.Lines, line{"fail", fmt.Sprintf("expectation FAIL: %s (measured: %s)", e.Expectation, e.Measured)})
			}
		}
	}
	for _, warning := range r.Warnings {
		tables.Lines = append(tables.Lines, line{"warning", "WARNING: " + warning})
	}
	d.Sections = append(d.Sections, tables)
	return nil
}

type item struct{ workload, metric, unit string }

// items are the case's workload and metric pairs, in the order of its summaries.
func items(c results.Case) []item {
	var out []item
	for _, s := range c.Summaries {
		it := item{s.Workload, s.Metric, s.Unit}
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

// valuesOf are the valid samples of a state for an item, in measuring order.
func valuesOf(c results.Case, it item, state string) []float64 {
	var out []float64
	for _, s := range c.Samples {
		if s.State != state || s.Workload != it.workload || s.Error != "" || s.Invalid != "" {
			continue
		}
		if v, ok := s.Value(it.metric); ok {
			out = append(out, v*scale(it.unit))
		}
	}
	return finite(out)
}

// distributionPlot: per state a box (quartiles), every sample as a point, and the median with
// its 95% CI as a bar beside it.
func distributionPlot(c results.Case, it item, colours map[string]color.Color) (template.HTML, error) {
	p := newPlot(it.workload+" "+it.metric+": samples per state", axisLabel(it.metric, it.unit))
	var names []string
	for i, st := range c.States {
		names = append(names, st.Name)
		xs := valuesOf(c, it, st.Name)
		if len(xs) == 0 {
			continue
		}
		x := float64(i)
		if len(xs) >= 2 {
			box, err := plotter.NewBoxPlot(vg.Points(18), x, plotter.Values(xs))
			if err != nil {
				return "", err
			}
			box.FillColor = color.Transparent
			box.BoxStyle.Color = colours[st.Name]
			p.Add(box)
		}
		pts := make(plotter.XYs, len(xs))
		for k, v := range xs {
			pts[k] = plotter.XY{X: x - 0.25 + 0.05*float64(k%5), Y: v}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = glyph(colours[st.Name], draw.CircleGlyph{})
		p.Add(sc)
		for _, s := range c.Summaries {
			if s.State != st.Name || s.Workload != it.workload || s.Metric != it.metric {
				continue
			}
			k := scale(it.unit)
			m := s.Centre.Median * k
			lo, hi := m, m
			if s.Centre.Lo != nil && s.Centre.Hi != nil {
				lo, hi = *s.Centre.Lo*k, *s.Centre.Hi*k
			}
			bars, err := plotter.NewYErrorBars(errorPoints{{x + 0.3, m, m - lo, hi - m}})
			if err != nil {
				return "", err
			}
			bars.LineStyle.Color = colours[st.Name]
			bars.LineStyle.Width = vg.Points(1.5)
			med, err := plotter.NewScatter(xy(x+0.3, m))
			if err != nil {
				return "", err
			}
			med.GlyphStyle = glyph(colours[st.Name], draw.BoxGlyph{})
			p.Add(bars, med)
		}
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.X.Label.Text = "box: quartiles, dots: runs, bar: median, 95% CI"
	return svg(p, 5.5*vg.Inch, 3.6*vg.Inch)
}

// orderPlot: every sample in the order it was measured, coloured by state, so that drift
// over the run shows.
func orderPlot(c results.Case, samples []results.Sample, it item, colours map[string]color.Color) (template.HTML, error) {
	p := newPlot(it.workload+" "+it.metric+": in measuring order", axisLabel(it.metric, it.unit))
	p.X.Label.Text = "sample, in the order measured"
	series := map[string]plotter.XYs{}
	n := 0
	for _, s := range samples {
		if s.Workload != it.workload {
			continue
		}
		n++
		if s.Error != "" || s.Invalid != "" {
			continue
		}
		v, ok := s.Value(it.metric)
		if !ok {
			continue
		}
		series[s.State] = append(series[s.State], plotter.XY{X: float64(n), Y: v * scale(it.unit)})
	}
	for _, rec := range c.States {
		st := rec.Name
		if len(series[st]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(series[st])
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = glyph(colours[st], draw.CircleGlyph{})
		p.Add(sc)
		p.Legend.Add(st, sc)
	}
	return svg(p, 5.5*vg.Inch, 3.6*vg.Inch)
}

// measuringOrder puts the samples of an A/B run of two kernels (STATE@A, STATE@B) in the
// order the guests measured them: round by round as the turns went (A B B A ...), the gate of
// a round being before plus its round. A guest's clock stops while it is paused, so the
// samples' start times cannot tell. Other results are in measuring order already.
func measuringOrder(samples []results.Sample, turns []results.Turn, before int) []results.Sample {
	if len(turns) == 0 {
		return samples
	}
	position := map[string]int{}
	for i, t := range turns {
		position[fmt.Sprintf("%s/%d", t.Kernel, t.Gate)] = i
	}
	at := func(s results.Sample) int {
		if i, ok := position[fmt.Sprintf("%s/%d", s.Side, before+s.Round)]; ok {
			return i
		}
		return len(turns) // not in a turn: last
	}
	out := slices.Clone(samples)
	slices.SortStableFunc(out, func(a, b results.Sample) int { return at(a) - at(b) })
	return out
}

// rounds is the number of rounds the samples cover.
func rounds(samples []results.Sample) int {
	n := 0
	for _, s := range samples {
		n = max(n, s.Round)
	}
	return n
}

// errorPoints are points with asymmetric vertical errors.
type errorPoints []struct{ x, y, low, high float64 }

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].low, e[i].high }

// evidenceSection is what the datapath did: the evidence lines, the side metrics, and a plot
// of the packet size per state and device.
func evidenceSection(c results.Case) (section, bool, error) {
	devices, sizes := results.PacketSizes(c)
	if len(devices) == 0 {
		return section{}, false, nil
	}
	sec := section{Title: "evidence: packet sizes per state and device"}
	if c.Label != "" {
		sec.Title = "[" + c.Label + "] " + sec.Title
	}
	if c.BigPackets != "" {
		sec.Lines = append(sec.Lines, line{"", "big packets " + c.BigPackets})
	}
	for _, e := range c.Evidence {
		class := ""
		if e.Warning {
			class = "warning"
		}
		sec.Lines = append(sec.Lines, line{class, e.Text})
	}
	p := newPlot("bytes per packet, in the direction that carried the data", "KB per packet")
	var states []string
	for _, st := range c.States {
		if sizes[st.Name] != nil {
			states = append(states, st.Name)
		}
	}
	width := vg.Points(14)
	palette := []color.Color{color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
		color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff}}
	for i, ref := range devices {
		values := make(plotter.Values, len(states))
		for k, st := range states {
			values[k] = sizes[st][ref] / 1e3
		}
		bars, err := plotter.NewBarChart(values, width)
		if err != nil {
			return sec, false, err
		}
		bars.Color = palette[i%len(palette)]
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(devices)-1)/2)
		p.Add(bars)
		p.Legend.Add(ref, bars)
	}
	p.NominalX(states...)
	p.X.Label.Text = "state (64 KiB = 65.5 KB)"
	fig, err := svg(p, 5.5*vg.Inch, 3.6*vg.Inch)
	if err != nil {
		return sec, false, err
	}
	sec.Figures = append(sec.Figures, fig)
	if tables := results.SideMetricTables(c, results.AllSideMetrics); len(tables) > 0 {
		sec.Pre = strings.Join(tables, "\n")
	}
	return sec, true, nil
}
