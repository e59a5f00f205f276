package coverage

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/results"
)

// TracefsDir is where tracefs is mounted (or is mounted by Start when it is not).
const TracefsDir = "/sys/kernel/tracing"

// Counter counts the calls of resolved targets with kprobe events, by phase. The kernel keeps
// each event's hits in kprobe_profile whether or not the trace buffer records them: tracing
// is switched off while counting, so that a hit costs the probe and no buffer write.
type Counter struct {
	dir      string
	group    string
	resolved []Resolved
	events   [][]string // per target, its events' names
	calls    []map[string]uint64
	last     map[string]uint64 // each event's hits at the last mark
	phase    string
	tracing  string // tracing_on before Start
	mounted  bool
	errs     []error
}

// Start mounts tracefs if needed, adds a kprobe event per probe of each resolved target
// (`echo 'p:GROUP/EVENT SYMBOL' >> kprobe_events`), enables them and starts counting in
// phase. A probe the kernel refuses makes its target not counted, with the kernel's error.
// Stop undoes all of it.
func Start(resolved []Resolved, phase string) (*Counter, error) {
	c := &Counter{dir: TracefsDir, group: fmt.Sprintf("nsperf_%d", os.Getpid()), resolved: resolved,
		events: make([][]string, len(resolved)), calls: make([]map[string]uint64, len(resolved)), phase: phase}
	mounted, err := mountTracefs(c.dir, "kprobe_events", "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)")
	if err != nil {
		return nil, err
	}
	c.mounted = mounted
	on, err := os.ReadFile(filepath.Join(c.dir, "tracing_on"))
	if err != nil {
		c.unmount()
		return nil, fmt.Errorf("tracefs: %w", err)
	}
	c.tracing = strings.TrimSpace(string(on))
	if err := c.write("tracing_on", "0"); err != nil {
		c.unmount()
		return nil, err
	}
	n := 0
	for i, r := range resolved {
		for _, p := range r.Probes {
			event := fmt.Sprintf("%s_f%d", c.group, n) // kprobe_profile names events without their group
			n++
			// A symbol comes from kallsyms: letters, digits, "_", "." and one ":".
			if err := c.write("kprobe_events", fmt.Sprintf("p:%s/%s %s", c.group, event, p)); err != nil {
				c.resolved[i].NotCounted = fmt.Sprintf("the kernel refused a kprobe on %s (%v)", p, err)
				c.events[i] = nil
				break
			}
			c.events[i] = append(c.events[i], event)
		}
	}
	if n > 0 {
		if err := c.write(filepath.Join("events", c.group, "enable"), "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.Stop()
			return nil, err
		}
	}
	c.last = map[string]uint64{}
	if err := c.read(c.last); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// write writes one line to a tracefs file; kprobe_events is appended to (`echo LINE >>
// kprobe_events`), the others replaced.
func (c *Counter) write(name, line string) error {
	if name == "kprobe_events" {
		return writeLine(c.dir, name, line, os.O_APPEND)
	}
	return writeFile(c.dir, name, line)
}

// read reads the counter's events' hits from kprobe_profile ("  EVENT HITS MISSES" lines).
func (c *Counter) read(hits map[string]uint64) error {
	f, err := os.Open(filepath.Join(c.dir, "kprobe_profile"))
	if err != nil {
		return fmt.Errorf("tracefs: %w", err)
	}
	defer f.Close()
	ours := map[string]bool{}
	for _, evs := range c.events {
		for _, e := range evs {
			ours[e] = true
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !ours[fields[0]] {
			continue
		}
		n, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return fmt.Errorf("tracefs: kprobe_profile: %q: %w", sc.Text(), err)
		}
		hits[fields[0]] = n
	}
	return sc.Err()
}

// Mark ends the current phase, adding each target's calls since the last mark to it, and
// starts phase.
func (c *Counter) Mark(phase string) {
	now := map[string]uint64{}
	if err := c.read(now); err != nil {
		c.errs = append(c.errs, err)
		return
	}
	for i, evs := range c.events {
		for _, e := range evs {
			delta := now[e] - c.last[e]
			if c.calls[i] == nil {
				c.calls[i] = map[string]uint64{}
			}
			c.calls[i][c.phase] += delta
		}
	}
	c.last, c.phase = now, phase
}

// Stop ends the last phase, removes the events, restores tracing_on and unmounts tracefs if
// Start mounted it; it returns each target's calls.
func (c *Counter) Stop() ([]results.FunctionCalls, error) {
	if c.last != nil {
		c.Mark("")
	}
	errs := c.errs
	if err := c.write(filepath.Join("events", c.group, "enable"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, evs := range c.events {
		for _, e := range evs {
			if err := c.write("kprobe_events", fmt.Sprintf("-:%s/%s", c.group, e)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.tracing != "" {
		errs = append(errs, c.write("tracing_on", c.tracing))
	}
	c.unmount()
	out := make([]results.FunctionCalls, len(c.resolved))
	for i, r := range c.resolved {
		out[i] = results.FunctionCalls{Function: r.Function, File: r.File, Module: r.Module, NotCounted: r.NotCounted}
		switch {
		case r.Absent != "":
			out[i].Calls, out[i].Absent = map[string]uint64{}, r.Absent
		case r.NotCounted == "":
			out[i].Probes, out[i].Calls = r.Probes, c.calls[i]
			delete(out[i].Calls, "")
		}
	}
	return out, errors.Join(errs...)
}

func (c *Counter) unmount() {
	if c.mounted {
		unix.Unmount(c.dir, unix.MNT_DETACH)
		c.mounted = false
	}
}
