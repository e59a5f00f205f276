package history

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nsperf/nsperf/history/changepoint"
	"github.com/nsperf/nsperf/internal/csvtext"
	"github.com/nsperf/nsperf/results"
)

// Series is one item of one scenario over the history: a run's median per point, oldest
// first, with the change points found in it.
type Series struct {
	Scenario string `json:"scenario"`
	Case     string `json:"case,omitempty"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	State    string `json:"state"`
	Unit     string `json:"unit"`
	// Clock is the runs' clock: a series never mixes virtual-time and wall-clock figures.
	Clock        string                    `json:"clock"`
	Points       []Point                   `json:"points"`
	ChangePoints []changepoint.ChangePoint `json:"-"`
	Findings     []Finding                 `json:"findings,omitempty"`
	// Gated: the metric is a gate of its workload in the scenario's newest run (every metric
	// of runs recorded before gates existed): only gated regressions fail --fail-on-new.
	Gated bool `json:"gated"`
}

// Name is the series as messages and columns name it: "[mtu=8000] tcp4 throughput on".
func (s Series) Name() string {
	name := fmt.Sprintf("%s %s %s", s.Workload, s.Metric, s.State)
	if s.Case != "" {
		name = "[" + s.Case + "] " + name
	}
	if s.Clock != "" && s.Clock != "wall" {
		name += " (" + s.Clock + ")"
	}
	return name
}

// Finding is a change point read for a person: the runs on either side, the levels, and
// whether it is a regression.
type Finding struct {
	Before       Point   `json:"before"` // the last run of the old level
	After        Point   `json:"after"`  // the first run of the new level
	LevelBefore  float64 `json:"level_before"`
	LevelAfter   float64 `json:"level_after"`
	Change       float64 `json:"change"`
	FromZero     bool    `json:"from_zero,omitempty"` // a rise from a level of 0: no ratio, Change is 0
	P            float64 `json:"p"`
	Kind         string  `json:"kind"` // regression or improvement
	RunsAgo      int     `json:"runs_ago"`
	Acknowledged string  `json:"acknowledged,omitempty"` // the reason, when acknowledged
}

// Kinds of findings.
const (
	Regression  = "regression"
	Improvement = "improvement"
	Change      = "change" // of a metric with no better direction
)

// Analyze finds the change points of every series of the given scenarios (all when none).
func (h *DB) Analyze(ctx context.Context, scenarioNames []string, opt changepoint.Options) ([]Series, error) {
	if len(scenarioNames) == 0 {
		rows, err := h.db.QueryContext(ctx, `SELECT DISTINCT scenario FROM runs ORDER BY scenario`)
		if err != nil {
			return nil, h.wrap(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return nil, h.wrap(err)
			}
			scenarioNames = append(scenarioNames, s)
		}
		rows.Close()
	}
	acks, err := h.acks(ctx)
	if err != nil {
		return nil, err
	}
	var out []Series
	for _, name := range scenarioNames {
		points, err := h.Show(ctx, Query{Scenario: name})
		if err != nil {
			return nil, err
		}
		gates, err := h.newestGates(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, s := range group(name, points) {
			s.Gated = gates == nil || slices.Contains(gates[s.Workload], s.Metric)
			s.analyze(opt, acks)
			out = append(out, s)
		}
	}
	return out, nil
}

// newestGates are the gated metrics of a scenario's newest run, by workload; nil when that run
// recorded none (every metric then counts).
func (h *DB) newestGates(ctx context.Context, scenario string) (map[string][]string, error) {
	var data string
	err := h.db.QueryRowContext(ctx, h.q(`SELECT result FROM runs WHERE scenario = ? ORDER BY started DESC LIMIT 1`), scenario).Scan(&data)
	if err != nil {
		return nil, h.wrap(err)
	}
	var r struct {
		Settings struct {
			Gates map[string][]string `json:"gates"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return nil, h.wrap(fmt.Errorf("scenario %s: newest stored result: %w", scenario, err))
	}
	return r.Settings.Gates, nil
}

