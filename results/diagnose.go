package results

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Thresholds of the noise diagnostics.
const (
	StealWarnPct = 5.0  // hypervisor steal during a sample
	OtherWarnPct = 10.0 // other work on the pinned CPUs during a sample
)

// Diagnose says what in a result's conditions weakens its figures: samples with steal or
// other work on the pinned CPUs above the thresholds, or in which nsperf waited for storage
// (a guest: the host) to read a page of its own, gated metrics whose CV is above the
// limit, and the drift of each baseline state (its last rounds against its first).
func (r *Result) Diagnose() []string {
	var out []string
	var steal, other []float64
	var faultSamples, faults int64
	for _, c := range r.Cases {
		for _, s := range c.Samples {
			if s.Noise == nil {
				continue
			}
			if s.Noise.SelfMajorFaults > 0 {
				faultSamples++
				faults += s.Noise.SelfMajorFaults
			}
			if s.Noise.StealPct > StealWarnPct {
				steal = append(steal, s.Noise.StealPct)
			}
			if s.Noise.OtherPinnedPct > OtherWarnPct {
				other = append(other, s.Noise.OtherPinnedPct)
			}
		}
	}
	var busyRounds []string
	for _, c := range r.Cases {
		seen := map[int]bool{}
		for _, s := range c.Samples {
			if s.BusyAtStart != "" && !seen[s.Round] {
				seen[s.Round] = true
				where := fmt.Sprintf("round %d", s.Round)
				if c.Label != "" {
					where = "[" + c.Label + "] " + where
				}
				busyRounds = append(busyRounds, where+" ("+s.BusyAtStart+")")
			}
		}
	}
	if len(busyRounds) > 0 {
		out = append(out, fmt.Sprintf("noise: %d rounds began on a busy machine, their samples marked busy_at_start: %s", len(busyRounds), strings.Join(busyRounds, "; ")))
	}
	if len(steal) > 0 {
		out = append(out, fmt.Sprintf("noise: the hypervisor stole more than %g%% of the CPU time in %d samples (at most %.1f%%)", StealWarnPct, len(steal), slices.Max(steal)))
	}
	if len(other) > 0 {
		out = append(out, fmt.Sprintf("noise: other work used more than %g%% of the pinned CPUs in %d samples (at most %.1f%%)", OtherWarnPct, len(other), slices.Max(other)))
	}
	if faultSamples > 0 {
		out = append(out, fmt.Sprintf("noise: nsperf read %d pages of its own from storage inside %d samples (in a guest, from the host over 9p: the host's timing reached the measured window)", faults, faultSamples))
	}
	limit := r.Settings.Policy.CVLimit
	if limit == 0 {
		limit = DefaultCVLimit
	}
	for _, c := range r.Cases {
		prefix := ""
		if c.Label != "" {
			prefix = "[" + c.Label + "] "
		}
		for _, s := range c.Summaries {
			if r.gated(s.Workload, s.Metric) && s.Stats.N >= 2 && s.Stats.CV > limit {
				out = append(out, fmt.Sprintf("noise: %s%s %s in %s has CV %.1f%%, above the %g%% limit", prefix, s.Workload, s.Metric, s.State, 100*s.Stats.CV, 100*limit))
			}
		}
		for _, st := range c.States {
			if st.CompareTo != "" {
				continue
			}
			for _, s := range c.Summaries {
				if s.State != st.Name || !r.gated(s.Workload, s.Metric) {
					continue
				}
				if d, k, ok := drift(c, s.Workload, s.Metric, st.Name); ok {
					out = append(out, fmt.Sprintf("drift: %s%s %s in %s: last %d rounds vs first %d: %+.1f%%", prefix, s.Workload, s.Metric, st.Name, k, k, 100*d))
				}
			}
		}
		for _, s := range c.Summaries {
			if !r.gated(s.Workload, s.Metric) {
				continue
			}
			// Only a split larger than the floor: below it the regimes do not matter.
			if n, of, d, ok := outOfOrder(c, s.Workload, s.Metric, s.State); ok && math.Abs(d) >= r.Settings.Policy.MinChange {
				out = append(out, fmt.Sprintf("reordering: %s%s %s in %s: %d of %d samples queued segments out of order (%s: reordering or loss), their median %+.1f%% against the others'", prefix, s.Workload, s.Metric, s.State, n, of, OutOfOrderCounter, 100*d))
			}
			if line, ok := reorderedApart(c, s, r.Settings.Policy.MinChange); ok {
				out = append(out, prefix+line)
			}
		}
	}
	return out
}

