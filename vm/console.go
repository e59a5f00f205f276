package vm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nsperf/nsperf/internal/safefile"
	"golang.org/x/sys/unix"
)

// The console log keeps the start of the guest's console (the boot) and its end (an oops, a
// hang's last words), each up to this size, and says how much was dropped between them: a
// guest that prints without end cannot fill the host's /run.
const consoleKeep = 4 << 20

// consoleLog copies what QEMU writes to the console FIFO into the console log, bounded.
type consoleLog struct {
	out     *os.File
	written int64  // bytes in out, up to consoleKeep
	tail    []byte // the last bytes past the head, up to consoleKeep after each trim
	dropped int64  // bytes that are neither in out nor in tail
}

// Write keeps the head in the file and the rest in memory, the last consoleKeep of it.
func (c *consoleLog) Write(p []byte) (int, error) {
	n := len(p)
	if room := consoleKeep - c.written; room > 0 {
		head := p[:min(int64(len(p)), room)]
		if _, err := c.out.Write(head); err != nil {
			return 0, err
		}
		c.written += int64(len(head))
		p = p[len(head):]
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*consoleKeep { // trimmed in steps, not on every write
		cut := len(c.tail) - consoleKeep
		c.dropped += int64(cut)
		c.tail = append(c.tail[:0], c.tail[cut:]...)
	}
	return n, nil
}

// Close appends the tail, after a line that says what was dropped, and closes the file.
func (c *consoleLog) Close() error {
	if len(c.tail) > consoleKeep {
		cut := len(c.tail) - consoleKeep
		c.dropped += int64(cut)
		c.tail = c.tail[cut:]
	}
	var err error
	if c.dropped > 0 {
		_, err = fmt.Fprintf(c.out, "\n[nsperf: %d bytes of console output dropped here: the log keeps the first and the last %s]\n", c.dropped, safefile.Size(consoleKeep))
	}
	if len(c.tail) > 0 && err == nil {
		_, err = c.out.Write(c.tail)
	}
	return errors.Join(err, c.out.Close())
}

// startConsole makes the FIFOs of the console's pipe (prefix.in, which nothing writes: the
// guest gets no input; prefix.out, which QEMU writes the console to) and copies from
// prefix.out into the bounded console log until stop is called, after QEMU has exited: stop
// drains what is left and returns once the log is complete. prefix.out is opened read-write,
// so that it never reads as ended before QEMU opens it.
func startConsole(prefix, log string) (stop func(), err error) {
	in, fifo := prefix+".in", prefix+".out"
	for _, f := range []string{in, fifo} {
		os.Remove(f)
		if err := unix.Mkfifo(f, 0o600); err != nil {
			return nil, fmt.Errorf("console FIFO %s: %w", f, err)
		}
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("console FIFO %s: %w", fifo, err)
	}
	out, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		r.Close()
		return nil, err
	}
	c := &consoleLog{out: out}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(c, r) // ends with the read deadline that stop sets
		c.Close()
	}()
	return func() {
		// QEMU has exited: what it wrote is in the FIFO; read it until the FIFO is empty
		// for a moment.
		r.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		<-done
		r.Close()
		os.Remove(fifo)
		os.Remove(in)
	}, nil
}
