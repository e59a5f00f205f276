package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/history/changepoint"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
)

const dbHelp = "history database: a file path or postgres://... (default: $NSPERF_DB, else ~/.local/share/nsperf/history.db)"

func historyCmd() *cobra.Command {
	h := &cobra.Command{
		Use:   "history",
		Short: "The history of results: import, list, show a series, remove",
	}
	db := &historyDB{}
	h.PersistentFlags().StringVar(&db.name, "db", "", dbHelp)
	h.AddCommand(historyImportCmd(db), historyListCmd(db), historyShowCmd(db), historyRmCmd(db), historyAnalyzeCmd(db), historyAckCmd(db), historyExportCmd(db))
	return h
}

// historyDB is the --db of the history commands.
type historyDB struct{ name string }

// open opens an existing history: reading commands never create one; import does.
func (d *historyDB) open(c *cobra.Command) (*history.DB, error) {
	store, err := history.OpenExisting(c.Context(), history.Resolve(d.name))
	if errors.Is(err, history.ErrNoHistory) {
		return nil, usageError{err}
	}
	return store, err
}

func historyImportCmd(db *historyDB) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE...",
		Short: "Record result files in the history; a run already there is skipped",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := history.Open(c.Context(), history.Resolve(db.name))
			if err != nil {
				return err
			}
			defer store.Close()
			var errs []error
			for _, path := range args {
				r, _, err := results.ReadFile(path)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				added, err := store.Import(c.Context(), r)
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("%s: %w", path, err))
				case added:
					fmt.Fprintf(c.OutOrStdout(), "imported %s: run %s (%s)\n", path, r.RunID, r.Scenario.Name)
				default:
					fmt.Fprintf(c.OutOrStdout(), "skipped %s: run %s is already in the history\n", path, r.RunID)
				}
			}
			return errors.Join(errs...)
		},
	}
}

func historyListCmd(db *historyDB) *cobra.Command {
	var filter history.Filter
	var since string
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List the runs in the history, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if since != "" {
				t, err := history.ParseSince(since)
				if err != nil {
					return usageError{err}
				}
				filter.Since = t
			}
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			runs, err := store.List(c.Context(), filter)
			if err != nil {
				return err
			}
			return history.WriteRuns(c.OutOrStdout(), runs)
		},
	}
	lf := listCmd.Flags()
	lf.StringVar(&filter.Scenario, "scenario", "", "only runs of this scenario")
	lf.StringVar(&filter.Label, "label", "", "only runs with this label")
	lf.StringVar(&filter.Kernel, "kernel", "", "only runs on this kernel release (or one that begins so, e.g. 6.18)")
	lf.StringVar(&since, "since", "", "only runs from this date on (2026-11-30, or RFC 3339)")
	lf.IntVar(&filter.Last, "last", 0, "only the newest N runs")
	return listCmd
}

func historyShowCmd(db *historyDB) *cobra.Command {
	var q history.Query
	var format string
	showCmd := &cobra.Command{
		Use:   "show SCENARIO",
		Short: "Show the series of a scenario: one line per run with n, median, CI and CV",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			q.Scenario = args[0]
			if render.Draws(format) {
				// The series as plots, with their change points at the defaults.
				series, err := store.Analyze(c.Context(), []string{q.Scenario}, changepoint.Options{})
				if err != nil {
					return err
				}
				return render.WriteHistory(c.OutOrStdout(), "nsperf history show "+q.Scenario, q.Filter(series), format)
			}
			points, err := store.Show(c.Context(), q)
			if err != nil {
				return err
			}
			return render.WritePoints(c.OutOrStdout(), points, format)
		},
	}
	sf := showCmd.Flags()
	sf.StringVar(&q.Case, "case", "", "only the matrix case with this label, e.g. mtu=8000")
	sf.StringVar(&q.Workload, "workload", "", "only this workload")
	sf.StringVar(&q.Metric, "metric", "", "only this metric, e.g. throughput")
	sf.StringVar(&q.State, "state", "", "only this state")
	formatFlag(sf, &format, render.Names(render.Points)...)
	return showCmd
}

func historyRmCmd(db *historyDB) *cobra.Command {
	return &cobra.Command{
		Use:   "rm RUNID",
		Short: "Remove a run from the history (its result file stays)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			n, err := store.Remove(c.Context(), args[0])
			if err != nil {
				return err
			}
			if n == 0 {
				return usageError{fmt.Errorf("run %s is not in the history %s", args[0], store.Name())}
			}
			fmt.Fprintf(c.OutOrStdout(), "removed run %s from %s (%d entries); its result file is untouched\n", args[0], store.Name(), n)
			return nil
		},
	}
}

