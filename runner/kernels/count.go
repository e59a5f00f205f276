package kernels

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
)

// CountRunLength is each run's length in the counting pass: long enough for every path the
// workload takes to be taken many times, short beside the measured runs.
const CountRunLength = time.Second

// countMethod says how the calls were counted, in the result.
var countMethod = fmt.Sprintf("kprobe events (tracefs kprobe_profile), in a pass of one %s run per state and workload before the measured runs, which run without probes", CountRunLength)

// countPassLength is what the counting pass adds to a scenario's measuring time.
func countPassLength(s *scenarios.Scenario) time.Duration {
	var total time.Duration
	for _, c := range s.Expand() {
		total += CountRunLength * time.Duration(len(c.Scenario.States)*len(c.Scenario.Workloads))
	}
	return total
}

// countCalls runs the counting pass here: the plan's scenario once more, each state applied
// and each workload run once for CountRunLength, with a kprobe on each of the patch's
// functions, the calls attributed to setup, each state and teardown. The pass is not a
// measurement: its result is not kept, and the measured runs after it run without probes
// (a probe's hit costs the measured path). What cannot be counted is said in the coverage.
func countCalls(ctx context.Context, p Plan) *results.Coverage {
	began := time.Now()
	cov := &results.Coverage{Method: countMethod, Truncated: p.CountTruncated}
	defer func() { cov.Seconds = time.Since(began).Seconds() }()
	fail := func(err error) *results.Coverage {
		cov.Error = err.Error()
		return cov
	}
	kallsyms, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return fail(fmt.Errorf("reading /proc/kallsyms: %w", err))
	}
	resolved, err := coverage.Resolve(bytes.NewReader(kallsyms), p.Count)
	if err != nil {
		return fail(err)
	}
	s, err := countScenario(p)
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "nsperf-count-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	counter, err := coverage.Start(resolved, results.PhaseSetup)
	if err != nil {
		return fail(err)
	}
	opt := runner.Options{Out: filepath.Join(dir, "count.json"), Label: p.Run.Label, Machine: p.Run.Machine, Idle: runner.IdleGate{Limit: -1},
		VirtualTime: p.Run.VirtualTime, StatesOptional: p.Run.StatesOptional, Concurrent: true, Phase: counter.Mark, Built: p.Run.Built}
	_, runErr := runner.Run(ctx, s, opt)
	calls, stopErr := counter.Stop()
	cov.Functions = calls
	if runErr != nil && ctx.Err() == nil {
		// The pass measures nothing: a failed run of it says only that some counts are short.
		cov.Error = fmt.Sprintf("the counting pass ended early (%v): the counts are of what ran until then", runErr)
	}
	if stopErr != nil {
		cov.Error = fmt.Sprintf("%s; removing the probes: %v", cov.Error, stopErr)
	}
	return cov
}

// countScenario is the plan's scenario as the counting pass runs it: loaded again from its
// text with the same changes, then one run per state and workload of CountRunLength, nothing
// left out at the start.
func countScenario(p Plan) (*scenarios.Scenario, error) {
	s, err := scenarios.Parse(p.Scenario.File, p.Scenario.Text, scenarios.Options{})
	if err != nil {
		return nil, fmt.Errorf("the counting pass's scenario: %w", err)
	}
	o := p.Overrides
	o.Auto, o.MaxRuns, o.Runs, o.Duration, o.Omit = false, 0, 1, CountRunLength, 0
	if err := o.Apply(s); err != nil {
		return nil, fmt.Errorf("the counting pass's scenario: %w", err)
	}
	return s, nil
}

// plural is "1 function" or "3 functions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// traceMethod says how the functions that ran were found, in the result.
const traceMethod = "ftrace's function tracer on the source's network functions (set_ftrace_filter by index), trace_pipe drained while the scenario ran"

// traceRun runs the plan's scenario here with the function tracer on the plan's functions and
// records in the result which of them ran. Tracing costs every traced call: the figures of
// such a run say nothing, its functions do.
func traceRun(ctx context.Context, p Plan) (*results.Result, error) {
	names := make(map[string]bool, len(p.Trace))
	for _, n := range p.Trace {
		names[n] = true
	}
	tr := &results.Trace{Method: traceMethod}
	tracer, err := coverage.StartTrace(names)
	if err != nil {
		tr.Error = err.Error()
	}
	annotate := p.Run.Annotate
	p.Run.Annotate = func(r *results.Result) {
		if tracer != nil {
			var stopErr error
			tr.Functions, tr.LostEvents, stopErr = tracer.Stop()
			tracer = nil
			if stopErr != nil {
				tr.Error = stopErr.Error()
			}
		}
		r.Trace = tr
		r.Warnings = append(r.Warnings, "traced: every traced function's call cost time, so these figures are not a measurement")
		if annotate != nil {
			annotate(r)
		}
	}
	r, err := runner.Run(ctx, p.Scenario, p.Run)
	if tracer != nil { // the run ended before its result was annotated
		tracer.Stop()
	}
	return r, err
}
