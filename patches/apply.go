package patches

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
)

// Options say how strictly hunks must match.
type Options struct {
	// Fuzz is how many context lines at each end of a hunk may be missing from the source
	// (`patch -F`): 0 demands every one.
	Fuzz int
}

// Applied is how one hunk applied.
type Applied struct {
	Patch  int    `json:"patch"` // index in the series as given
	File   string `json:"file"`
	Hunk   int    `json:"hunk"`   // 1-based, in its file
	At     int    `json:"at"`     // the source line it applied at, 1-based
	Offset int    `json:"offset"` // lines from where its header says
	Fuzz   int    `json:"fuzz"`   // context lines left out at each end
}

// How says it as people say it: "exact", "offset 38", "fuzz 1, offset 37".
func (a Applied) How() string {
	var parts []string
	if a.Fuzz > 0 {
		parts = append(parts, fmt.Sprintf("fuzz %d", a.Fuzz))
	}
	if a.Offset != 0 {
		parts = append(parts, fmt.Sprintf("offset %d", a.Offset))
	}
	if len(parts) == 0 {
		return "exact"
	}
	return strings.Join(parts, ", ")
}

// Problem kinds.
const (
	ProblemNoMatch        = "no match"        // a hunk's context is not in the source
	ProblemAlreadyApplied = "already applied" // it applies in reverse
	ProblemMissingFile    = "missing file"    // the source has no such file
	ProblemUnreadable     = "unreadable file" // not a regular file, too large, or a link out of the tree
	ProblemFileExists     = "file exists"     // a new file the source has
)

// Problem is a hunk or a file that does not apply.
type Problem struct {
	Kind  string
	Patch int // index in the series
	File  string
	Hunk  int // 1-based; 0 for a file
	// Missing are the hunk's lines (context or removed) that are nowhere in the file.
	Missing []string
	Msg     string
}

// Result is a series checked against a source.
type Result struct {
	Applied  []Applied
	Problems []Problem
	Warnings []string
	// Files are the patched files' contents, by path; a deleted file is nil.
	Files map[string][]byte
	// Modes are the modes the series gives files (0o644, 0o755), by path; a file it leaves
	// out keeps its own.
	Modes map[string]fs.FileMode
	total int // patches in the series
}

// maxProblems bounds what a check reports: a series that far from its base does not apply,
// and checking 20,000 failing hunks to say so would take a minute.
const maxProblems = 100

// Err is every problem as one error, nil when the series applies.
func (r *Result) Err() error {
	var errs []error
	for _, p := range r.Problems {
		errs = append(errs, errors.New(p.Msg))
	}
	return errors.Join(errs...)
}

