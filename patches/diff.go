package patches

import (
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// FileDiff is one file's change.
type FileDiff struct {
	// OldPath and NewPath are relative to the source's top, "" for /dev/null (a new or a
	// deleted file).
	OldPath, NewPath string
	Hunks            []Hunk
	Line             int // where its header starts in the input
	// Mode is the file's mode after the change when the diff sets one (`new file mode
	// 100755`, `new mode 100755`): 0o644 or 0o755; 0 keeps the file's. OldMode is what `old
	// mode` says it was (a revert gives it back).
	Mode, OldMode fs.FileMode
}

// Path is the file the change is about: the new path, else the old (deleted) one.
func (f FileDiff) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Hunk is one @@ block.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Section            string // the text after the second @@ (a function)
	Lines              []Line
	Line               int // where its @@ line is in the input
}

// Line is one line of a hunk: Op is ' ' (context), '-' or '+'.
type Line struct {
	Op   byte
	Text string
}

// Old is what the hunk expects in the source: its context and removed lines.
func (h Hunk) Old() []string { return h.side('-') }

// New is what the hunk leaves: its context and added lines.
func (h Hunk) New() []string { return h.side('+') }

func (h Hunk) side(op byte) []string {
	var out []string
	for _, l := range h.Lines {
		if l.Op == ' ' || l.Op == op {
			out = append(out, l.Text)
		}
	}
	return out
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$`)

// diffParser reads the diff part of a patch's text.
type diffParser struct {
	input string
	first int // the input line of lines[0]
	lines []string
	i     int
	files []FileDiff
}

// plainDiff reads a text that may hold a commit message followed by a unified diff; first is
// the input line of its first line.
func plainDiff(input string, first int, text string, lenient bool) (Patch, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	start := diffStart(lines)
	p := Patch{Input: input, Line: first, MessageLine: first}
	if start < 0 {
		p.Message = text
		return p, nil
	}
	p.Message = strings.Join(lines[:start], "\n")
	d := &diffParser{input: input, first: first, lines: lines, i: start}
	if err := d.parse(); err != nil {
		if lenient {
			p.DiffError = err.Error()
			return p, nil
		}
		return Patch{}, err
	}
	p.Files = d.files
	return p, nil
}

// diffStart is the index of the first line of the diff: a "diff --git" line, or a "--- "
// line followed by "+++ " and "@@"; -1 when there is none.
func diffStart(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			return i
		}
		if strings.HasPrefix(l, "--- ") && i+2 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ ") {
			return i
		}
	}
	return -1
}

func (d *diffParser) errAt(i int, format string, args ...any) error {
	return inputErr(d.input, d.first+i, format, args...)
}

func (d *diffParser) parse() error {
	for d.i < len(d.lines) {
		l := d.lines[d.i]
		switch {
		case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "--- ") && d.i+1 < len(d.lines) && strings.HasPrefix(d.lines[d.i+1], "+++ "):
			if err := d.file(); err != nil {
				return err
			}
		case l == "-- " || l == "--":
			// The mail's signature (git's version follows). git apply reads on: a diff after
			// it is applied, so it is read here too, never dropped unseen.
			d.i++
		case strings.HasPrefix(l, "@@ "):
			return d.errAt(d.i, "a hunk without its file's --- and +++ lines (git apply: patch fragment without header)")
		default:
			d.i++ // text between files (a stat, a base-commit line)
		}
	}
	return nil
}

// file reads one file's headers and hunks.
func (d *diffParser) file() error {
	f := FileDiff{Line: d.first + d.i}
	gitHeader := strings.HasPrefix(d.lines[d.i], "diff --git ")
	if gitHeader {
		d.i++
	}
	for ; d.i < len(d.lines); d.i++ {
		l := d.lines[d.i]
		switch {
		case strings.HasPrefix(l, "GIT binary patch"), strings.HasPrefix(l, "Binary files "):
			return d.errAt(d.i, "a binary diff: nsperf builds source changes only")
		case modeLine.MatchString(l):
			m := modeLine.FindStringSubmatch(l)
			mode, err := strconv.ParseUint(m[2], 8, 32)
			switch {
			case err != nil || mode&0o170000 == 0o120000:
				return d.errAt(d.i, "the patch makes or changes a symbolic link: refused, a link can point out of the source")
			case mode&0o170000 == 0o160000:
				return d.errAt(d.i, "a submodule (mode %s): nsperf builds source changes only", m[2])
			case mode&0o170000 != 0o100000:
				return d.errAt(d.i, "mode %s: not a regular file's (100644 or 100755)", m[2])
			case m[1] == "new file " || m[1] == "new ":
				f.Mode = regularMode(mode)
			case m[1] == "old ":
				f.OldMode = regularMode(mode)
			}
		case strings.HasPrefix(l, "rename from "), strings.HasPrefix(l, "copy from "):
			return d.errAt(d.i, "a rename or copy: nsperf applies plain changes only (make the patch with git format-patch --no-renames)")
		case strings.HasPrefix(l, "--- "):
			if d.i+1 >= len(d.lines) || !strings.HasPrefix(d.lines[d.i+1], "+++ ") {
				return d.errAt(d.i, "a --- line without its +++ line: the diff is cut")
			}
			var err error
			if f.OldPath, err = d.path(d.i, l[4:]); err != nil {
				return err
			}
			if f.NewPath, err = d.path(d.i+1, d.lines[d.i+1][4:]); err != nil {
				return err
			}
			d.i += 2
			return d.hunks(&f)
		case strings.HasPrefix(l, "diff --git "), l == "-- " || l == "--":
			return d.modeOnly(f, d.i-1)
		}
		if !gitHeader {
			break
		}
	}
	if gitHeader {
		return d.modeOnly(f, d.i-1)
	}
	return d.errAt(d.i-1, "a file header without --- and +++ lines: the diff is cut")
}

// modeOnly takes a git file header without hunks: a mode change (`old mode 100644` / `new
// mode 100755`) of the file its diff --git line names, as git apply applies it; anything
// else (an empty new file) has nothing to build.
func (d *diffParser) modeOnly(f FileDiff, at int) error {
	header := d.lines[f.Line-d.first]
	name, ok := gitHeaderPath(header)
	if f.Mode == 0 || !ok {
		return d.errAt(at, "a file header without a change (an empty file, or a mode change git's header does not name): nothing nsperf can build")
	}
	var err error
	if f.OldPath, err = d.path(f.Line-d.first, "a/"+name); err != nil {
		return err
	}
	f.NewPath = f.OldPath
	d.files = append(d.files, f)
	return nil
}

// gitHeaderPath is the path of `diff --git a/P b/P` when both sides name the same file.
func gitHeaderPath(header string) (string, bool) {
	rest := strings.TrimPrefix(header, "diff --git ")
	half := (len(rest) - 1) / 2
	if len(rest)%2 == 0 || half < 3 || rest[half] != ' ' || !strings.HasPrefix(rest, "a/") || rest[half+1:half+3] != "b/" || rest[2:half] != rest[half+3:] {
		return "", false
	}
	return rest[2:half], true
}

// path reads a --- or +++ path: "a/x", "b/x" or /dev/null, with a timestamp after a tab.
func (d *diffParser) path(i int, s string) (string, error) {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return "", nil
	}
	if strings.HasPrefix(s, "/") {
		return "", d.errAt(i, "%s: an absolute path leaves the source: refused", s)
	}
	if _, rest, ok := strings.Cut(s, "/"); ok {
		s = rest // -p1, as git and kernel patches are made
	}
	if strings.HasPrefix(s, "/") {
		return "", d.errAt(i, "%q: an absolute path after its a/ or b/ leaves the source: refused", s)
	}
	if s == "" || s != path.Clean(s) || s == ".." || strings.HasPrefix(s, "../") || strings.Contains(s, "/../") {
		return "", d.errAt(i, "%q: a path that leaves the source or is not clean: refused", s)
	}
	return s, nil
}

