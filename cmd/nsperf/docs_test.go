package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands are the commands of the tree that have pages: every available one.
func commands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	if c.IsAvailableCommand() || !c.HasParent() {
		out = append(out, c)
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, commands(sub)...)
		}
	}
	return out
}

// pageName is a command's page in docs/reference (markdown) and make man (section 1).
func pageName(c *cobra.Command, ext string) string {
	name := strings.ReplaceAll(c.CommandPath(), " ", "_")
	if ext == ".1" {
		name = strings.ReplaceAll(c.CommandPath(), " ", "-")
	}
	return name + ext
}

// TestReference: docs/reference is what the command tree makes (make docs), and a page per
// command, markdown and man, names every flag the command takes: --help, the reference and
// the man pages say the same.
func TestReference(t *testing.T) {
	dir := t.TempDir()
	md, man := filepath.Join(dir, "md"), filepath.Join(dir, "man")
	if err := writeReference(newRoot(io.Discard, io.Discard), md, man); err != nil {
		t.Fatal(err)
	}
	fresh, _ := filepath.Glob(filepath.Join(md, "*.md"))
	committed, _ := filepath.Glob(filepath.Join("..", "..", "docs", "reference", "*.md"))
	base := func(ps []string) (out []string) {
		for _, p := range ps {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if !slices.Equal(base(fresh), base(committed)) {
		t.Fatalf("docs/reference has %v, the command tree makes %v: run make docs", base(committed), base(fresh))
	}
	for _, p := range fresh {
		want, _ := os.ReadFile(p)
		got, _ := os.ReadFile(filepath.Join("..", "..", "docs", "reference", filepath.Base(p)))
		if string(got) != string(want) {
			t.Errorf("docs/reference/%s is not what the command tree makes: run make docs", filepath.Base(p))
		}
	}
	root := newRoot(io.Discard, io.Discard)
	for _, c := range commands(root) {
		for _, page := range []string{filepath.Join(md, pageName(c, ".md")), filepath.Join(man, pageName(c, ".1"))} {
			data, err := os.ReadFile(page)
			if err != nil {
				t.Errorf("%s: no page: %v", c.CommandPath(), err)
				continue
			}
			text := strings.ReplaceAll(string(data), `\-`, "-") // roff escapes its dashes
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(text, "--"+f.Name) {
					t.Errorf("%s: its page %s does not document --%s", c.CommandPath(), filepath.Base(page), f.Name)
				}
			})
		}
	}
}

var (
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fenceRe   = regexp.MustCompile("(?s)```.*?```")
)

// anchors are the anchors of a markdown file's headings, as GitHub makes them.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		a := strings.ToLower(strings.TrimSpace(m[1]))
		a = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(a, "")
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}

// TestDocs: README.md is short (what nsperf is, the set-up, an example, the commands, the
// links) with no line over 200 characters, and every relative link of it and of docs/ resolves: the file exists and so does
// the heading an anchor names.
func TestDocs(t *testing.T) {
	top := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(top, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines: at most 250; the rest belongs in docs/", n)
	}
	// A door, not a log: a line of it says one thing (timings and their history belong in
	// docs/development.md).
	for i, line := range strings.Split(string(readme), "\n") {
		if n := utf8.RuneCountInString(line); n > 200 {
			t.Errorf("README.md:%d has %d characters: at most 200", i+1, n)
		}
	}
	if !strings.HasPrefix(string(readme), "# nsperf\n\nOn a fresh Debian 12 machine") || !strings.Contains(string(readme), "make run") || !strings.Contains(string(readme), "make test") {
		t.Error("README.md does not start with the two set-up commands")
	}
	files, _ := filepath.Glob(filepath.Join(top, "docs", "*.md"))
	files = append(files, filepath.Join(top, "README.md"))
	links := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(string(data), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", filepath.Base(f), target, err)
				continue
			}
			if anchor == "" || st.IsDir() {
				continue
			}
			text, _ := os.ReadFile(file)
			if !anchors(string(text))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", filepath.Base(f), target, filepath.Base(file), anchor)
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d links seen: the test no longer reads them", links)
	}
}
