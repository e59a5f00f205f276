package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadInTree: a tree's files are read only when they are regular, bounded and beneath
// the tree; a FIFO, /dev/zero (even through a link) and links out of the tree are refused at
// once, never read from or waited on.
func TestReadInTree(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(tree, "kernel", "net"), 0o755))
	must(os.WriteFile(filepath.Join(tree, "modules.order"), []byte("net/a.o\n"), 0o644))
	must(os.WriteFile(filepath.Join(tree, "big"), make([]byte, 2048), 0o644))
	must(syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o644))
	must(os.Symlink("/dev/zero", filepath.Join(tree, "zero")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(tree, "abs-link")))
	must(os.Symlink("../../"+filepath.Base(outside)+"/secret", filepath.Join(tree, "kernel", "rel-link")))
	must(os.Symlink("../modules.order", filepath.Join(tree, "kernel", "inside-link")))
	root, err := os.OpenRoot(tree)
	must(err)
	defer root.Close()
	for _, c := range []struct {
		name string
		want string // "" reads
		is   error
	}{
		{"modules.order", "", nil},
		{"kernel/inside-link", "", nil},
		{"big", "the limit is 1 KiB", ErrTooLarge},
		{"fifo", "a FIFO", ErrNotRegular},
		{"zero", "leads out of", ErrOutside},
		{"abs-link", "leads out of", ErrOutside},
		{"kernel/rel-link", "leads out of", ErrOutside},
		{"../" + filepath.Base(outside) + "/secret", "leads out of", ErrOutside},
		{"kernel", "a directory", ErrNotRegular},
	} {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() { data, err = ReadInTree(root, c.name, 1024); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading", c.name)
		}
		if c.want == "" {
			if err != nil || string(data) != "net/a.o\n" {
				t.Errorf("%s: %q, %v", c.name, data, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) || strings.Contains(string(data), "secret") {
			t.Errorf("%s: %q, %v; want an error with %q", c.name, data, err, c.want)
		}
	}
}
