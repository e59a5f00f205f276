package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/vm"
)

const bisectScenario = "testdata/bisect.yaml"

// TestBisectCodes: every exit code of a run maps to what git bisect run expects.
func TestBisectCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, bisectGood},
		{usageError{errors.New("bad flag")}, bisectAbort},
		{&compare.IncomparableError{}, bisectAbort},
		{&capability.Error{Reasons: []string{"no vxlan"}}, bisectSkip},
		{&vm.MissingConfigError{Config: ".config"}, bisectSkip},
		{&vm.BootError{Err: vm.ErrBootTimeout}, bisectSkip},
		{runner.ErrRunsFailed, bisectSkip},
		{errors.New("anything else"), bisectSkip},
		{fmt.Errorf("stopped: %w", context.Canceled), exitInterrupted},
	} {
		if got := bisectCode(tc.err); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
	// A step's code is the process's exit status.
	if got := exitCode(bisectExit{code: bisectBad, err: errors.New("bad")}); got != bisectBad {
		t.Errorf("exitCode(bisectExit 1) = %d", got)
	}
}

// TestBisectVerdict: against the baseline, a gated regression beyond the minimum change is
// bad, a change within the noise good; a state the good kernel applied and this one cannot
// is bad, naming the capability; one neither applies skips; a step too short to decide
// skips with the reason (issue 31, items 7 and 8).
func TestBisectVerdict(t *testing.T) {
	good := bisectResult("nsp0001", []float64{10, 10.2, 9.9, 10.1, 10.0}, "")
	for _, tc := range []struct {
		name string
		r    *results.Result
		want int
	}{
		{"same", bisectResult("nsp0002", []float64{10.1, 9.9, 10.0, 10.2, 10.0}, ""), bisectGood},
		{"regressed", bisectResult("nsp0003", []float64{6.1, 6.0, 6.2, 5.9, 6.0}, ""), bisectBad},
		{"improved", bisectResult("nsp0004", []float64{12.1, 12.0, 12.2, 11.9, 12.0}, ""), bisectGood},
		{"capability lost", bisectResult("nsp0005", nil, "gso_max_size 185000 > tso_max_size 8192 of client/eth0"), bisectBad},
		{"undecidable", bisectResult("nsp0006", []float64{6.1, 6.0}, ""), bisectSkip},
	} {
		var out bytes.Buffer
		c := &cobra.Command{}
		c.SetOut(&out)
		got, err := bisectVerdict(c, good, tc.r, "good.json")
		if got != tc.want {
			t.Errorf("%s: %d (%v), want %d\n%s", tc.name, got, err, tc.want, out.String())
		}
		switch tc.name {
		case "capability lost":
			if !strings.Contains(out.String(), "bisect: bad: lost capability: state default applied on the good kernel, not on this one: gso_max_size 185000 > tso_max_size 8192") {
				t.Errorf("the lost capability is not named:\n%s", out.String())
			}
		case "undecidable":
			if !strings.Contains(out.String(), "bisect: skip: tcp4 throughput default@B vs default@A undecided") {
				t.Errorf("the skip does not say why:\n%s", out.String())
			}
		}
	}
	// Neither kernel applies the state: nothing to judge, skip.
	lacking := bisectResult("nsp0007", nil, "gso_max_size 185000 > tso_max_size 8192 of client/eth0")
	if got, _ := bisectVerdict(&cobra.Command{}, lacking, bisectResult("nsp0008", nil, "the same"), "good.json"); got != bisectSkip {
		t.Errorf("a state neither kernel applies: %d, want skip", got)
	}
}

