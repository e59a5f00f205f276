package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/testkit/fixture"
)

// comparisonRows are a table's rows of figures: the lines that start with a workload.
func comparisonRows(table string) []string {
	var out []string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "tcp4 ") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return out
}

// TestOneTableForOneResult: a result's statistics come from one code path. The A/B result of
// two kernels, as `run --kernel A --kernel B` makes it (compare.Kernels), prints the same
// rows as `nsperf report` of the stored file and as `nsperf compare` of it.
func TestOneTableForOneResult(t *testing.T) {
	a := fixture.PairResult("nsp000a", "stock", "6.12.117", fixture.PairScenario, map[string][]float64{"off": {10.1, 9.8, 10.3, 10.0, 9.9, 10.2}, "on": {10.0, 10.2, 9.9, 10.1, 10.3, 9.8}})
	b := fixture.PairResult("nsp000b", "patched", "6.12.117", fixture.PairScenario, map[string][]float64{"off": {10.0, 10.1, 9.9, 10.2, 10.0, 9.8}, "on": {12.1, 12.3, 11.9, 12.2, 12.0, 12.4}})
	ab, err := compare.Kernels(a, b, "nsp00ab", []results.Turn{{Gate: 1, Kernel: "A"}, {Gate: 1, Kernel: "B"}})
	if err != nil {
		t.Fatal(err)
	}
	var run bytes.Buffer
	if err := render.WriteResult(&run, ab, "table", results.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ab.json")
	if err := results.WriteFile(file, ab); err != nil {
		t.Fatal(err)
	}
	report, stderr, code := nsperf("report", file)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	// "text" is the flag's word for "table", for every command (one place: flags.go).
	if text, stderr, code := nsperf("report", file, "--format", "text"); code != exitOK || text != report {
		t.Errorf("report --format text: exit %d, %s\n%s", code, stderr, text)
	}
	cmp, stderr, code := nsperf("compare", file)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	want := comparisonRows(run.String())
	if len(want) == 0 || !strings.Contains(strings.Join(want, "\n"), "improved") {
		t.Fatalf("the run's table has no decided rows:\n%s", run.String())
	}
	if got := comparisonRows(report); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("report prints other rows than the run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// compare of an A/B result prints its B-against-A section: the same rows, no others.
	got := comparisonRows(cmp)
	if len(got) == 0 {
		t.Fatalf("compare printed no rows:\n%s", cmp)
	}
	for _, row := range got {
		if !slices.Contains(want, row) {
			t.Errorf("compare prints a row the run does not:\n%s\nthe run's:\n%s", row, strings.Join(want, "\n"))
		}
	}
}
