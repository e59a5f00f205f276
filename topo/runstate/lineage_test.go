package runstate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestLineage: this process's lineage starts with itself and goes up to init's child; the
// record a lock file holds reads back the same, and a file without one reads as unknown.
func TestLineage(t *testing.T) {
	own := OwnLineage()
	if len(own) < 2 || own[0].PID != os.Getpid() || own[1].PID != os.Getppid() || own[0].Start == 0 {
		t.Fatalf("own lineage %v: want this process (%d) then its parent (%d), with start times", own, os.Getpid(), os.Getppid())
	}
	if own[len(own)-1].PID == 1 {
		t.Errorf("init is in the lineage %v: every process descends from it, so it tells nothing", own)
	}
	if !own.Includes(own[1]) || own.Includes(Proc{PID: own[0].PID, Start: own[0].Start + 1}) {
		t.Error("Includes must match the id and the start time together (an id is reused)")
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := WriteLineage(&buf); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "lock")
	os.WriteFile(lock, buf.Bytes(), 0o600)
	if got := ReadLineage(lock); len(got) != len(own) || !got.Includes(own[0]) {
		t.Errorf("read back %v, want %v", got, own)
	}
	for name, content := range map[string]string{"empty": "", "cut short": `{"made_by":[{"pid":`, "missing": "-"} {
		path := filepath.Join(dir, name)
		if content != "-" {
			os.WriteFile(path, []byte(content), 0o600)
		}
		if got := ReadLineage(path); got != nil {
			t.Errorf("%s lock: lineage %v, want none", name, got)
		}
	}
}
