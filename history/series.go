package history

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nsperf/nsperf/internal/csvtext"
	"github.com/nsperf/nsperf/results"
)

// Query selects the series of one scenario; empty fields select every value.
type Query struct {
	Scenario string
	Case     string // the matrix label, e.g. "mtu=8000"
	Workload string
	Metric   string
	State    string
}

// Filter keeps the series a query selects (its scenario aside).
func (q Query) Filter(series []Series) []Series {
	var out []Series
	for _, s := range series {
		if (q.Case == "" || q.Case == s.Case) && (q.Workload == "" || q.Workload == s.Workload) && (q.Metric == "" || q.Metric == s.Metric) && (q.State == "" || q.State == s.State) {
			out = append(out, s)
		}
	}
	return out
}

// Point is one run's summary of one item (case, workload, metric, state).
type Point struct {
	Case     string    `json:"case,omitempty"`
	Workload string    `json:"workload"`
	Metric   string    `json:"metric"`
	State    string    `json:"state"`
	Unit     string    `json:"unit"`
	Start    time.Time `json:"start"`
	RunID    string    `json:"run_id"`
	Label    string    `json:"label,omitempty"`
	Kernel   string    `json:"kernel"`
	// Clock is the run's clock (results.Clock.Key): "wall", or "virtual icount=... qemu=...".
	Clock  string   `json:"clock"`
	N      int      `json:"n"`
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo,omitempty"`
	Hi     *float64 `json:"hi,omitempty"`
	CV     float64  `json:"cv"`
}

// Show returns the series of a scenario: per item, one point per run, oldest first.
func (h *DB) Show(ctx context.Context, q Query) ([]Point, error) {
	conds, args := []string{"r.scenario = ?"}, []any{q.Scenario}
	for _, f := range []struct{ col, v string }{{"s.case_label", q.Case}, {"s.workload", q.Workload}, {"s.metric", q.Metric}, {"s.state", q.State}} {
		if f.v != "" {
			conds, args = append(conds, f.col+" = ?"), append(args, f.v)
		}
	}
	rows, err := h.db.QueryContext(ctx, h.q(`SELECT s.case_label, s.workload, s.metric, s.state, s.unit, s.started, s.run_id, r.label, r.kernel, r.clock, s.n, s.median, s.lo, s.hi, s.cv
		FROM series s JOIN runs r ON r.run_id = s.run_id AND r.started = s.started
		WHERE `+strings.Join(conds, " AND ")+`
		ORDER BY s.case_label, s.workload, s.metric, s.state, r.clock, s.started, s.run_id`), args...)
	if err != nil {
		return nil, h.wrap(err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var started string
		var lo, hi sql.NullFloat64
		if err := rows.Scan(&p.Case, &p.Workload, &p.Metric, &p.State, &p.Unit, &started, &p.RunID, &p.Label, &p.Kernel, &p.Clock, &p.N, &p.Median, &lo, &hi, &p.CV); err != nil {
			return nil, h.wrap(err)
		}
		p.Start = parseTime(started)
		if lo.Valid {
			p.Lo = &lo.Float64
		}
		if hi.Valid {
			p.Hi = &hi.Float64
		}
		out = append(out, p)
	}
	return out, h.wrap(rows.Err())
}

// SeriesJSON writes points as JSON (an empty list for none).
func SeriesJSON(w io.Writer, points []Point) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if points == nil {
		points = []Point{}
	}
	return enc.Encode(points)
}

// SeriesCSV writes points as CSV, a row per run and item.
func SeriesCSV(w io.Writer, points []Point) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"case", "workload", "metric", "state", "unit", "start", "run_id", "label", "kernel", "n", "median", "ci_lo", "ci_hi", "cv", "clock"})
	for _, p := range points {
		cw.Write([]string{csvtext.Text(p.Case), p.Workload, p.Metric, p.State, p.Unit, p.Start.Format(time.RFC3339), p.RunID, csvtext.Text(p.Label), csvtext.Text(p.Kernel),
			strconv.Itoa(p.N), fmt.Sprint(p.Median), optional(p.Lo), optional(p.Hi), fmt.Sprint(p.CV), csvtext.Text(p.Clock)})
	}
	cw.Flush()
	return cw.Error()
}

// SeriesTable writes points as text: a block per item, a line per run.
func SeriesTable(w io.Writer, points []Point) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	item := ""
	for _, p := range points {
		if key := strings.Join([]string{p.Case, p.Workload, p.Metric, p.State, p.Clock}, "\x00"); key != item {
			if item != "" {
				fmt.Fprintln(tw)
			}
			item = key
			head := fmt.Sprintf("%s %s, state %s", p.Workload, p.Metric, p.State)
			if p.Case != "" {
				head = "[" + p.Case + "] " + head
			}
			if p.Clock != "" && p.Clock != "wall" {
				head += ", " + p.Clock
			}
			fmt.Fprintln(tw, head)
			fmt.Fprintln(tw, "time (UTC)\trun\tlabel\tkernel\tn\tmedian\t95% CI\tCV")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%.2f%%\n", p.Start.UTC().Format("2006-01-02 15:04"), p.RunID, orDash(p.Label), p.Kernel,
			p.N, results.FormatValue(p.Median, p.Unit), ci(p), 100*p.CV)
	}
	if len(points) == 0 {
		fmt.Fprintln(tw, "no runs")
	}
	return tw.Flush()
}

func optional(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ci prints the interval as ± the larger distance from the median, in percent, as the run
// table does.
func ci(p Point) string {
	if p.Lo == nil || p.Hi == nil || p.Median == 0 {
		return "n/a"
	}
	spread := math.Max(*p.Hi/p.Median-1, 1-*p.Lo/p.Median)
	if !results.FinitePercent(spread) {
		return "n/a" // a median so near 0 that its interval is no percentage of it
	}
	return fmt.Sprintf("±%.1f%%", 100*spread)
}

// WriteRuns renders runs as a table.
func WriteRuns(w io.Writer, runs []Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "time (UTC)\trun\tscenario\tlabel\tkernel\tpatch\tclaims\thost\tcomplete")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n", r.Start.UTC().Format("2006-01-02 15:04:05"), r.RunID, r.Scenario, orDash(r.Label), r.Kernel, orDash(r.Patch), orDash(r.Claims), r.Hostname, r.Complete)
	}
	return tw.Flush()
}