// Touched are the files the series changes, sorted.
func Touched(series []Patch) []string {
	seen := map[string]bool{}
	for _, p := range series {
		for _, f := range p.Files {
			seen[f.Path()] = true
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Check applies the series in order to the source, in memory, and says how each hunk
// applied or why it did not. err is for a series with nothing to apply (no diff, or
// documentation only); the hunks' problems are in the result.
func Check(src fs.FS, series []Patch, opt Options) (*Result, error) {
	if err := buildable(series); err != nil {
		return nil, err
	}
	r := &Result{Files: map[string][]byte{}, Modes: map[string]fs.FileMode{}, Warnings: seriesGaps(series), total: len(series)}
	files := map[string][]string{} // current contents, split into lines
series:
	for pi, p := range series {
		for _, f := range p.Files {
			r.file(src, files, pi, p, f, opt)
			if f.Mode != 0 && f.NewPath != "" {
				r.Modes[f.Path()] = f.Mode
			}
			if len(r.Problems) >= maxProblems {
				r.problem(Problem{Kind: ProblemNoMatch, Patch: pi, File: f.Path(), Msg: fmt.Sprintf("and more: the check stopped after %d problems", maxProblems)})
				break series
			}
		}
	}
	for path, lines := range files {
		if lines == nil {
			r.Files[path] = nil
			continue
		}
		r.Files[path] = []byte(strings.Join(lines, ""))
	}
	return r, nil
}

// buildable refuses a series with nothing to build.
func buildable(series []Patch) error {
	touched := Touched(series)
	if len(series) == 0 {
		return errors.New("no patch given")
	}
	if len(touched) == 0 {
		return &InputError{Input: series[0].Input, Msg: "no diff in it: " + describe(series) + "; nothing to build"}
	}
	if !slices.ContainsFunc(touched, func(f string) bool { return !strings.HasPrefix(f, "Documentation/") }) {
		return &InputError{Input: series[0].Input, Msg: "it changes only Documentation/: nothing to build"}
	}
	return nil
}

// describe says what a series without a diff holds.
func describe(series []Patch) string {
	if series[0].Subject != "" {
		return fmt.Sprintf("%d mail(s), the first %q, with no unified diff (a cover letter or a commit message?)", len(series), series[0].Subject)
	}
	text := strings.TrimSpace(series[0].Message)
	first, _, _ := strings.Cut(text, "\n")
	if len(first) > 60 {
		first = first[:60] + "..."
	}
	return fmt.Sprintf("%d lines of text starting %q, with no unified diff (no 'diff --git', no ---/+++/@@ lines)", strings.Count(text, "\n")+1, first)
}

// seriesGaps warns of a numbered patch whose earlier patches are not given.
func seriesGaps(series []Patch) []string {
	given := map[[3]int]bool{}
	for _, p := range series {
		given[[3]int{p.Total, p.Version, p.Index}] = true
	}
	var out []string
	for _, p := range series {
		if p.Total < 2 || p.Index < 2 {
			continue
		}
		var missing []int
		for i := 1; i < p.Index; i++ {
			if !given[[3]int{p.Total, p.Version, i}] {
				missing = append(missing, i)
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("patch %d of %d (%s): %s of its series not given; it may depend on them", p.Index, p.Total, p.Name(), ranges(missing)))
		}
	}
	return out
}

// ranges writes 1,2,3,5 as "1-3, 5".
func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		} else {
			parts = append(parts, fmt.Sprint(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// maxSourceFile bounds a source file a patch changes (the kernel's largest are a few MiB).
const maxSourceFile = 64 << 20

// readSource reads a file of the source a patch changes: a regular file, of bounded size. A
// FIFO or a device is refused without being opened, and an os.Root's FS refuses a link that
// leads out of the tree.
func readSource(src fs.FS, path string) ([]byte, error) {
	fi, err := fs.Stat(src, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot be read in the source (%w)", err) // an os.Root: "path escapes from parent" is a link out of the tree
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file in the source (%v)", fi.Mode().Type())
	}
	if fi.Size() > maxSourceFile {
		return nil, fmt.Errorf("%d bytes in the source, more than a source file has (%d MiB at most)", fi.Size(), maxSourceFile>>20)
	}
	return fs.ReadFile(src, path)
}

// splitLines splits a file into lines that keep their "\n" (the last one too: a file
// written back keeps its final newline, as git apply keeps it).
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return []string{}
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// file applies one file's change of patch pi to files.
func (r *Result) file(src fs.FS, files map[string][]string, pi int, p Patch, f FileDiff, opt Options) {
	name := fmt.Sprintf("%s %s: %s", p.Input, p.Name(), f.Path())
	if r.total > 1 {
		name = fmt.Sprintf("%s %s (patch %d of the %d given): %s", p.Input, p.Name(), pi+1, r.total, f.Path())
	}
	lines, have := files[f.Path()]
	if !have {
		data, err := readSource(src, f.Path())
		switch {
		case err == nil:
			lines, have = splitLines(data), true
		case !errors.Is(err, fs.ErrNotExist):
			r.problem(Problem{Kind: ProblemUnreadable, Patch: pi, File: f.Path(), Msg: name + ": " + err.Error()})
			return
		}
	} else {
		have = lines != nil
	}
	switch {
	case f.OldPath == "" && have:
		r.problem(Problem{Kind: ProblemFileExists, Patch: pi, File: f.Path(), Msg: name + ": the patch creates it, and the source has it already (is the patch applied?)"})
		return
	case f.OldPath != "" && !have:
		r.problem(Problem{Kind: ProblemMissingFile, Patch: pi, File: f.Path(), Msg: name + ": the source has no such file (moved or removed since the patch was made?)"})
		return
	}
	delta := 0
	for hi, h := range f.Hunks {
		if len(r.Problems) >= maxProblems {
			return // Check says it stopped
		}
		at, fuzz, ok := locate(lines, h, oldIndex(h)+delta, opt.Fuzz)
		if !ok {
			r.hunkProblem(lines, pi, hi, f, h, name, opt.Fuzz)
			continue
		}
		old, new := trimmed(h, fuzz)
		start := at + leading(h, fuzz)
		repl := make([]string, len(new))
		for i, l := range new {
			repl[i] = l + "\n"
		}
		lines = slices.Concat(lines[:start], repl, lines[start+len(old):])
		r.Applied = append(r.Applied, Applied{Patch: pi, File: f.Path(), Hunk: hi + 1, At: at + 1, Offset: at - (oldIndex(h) + delta), Fuzz: fuzz})
		delta += len(new) - len(old) + (at - (oldIndex(h) + delta))
	}
	if f.NewPath == "" {
		// git apply refuses a deletion whose hunks leave lines: "removal patch leaves file
		// contents". Deleting the whole file anyway would build something else.
		if len(lines) > 0 && len(f.Hunks) > 0 {
			r.problem(Problem{Kind: ProblemNoMatch, Patch: pi, File: f.Path(), Msg: fmt.Sprintf("%s: the patch deletes the file, but its hunks remove only part of it (%d lines are left): refused, as git apply refuses it", name, len(lines))})
			return
		}
		lines = nil
	}
	files[f.Path()] = lines
}

func (r *Result) problem(p Problem) { r.Problems = append(r.Problems, p) }

// hunkProblem says why a hunk did not apply: it is applied already (it applies in reverse),
// or the lines of it the file lacks.
func (r *Result) hunkProblem(lines []string, pi, hi int, f FileDiff, h Hunk, name string, fuzz int) {
	where := fmt.Sprintf("%s: hunk %d (@@ -%d,%d +%d,%d @@ %s)", name, hi+1, h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Section)
	// In the source already: the hunk inverted applies, with the fuzz the series is given.
	if _, _, ok := locate(lines, Hunk{Lines: reversed(h.Lines)}, h.NewStart-1, fuzz); ok && slices.ContainsFunc(h.Lines, func(l Line) bool { return l.Op != ' ' }) {
		r.problem(Problem{Kind: ProblemAlreadyApplied, Patch: pi, File: f.Path(), Hunk: hi + 1, Msg: where + ": already in the source (it applies in reverse)"})
		return
	}
	have := map[string]bool{}
	for _, l := range lines {
		have[strings.TrimRight(l, "\n")] = true
	}
	var missing []string
	for _, l := range h.Old() {
		if strings.TrimSpace(l) != "" && !have[l] {
			missing = append(missing, l)
		}
	}
	msg := where + ": does not apply"
	if len(missing) > 0 {
		quoted := make([]string, len(missing))
		for i, l := range missing {
			quoted[i] = fmt.Sprintf("%q", strings.TrimSpace(l))
		}
		msg += "; the source lacks these lines of it: " + strings.Join(quoted, ", ")
	} else {
		msg += "; its lines are in the source, but not together as the hunk has them"
	}
	r.problem(Problem{Kind: ProblemNoMatch, Patch: pi, File: f.Path(), Hunk: hi + 1, Missing: missing, Msg: msg + " (--fuzz N accepts up to N context lines missing at each end)"})
}

// oldIndex is where a hunk's old lines start, 0-based: a range of no lines ("-0,0" of a new
// file, "-5,0" of lines added after line 5) names the line after which the new ones go.
func oldIndex(h Hunk) int {
	if h.OldLines == 0 {
		return h.OldStart
	}
	return h.OldStart - 1
}

// reversed swaps a hunk's added and removed lines.
func reversed(ls []Line) []Line {
	out := make([]Line, len(ls))
	for i, l := range ls {
		switch l.Op {
		case '+':
			l.Op = '-'
		case '-':
			l.Op = '+'
		}
		out[i] = l
	}
	return out
}

// leading is how many context lines fuzz leaves out at the hunk's start; trailing at its end.
func leading(h Hunk, fuzz int) int { return min(fuzz, contextRun(h.Lines, false)) }

func trailing(h Hunk, fuzz int) int { return min(fuzz, contextRun(h.Lines, true)) }

// contextRun counts the context lines the hunk starts with (fromEnd: ends with).
func contextRun(ls []Line, fromEnd bool) int {
	n := 0
	for n < len(ls) {
		i := n
		if fromEnd {
			i = len(ls) - 1 - n
		}
		if ls[i].Op != ' ' {
			break
		}
		n++
	}
	return n
}

// trimmed are the hunk's old and new lines with fuzz's context left out at each end.
func trimmed(h Hunk, fuzz int) (old, new []string) {
	lead, trail := leading(h, fuzz), trailing(h, fuzz)
	old, new = h.Old(), h.New()
	return old[lead : len(old)-trail], new[lead : len(new)-trail]
}

// locate finds where the hunk applies, nearest to expected (0-based), with the least fuzz up
// to maxFuzz: at is where the whole hunk starts.
func locate(lines []string, h Hunk, expected, maxFuzz int) (at, fuzz int, ok bool) {
	for fuzz = 0; fuzz <= maxFuzz; fuzz++ {
		old, _ := trimmed(h, fuzz)
		lead := leading(h, fuzz)
		if fuzz > 0 && len(old) == len(h.Old()) {
			break // no context left to leave out
		}
		if fuzz > 0 && len(old) == 0 {
			break // a hunk that only adds, without its context, would apply anywhere
		}
		for d := 0; d <= len(lines); d++ {
			for _, start := range []int{expected + lead + d, expected + lead - d} {
				if matches(lines, start, old) {
					return start - lead, fuzz, true
				}
				if d == 0 {
					break
				}
			}
		}
	}
	return 0, 0, false
}

func matches(lines []string, start int, want []string) bool {
	if start < 0 || start+len(want) > len(lines) {
		return false
	}
	for i, w := range want {
		if strings.TrimSuffix(lines[start+i], "\n") != w {
			return false
		}
	}
	return true
}
