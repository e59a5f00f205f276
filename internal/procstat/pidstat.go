package procstat

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// PID is what nsperf reads of a process's /proc/PID/stat (proc(5)): the fields after its
// name, which ends at the last ")" since a name may hold spaces and parentheses: state, ppid,
// pgrp, session, tty_nr, tpgid, flags, ... The one reader of that file.
type PID struct{ fields [][]byte }

// ReadPID reads /proc/PID/stat; ok is false when the process is gone or the line unreadable.
func ReadPID(pid int) (PID, bool) {
	return ReadPIDFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
}

// ReadPIDFile reads a stat file by path (/proc/PID/task/TID/stat, a test's copy).
func ReadPIDFile(path string) (PID, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return PID{}, false
	}
	return ParsePID(data)
}

// ParsePID reads a /proc/PID/stat line; ok is false for one without a name.
func ParsePID(stat []byte) (PID, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return PID{}, false
	}
	f := bytes.Fields(stat[i+1:])
	return PID{f}, len(f) > 0
}

// field is the n-th field of proc(5)'s numbering (3 is the state), "" when absent.
func (p PID) field(n int) string {
	if n-3 < 0 || n-3 >= len(p.fields) {
		return ""
	}
	return string(p.fields[n-3])
}

// State is the process's state letter: R, S, D, Z (zombie), X (dead), ...
func (p PID) State() string { return p.field(3) }

// Exited reports whether the process has ended: a zombie waiting to be reaped, or dead.
func (p PID) Exited() bool { return p.State() == "Z" || p.State() == "X" }

// PPID is the parent's process id.
func (p PID) PPID() int { n, _ := strconv.Atoi(p.field(4)); return n }

// pfKthread is PF_KTHREAD of include/linux/sched.h.
const pfKthread = 0x00200000

// KernelThread reports whether the flags (field 9) mark a kernel thread.
func (p PID) KernelThread() bool {
	flags, err := strconv.ParseUint(p.field(9), 10, 64)
	return err == nil && flags&pfKthread != 0
}

// userHZ is the unit of the CPU times: USER_HZ, 100 on every Linux architecture nsperf runs on.
const userHZ = 100

// CPUTime is the user and system time the process has used (utime + stime, fields 14 and 15).
func (p PID) CPUTime() time.Duration {
	ut, _ := strconv.ParseInt(p.field(14), 10, 64)
	st, _ := strconv.ParseInt(p.field(15), 10, 64)
	return time.Duration(ut+st) * time.Second / userHZ
}

// StartTime is when the process started, in clock ticks after boot (field 22): with the id,
// it names one process, where an id alone is reused within minutes.
func (p PID) StartTime() uint64 { n, _ := strconv.ParseUint(p.field(22), 10, 64); return n }