// hunks reads a file's @@ blocks.
func (d *diffParser) hunks(f *FileDiff) error {
	for d.i < len(d.lines) && strings.HasPrefix(d.lines[d.i], "@@ ") {
		h, err := d.hunk()
		if err != nil {
			return err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 {
		return d.errAt(d.i, "%s: no hunk after the file header: the diff is cut", f.Path())
	}
	d.files = append(d.files, *f)
	return nil
}

// hunk reads one @@ block, taking as many lines as its header counts: a block that ends
// before is cut.
func (d *diffParser) hunk() (Hunk, error) {
	m := hunkHeader.FindStringSubmatch(d.lines[d.i])
	if m == nil {
		return Hunk{}, d.errAt(d.i, "%q: not a hunk header (@@ -L,N +L,N @@)", d.lines[d.i])
	}
	h := Hunk{Line: d.first + d.i, Section: m[5]}
	h.OldStart, h.OldLines = count(m[1], m[2])
	h.NewStart, h.NewLines = count(m[3], m[4])
	for _, n := range []int{h.OldStart, h.OldLines, h.NewStart, h.NewLines} {
		if n < 0 || n > maxLine {
			return Hunk{}, d.errAt(d.i, "%q: a line number or count past any source file (at most %d)", d.lines[d.i], maxLine)
		}
	}
	start := d.i
	d.i++
	old, new := 0, 0
	for old < h.OldLines || new < h.NewLines {
		if d.i >= len(d.lines) {
			return Hunk{}, d.errAt(start, "the hunk is cut: its header counts %d old and %d new lines, the input ends after %d and %d", h.OldLines, h.NewLines, old, new)
		}
		l := d.lines[d.i]
		if l == "" {
			l = " " // a context line whose space the mail lost
		}
		switch l[0] {
		case ' ':
			old, new = old+1, new+1
		case '-':
			old++
		case '+':
			new++
		case '\\': // "\ No newline at end of file"
			d.i++
			continue
		default:
			return Hunk{}, d.errAt(d.i, "the hunk is cut: its header counts %d old and %d new lines, %q comes after %d and %d", h.OldLines, h.NewLines, l, old, new)
		}
		if old > h.OldLines || new > h.NewLines {
			return Hunk{}, d.errAt(start, "the hunk has more lines than its header counts (%d old, %d new)", h.OldLines, h.NewLines)
		}
		h.Lines = append(h.Lines, Line{Op: l[0], Text: l[1:]})
		d.i++
	}
	for d.i < len(d.lines) && strings.HasPrefix(d.lines[d.i], `\`) {
		d.i++
	}
	// A line of a hunk after its counted ones (a header that counts too few) is refused, as
	// git apply refuses it, not taken as text between files: it would be left unapplied.
	if d.i < len(d.lines) {
		if l := d.lines[d.i]; (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") || strings.HasPrefix(l, " ")) &&
			!strings.HasPrefix(l, "--- ") && l != "-- " && l != "--" {
			return Hunk{}, d.errAt(start, "the hunk has more lines than its header counts (%d old, %d new): %q follows them", h.OldLines, h.NewLines, l)
		}
	}
	return h, nil
}

// regularMode is a git mode as the file's: 0755 when anyone may run it, else 0644.
func regularMode(mode uint64) fs.FileMode {
	if mode&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// maxLine bounds a hunk's line numbers and counts: past any source file (Linux's longest has
// about 100,000 lines), and far from int overflow.
const maxLine = 1 << 24

// modeLine is a git header's mode line: new file, deleted file, old or new mode.
var modeLine = regexp.MustCompile(`^(new file |deleted file |old |new )mode ([0-7]+)$`)

// count reads a hunk range: "L,N", or "L" for one line.
func count(start, n string) (int, int) {
	s, _ := strconv.Atoi(start)
	if n == "" {
		return s, 1
	}
	c, _ := strconv.Atoi(n)
	return s, c
}
