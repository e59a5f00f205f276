package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nsperf/nsperf/results"
)

// Run is one run in the history.
type Run struct {
	RunID    string    `json:"run_id"`
	Start    time.Time `json:"start"`
	Scenario string    `json:"scenario"`
	Label    string    `json:"label,omitempty"`
	Kernel   string    `json:"kernel"`
	// Patch says how nsperf built the kernel: with or without a series, by its subjects.
	Patch string `json:"patch,omitempty"`
	// Claims counts the outcomes of the claims the run reproduced (nsperf reproduce).
	Claims   string `json:"claims,omitempty"`
	Hostname string `json:"hostname"`
	Complete bool   `json:"complete"`
}

// Import records a result: the run, a copy of its JSON and its summary series, in one
// transaction. A run already there (same run id and start) is left as it is: added is false.
func (h *DB) Import(ctx context.Context, r *results.Result) (added bool, err error) {
	if len(r.Kernels) > 0 {
		// An A/B run of two kernels is two runs, one per kernel, each with its own id and label.
		for _, k := range r.PerKernel() {
			a, err := h.Import(ctx, k)
			if err != nil {
				return added, err
			}
			added = added || a
		}
		return added, nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	started := formatTime(r.Start)
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return false, h.wrap(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, h.q(`INSERT INTO runs (run_id, started, scenario, sha256, label, kernel, hostname, complete, result, clock, patch, claims)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
		r.RunID, started, r.Scenario.Name, r.Scenario.SHA256, r.Label, r.Environment.KernelRelease, r.Environment.Hostname, boolInt(r.Complete), string(data), results.ClockOf(r).Key(), r.Build.Patch(), r.Reproduction.Summary())
	if err != nil {
		return false, h.wrap(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, h.wrap(err)
	}
	stmt, err := tx.PrepareContext(ctx, h.q(`INSERT INTO series (run_id, started, case_label, workload, metric, state, unit, n, median, lo, hi, cv)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return false, h.wrap(err)
	}
	defer stmt.Close()
	for _, c := range r.Cases {
		for _, s := range c.Summaries {
			if s.Stats.N == 0 {
				continue
			}
			if _, err := stmt.ExecContext(ctx, r.RunID, started, c.Label, s.Workload, s.Metric, s.State, s.Unit, s.Stats.N,
				s.Centre.Median, nullable(s.Centre.Lo), nullable(s.Centre.Hi), s.Stats.CV); err != nil {
				return false, h.wrap(err)
			}
		}
	}
	return true, h.wrap(tx.Commit())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullable(v *float64) sql.NullFloat64 {
	if v == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *v, Valid: true}
}

// Filter selects runs; zero fields select everything.
type Filter struct {
	Scenario string
	Label    string
	Kernel   string // a kernel release, or its beginning ("6.18")
	Since    time.Time
	Last     int // only the newest N
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Scenario != "" {
		conds, args = append(conds, "scenario = ?"), append(args, f.Scenario)
	}
	if f.Label != "" {
		conds, args = append(conds, "label = ?"), append(args, f.Label)
	}
	if f.Kernel != "" {
		// The release itself, or one it is the beginning of up to a separator: 6.1 selects
		// 6.1.0-57-amd64, not 6.18; % and _ are characters, not patterns.
		like := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(f.Kernel)
		conds = append(conds, `(kernel = ? OR kernel LIKE ? ESCAPE '\' OR kernel LIKE ? ESCAPE '\' OR kernel LIKE ? ESCAPE '\')`)
		args = append(args, f.Kernel, like+".%", like+"-%", like+"+%")
	}
	if !f.Since.IsZero() {
		conds, args = append(conds, "started >= ?"), append(args, formatTime(f.Since))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List returns the runs a filter selects, oldest first.
func (h *DB) List(ctx context.Context, f Filter) ([]Run, error) {
	where, args := f.where()
	query := `SELECT run_id, started, scenario, label, kernel, patch, claims, hostname, complete FROM runs` + where + ` ORDER BY started DESC, run_id DESC`
	if f.Last > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Last)
	}
	rows, err := h.db.QueryContext(ctx, h.q(query), args...)
	if err != nil {
		return nil, h.wrap(err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started string
		var complete int
		if err := rows.Scan(&r.RunID, &started, &r.Scenario, &r.Label, &r.Kernel, &r.Patch, &r.Claims, &r.Hostname, &complete); err != nil {
			return nil, h.wrap(err)
		}
		r.Start, r.Complete = parseTime(started), complete != 0
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, h.wrap(err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// ErrNotFound is a run the history does not have.
var ErrNotFound = errors.New("not in the history")

// Find returns the newest result whose run id, or else whose label, is ref.
func (h *DB) Find(ctx context.Context, ref string) (*results.Result, error) {
	var data string
	err := h.db.QueryRowContext(ctx, h.q(`SELECT result FROM runs WHERE run_id = ? ORDER BY started DESC LIMIT 1`), ref).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		err = h.db.QueryRowContext(ctx, h.q(`SELECT result FROM runs WHERE label = ? ORDER BY started DESC LIMIT 1`), ref).Scan(&data)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run id or label %q: %w %s (`nsperf history list` shows what is)", ref, ErrNotFound, h.name)
	}
	if err != nil {
		return nil, h.wrap(err)
	}
	var r results.Result
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return nil, h.wrap(fmt.Errorf("run %s: stored result: %w", ref, err))
	}
	if err := r.Recompute(); err != nil {
		return nil, h.wrap(err)
	}
	return &r, nil
}

// Remove deletes every run with a run id from the history (not its result file), and says
// how many there were.
func (h *DB) Remove(ctx context.Context, runID string) (int, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, h.wrap(err)
	}
	defer tx.Rollback()
	for _, table := range []string{"series", "acks"} {
		if _, err := tx.ExecContext(ctx, h.q(`DELETE FROM `+table+` WHERE run_id = ?`), runID); err != nil {
			return 0, h.wrap(err)
		}
	}
	res, err := tx.ExecContext(ctx, h.q(`DELETE FROM runs WHERE run_id = ?`), runID)
	if err != nil {
		return 0, h.wrap(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, h.wrap(err)
	}
	return int(n), h.wrap(tx.Commit())
}