// reorderedApart warns of a decided comparison of a series that reorders: either state's
// reordered samples differ from its others by the floor or more, and the change is no larger
// than that difference. TCP's answer to reordering
// moves a sample's figures by percents for the rest of it, and reordered samples can cluster
// over consecutive rounds, so the samples are not independent and a state with more of them
// can be decided better or worse than an identical one (docs/method.md: an A/A within one boot
// decided +2.9% so). A real change of the state can change the rate too: this says "may".
func reorderedApart(c Case, s Summary, floor float64) (string, bool) {
	cmp := s.Comparison
	if cmp == nil || (cmp.Verdict != Improved && cmp.Verdict != Regressed) {
		return "", false
	}
	// The regimes can explain a change as large as their split, not a larger one.
	split := 0.0
	for _, state := range []string{cmp.Baseline, s.State} {
		if _, _, d, ok := outOfOrder(c, s.Workload, s.Metric, state); ok && math.Abs(d) >= floor {
			split = max(split, math.Abs(d))
		}
	}
	if split == 0 || cmp.FromZero || math.Abs(cmp.Change) > split {
		return "", false
	}
	nb, ofb := reorderedShare(c, s.Workload, s.Metric, cmp.Baseline)
	ns, ofs := reorderedShare(c, s.Workload, s.Metric, s.State)
	return fmt.Sprintf("reordering: %s %s %s vs %s, %s by %+.1f%%, may be a false alarm: %d of %d samples out of order against %d of %d, whose regimes lie %.1f%% apart; such samples cluster over rounds, so they are not independent",
		s.Workload, s.Metric, s.State, cmp.Baseline, cmp.Verdict, 100*cmp.Change, ns, ofs, nb, ofb, 100*split), true
}

// reorderedShare counts a state's valid samples of a metric, and those in which a namespace
// queued TCP segments out of order.
func reorderedShare(c Case, workload, metric, state string) (reordered, of int) {
	for _, s := range c.Samples {
		if s.Workload != workload || s.State != state || s.Error != "" || s.Invalid != "" {
			continue
		}
		if _, has := s.Value(metric); !has {
			continue
		}
		of++
		if reorderedSample(s) {
			reordered++
		}
	}
	return reordered, of
}

// reorderedSample: a namespace queued TCP segments out of order during the sample.
func reorderedSample(s Sample) bool {
	return s.Counters != nil && slices.ContainsFunc(slices.Collect(maps.Values(s.Counters.Namespaces)), func(ns map[string]uint64) bool { return ns[OutOfOrderCounter] > 0 })
}

// OutOfOrderCounter is the receiver's count of segments queued out of order (nstat's name).
const OutOfOrderCounter = "TcpExtTCPOFOQueue"

// outOfOrder splits a state's samples into those in which a namespace queued TCP segments out
// of order and the others: how many did, of how many, and the change of their median against
// the others'. ok false unless both kinds are there. A flow reordered inside a guest runs in
// another regime for the rest of its sample (docs/method.md, "Virtual time: repeatability"):
// this says which samples, not why.
func outOfOrder(c Case, workload, metric, state string) (n, of int, change float64, ok bool) {
	var reordered, others []float64
	for _, s := range c.Samples {
		if s.Workload != workload || s.State != state || s.Error != "" || s.Invalid != "" {
			continue
		}
		v, has := s.Value(metric)
		if !has {
			continue
		}
		if reorderedSample(s) {
			reordered = append(reordered, v)
		} else {
			others = append(others, v)
		}
	}
	if len(reordered) == 0 || len(others) == 0 {
		return 0, 0, 0, false
	}
	mr, mo := Describe(reordered).Median, Describe(others).Median
	if d := mr/mo - 1; mo != 0 && FinitePercent(d) {
		return len(reordered), len(reordered) + len(others), d, true
	}
	return 0, 0, 0, false
}

// drift compares the median of a state's last k rounds with its first k (k = a third of the
// rounds, at least 2).
func drift(c Case, workload, metric, state string) (float64, int, bool) {
	type point struct {
		round int
		v     float64
	}
	var pts []point
	for _, s := range c.Samples {
		if s.Workload == workload && s.State == state && s.Error == "" && s.Invalid == "" {
			if v, ok := s.Value(metric); ok {
				pts = append(pts, point{s.Round, v})
			}
		}
	}
	k := len(pts) / 3
	if k < 2 {
		return 0, 0, false
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].round < pts[j].round })
	var first, last []float64
	for i := 0; i < k; i++ {
		first, last = append(first, pts[i].v), append(last, pts[len(pts)-k+i].v)
	}
	f, l := Describe(first).Median, Describe(last).Median
	if d := l/f - 1; f != 0 && FinitePercent(d) {
		return d, k, true
	}
	return 0, 0, false // no ratio: from 0, or from a median so near it that the ratio is past float64's range
}
