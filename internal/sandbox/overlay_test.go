package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestOverlay: a command with an Overlay writes, deletes and remakes in Lower as it pleases,
// and Lower is unchanged after it, with no mount of it left on the host; MergeUpper then makes
// Lower what the command saw: a file changed, one deleted (a whiteout), one made, a directory
// removed and made again (opaque: its old entries gone), one removed, a new one.
func TestOverlay(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bwrap")
	lower, scratch := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"a": "a\n", "b": "b\n", "d/x": "x\n", "e/y": "y\n"} {
		os.MkdirAll(filepath.Join(lower, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(lower, name), []byte(text), 0o644)
	}
	if err := giveToNobody(lower); err != nil { // as a build's objects are
		t.Fatal(err)
	}
	o := &Overlay{Lower: lower, Upper: filepath.Join(scratch, "upper"), Work: filepath.Join(scratch, "work")}
	script := "cd " + lower + " && echo A > a && rm b && echo c > c && rm -r d && mkdir d && echo z > d/z && rm -r e && mkdir -p f/g && ls -R"
	cmd, err := Command(context.Background(), Spec{Overlay: o}, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tree := func() []string {
		var out []string
		filepath.WalkDir(lower, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(lower, p)
			if d != nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				rel += "=" + strings.TrimSpace(string(data))
			}
			out = append(out, rel)
			return nil
		})
		slices.Sort(out)
		return out
	}
	if got, want := tree(), []string{".", "a=a", "b=b", "d", "d/x=x", "e", "e/y=y"}; !slices.Equal(got, want) {
		t.Errorf("Lower after the command: %v, want it unchanged: %v", got, want)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), lower) {
		t.Errorf("the overlay is mounted on the host:\n%s", mounts)
	}
	if err := MergeUpper(o.Upper, lower); err != nil {
		t.Fatal(err)
	}
	if got, want := tree(), []string{".", "a=A", "c=c", "d", "d/z=z", "f", "f/g"}; !slices.Equal(got, want) {
		t.Errorf("Lower after the merge: %v, want %v", got, want)
	}
}
