// Command testlanes is make test's reader of `go test -json` (scripts/test.sh): `filter`
// prints a lane's output as a plain `go test` prints it (package lines, build errors, and the
// output of the tests that failed, or that were still running when the binary died) and keeps
// each test's time; `table` prints, at the end of the suite, each lane's time against its
// limit with its ten longest tests, so that every run shows its margin.
//
//	go test -json ./pkg | go run ./scripts/testlanes filter -times LOGS/host.times
//	go run ./scripts/testlanes table -logs LOGS host:30m builds:30m guests:30m
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testlanes filter -times FILE | testlanes table -logs DIR LANE:LIMIT...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "filter":
		fs := flag.NewFlagSet("filter", flag.ExitOnError)
		times := fs.String("times", "", "where each test's time is written (one line a test)")
		cgroup := fs.String("cgroup", "", "the lane's cgroup directory, whose CPU each test's line counts")
		fs.Parse(os.Args[2:])
		err = filterCommand(*times, *cgroup)
	case "table":
		fs := flag.NewFlagSet("table", flag.ExitOnError)
		logs := fs.String("logs", "", "the directory of the lanes' .times and .secs files")
		fs.Parse(os.Args[2:])
		err = tableCommand(os.Stdout, *logs, fs.Args())
	default:
		err = fmt.Errorf("unknown command %q: filter or table", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlanes:", err)
		os.Exit(1)
	}
}

func filterCommand(timesPath, cgroup string) error {
	var times io.Writer = io.Discard
	if timesPath != "" {
		f, err := os.Create(timesPath)
		if err != nil {
			return err
		}
		defer f.Close()
		times = f
	}
	cpu := func() float64 { return 0 }
	if cgroup != "" {
		cpu = func() float64 { return CgroupCPU(cgroup) }
	}
	return Filter(os.Stdin, os.Stdout, times, cpu)
}

// CgroupCPU is the CPU seconds the processes of a cgroup used: cgroup v2's cpu.stat, else
// v1's cpuacct.usage; 0 when neither reads.
func CgroupCPU(dir string) float64 {
	if data, err := os.ReadFile(filepath.Join(dir, "cpu.stat")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return us / 1e6
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage")); err == nil {
		ns, _ := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		return ns / 1e9
	}
	return 0
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Elapsed    float64
	Output     string
}

// TestTime is one top-level test's time: Result is pass, fail, skip, or running when its
// binary ended (a panic, go test's -timeout) before the test did. CPU is what the lane used
// while it ran (the lane's other work included: a build in the background, another package).
type TestTime struct {
	Package, Test string
	Seconds       float64
	Result        string
	CPU           float64
}

// field is a name as one field of a times line: its tabs, line ends and other control
// characters written as spaces (go test's JSON may carry any; the file is a line a test).
func field(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// Filter copies a `go test -json` stream to out as plain `go test` would print it, and writes
// every top-level test's time to times, a line each: package, test, seconds, result, and the
// CPU seconds cpu counted while it ran. A line that is no JSON (go's own messages) is copied
// as it is.
func Filter(in io.Reader, out, times io.Writer, cpu func() float64) error {
	f := &filter{out: out, times: times, cpu: cpu, tests: map[string]*runningTest{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, sc.Text())
			continue
		}
		switch {
		case e.Action == "build-output":
			io.WriteString(out, e.Output)
		case e.Test == "":
			f.packageEvent(e)
		default:
			f.testEvent(e)
		}
	}
	return sc.Err()
}

// filter is what Filter keeps while it reads a stream: where it writes, and the top-level
// tests that have started and not ended.
type filter struct {
	out, times io.Writer
	cpu        func() float64
	// Top-level tests by package and name (testKey); subtests' output goes to their parent's.
	tests map[string]*runningTest
}

// runningTest is a top-level test that has not ended: when it started or went on, the CPU
// count then, and what it and its subtests said.
type runningTest struct {
	start    time.Time
	startCPU float64
	output   []string
}