// group splits a scenario's points into series; Show orders them by item, then time.
func group(scenario string, points []Point) []Series {
	var out []Series
	for _, p := range points {
		n := len(out)
		if n == 0 || out[n-1].Case != p.Case || out[n-1].Workload != p.Workload || out[n-1].Metric != p.Metric || out[n-1].State != p.State || out[n-1].Clock != p.Clock {
			out = append(out, Series{Scenario: scenario, Case: p.Case, Workload: p.Workload, Metric: p.Metric, State: p.State, Unit: p.Unit, Clock: p.Clock})
			n++
		}
		out[n-1].Points = append(out[n-1].Points, p)
	}
	return out
}

func (s *Series) analyze(opt changepoint.Options, acks []Ack) {
	xs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i] = p.Median
	}
	s.ChangePoints = changepoint.Detect(xs, opt)
	for _, cp := range s.ChangePoints {
		f := Finding{Before: s.Points[cp.Index-1], After: s.Points[cp.Index], LevelBefore: cp.Before, LevelAfter: cp.After,
			Change: cp.Change, FromZero: cp.FromZero, P: cp.P, Kind: Improvement, RunsAgo: len(xs) - cp.Index}
		switch dir := results.DirectionOf(s.Metric); {
		case dir == results.NoDirection:
			f.Kind = Change // raw CPU utilisation: neither better nor worse by itself
		case (cp.After-cp.Before)*float64(dir) < 0:
			f.Kind = Regression
		}
		for _, a := range acks {
			if a.covers(*s, f.After.RunID) {
				f.Acknowledged = a.Reason
			}
		}
		s.Findings = append(s.Findings, f)
	}
}

// Failing returns the unacknowledged regressions of gated metrics whose new level began in the
// last n runs of their series (the CI use: a change point a new run made). Other metrics'
// change points are listed, never failing, as in a run.
func Failing(series []Series, n int) []string {
	var out []string
	for _, s := range series {
		for _, f := range s.Findings {
			if s.Gated && f.Kind == Regression && f.Acknowledged == "" && f.RunsAgo <= n {
				out = append(out, fmt.Sprintf("%s %s: %s from run %s (p=%.2g)", s.Scenario, s.Name(), f.ChangeText(), f.After.RunID, f.P))
			}
		}
	}
	return out
}

// ChangeText is a finding's change as the reports print it: "+12.3%", or "from 0" where the
// level before was 0 and no ratio exists.
func (f Finding) ChangeText() string {
	if f.FromZero {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*f.Change)
}

