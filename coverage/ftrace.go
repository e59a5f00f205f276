package coverage

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Tracer records which of a set of functions run, with ftrace's function tracer limited to
// them (set_ftrace_filter, by their index in available_filter_functions: writing names would
// take a search of every function per name). A reader drains trace_pipe as it fills and
// keeps each function's name once.
type Tracer struct {
	dir     string
	mounted bool
	enabled int // functions the filter holds
	fd      int
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	ran     map[string]bool
	lost    int // "[LOST N EVENTS]" lines: the buffer filled faster than it was read
	errs    []error
}

// traceBufferKB is each CPU's trace buffer: the reader drains it, so it only has to hold
// what arrives between two reads.
const traceBufferKB = 16384

// StartTrace traces the calls of the functions named: those of available_filter_functions
// whose name is one of them, wherever they are (the image or a loaded module).
func StartTrace(names map[string]bool) (*Tracer, error) {
	t := &Tracer{dir: TracefsDir, fd: -1, ran: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	mounted, err := mountTracefs(t.dir, "available_filter_functions", "no function tracer in this kernel (CONFIG_FUNCTION_TRACER)")
	if err != nil {
		return nil, err
	}
	t.mounted = mounted
	indices, err := t.filterIndices(names)
	if err == nil && len(indices) == 0 {
		err = errors.New("none of the functions is traceable in this kernel")
	}
	if err != nil {
		t.Stop()
		return nil, err
	}
	t.enabled = len(indices)
	steps := []func() error{
		func() error { return writeFile(t.dir, "tracing_on", "0") },
		func() error { return writeFile(t.dir, "trace", "") },
		func() error { return writeFile(t.dir, "buffer_size_kb", strconv.Itoa(traceBufferKB)) },
		func() error { return t.setFilter(indices) },
		func() error { return writeFile(t.dir, "current_tracer", "function") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Stop()
			return nil, err
		}
	}
	// From here on, Stop must put the tracer back whatever fails.
	fd, err := unix.Open(filepath.Join(t.dir, "trace_pipe"), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Stop()
		return nil, fmt.Errorf("tracefs: trace_pipe: %w", err)
	}
	t.fd = fd
	go t.read()
	if err := writeFile(t.dir, "tracing_on", "1"); err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

// filterIndices are the 1-based lines of available_filter_functions ("NAME" or "NAME [MOD]")
// whose name is wanted.
func (t *Tracer) filterIndices(names map[string]bool) ([]int, error) {
	f, err := os.Open(filepath.Join(t.dir, "available_filter_functions"))
	if err != nil {
		return nil, fmt.Errorf("tracefs: %w", err)
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		name, _, _ := strings.Cut(sc.Text(), " ")
		if names[name] {
			out = append(out, n)
		}
	}
	return out, sc.Err()
}

// setFilter writes the indices into set_ftrace_filter in one open (`echo 12 57 ... >
// set_ftrace_filter`), in writes that end at a space.
func (t *Tracer) setFilter(indices []int) error {
	f, err := os.OpenFile(filepath.Join(t.dir, "set_ftrace_filter"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("tracefs: %w", err)
	}
	var b strings.Builder
	for i, idx := range indices {
		b.WriteString(strconv.Itoa(idx))
		b.WriteByte(' ')
		if b.Len() > 3000 || i == len(indices)-1 {
			if _, err := f.WriteString(b.String()); err != nil {
				f.Close()
				return fmt.Errorf("tracefs: set_ftrace_filter: %w", err)
			}
			b.Reset()
		}
	}
	return f.Close()
}

// read drains trace_pipe until Stop, keeping each traced function's name.
func (t *Tracer) read() {
	defer close(t.done)
	buf := make([]byte, 1<<16)
	var rest []byte
	for {
		n, err := unix.Read(t.fd, buf)
		if n > 0 {
			rest = t.lines(append(rest, buf[:n]...))
			continue
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			t.mu.Lock()
			t.errs = append(t.errs, fmt.Errorf("tracefs: trace_pipe: %w", err))
			t.mu.Unlock()
			return
		}
		select {
		case <-t.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lines records the functions of the whole lines of data and returns what follows the last.
func (t *Tracer) lines(data []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		i := slices.Index(data, '\n')
		if i < 0 {
			return data
		}
		line := string(data[:i])
		if name := TracedFunction(line); name != "" {
			t.ran[name] = true
		} else if strings.Contains(line, "[LOST ") {
			t.lost++
		}
		data = data[i+1:]
	}
}

// TracedFunction is the function of one line of the function tracer's output ("  iperf3-81
// [001] ..... 12.345678: tcp_sendmsg <-sock_sendmsg"), or "".
func TracedFunction(line string) string {
	_, after, ok := strings.Cut(line, "]")
	if !ok {
		return ""
	}
	_, after, ok = strings.Cut(after, ": ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(after, " <-")
	name = strings.TrimSpace(name)
	if name == "" || !symbolName.MatchString(name) {
		return ""
	}
	return name
}

// Stop ends tracing, puts the tracer back (nop, no filter, tracing off), and returns the
// functions that ran, sorted, and how often the trace lost events (a function called only
// then is missing).
func (t *Tracer) Stop() ([]string, int, error) {
	errs := []error{writeFile(t.dir, "tracing_on", "0")}
	if t.fd >= 0 {
		close(t.stop)
		<-t.done
		unix.Close(t.fd)
		t.fd = -1
	}
	errs = append(errs, writeFile(t.dir, "current_tracer", "nop"), writeFile(t.dir, "set_ftrace_filter", ""),
		writeFile(t.dir, "trace", ""))
	if t.mounted {
		unix.Unmount(t.dir, unix.MNT_DETACH)
		t.mounted = false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for name := range t.ran {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, t.lost, errors.Join(append(errs, t.errs...)...)
}

// mountTracefs mounts tracefs on dir unless file is there already, and says whether it did;
// missing is the error when the kernel has no such file.
func mountTracefs(dir, file, missing string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
		return false, nil
	}
	if err := unix.Mount("tracefs", dir, "tracefs", 0, ""); err != nil {
		return false, fmt.Errorf("%s, and mounting tracefs on %s failed: %w", missing, dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		unix.Unmount(dir, unix.MNT_DETACH)
		return false, errors.New(missing)
	}
	return true, nil
}

// writeFile writes one line to a tracefs file, replacing what it held (`echo LINE > FILE`).
func writeFile(dir, name, line string) error { return writeLine(dir, name, line, os.O_TRUNC) }

// writeLine writes one line to a tracefs file opened with flag (os.O_TRUNC: `echo LINE >
// FILE`; os.O_APPEND: `echo LINE >> FILE`).
func writeLine(dir, name, line string, flag int) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|flag, 0)
	if err != nil {
		return fmt.Errorf("tracefs: %w", err)
	}
	_, err = f.WriteString(line + "\n")
	if err != nil {
		err = fmt.Errorf("tracefs: writing %q to %s: %w", line, name, err)
	}
	return errors.Join(err, f.Close())
}
