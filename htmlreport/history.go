package htmlreport

import (
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nsperf/nsperf/history"
)

var (
	changeColour = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	levelColour  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
)

// History writes the history of series as a report: per series, the run medians over time
// with their 95% CI, the change points found (red lines before the first run of the new
// level) and each segment's level (green), with the findings listed.
func History(w io.Writer, title string, series []history.Series) error {
	d := pageData{Title: title}
	n := 0
	for _, s := range series {
		n += len(s.Findings)
	}
	d.Sections = append(d.Sections, section{Title: "Summary", Lines: []line{{"", fmt.Sprintf("%d series, %d change points (E-divisive means with a t-test; the value of a run is its median)", len(series), n)}}})
	for _, s := range series {
		sec := section{Title: s.Scenario + ": " + s.Name()}
		for _, f := range s.Findings {
			class := "verdict"
			kind := f.Kind
			if f.Kind == history.Regression && f.Acknowledged == "" {
				class = "verdict fail"
			}
			if f.Acknowledged != "" {
				kind += " (acknowledged: " + f.Acknowledged + ")"
			}
			sec.Lines = append(sec.Lines, line{class, fmt.Sprintf("%s %s (p=%.2g) between run %s (%s, %s) and run %s (%s, %s)",
				f.ChangeText(), kind, f.P, f.Before.RunID, orDash(f.Before.Label), f.Before.Kernel, f.After.RunID, orDash(f.After.Label), f.After.Kernel)})
		}
		fig, err := seriesPlot(s)
		if err != nil {
			return err
		}
		sec.Figures = []template.HTML{fig}
		d.Sections = append(d.Sections, sec)
	}
	return d.write(w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func seriesPlot(s history.Series) (template.HTML, error) {
	p := newPlot(s.Scenario+": "+s.Name(), axisLabel(s.Metric, s.Unit))
	p.X.Label.Text = "run (label, or run id), oldest first"
	k := scale(s.Unit)
	pts := make(plotter.XYs, len(s.Points))
	var errs errorPoints
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range s.Points {
		y := pt.Median * k
		pts[i] = plotter.XY{X: float64(i), Y: y}
		l, h := y, y
		if pt.Lo != nil && pt.Hi != nil {
			l, h = *pt.Lo*k, *pt.Hi*k
		}
		errs = append(errs, struct{ x, y, low, high float64 }{float64(i), y, y - l, h - y})
		lo, hi = math.Min(lo, l), math.Max(hi, h)
	}
	if len(pts) == 0 {
		return svg(p, 7*vg.Inch, 3.2*vg.Inch)
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return "", err
	}
	line.LineStyle.Color = color.Gray{0xaa}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return "", err
	}
	sc.GlyphStyle = glyph(palette[0], draw.CircleGlyph{})
	bars, err := plotter.NewYErrorBars(errs)
	if err != nil {
		return "", err
	}
	bars.LineStyle.Color = palette[0]
	p.Add(line, bars, sc)
	p.Legend.Add("run median, 95% CI", sc)
	if err := addChangePoints(p, s, pts, lo, hi); err != nil {
		return "", err
	}
	p.X.Tick.Marker = runTicks(s.Points)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	return svg(p, 7*vg.Inch, 3.6*vg.Inch)
}

// addChangePoints draws the level of each segment between change points, and each change
// point as a dashed line from lo to hi.
func addChangePoints(p *plot.Plot, s history.Series, pts plotter.XYs, lo, hi float64) error {
	bounds := []int{0}
	for _, cp := range s.ChangePoints {
		bounds = append(bounds, cp.Index)
	}
	bounds = append(bounds, len(pts))
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]
		if b <= a {
			continue
		}
		level := 0.0
		for _, pt := range pts[a:b] {
			level += pt.Y
		}
		level /= float64(b - a)
		seg, err := plotter.NewLine(plotter.XYs{{X: float64(a) - 0.4, Y: level}, {X: float64(b-1) + 0.4, Y: level}})
		if err != nil {
			return err
		}
		seg.LineStyle.Color, seg.LineStyle.Width = levelColour, vg.Points(2)
		p.Add(seg)
		if i == 0 {
			p.Legend.Add("segment level", seg)
		}
	}
	for i, cp := range s.ChangePoints {
		x := float64(cp.Index) - 0.5
		mark, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
		if err != nil {
			return err
		}
		mark.LineStyle.Color, mark.LineStyle.Width = changeColour, vg.Points(1.5)
		mark.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(mark)
		if i == 0 {
			p.Legend.Add("change point", mark)
		}
	}
	return nil
}

// runTicks label the runs on the x axis by label (else run id), at most about 20 of them.
func runTicks(points []history.Point) plot.Ticker {
	step := max(1, (len(points)+19)/20)
	var ticks plot.ConstantTicks
	for i, pt := range points {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			t.Label = pt.Label
			if t.Label == "" {
				t.Label = pt.RunID
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}
