package results

import (
	"strings"
	"testing"
)

// TestPrintableWriter: control characters but newline and tab leave as escapes, C1 controls
// too (also split over two writes); text, UTF-8 and nsperf's own layout pass unchanged.
func TestPrintableWriter(t *testing.T) {
	var b strings.Builder
	w := PrintableWriter(&b)
	for _, part := range []string{"ok\tfine é £ ü\n", "red \x1b[31m\r\nok 1\x00\x7f", " next\u0085line \xc2", "\x9b2J end\n"} {
		if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
			t.Fatalf("write %q: %d %v", part, n, err)
		}
	}
	want := "ok\tfine é £ ü\nred \\x1b[31m\\x0d\nok 1\\x00\\x7f next\\u0085line \xc2\\x9b2J end\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

// TestDescribeTurns: turns in alternation name the paused guest's CPU; turns together say that
// both guests ran each round at once, each on a CPU of its own.
func TestDescribeTurns(t *testing.T) {
	alt := DescribeTurns([]Turn{{Gate: 1, Kernel: "A", Seconds: 2, PausedCPUSeconds: 0.01}, {Gate: 1, Kernel: "B", Seconds: 2, PausedCPUSeconds: 0.02}})
	if !strings.Contains(alt, "turns: 2 (1A 1B), the other guest paused in each") || !strings.Contains(alt, "0.02 s during B's 2 s turn 1") {
		t.Errorf("alternating: %q", alt)
	}
	together := DescribeTurns([]Turn{{Gate: 1, Kernel: "B", Seconds: 2, Together: true}, {Gate: 1, Kernel: "A", Seconds: 2.1, Together: true}})
	if !strings.Contains(together, "turns: 2 (1B 1A), both guests' round N at once, each on a host CPU of its own") || strings.Contains(together, "paused") {
		t.Errorf("together: %q", together)
	}
	if DescribeTurns(nil) != "" {
		t.Error("no turns: a line")
	}
}
