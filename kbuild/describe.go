package kbuild

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/scenarios"
)

// Describe writes what a build made, as `nsperf build` and `run --patch` say it: how (built
// in N s or cached) and what (the modules, or whole kernels and their config) from which
// source, each patch with how its hunks applied, and the shipped scenarios whose traffic runs
// through the touched files.
func (m *Manifest) Describe(w io.Writer) {
	how := fmt.Sprintf("built in %.0f s and %.0f s", m.Kernels[0].BuildSeconds, m.Kernels[1].BuildSeconds)
	if m.Cached {
		how = "cached"
	}
	var names []string
	for _, mod := range m.Modules {
		names = append(names, mod.Name+".ko")
	}
	what := "modules " + joinOr(names, "none")
	if m.Mode == ModeWhole {
		what = "whole kernels " + m.Release + ", config " + m.Config
	}
	pair := "base and patched"
	if m.Applied == AppliedReverse {
		pair = "the base with the series reverted (A, " + m.Label(0) + ") and the base as it is (B, " + m.Label(1) + "): applied in reverse"
	}
	fmt.Fprintf(w, "build: %s (%s): %s, %s, from %s\n", how, m.Key, pair, what, m.Source)
	for _, p := range m.Patches {
		fmt.Fprintf(w, "build: %s (sha256 %.12s): %s\n", orNone(p.Subject), p.SHA256, joinOr(p.Applied, "no hunk"))
	}
	if hints := ScenarioHints(m.Count, m.Touched); len(hints) > 0 {
		fmt.Fprintln(w, "build: shipped scenarios whose traffic runs the patch's code: "+strings.Join(hints, ", "))
	}
}

// ScenarioHints are the shipped scenarios whose traffic runs the patch's functions or through
// a touched file, each with how (coverage.Map.Runs: measured by nsperf coverage, or what the
// link kinds declare).
func ScenarioHints(fns []coverage.Target, touched []string) []string {
	shipped, err := scenarios.Shipped()
	if err != nil {
		return nil
	}
	cov, _ := coverage.Shipped()
	var out []string
	for _, s := range shipped {
		if strength, how := cov.Runs(s, fns, touched); strength > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", s.Name, strings.TrimPrefix(how, "its traffic ")))
		}
	}
	return out
}

func joinOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Label is kernel i's label in a result: base and patched; for a series in the base
// (applied in reverse), reverted and base.
func (m *Manifest) Label(i int) string {
	if m.Applied == AppliedReverse {
		return []string{"reverted", "base"}[i]
	}
	return m.Kernels[i].Label
}