// TestBisectBaselineMustDecide: a known-good result that no step could be decided against is
// refused before anything measures: a 1-run baseline (a 40% regression exited 0 against it),
// one without a successful sample, one of another scenario text (issue 31, item 8).
func TestBisectBaselineMustDecide(t *testing.T) {
	s, err := scenarios.Load(bisectScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := compare.BaselineCanDecide(bisectResult("nsp0001", []float64{10, 10.2, 9.9, 10.1, 10.0}, ""), s, 0.05); err != nil {
		t.Errorf("a 5-run baseline: %v", err)
	}
	failed := bisectResult("nsp0002", []float64{10, 10}, "")
	for i := range failed.Cases[0].Samples {
		failed.Cases[0].Samples[i].Error = "iperf3 client timed out"
	}
	edited := bisectResult("nsp0003", []float64{10, 10.2, 9.9, 10.1, 10.0}, "")
	edited.Scenario.Text += "# edited\n"
	for _, tc := range []struct {
		name string
		base *results.Result
		want string
	}{
		{"one run", bisectResult("nsp0004", []float64{10}, ""), "1 runs per state against a step's 10 give p >= 0.182"},
		{"no successful sample", failed, "has no successful sample"},
		{"another text", edited, "measured another text of scenario bisect"},
	} {
		if err := compare.BaselineCanDecide(tc.base, s, 0.05); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// And through the command: exit 128 before anything is booted.
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	if err := results.WriteFile(one, bisectResult("nsp0004", []float64{10}, "")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := nsperf("run", bisectScenario, "--kernel", "/boot/none", "--bisect", "--baseline", one); code != bisectAbort || !strings.Contains(stderr, "no step could be decided") {
		t.Errorf("a 1-run baseline: exit %d\n%s", code, stderr)
	}
}

// TestBisectVerdictIgnoresTheRunsOwnComparisons: a state slower than the baseline state in
// the good kernel and in this one alike is no regression of this commit: good.
func TestBisectVerdictIgnoresTheRunsOwnComparisons(t *testing.T) {
	withSlowState := func(r *results.Result) *results.Result {
		c := &r.Cases[0]
		c.States = append(c.States, results.StateRecord{Name: "slow", CompareTo: "default"})
		for i := 1; i <= 5; i++ {
			c.Samples = append(c.Samples, results.Sample{Round: i, State: "slow", Workload: "tcp4", Tool: "iperf3",
				Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: (5 + 0.05*float64(i)) * 1e9}}})
		}
		r.Recompute()
		return r
	}
	good := withSlowState(bisectResult("nsp0001", []float64{10, 10.2, 9.9, 10.1, 10.0}, ""))
	r := withSlowState(bisectResult("nsp0002", []float64{10.1, 9.9, 10.0, 10.2, 10.0}, ""))
	if len(r.Failures()) == 0 {
		t.Fatal("the run's own slow vs default is not a regression: the test proves nothing")
	}
	var out bytes.Buffer
	c := &cobra.Command{}
	c.SetOut(&out)
	if got, err := bisectVerdict(c, good, r, "good.json"); got != bisectGood {
		t.Errorf("%d (%v), want good\n%s", got, err, out.String())
	}
}

// bisectResult is a stored result of testdata/bisect.yaml with these throughputs (Gbit/s),
// or with its one state unavailable.
func bisectResult(id string, tput []float64, unavailable string) *results.Result {
	text, _ := os.ReadFile(bisectScenario)
	r := &results.Result{Schema: results.Schema, RunID: id, Complete: true,
		Scenario:    results.ScenarioInfo{Name: "bisect", File: bisectScenario, SHA256: "abc", Text: string(text)},
		Settings:    results.Settings{Runs: len(tput), Order: "alternate", Policy: results.Policy{Alpha: 0.05, CVLimit: 0.05, MinChange: 0.1}, Gates: map[string][]string{"tcp4": {results.Throughput}}},
		Environment: results.Environment{KernelRelease: "6.12.117+deb12-amd64", CPUModel: "test", CPUs: 1, Tools: map[string]string{"iperf3": "3.12"}},
	}
	// As read back on a kernel with the stock veth: the scenario's expectation holds.
	c := results.Case{States: []results.StateRecord{{Name: "default", Unavailable: unavailable, Devices: map[string]map[string]uint64{"client/eth0": {"tso_max_size": 524280}}}}}
	for i, x := range tput {
		c.Samples = append(c.Samples, results.Sample{Round: i + 1, State: "default", Workload: "tcp4", Tool: "iperf3",
			Metrics: []results.Metric{{Name: results.Throughput, Unit: "bit/s", Value: x * 1e9}}})
	}
	r.Cases = []results.Case{c}
	r.Recompute()
	return r
}

// TestBisectUsageAborts: what is wrong with the bisection itself exits 128, before anything
// is built or booted (no root needed).
func TestBisectUsageAborts(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	r := bisectResult("nsp0001", []float64{10, 10, 10, 10, 10}, "")
	r.Scenario.Name = "veth-bigtcp"
	if err := results.WriteFile(other, r); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", bisectScenario, "--kernel", "/boot/none", "--bisect"}, "--bisect needs --baseline"},
		{[]string{"run", bisectScenario, "--bisect", "--baseline", other}, "measures one --kernel"},
		{[]string{"run", bisectScenario, "--baseline", other}, "--baseline is the known-good result of a --bisect step"},
		{[]string{"run", bisectScenario, "--kernel", "/boot/none", "--bisect", "--baseline", filepath.Join(dir, "missing.json")}, "--baseline"},
	} {
		_, stderr, code := nsperf(tc.args...)
		want := bisectAbort
		if !strings.Contains(strings.Join(tc.args, " "), "--bisect") {
			want = exitUsage
		}
		if code != want || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, want, tc.want, stderr)
		}
	}
}
