package vm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleLogIsBounded: a guest that prints 20 MiB leaves its first and last 4 MiB and a
// line that says how much is missing between them; one that prints little leaves all of it.
func TestConsoleLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	prefix, log := filepath.Join(dir, "console"), filepath.Join(dir, "console.log")
	fifo := prefix + ".out"
	for _, total := range []int{1000, 20 << 20} {
		stop, err := startConsole(prefix, log)
		if err != nil {
			t.Fatal(err)
		}
		// What QEMU does: open the FIFO and write the console to it.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sent bytes.Buffer
		for line := 0; sent.Len() < total; line++ {
			fmt.Fprintf(&sent, "[%9d] console line\n", line)
		}
		if _, err := w.Write(sent.Bytes()); err != nil {
			t.Fatal(err)
		}
		w.Close()
		stop()
		got, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{fifo, prefix + ".in"} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("the FIFO %s is left: %v", f, err)
			}
		}
		if sent.Len() <= 2*consoleKeep {
			if !bytes.Equal(got, sent.Bytes()) {
				t.Errorf("%d bytes sent, %d kept: a short console must be kept whole", sent.Len(), len(got))
			}
			continue
		}
		dropped := sent.Len() - 2*consoleKeep
		marker := fmt.Sprintf("\n[nsperf: %d bytes of console output dropped here: the log keeps the first and the last 4 MiB]\n", dropped)
		want := string(sent.Bytes()[:consoleKeep]) + marker + string(sent.Bytes()[sent.Len()-consoleKeep:])
		if string(got) != want {
			t.Errorf("%d bytes sent, %d kept; want the first and last 4 MiB with the marker (%q in it: %v)", sent.Len(), len(got), strings.TrimSpace(marker), strings.Contains(string(got), "dropped"))
		}
	}
}
