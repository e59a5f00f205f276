package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRequireToolHelper is run by TestRequireTool as a child process, with PATH empty.
func TestRequireToolHelper(t *testing.T) {
	if os.Getenv("NSPERF_TESTENV_HELPER") != "1" {
		return
	}
	RequireTool(t, "git")
	t.Log("reached past RequireTool")
}

// TestRequireTool: a missing program fails the test under CI's settings (NSPERF_REQUIRE_ROOT=1)
// naming it and what installs it, and skips it elsewhere.
func TestRequireTool(t *testing.T) {
	for _, ci := range []bool{true, false} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRequireToolHelper$", "-test.v", "-test.count=1")
		cmd.Env = []string{"PATH=" + t.TempDir(), "NSPERF_TESTENV_HELPER=1"}
		if ci {
			cmd.Env = append(cmd.Env, "NSPERF_REQUIRE_ROOT=1")
		}
		out, err := cmd.CombinedOutput()
		text := string(out)
		if strings.Contains(text, "reached past RequireTool") || !strings.Contains(text, "git is not installed (scripts/deps.sh installs it)") {
			t.Errorf("ci %v: %v\n%s", ci, err, text)
		}
		if ci && (err == nil || !strings.Contains(text, "--- FAIL: TestRequireToolHelper")) {
			t.Errorf("under NSPERF_REQUIRE_ROOT=1 a missing git did not fail: %v\n%s", err, text)
		}
		if !ci && (err != nil || !strings.Contains(text, "--- SKIP: TestRequireToolHelper")) {
			t.Errorf("outside CI a missing git did not skip: %v\n%s", err, text)
		}
	}
}

// TestNoToolSkips: no test of the tree looks for a program and skips by itself where it is
// missing: RequireTool does, which fails in CI, so a test cannot vanish from a green run
// because a machine lacks a program the deps script installs.
func TestNoToolSkips(t *testing.T) {
	root := filepath.Join("..", "..")
	lookup := regexp.MustCompile(`exec\.LookPath\(|os\.Stat\("/(usr/)?s?bin/`)
	skip := regexp.MustCompile(`\bt\.Skip(f|Now)?\(`)
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var lines []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		for i, line := range lines {
			if !lookup.MatchString(line) {
				continue
			}
			for j := i; j < len(lines) && j <= i+3; j++ {
				if skip.MatchString(lines[j]) {
					found = append(found, fmt.Sprintf("%s:%d", path, j+1))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("tests that skip where a program is missing, instead of testenv.RequireTool: %v", found)
	}
}
