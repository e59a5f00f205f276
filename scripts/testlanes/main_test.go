package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFilterOfATimeout reads real `go test -json -timeout 2s` output of a package whose tests
// pass, fail in a subtest, skip and hang: what passed or skipped says nothing, the failure is
// shown from its --- FAIL line, the hung test's words and the timeout's panic are shown, and
// every top-level test has its time and result, the hung one "running".
func TestFilterOfATimeout(t *testing.T) {
	in, err := os.Open("testdata/timeout.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, times bytes.Buffer
	if err := Filter(in, &out, &times, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"--- FAIL: TestFails (", "said before failing", "the subtest's error", "waiting forever", "panic: test timed out after 2s", "FAIL\texample.org/tl/p"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"quiet when it passes", "not here", "=== RUN", "PASS\n"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, text)
		}
	}
	if !strings.HasPrefix(text, "--- FAIL: TestFails (") {
		t.Errorf("the failure does not start with its --- FAIL line:\n%s", text)
	}
	// The timeout's panic comes before the package's FAIL line, as go test prints it.
	if strings.Index(text, "panic: test timed out") > strings.Index(text, "FAIL\texample.org/tl/p") {
		t.Errorf("the package's FAIL line comes before the panic:\n%s", text)
	}
	want := "example.org/tl/p\tTestPasses\t0.00\tpass\t0.0\n" +
		"example.org/tl/p\tTestFails\t0.00\tfail\t0.0\n" +
		"example.org/tl/p\tTestSkips\t0.00\tskip\t0.0\n" +
		"example.org/tl/p\tTestHangs\t2.00\trunning\t0.0\n"
	if times.String() != want {
		t.Errorf("times:\n%s\nwant:\n%s", times.String(), want)
	}
}

// TestFilterParallel: a parallel test's CPU counts from its cont, not from its run (it waits
// paused until the sequential tests end).
func TestFilterParallel(t *testing.T) {
	in := strings.NewReader(`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pause","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":5}
{"Action":"cont","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":3}
`)
	clock := []float64{0, 10, 100, 130, 160} // the lane's CPU at each reading
	cpu := func() float64 { v := clock[0]; clock = clock[1:]; return v }
	var out, times bytes.Buffer
	if err := Filter(in, &out, &times, cpu); err != nil {
		t.Fatal(err)
	}
	want := "p\tTestB\t5.00\tpass\t90.0\np\tTestA\t3.00\tpass\t30.0\n"
	if times.String() != want {
		t.Errorf("times:\n%s\nwant:\n%s", times.String(), want)
	}
}

// TestFilterPassesOtherLines: go's own lines (a build error, a message that is no JSON) are
// copied, and a package that passed prints its ok line only.
func TestFilterPassesOtherLines(t *testing.T) {
	in := strings.Join([]string{
		`# example.org/x`,
		`{"Action":"build-output","ImportPath":"example.org/y","Output":"y.go:3:1: syntax error\n"}`,
		`{"Action":"start","Package":"example.org/z"}`,
		`{"Action":"run","Package":"example.org/z","Test":"TestA"}`,
		`{"Action":"output","Package":"example.org/z","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"example.org/z","Test":"TestA","Output":"--- PASS: TestA (1.50s)\n"}`,
		`{"Action":"pass","Package":"example.org/z","Test":"TestA","Elapsed":1.5}`,
		`{"Action":"output","Package":"example.org/z","Output":"PASS\n"}`,
		`{"Action":"output","Package":"example.org/z","Output":"ok  \texample.org/z\t1.6s\n"}`,
		`{"Action":"pass","Package":"example.org/z","Elapsed":1.6}`,
	}, "\n")
	var out, times bytes.Buffer
	cpu := 0.0
	if err := Filter(strings.NewReader(in), &out, &times, func() float64 { cpu += 1.5; return cpu }); err != nil {
		t.Fatal(err)
	}
	want := "# example.org/x\ny.go:3:1: syntax error\nok  \texample.org/z\t1.6s\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if times.String() != "example.org/z\tTestA\t1.50\tpass\t1.5\n" {
		t.Errorf("times %q", times.String())
	}
}

// TestTable: each lane's time against its limit, its ten longest tests longest first, and a
// warning for a lane or a test past half of the limit.
func TestCgroupCPU(t *testing.T) {
	v2, v1 := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(v2, "cpu.stat"), []byte("usage_usec 2500000\nuser_usec 2000000\n"), 0o644)
	os.WriteFile(filepath.Join(v1, "cpuacct.usage"), []byte("3500000000\n"), 0o644)
	if got := CgroupCPU(v2); got != 2.5 {
		t.Errorf("v2: %g", got)
	}
	if got := CgroupCPU(v1); got != 3.5 {
		t.Errorf("v1: %g", got)
	}
	if got := CgroupCPU(t.TempDir()); got != 0 {
		t.Errorf("none: %g", got)
	}
}

func TestTable(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, "github.com/nsperf/nsperf/p\tTest"+strings.Repeat("x", i)+"\t"+strconv.Itoa(i*10)+".00\tpass")
	}
	lines = append(lines, "github.com/nsperf/nsperf/q\tTestSlow\t1000.00\trunning\t1500.0")
	os.WriteFile(filepath.Join(dir, "builds.times"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "builds.secs"), []byte("1200\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "host.secs"), []byte("300\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "host.cpu"), []byte("510.5\n"), 0o644)
	var out bytes.Buffer
	if err := tableCommand(&out, dir, []string{"host:30m", "builds:30m"}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"host       5m00s of 30m00s (limit 6.0x the time, CPU 8m31s)",
		"builds    20m00s of 30m00s (limit 1.5x the time)",
		"16m40s  q TestSlow (running) (lane CPU 25m00s)",
		"2m00s  p Test" + strings.Repeat("x", 12),
		"warning: the builds lane took more than half of its limit",
		"warning: TestSlow took more than half of the builds lane's limit",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Testx\n") || strings.Contains(text, "Testxx\n") {
		t.Errorf("more than ten tests listed:\n%s", text)
	}
	if strings.Contains(text, "the host lane took") {
		t.Errorf("a warning for the host lane:\n%s", text)
	}
	for _, bad := range [][]string{nil, {"host"}, {"host:soon"}, {"host:-1m"}} {
		if err := tableCommand(&out, dir, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzFilter: any stream is copied without a panic, and every times line has four fields.
func FuzzFilter(f *testing.F) {
	data, _ := os.ReadFile("testdata/timeout.json")
	f.Add(data)
	f.Add([]byte(`{"Action":"fail","Package":"p","Test":"T/x/y","Elapsed":-1}` + "\n" + `{"Action":"output","Package":"p","Output":"FAIL\n"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out, times bytes.Buffer
		Filter(bytes.NewReader(in), &out, &times, func() float64 { return 0 })
		for _, line := range strings.Split(strings.TrimSuffix(times.String(), "\n"), "\n") {
			if line != "" && len(strings.Split(line, "\t")) < 4 {
				t.Errorf("times line %q", line)
			}
		}
	})
}