func historyAnalyzeCmd(db *historyDB) *cobra.Command {
	var cpOpt changepoint.Options
	var failOnNew int
	var analyzeFormat string
	analyzeCmd := &cobra.Command{
		Use:   "analyze [SCENARIO...]",
		Short: "Find change points in every series of the history (E-divisive means, t-test), as regressions or improvements",
		RunE: func(c *cobra.Command, args []string) error {
			if cpOpt.PValue <= 0 || cpOpt.PValue >= 1 || cpOpt.Magnitude < 0 || cpOpt.MinSegment < 2 || cpOpt.Window < 2*cpOpt.MinSegment || failOnNew < 0 {
				return usageError{fmt.Errorf("want 0 < --p-value < 1, --magnitude >= 0, --min-segment >= 2, --window >= 2 x --min-segment, --fail-on-new >= 0")}
			}
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			series, err := store.Analyze(c.Context(), args, cpOpt)
			if err != nil {
				return err
			}
			if render.Draws(analyzeFormat) {
				err = render.WriteHistory(c.OutOrStdout(), "nsperf history analyze", series, analyzeFormat)
			} else {
				err = render.WriteFindings(c.OutOrStdout(), series, analyzeFormat)
			}
			if err != nil {
				return err
			}
			if failOnNew > 0 {
				if failing := history.Failing(series, failOnNew); len(failing) > 0 {
					return expectationError{append([]string{fmt.Sprintf("regressions in the last %d runs (acknowledge known ones with nsperf history ack):", failOnNew)}, failing...)}
				}
			}
			return nil
		},
	}
	af := analyzeCmd.Flags()
	af.Float64Var(&cpOpt.PValue, "p-value", changepoint.DefaultPValue, "a change point needs a t-test p below this")
	af.Float64Var(&cpOpt.Magnitude, "magnitude", 0, "and a change of at least this fraction, e.g. 0.02")
	af.IntVar(&cpOpt.MinSegment, "min-segment", changepoint.DefaultMinSegment, "runs on each side of a change point, at least (one outlying run is no change point)")
	af.IntVar(&cpOpt.Window, "window", changepoint.DefaultWindow, "runs per window of the split pass")
	af.IntVar(&failOnNew, "fail-on-new", 0, "exit 1 when an unacknowledged regression began in the last N runs of its series")
	formatFlag(af, &analyzeFormat, render.Names(render.Findings)...)
	return analyzeCmd
}

func historyAckCmd(db *historyDB) *cobra.Command {
	var ack history.Ack
	ackCmd := &cobra.Command{
		Use:   "ack RUNID --metric M --reason TEXT",
		Short: "Acknowledge a known change: the change point whose first run after is RUNID stays listed and stops failing --fail-on-new",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if ack.Metric == "" || strings.TrimSpace(ack.Reason) == "" {
				return usageError{fmt.Errorf("--metric and --reason are required: say which change is known and why")}
			}
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			ack.RunID = args[0]
			if err := store.Acknowledge(c.Context(), ack); err != nil {
				if errors.Is(err, history.ErrNotFound) {
					return usageError{err}
				}
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "acknowledged the change of %s at run %s: %s\n", ack.Metric, ack.RunID, ack.Reason)
			return nil
		},
	}
	kf := ackCmd.Flags()
	kf.StringVar(&ack.Metric, "metric", "", "the metric that changed, e.g. throughput")
	kf.StringVar(&ack.Workload, "workload", "", "only this workload (default: any)")
	kf.StringVar(&ack.State, "state", "", "only this state (default: any)")
	kf.StringVar(&ack.Case, "case", "", "only this matrix case (default: any)")
	kf.StringVar(&ack.Reason, "reason", "", "why the change is known, e.g. the commit that made it")
	return ackCmd
}

func historyExportCmd(db *historyDB) *cobra.Command {
	var exportFormat string
	exportCmd := &cobra.Command{
		Use:   "export SCENARIO --format csv",
		Short: "Export a scenario's history in the CSV layout Apache Otava imports: time, run_id, label, kernel, one column per series",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := db.open(c)
			if err != nil {
				return err
			}
			defer store.Close()
			series, err := store.Analyze(c.Context(), args, changepoint.Options{})
			if err != nil {
				return err
			}
			return history.Export(c.OutOrStdout(), series)
		},
	}
	formatFlag(exportCmd.Flags(), &exportFormat, "csv")
	return exportCmd
}

// recordRun adds a finished run's result to the history. The result file is written first
// and stays the source of truth: a database problem is a warning with the way to catch up.
func recordRun(ctx context.Context, stderr io.Writer, db string, r *results.Result, file string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	name := history.Resolve(db)
	store, err := history.Open(ctx, name)
	if err == nil {
		name = store.Name()
		_, err = store.Import(ctx, r)
		store.Close()
	}
	if err != nil {
		hint := "nsperf history import " + file
		if file == "" {
			hint = "save the result with --out FILE and run nsperf history import FILE"
		}
		fmt.Fprintf(stderr, "warning: the result is not in the history: %v (the result file is complete; to add it later: %s)\n", err, hint)
		return
	}
	fmt.Fprintf(stderr, "history: %s\n", name)
}
