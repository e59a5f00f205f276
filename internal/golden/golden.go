// Package golden compares a test's output with a file kept beside the test, and rewrites the
// file with -update. It imports nothing of nsperf, so that any package's tests can use it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that compares golden files.
var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with the file at path, or rewrites the file with -update.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (go test -update creates it): %v", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
