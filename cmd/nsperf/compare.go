package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

func compareCmd() *cobra.Command {
	var format, db, expectFile string
	var pairs []string
	var opt compare.Options
	var table results.TableOptions
	c := &cobra.Command{
		Use:   "compare BASE NEW [NEW...] | compare AB_RESULT",
		Short: "Compare stored results across runs (e.g. kernels): each NEW against BASE, per state, workload and metric",
		Long: "Compare stored results across runs. BASE and NEW are result files (or journals), or run ids or labels\n" +
			"of the history. By default every state the results share is compared by name; --state BASE:NEW\n" +
			"compares a state of BASE with a state of each NEW instead (repeatable). The result of an A/B run of two\n" +
			"kernels (run --kernel A --kernel B) takes part as its two kernels.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			for _, p := range pairs {
				base, new, ok := strings.Cut(p, ":")
				if !ok || base == "" || new == "" {
					return usageError{fmt.Errorf("--state %q: want BASE_STATE:NEW_STATE, e.g. off:on", p)}
				}
				opt.Pairs = append(opt.Pairs, compare.StatePair{Base: base, New: new})
			}
			if expectFile != "" {
				exps, err := scenarios.LoadExpectations(expectFile)
				if err != nil {
					return usageError{err}
				}
				opt.Expect = exps
			}
			sides, closeDB, err := loadSides(c, args, db)
			defer closeDB()
			if err != nil {
				return err
			}
			if len(sides) < 2 {
				return usageError{errors.New("compare needs a base and at least one result to compare with it (or one result of an A/B run of two kernels)")}
			}
			rep, err := compare.New(sides, opt)
			if err != nil {
				if rep != nil {
					rep.WriteHeader(c.ErrOrStderr(), false)
				}
				return err
			}
			if err := render.WriteComparison(c.OutOrStdout(), c.ErrOrStderr(), rep, format, table); err != nil {
				return err
			}
			for _, n := range rep.Result.Notes() {
				fmt.Fprintln(c.ErrOrStderr(), "note: "+n)
			}
			if failures := rep.Result.Failures(); len(failures) > 0 {
				return expectationError{failures}
			}
			return nil
		},
	}
	f := c.Flags()
	formatFlag(f, &format, render.Names(render.Comparison)...)
	sideMetricsFlag(f, &table)
	f.StringArrayVar(&pairs, "state", nil, "compare state BASE_STATE of BASE with state NEW_STATE of each NEW, as BASE_STATE:NEW_STATE (repeatable)")
	f.BoolVar(&opt.Force, "force", false, "compare even when the scenarios differ in topology, device settings or tool arguments")
	f.StringArrayVar(&opt.Metrics, "metric", nil, "compare only this metric, e.g. throughput (repeatable; default: every metric)")
	f.StringVar(&expectFile, "expect", "", "expectations (a YAML list, as under expect: in a scenario) instead of the base scenario's")
	f.Float64Var(&opt.Policy.Alpha, "alpha", 0, "significance level (default: the base run's, else 0.05)")
	f.Float64Var(&opt.Policy.MinChange, "min-change", 0, "smallest change that matters (default: the base run's)")
	f.Float64Var(&opt.Policy.CVLimit, "cv-limit", 0, "CV above which an insignificant comparison is too noisy (default: the base run's, else 0.05)")
	f.StringVar(&db, "db", "", dbHelp)
	return c
}

// loadSides reads every result to compare; an A/B run of two kernels takes part as its
// kernels. closeDB closes the history if one was opened.
func loadSides(c *cobra.Command, args []string, db string) (sides []compare.Side, closeDB func(), err error) {
	var store *history.DB
	closeDB = func() {
		if store != nil {
			store.Close()
		}
	}
	for _, arg := range args {
		r, source, err := loadResult(c, arg, db, &store)
		if err != nil {
			return nil, closeDB, err
		}
		sides = append(sides, compare.SidesOf(r, source)...)
	}
	return sides, closeDB, nil
}

// loadResult reads a result file, or else finds a run id or label in the history (opened on
// first use).
func loadResult(c *cobra.Command, arg, db string, store **history.DB) (*results.Result, string, error) {
	if _, err := os.Lstat(arg); !errors.Is(err, fs.ErrNotExist) {
		r, warnings, err := results.ReadFile(arg)
		for _, w := range warnings {
			fmt.Fprintf(c.ErrOrStderr(), "warning: %s: %s\n", arg, w)
		}
		return r, arg, err
	}
	var err error
	if *store == nil {
		if *store, err = history.OpenExisting(c.Context(), history.Resolve(db)); err != nil {
			if errors.Is(err, history.ErrNoHistory) {
				return nil, "", usageError{fmt.Errorf("%s: no such file, and %w", arg, err)}
			}
			return nil, "", err
		}
	}
	r, err := (*store).Find(c.Context(), arg)
	if errors.Is(err, history.ErrNotFound) {
		return nil, "", usageError{fmt.Errorf("%s: no such file, and %w", arg, err)}
	}
	return r, "history " + arg, err
}