// testKey is the key of a test's top-level test in filter.tests.
func testKey(pkg, test string) string {
	top, _, _ := strings.Cut(test, "/")
	return pkg + " " + top
}

// packageEvent handles an event of the package's own: its lines (ok, FAIL, a panic outside a
// test) are printed, PASS left out, and its end ends the tests still running.
func (f *filter) packageEvent(e event) {
	if e.Action == "output" && (strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "ok ")) {
		f.ended(e.Package, e.Time)
	}
	if e.Action == "output" && strings.TrimSpace(e.Output) != "PASS" {
		io.WriteString(f.out, e.Output)
	}
	if e.Action == "fail" || e.Action == "pass" {
		f.ended(e.Package, e.Time)
	}
}

// testEvent handles an event of a test or a subtest: its output is kept for its top-level
// test, printed if that fails or never ends; a top-level test's end writes its time.
func (f *filter) testEvent(e event) {
	k := testKey(e.Package, e.Test)
	r := f.tests[k]
	if r == nil {
		r = &runningTest{start: e.Time, startCPU: f.cpu()}
		f.tests[k] = r
	}
	top := !strings.Contains(e.Test, "/")
	switch e.Action {
	case "cont":
		// A parallel test waits (pause) until the sequential ones end: its CPU counts
		// from when it goes on.
		if top {
			r.start, r.startCPU = e.Time, f.cpu()
		}
	case "output":
		r.output = append(r.output, e.Output)
	case "pass", "skip":
		if top {
			f.record(e.Package, e.Test, e.Elapsed, e.Action, r)
			delete(f.tests, k)
		}
	case "fail":
		if top {
			f.flush(e.Test, r)
			f.record(e.Package, e.Test, e.Elapsed, "fail", r)
			delete(f.tests, k)
		}
	}
}

// record writes a top-level test's line of times, the CPU counted from when r started.
func (f *filter) record(pkg, test string, secs float64, result string, r *runningTest) {
	fmt.Fprintf(f.times, "%s\t%s\t%.2f\t%s\t%.1f\n", field(pkg), field(test), secs, result, f.cpu()-r.startCPU)
}

// flush prints a test's output as plain go test does: its --- FAIL line first (-json
// streams it last), then what it and its subtests said.
func (f *filter) flush(name string, r *runningTest) {
	for _, line := range r.output {
		if strings.HasPrefix(line, "--- FAIL: "+name+" (") {
			io.WriteString(f.out, line)
		}
	}
	for _, line := range r.output {
		if !strings.HasPrefix(strings.TrimSpace(line), "=== ") && !strings.HasPrefix(line, "--- FAIL: "+name+" (") {
			io.WriteString(f.out, line)
		}
	}
}

// ended writes the tests of pkg that never ended: they died with their binary (a panic,
// go test's -timeout). What they said is shown, and they count as running until then.
func (f *filter) ended(pkg string, at time.Time) {
	var names []string
	for k := range f.tests {
		if strings.HasPrefix(k, pkg+" ") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		r, name := f.tests[k], strings.TrimPrefix(k, pkg+" ")
		f.flush(name, r)
		secs := 0.0
		if !r.start.IsZero() && !at.IsZero() {
			secs = at.Sub(r.start).Seconds()
		}
		f.record(pkg, name, secs, "running", r)
		delete(f.tests, k)
	}
}

// Lane is one lane of make test: its wall time, go test's -timeout for it, and its tests.
type Lane struct {
	Name    string
	Seconds float64 // the lane's wall time; 0 when unknown
	CPU     float64 // the CPU seconds its processes used (its cgroup's); 0 when unknown
	Limit   time.Duration
	Tests   []TestTime
}

