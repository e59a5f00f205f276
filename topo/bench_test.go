package topo

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/nsperf/nsperf/internal/testenv"
	"github.com/nsperf/nsperf/scenarios"
)

// BenchmarkBuildTeardown builds and removes the default topology through netlink, as nsperf
// does (run with `make bench`).
func BenchmarkBuildTeardown(b *testing.B) {
	testenv.RequireRoot(b)
	s := loadDefault(b)
	for i := 0; i < b.N; i++ {
		l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Teardown(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildTeardownIP does the same steps with the iproute2 commands of the plan, one
// `ip` process per step, for comparison.
func BenchmarkBuildTeardownIP(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireTool(b, "ip")
	s := loadDefault(b)
	for i := 0; i < b.N; i++ {
		p := NewPlan(s, NewRunID())
		if out, err := exec.Command("sh", "-ec", p.Shell()+p.UndoShell()).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// sized is a topology of n namespaces: n/2 veth pairs, each with an address on both ends.
func sized(tb testing.TB, n int) *scenarios.Scenario {
	var b strings.Builder
	fmt.Fprintf(&b, "name: size%d\ntopology:\n  namespaces: [", n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "n%d", i)
	}
	b.WriteString("]\n  links:\n")
	for i := 0; i+1 < n; i += 2 {
		fmt.Fprintf(&b, "    - veth: {a: {ns: n%d, name: eth0, addrs: [10.%d.%d.1/30]}, b: {ns: n%d, name: eth0, addrs: [10.%d.%d.2/30]}}\n", i, i/256, i%256, i+1, i/256, i%256)
	}
	b.WriteString("states: [{name: base}]\nworkloads: [{name: w, iperf3: {client: {ns: n0}, server: {ns: n1, addr: 10.0.0.2}}}]\n")
	s, err := scenarios.Parse("size.yaml", []byte(b.String()), scenarios.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkSizes prints, for topologies of 2 to 256 namespaces (1024 with NSPERF_BENCH_1024=1),
// the time nsperf and the plan's ip script take to bring each up and down, and their ratio:
// the table of the README's Speed section. One iteration per size; the median of 5 for the
// small ones.
func BenchmarkSizes(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireTool(b, "ip")
	sizes := []int{2, 16, 64, 256}
	if os.Getenv("NSPERF_BENCH_1024") == "1" {
		sizes = append(sizes, 1024)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "namespaces\tnsperf up\tnsperf down\tip up\tip down\tnsperf/ip\t")
	for b.Loop() {
		for _, n := range sizes {
			s := sized(b, n)
			reps := 5
			if n >= 64 {
				reps = 1
			}
			var nsUp, nsDown, ipUp, ipDown []time.Duration
			for r := 0; r < reps; r++ {
				p := NewPlan(s, NewRunID())
				t0 := time.Now()
				l, err := Build(p, BuildOptions{})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := l.Teardown(); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				nsUp, nsDown = append(nsUp, t1.Sub(t0)), append(nsDown, t2.Sub(t1))

				p = NewPlan(s, NewRunID())
				t0 = time.Now()
				if out, err := shell(p.Shell()); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				t1 = time.Now()
				if out, err := shell(p.UndoShell()); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				t2 = time.Now()
				ipUp, ipDown = append(ipUp, t1.Sub(t0)), append(ipDown, t2.Sub(t1))
			}
			m := func(ds []time.Duration) time.Duration {
				slices.Sort(ds)
				return ds[len(ds)/2]
			}
			nu, nd, iu, id := m(nsUp), m(nsDown), m(ipUp), m(ipDown)
			fmt.Fprintf(tw, "%d\t%.1f ms\t%.1f ms\t%.1f ms\t%.1f ms\t1/%.1f\t\n", n, ms(nu), ms(nd), ms(iu), ms(id), float64(iu+id)/float64(nu+nd))
		}
	}
	tw.Flush()
}

// shell runs a script with sh -e, given on stdin: 1024 namespaces' script is too long for
// an argument.
func shell(script string) ([]byte, error) {
	cmd := exec.Command("sh", "-e")
	cmd.Stdin = strings.NewReader(script)
	return cmd.CombinedOutput()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkApplyState: applying the default scenario's "on" state and reading every knob of
// every device back, then "off" again, per state.
func BenchmarkApplyState(b *testing.B) {
	testenv.RequireRoot(b)
	s := loadDefault(b)
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Teardown()
	i := 0
	for b.Loop() {
		if _, err := l.Apply(s.States[i%len(s.States)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkProcessSweep is the teardown's one pass over /proc that finds the processes in a
// run's namespaces (none here: the cost of looking).
func BenchmarkProcessSweep(b *testing.B) {
	testenv.RequireRoot(b)
	targets := map[[2]uint64]bool{{1, 1}: true}
	for b.Loop() {
		if pids := processesIn(targets); len(pids) != 0 {
			b.Fatal(pids)
		}
	}
}
