// Package render is the one table of output formats. Every command's --format takes its
// choices from it, and each format says here how it writes each kind of output nsperf prints:
// a result (run, report), a comparison (compare), a history's points (history show) and
// change points (history analyze), a report of the machine (check, probe), and a message's
// claims beside their measurements (reproduce). Adding a format
// is an entry here and the function that writes it.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/htmlreport"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/results"
)

// Kind is a kind of output a command prints.
type Kind int

// Kinds.
const (
	Result       Kind = iota // a result: run, report
	Comparison               // compare
	Points                   // history show
	Findings                 // history analyze
	Machine                  // check, probe, claims: a report with a text form of its own
	Reproduction             // reproduce: each claim beside its measurement
)

// Format is one --format: how it writes each kind of output it has; nil for the kinds it
// does not apply to.
type Format struct {
	Name string
	// Readable: a comparison's header (the sides and how they differ) goes above its table;
	// for the formats programs read, it goes to the diagnostics instead. Markdown sets it as
	// markdown.
	Readable, Markdown bool
	Result             func(w io.Writer, r *results.Result, opt results.TableOptions) error
	// Comparison writes a comparison whole; nil: its header, then its merged result as Result
	// writes it.
	Comparison func(w io.Writer, rep *compare.Report) error
	Points     func(w io.Writer, points []history.Point) error
	Findings   func(w io.Writer, series []history.Series) error
	// History draws analysed series (history show and analyze as plots): the command analyses
	// them first, and it then serves both Points and Findings.
	History func(w io.Writer, title string, series []history.Series) error
	// Machine writes a report of the machine: as JSON, or in its own text form.
	Machine func(w io.Writer, v any, text func(io.Writer) error) error
	// Reproduction writes the claims of a message beside their measurements.
	Reproduction func(w io.Writer, rr reproduce.Report) error
}

// Formats are every format, the default of each kind first.
var Formats = []Format{
	{Name: "table", Readable: true, Result: results.TableWith, Points: history.SeriesTable, Findings: history.FindingsTable, Machine: ownText, Reproduction: func(w io.Writer, rr reproduce.Report) error { return rr.WriteText(w) }},
	{Name: "netdev", Readable: true, Result: plain(results.Netdev)},
	{Name: "markdown", Readable: true, Markdown: true, Result: plain(results.Markdown)},
	{Name: "csv", Result: plain(results.CSV), Points: history.SeriesCSV, Findings: history.FindingsCSV},
	{Name: "json", Result: plain(results.Encode), Comparison: jsonOf[*compare.Report], Points: history.SeriesJSON, Findings: history.FindingsJSON, Machine: jsonMachine,
		Reproduction: func(w io.Writer, rr reproduce.Report) error { return jsonOf(w, rr.Result.Reproduction) }},
	{Name: "benchstat", Result: plain(results.Benchstat)},
	{Name: "junit", Result: plain(results.JUnit)},
	{Name: "ktap", Result: plain(results.KTAP)},
	{Name: "html", Result: plain(htmlreport.Result), Comparison: htmlreport.Compare, History: htmlreport.History},
}

// plain is a result's writer that takes no table options.
func plain(f func(io.Writer, *results.Result) error) func(io.Writer, *results.Result, results.TableOptions) error {
	return func(w io.Writer, r *results.Result, _ results.TableOptions) error { return f(w, r) }
}

// jsonOf writes v as indented JSON.
func jsonOf[T any](w io.Writer, v T) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func jsonMachine(w io.Writer, v any, _ func(io.Writer) error) error { return jsonOf(w, v) }

func ownText(w io.Writer, _ any, text func(io.Writer) error) error { return text(w) }

// has reports whether f writes output of kind k.
func (f Format) has(k Kind) bool {
	switch k {
	case Result:
		return f.Result != nil
	case Comparison:
		return f.Comparison != nil || f.Result != nil
	case Points:
		return f.Points != nil || f.History != nil
	case Findings:
		return f.Findings != nil || f.History != nil
	case Machine:
		return f.Machine != nil
	case Reproduction:
		return f.Reproduction != nil
	}
	return false
}

// Names are the formats that write output of kind k, the default first: the choices of a
// command's --format.
func Names(k Kind) []string {
	var out []string
	for _, f := range Formats {
		if f.has(k) {
			out = append(out, f.Name)
		}
	}
	return out
}

// Lookup is the format of a name for output of kind k.
func Lookup(name string, k Kind) (Format, error) {
	i := slices.IndexFunc(Formats, func(f Format) bool { return f.Name == name })
	if name == "" {
		i = slices.IndexFunc(Formats, func(f Format) bool { return f.has(k) })
	}
	if i < 0 || !Formats[i].has(k) {
		return Format{}, fmt.Errorf("format %q: want %s", name, strings.Join(Names(k), ", "))
	}
	return Formats[i], nil
}

// WriteResult writes a result in a format.
func WriteResult(w io.Writer, r *results.Result, name string, opt results.TableOptions) error {
	f, err := Lookup(name, Result)
	if err != nil {
		return err
	}
	return f.Result(w, r, opt)
}

// WriteComparison writes a comparison in a format: whole, or its header (above, or to
// diagnostics for the formats programs read) and then its merged result.
func WriteComparison(w, diagnostics io.Writer, rep *compare.Report, name string, opt results.TableOptions) error {
	f, err := Lookup(name, Comparison)
	if err != nil {
		return err
	}
	if f.Comparison != nil {
		return f.Comparison(w, rep)
	}
	head := diagnostics
	if f.Readable {
		head = w
	}
	rep.WriteHeader(head, f.Markdown)
	return f.Result(w, rep.Result, opt)
}

// Draws reports whether a history format draws analysed series (History) rather than
// writing points or findings: the command then analyses the series first.
func Draws(name string) bool {
	f, err := Lookup(name, Points)
	return err == nil && f.History != nil
}

// WritePoints writes a history's points (history show) in a format that does not draw.
func WritePoints(w io.Writer, points []history.Point, name string) error {
	f, err := Lookup(name, Points)
	if err != nil {
		return err
	}
	if f.Points == nil {
		return fmt.Errorf("format %s draws analysed series, not points", name)
	}
	return f.Points(w, points)
}

// WriteFindings writes change points (history analyze) in a format that does not draw.
func WriteFindings(w io.Writer, series []history.Series, name string) error {
	f, err := Lookup(name, Findings)
	if err != nil {
		return err
	}
	if f.Findings == nil {
		return fmt.Errorf("format %s draws analysed series, not findings", name)
	}
	return f.Findings(w, series)
}

// WriteHistory draws analysed series in a format that draws (Draws).
func WriteHistory(w io.Writer, title string, series []history.Series, name string) error {
	f, err := Lookup(name, Points)
	if err != nil {
		return err
	}
	if f.History == nil {
		return fmt.Errorf("format %s does not draw series", name)
	}
	return f.History(w, title, series)
}

// WriteMachine writes a report of the machine (check, probe): v as the format has it, text
// its own text form.
func WriteMachine(w io.Writer, v any, text func(io.Writer) error, name string) error {
	f, err := Lookup(name, Machine)
	if err != nil {
		return err
	}
	return f.Machine(w, v, text)
}

// WriteReproduction writes a message's claims beside their measurements in a format.
func WriteReproduction(w io.Writer, rr reproduce.Report, name string) error {
	f, err := Lookup(name, Reproduction)
	if err != nil {
		return err
	}
	return f.Reproduction(w, rr)
}