// readLane reads what test.sh wrote of a lane: DIR/NAME.secs (its wall seconds), DIR/NAME.cpu
// (its CPU seconds) and DIR/NAME.times (its tests').
func readLane(dir, name string, limit time.Duration) (Lane, error) {
	l := Lane{Name: name, Limit: limit}
	if data, err := os.ReadFile(filepath.Join(dir, name+".secs")); err == nil {
		l.Seconds, _ = strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	}
	if data, err := os.ReadFile(filepath.Join(dir, name+".cpu")); err == nil {
		l.CPU, _ = strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	}
	data, err := os.ReadFile(filepath.Join(dir, name+".times"))
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 4 {
			continue
		}
		secs, _ := strconv.ParseFloat(f[2], 64)
		t := TestTime{Package: f[0], Test: f[1], Seconds: secs, Result: f[3]}
		if len(f) > 4 {
			t.CPU, _ = strconv.ParseFloat(f[4], 64)
		}
		l.Tests = append(l.Tests, t)
	}
	return l, nil
}

func tableCommand(w io.Writer, dir string, specs []string) error {
	if dir == "" || len(specs) == 0 {
		return errors.New("table: give -logs DIR and at least one LANE:LIMIT (host:30m)")
	}
	var lanes []Lane
	for _, s := range specs {
		name, limitText, ok := strings.Cut(s, ":")
		limit, err := time.ParseDuration(limitText)
		if !ok || err != nil || limit <= 0 {
			return fmt.Errorf("table: %q is not LANE:LIMIT (host:30m)", s)
		}
		l, err := readLane(dir, name, limit)
		if err != nil {
			return err
		}
		lanes = append(lanes, l)
	}
	Table(w, lanes)
	return nil
}

// Table prints each lane's time against its limit and its ten longest tests, and says which
// lane or test has used more than half of its limit: the suite must pass on a fresh machine
// with every limit at least twice what it measures.
func Table(w io.Writer, lanes []Lane) {
	fmt.Fprintln(w, "make test: each lane's wall time against its go test -timeout, and its ten longest tests")
	for _, l := range lanes {
		margin := "?"
		if l.Seconds > 0 {
			margin = fmt.Sprintf("%.1fx", l.Limit.Seconds()/l.Seconds)
		}
		cpu := ""
		if l.CPU > 0 {
			cpu = fmt.Sprintf(", CPU %s", clock(l.CPU))
		}
		fmt.Fprintf(w, "  %-7s %8s of %s (limit %s the time%s)\n", l.Name, clock(l.Seconds), clock(l.Limit.Seconds()), margin, cpu)
		tests := append([]TestTime(nil), l.Tests...)
		sort.SliceStable(tests, func(i, j int) bool { return tests[i].Seconds > tests[j].Seconds })
		for i, t := range tests {
			if i == 10 {
				break
			}
			note := ""
			if t.Result != "pass" {
				note = " (" + t.Result + ")"
			}
			cpu := ""
			if t.CPU > 0 {
				cpu = fmt.Sprintf(" (lane CPU %s)", clock(t.CPU))
			}
			fmt.Fprintf(w, "          %8s  %s %s%s%s\n", clock(t.Seconds), shortPackage(t.Package), t.Test, note, cpu)
		}
		half := l.Limit.Seconds() / 2
		if l.Seconds > half {
			fmt.Fprintf(w, "  warning: the %s lane took more than half of its limit: make it faster, then raise the limit if it must\n", l.Name)
		}
		for _, t := range tests {
			if t.Seconds > half {
				fmt.Fprintf(w, "  warning: %s took more than half of the %s lane's limit\n", t.Test, l.Name)
			}
		}
	}
}

// shortPackage is a package path without the module's.
func shortPackage(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/nsperf/nsperf/")
}

// clock writes seconds as 12m05s, or 7.3s under a minute.
func clock(secs float64) string {
	if secs < 60 {
		return fmt.Sprintf("%.1fs", secs)
	}
	s := int(secs + 0.5)
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}
