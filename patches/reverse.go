package patches

import (
	"fmt"
	"slices"
	"strings"
)

// Reverse is the series undone: its patches last to first, each file's change inverted (what
// `git apply -R` and `patch -R` apply): added and removed lines swap, a created file is
// deleted and a deleted one created, and the hunks' old and new ranges swap.
func Reverse(series []Patch) []Patch {
	out := make([]Patch, 0, len(series))
	for _, p := range slices.Backward(series) {
		r := p
		r.Files = make([]FileDiff, len(p.Files))
		for i, f := range p.Files {
			rf := FileDiff{OldPath: f.NewPath, NewPath: f.OldPath, Line: f.Line, Hunks: make([]Hunk, len(f.Hunks)), Mode: f.OldMode, OldMode: f.Mode}
			for j, h := range f.Hunks {
				rf.Hunks[j] = Hunk{OldStart: h.NewStart, OldLines: h.NewLines, NewStart: h.OldStart, NewLines: h.OldLines,
					Section: h.Section, Lines: reversed(h.Lines), Line: h.Line}
			}
			r.Files[i] = rf
		}
		out = append(out, r)
	}
	return out
}

// InBase says whether the series is in the source already, whole: every hunk that did not
// apply applies in reverse, and none applied; inBase names the hunks that are in the source
// (all of them, or some: a series half merged is neither to build nor to revert).
func (r *Result) InBase() (whole bool, inBase []string) {
	if len(r.Problems) == 0 {
		return false, nil
	}
	for _, p := range r.Problems {
		// A file the series creates that the source has is in it too (its revert, which
		// deletes it, checks its lines).
		if p.Kind != ProblemAlreadyApplied && p.Kind != ProblemFileExists {
			return false, alreadyApplied(r)
		}
	}
	return len(r.Applied) == 0, alreadyApplied(r)
}

func alreadyApplied(r *Result) []string {
	var out []string
	for _, p := range r.Problems {
		if p.Kind == ProblemAlreadyApplied {
			out = append(out, fmt.Sprintf("%s hunk %d", p.File, p.Hunk))
		}
	}
	return out
}

// PartlyInBase is the error for a series some of whose hunks the source has and some not.
func PartlyInBase(hunks []string, rest error) error {
	return fmt.Errorf("the series is partly in the source: %s apply in reverse (already there), the rest does not: neither the series nor its revert can be built\n%w",
		strings.Join(hunks, ", "), rest)
}