// FindingsJSON writes the series with change points as JSON, without their points.
func FindingsJSON(w io.Writer, series []Series) error {
	var with []Series
	for _, s := range series {
		if len(s.Findings) > 0 {
			s.Points = nil
			with = append(with, s)
		}
	}
	if with == nil {
		with = []Series{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(with)
}

// FindingsCSV writes a row per change point.
func FindingsCSV(w io.Writer, series []Series) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "case", "workload", "metric", "state", "kind", "change", "p", "level_before", "level_after", "unit",
		"before_run", "before_time", "before_label", "before_kernel", "after_run", "after_time", "after_label", "after_kernel", "runs_ago", "acknowledged"})
	for _, s := range series {
		for _, f := range s.Findings {
			change := fmt.Sprint(f.Change)
			if f.FromZero {
				change = "" // from 0: no ratio, and 0 would say no change
			}
			cw.Write([]string{csvtext.Text(s.Scenario), csvtext.Text(s.Case), s.Workload, s.Metric, s.State, f.Kind, change, fmt.Sprint(f.P), fmt.Sprint(f.LevelBefore), fmt.Sprint(f.LevelAfter), s.Unit,
				f.Before.RunID, f.Before.Start.Format(time.RFC3339), csvtext.Text(f.Before.Label), csvtext.Text(f.Before.Kernel), f.After.RunID, f.After.Start.Format(time.RFC3339), csvtext.Text(f.After.Label), csvtext.Text(f.After.Kernel),
				strconv.Itoa(f.RunsAgo), csvtext.Text(f.Acknowledged)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// FindingsTable writes a line per change point and how many there are.
func FindingsTable(w io.Writer, series []Series) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tseries\tchange\tp\tbefore -> after\tlast run before\tfirst run after\t")
	n, total := 0, 0
	for _, s := range series {
		total++
		for _, f := range s.Findings {
			n++
			kind := f.Kind
			if f.Acknowledged != "" {
				kind += " (acknowledged: " + f.Acknowledged + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s %s\t%.2g\t%s -> %s\t%s\t%s\t\n", s.Scenario, s.Name(), f.ChangeText(), kind, f.P,
				results.FormatValue(f.LevelBefore, s.Unit), results.FormatValue(f.LevelAfter, s.Unit), runLine(f.Before), runLine(f.After))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d change points in %d series\n", n, total)
	return nil
}

func runLine(p Point) string {
	parts := []string{p.RunID, p.Start.UTC().Format("2006-01-02 15:04")}
	if p.Label != "" {
		parts = append(parts, p.Label)
	}
	return strings.Join(append(parts, p.Kernel), " ")
}

// Ack acknowledges a known change: the change point whose first run after is RunID, in the
// series it names ("" matches any case, workload or state).
type Ack struct {
	RunID    string `json:"run_id"`
	Case     string `json:"case,omitempty"`
	Workload string `json:"workload,omitempty"`
	Metric   string `json:"metric"`
	State    string `json:"state,omitempty"`
	Reason   string `json:"reason"`
}

func (a Ack) covers(s Series, runID string) bool {
	match := func(want, have string) bool { return want == "" || want == have }
	return a.RunID == runID && a.Metric == s.Metric && match(a.Case, s.Case) && match(a.Workload, s.Workload) && match(a.State, s.State)
}

// Acknowledge stores an acknowledgement; a second one of the same change replaces the reason.
func (h *DB) Acknowledge(ctx context.Context, a Ack) error {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return h.wrap(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, h.q(`SELECT COUNT(*) FROM runs WHERE run_id = ?`), a.RunID).Scan(&n); err != nil {
		return h.wrap(err)
	}
	if n == 0 {
		return fmt.Errorf("run %s: %w %s", a.RunID, ErrNotFound, h.name)
	}
	if _, err := tx.ExecContext(ctx, h.q(`DELETE FROM acks WHERE run_id = ? AND case_label = ? AND workload = ? AND metric = ? AND state = ?`),
		a.RunID, a.Case, a.Workload, a.Metric, a.State); err != nil {
		return h.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, h.q(`INSERT INTO acks (run_id, case_label, workload, metric, state, reason, acked) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		a.RunID, a.Case, a.Workload, a.Metric, a.State, a.Reason, formatTime(time.Now())); err != nil {
		return h.wrap(err)
	}
	return h.wrap(tx.Commit())
}

func (h *DB) acks(ctx context.Context) ([]Ack, error) {
	rows, err := h.db.QueryContext(ctx, `SELECT run_id, case_label, workload, metric, state, reason FROM acks ORDER BY acked`)
	if err != nil {
		return nil, h.wrap(err)
	}
	defer rows.Close()
	var out []Ack
	for rows.Next() {
		var a Ack
		if err := rows.Scan(&a.RunID, &a.Case, &a.Workload, &a.Metric, &a.State, &a.Reason); err != nil {
			return nil, h.wrap(err)
		}
		out = append(out, a)
	}
	return out, h.wrap(rows.Err())
}

// Export writes a scenario's history in the CSV layout Apache Otava's CSV importer reads: a
// time column, the attribute columns run_id, label and kernel, then one column per series
// (case/workload/metric/state) holding each run's median.
func Export(w io.Writer, series []Series) error {
	type row struct {
		p      Point
		values map[string]string
	}
	rows := map[string]*row{}
	var keys, columns []string
	for _, s := range series {
		col := strings.Join(slices.DeleteFunc([]string{s.Case, s.Workload, s.Metric, s.State}, func(x string) bool { return x == "" }), ".")
		columns = append(columns, col)
		for _, p := range s.Points {
			key := p.Start.UTC().Format(timeFormat) + " " + p.RunID
			r := rows[key]
			if r == nil {
				r = &row{p: p, values: map[string]string{}}
				rows[key] = r
				keys = append(keys, key)
			}
			r.values[col] = strconv.FormatFloat(p.Median, 'g', -1, 64)
		}
	}
	slices.Sort(keys)
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"time", "run_id", "label", "kernel"}, columns...))
	for _, k := range keys {
		r := rows[k]
		line := []string{r.p.Start.UTC().Format(time.RFC3339), r.p.RunID, csvtext.Text(r.p.Label), csvtext.Text(r.p.Kernel)}
		for _, c := range columns {
			line = append(line, r.values[c])
		}
		cw.Write(line)
	}
	cw.Flush()
	return cw.Error()
}
