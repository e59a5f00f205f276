// Package procstat reads the machine's CPU time counters (/proc/stat): how much of a
// sample's time went to steal, softirq and to other work on the CPUs the tools are pinned to.
package procstat

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// CPU is one line of /proc/stat, in clock ticks.
type CPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Busy is the time the CPU did anything but idle or wait.
func (c CPU) Busy() uint64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal }

// Total is all of its time.
func (c CPU) Total() uint64 { return c.Busy() + c.Idle + c.IOWait }

// Snapshot is the machine's counters: All for every CPU together, PerCPU by number.
type Snapshot struct {
	All    CPU
	PerCPU map[int]CPU
}

// ClockTicks is USER_HZ, the unit of /proc/stat (100 on Linux).
const ClockTicks = 100

// Read takes a snapshot; a machine without /proc/stat gives an empty one.
func Read() Snapshot { return ReadFile("/proc/stat") }

// ReadFile takes a snapshot from a file in the format of /proc/stat (a test's, or another
// root's); a missing file gives an empty one.
func ReadFile(path string) Snapshot {
	s := Snapshot{PerCPU: map[int]CPU{}}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var v [8]uint64
		for i := range v {
			v[i], _ = strconv.ParseUint(fields[i+1], 10, 64)
		}
		c := CPU{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		if fields[0] == "cpu" {
			s.All = c
		} else if n, err := strconv.Atoi(fields[0][3:]); err == nil {
			s.PerCPU[n] = c
		}
	}
	return s
}

// Sub is the counters' change from an earlier snapshot.
func (c CPU) Sub(o CPU) CPU {
	return CPU{c.User - o.User, c.Nice - o.Nice, c.System - o.System, c.Idle - o.Idle, c.IOWait - o.IOWait, c.IRQ - o.IRQ, c.SoftIRQ - o.SoftIRQ, c.Steal - o.Steal}
}
