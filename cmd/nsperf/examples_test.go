package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/testkit/clitest"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// The CI recipes under examples/ are held to what can be checked here: the GitHub workflow
// against actionlint (the maintained validator of workflow files), the GitLab job parsed,
// every nsperf command in them and in fleet.sh parsed by nsperf's own command tree (the
// subcommand, its flags, its arguments), the exit-code gates run with each code, and
// fleet.sh run for real against a PostgreSQL history.

const examples = "../../examples"

func TestGitHubActionsRecipe(t *testing.T) {
	path := filepath.Join(examples, "github-actions.yml")
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := linter.LintFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string
				Run  string
			}
		}
	}
	readYAML(t, path, &wf)
	var scripts []string
	gate := ""
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			scripts = append(scripts, s.Run)
			if s.Name == "Fail on a regression" {
				gate = s.Run
			}
		}
	}
	checkCommands(t, path, scripts, 3)
	checkGate(t, gate, "CODE")
}

func TestGitLabRecipe(t *testing.T) {
	path := filepath.Join(examples, "gitlab-ci.yml")
	var doc map[string]any
	readYAML(t, path, &doc)
	job, ok := doc["nsperf-ab"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no job nsperf-ab", path)
	}
	lines, _ := job["script"].([]any)
	var scripts []string
	gate := ""
	for _, l := range lines {
		s, ok := l.(string)
		if !ok {
			t.Fatalf("%s: a script line is not a string: %v", path, l)
		}
		scripts = append(scripts, s)
		if strings.HasPrefix(s, "case ") {
			gate = s
		}
	}
	reports, _ := job["artifacts"].(map[string]any)["reports"].(map[string]any)
	if reports["junit"] != "junit.xml" {
		t.Errorf("%s: the JUnit report is not kept: %v", path, reports)
	}
	checkCommands(t, path, scripts, 3)
	checkGate(t, gate, "code")
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkGate runs a recipe's exit-code gate with each code nsperf exits with: 0 and 4 pass,
// 1 (a regression) and anything else fail the job.
func checkGate(t *testing.T, script, variable string) {
	t.Helper()
	if script == "" {
		t.Fatal("no exit-code gate in the recipe")
	}
	for code, fails := range map[string]bool{"0": false, "1": true, "4": false, "3": true, "2": true} {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(os.Environ(), variable+"="+code)
		err := cmd.Run()
		if (err != nil) != fails {
			t.Errorf("the gate with nsperf's exit %s: error %v, want failing %v", code, err, fails)
		}
	}
}

// shellVars stand in for the variables the recipes use, to parse their nsperf commands.
var shellVars = map[string]string{"SCENARIO": "veth-bigtcp", "scenario": "veth-bigtcp", "NSPERF": "nsperf", "NSPERF_DB": "postgres:///nsperf", "label": "host/6.12", "RUN_FLAGS": ""}

// checkCommands finds every nsperf command of the scripts and parses it with nsperf's command
// tree: an unknown subcommand or flag, or arguments the subcommand refuses, fail the test.
func checkCommands(t *testing.T, path string, scripts []string, atLeast int) {
	t.Helper()
	n, problems := commandProblems(scripts)
	for _, p := range problems {
		t.Errorf("%s: %s", path, p)
	}
	if n < atLeast {
		t.Errorf("%s: %d nsperf commands found, want at least %d", path, n, atLeast)
	}
}

func commandProblems(scripts []string) (n int, problems []string) {
	for _, script := range scripts {
		for _, words := range shellCommands(script) {
			if len(words) == 0 || words[0] != "nsperf" {
				continue
			}
			n++
			line := strings.Join(words, " ")
			root := newRoot(io.Discard, io.Discard)
			cmd, rest, err := root.Find(words[1:])
			switch {
			case err != nil || cmd == root:
				problems = append(problems, fmt.Sprintf("%q: no such nsperf command (%v)", line, err))
				continue
			case cmd.ParseFlags(rest) != nil:
				problems = append(problems, fmt.Sprintf("%q: %v", line, cmd.ParseFlags(rest)))
				continue
			}
			if cmd.Args != nil {
				if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
					problems = append(problems, fmt.Sprintf("%q: %v", line, err))
				}
			}
		}
	}
	return n, problems
}

// TestCommandProblems: the check finds what is wrong with a command.
func TestCommandProblems(t *testing.T) {
	n, problems := commandProblems([]string{"nsperf run veth-bigtcp --no-such-flag\nnsperf frobnicate\nnsperf report\nnsperf kconfig veth-bigtcp > f\nmake -j4 && nsperf run \\\n  \"$SCENARIO\" --runs 2"})
	if n != 5 || len(problems) != 3 {
		t.Errorf("%d commands, problems %q: want 5 commands, 3 problems (a flag, a command, report's argument)", n, problems)
	}
}

var (
	continuation = regexp.MustCompile(`\\\n\s*`)
	separators   = regexp.MustCompile(`&&|\|\||;|\||\(|\)|\bdo\b|\bthen\b`)
)

// shellCommands splits a script into simple commands and those into words: line
// continuations joined, split at && || ; | ( ) do then, redirections and what follows them
// dropped, quotes removed, variables expanded from shellVars.
func shellCommands(script string) [][]string {
	var out [][]string
	for _, line := range strings.Split(continuation.ReplaceAllString(script, " "), "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		for _, part := range separators.Split(line, -1) {
			var words []string
			for _, w := range shellWords(part) {
				if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
					break
				}
				words = append(words, w)
			}
			if len(words) > 0 && words[0] == "exec" {
				words = words[1:]
			}
			if len(words) > 0 {
				out = append(out, words)
			}
		}
	}
	return out
}

// shellWords splits at blanks outside quotes, removes the quotes and expands $VAR, ${VAR}
// and ${VAR:-...}; a word that expands to nothing unquoted disappears.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	var q rune
	flush := func() {
		if inWord && (cur.Len() > 0 || quoted) {
			words = append(words, os.Expand(cur.String(), expandVar))
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	for _, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			q, inWord, quoted = r, true, true
		case r == ' ' || r == '\t':
			flush()
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	var out []string
	for _, w := range words {
		if w != "" || strings.Contains(s, `""`) {
			out = append(out, w)
		}
	}
	return out
}

func expandVar(name string) string {
	name, _, _ = strings.Cut(name, ":-")
	if v, ok := shellVars[name]; ok {
		return v
	}
	return "x"
}

// TestFleetRecipe runs examples/fleet.sh as a machine of the fleet would, against a real
// PostgreSQL history: it measures, records the run under its label, and the gate passes
// (no change point in a series of two runs).
func TestFleetRecipe(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	dsn := testenv.PostgresServer(t)
	checkCommands(t, "fleet.sh", []string{mustRead(t, filepath.Join(examples, "fleet.sh"))}, 2)
	for i := 0; i < 2; i++ {
		script, _ := filepath.Abs(filepath.Join(examples, "fleet.sh"))
		cmd := exec.Command("sh", script)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "NSPERF="+clitest.Binary, "NSPERF_DB="+dsn, "SCENARIOS=veth-bigtcp", "RUN_FLAGS=--runs 2 --duration 1s --omit 0s")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fleet.sh, run %d: %v\n%s", i+1, err, out)
		}
	}
	host, _ := os.Hostname()
	out, stderr, code := clitest.Run(t, "history", "list", "--db", dsn)
	if code != 0 || strings.Count(out, host+"/") != 2 {
		t.Errorf("history list: exit %d, want the two runs labelled %s/RELEASE\n%s\n%s", code, host, out, stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
