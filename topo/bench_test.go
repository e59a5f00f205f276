package topo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
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

// BenchmarkSizes prints, for the default topology and for topologies of 2 to 256 namespaces
// (1024 with NSPERF_BENCH_1024=1), the time nsperf and the plan's ip script take to bring each
// up and down, and their ratio: the table of docs/development.md's Speed section. nsperf and the script
// alternate, build by build. The default topology is built 21 times each, the small sizes 5
// times, 64 namespaces and more once; the table shows medians. "floor up" is the kernel's
// share: the same namespaces (named, lo up) and veth pairs made directly with the netlink
// library, nothing else (no marker, addresses, read-back or state file), in parallel as
// nsperf makes them.
func BenchmarkSizes(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireTool(b, "ip")
	sizes := []int{0, 2, 16, 64, 256} // 0: the default topology
	if os.Getenv("NSPERF_BENCH_1024") == "1" {
		sizes = append(sizes, 1024)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "topology\tnsperf up\tnsperf down\tip up\tip down\tnsperf/ip\tfloor up\t")
	for b.Loop() {
		for _, n := range sizes {
			s, label, reps := loadDefault(b), "default", 21
			if n > 0 {
				s, label, reps = sized(b, n), fmt.Sprintf("%d namespaces", n), 5
			}
			if n >= 64 {
				reps = 1
			}
			var nsUp, nsDown, ipUp, ipDown, floor []time.Duration
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

				floor = append(floor, floorUp(b, s))
			}
			m := func(ds []time.Duration) time.Duration {
				slices.Sort(ds)
				return ds[len(ds)/2]
			}
			nu, nd, iu, id := m(nsUp), m(nsDown), m(ipUp), m(ipDown)
			fmt.Fprintf(tw, "%s\t%.1f ms\t%.1f ms\t%.1f ms\t%.1f ms\t1/%.1f\t%.1f ms\t\n", label, ms(nu), ms(nd), ms(iu), ms(id), float64(iu+id)/float64(nu+nd), ms(m(floor)))
		}
	}
	tw.Flush()
}

// floorUp makes a topology's namespaces and veth pairs with nothing else, as fast as the
// netlink library can, and returns the time that took; it removes them again (not timed).
func floorUp(tb testing.TB, s *scenarios.Scenario) time.Duration {
	id := NewRunID()
	names := s.Topology.Namespaces
	t0 := time.Now()
	handles := make([]netns.NsHandle, len(names))
	for i := range handles {
		handles[i] = netns.None()
	}
	links := make([]*netlink.Handle, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, ns := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if handles[i], errs[i] = netnsx.NewNamed(id.Namespace(ns)); errs[i] != nil {
				return
			}
			if links[i], errs[i] = netlink.NewHandleAt(handles[i], unix.NETLINK_ROUTE); errs[i] == nil {
				errs[i] = links[i].LinkSetUp(runstate.Loopback)
			}
		}()
	}
	wg.Wait()
	index := map[string]int{}
	for i, ns := range names {
		index[ns] = i
	}
	err := errors.Join(errs...)
	for _, link := range s.Topology.Links {
		if err != nil || link.Veth == nil {
			continue
		}
		a, b := link.Veth.A, link.Veth.B
		err = links[index[a.NS]].LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.Name}, PeerName: b.Name, PeerNamespace: netlink.NsFd(handles[index[b.NS]])})
	}
	d := time.Since(t0)
	errs = []error{err}
	for i, ns := range names {
		if links[i] != nil {
			links[i].Close()
		}
		handles[i].Close()
		if err := removeNamespaceMount(id.Namespace(ns)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return d
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

// BenchmarkCounters reads every counter a sample reads twice (before and after its client):
// the default topology's devices with their root qdiscs and big-packet counters, both
// namespaces' SNMP, netstat and snmp6, and two CPUs' softnet_stat and softirqs. It reports
// the wall and CPU time of one read, and the harness CPU of a sample's two reads as a share
// of a 10 s sample (the default run length): the evidence must stay under 0.5% of it.
func BenchmarkCounters(b *testing.B) {
	testenv.RequireRoot(b)
	s := loadDefault(b)
	l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Teardown()
	if note := l.CountBigPackets(scenarios.LimitDevices(s.States)); !strings.HasPrefix(note, "counted") {
		b.Fatal(note)
	}
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	n := 0
	for b.Loop() {
		c := l.Counters([]int{0, 1})
		if len(c.Errors) > 0 || c.Devices["client/eth0"].BigTx == nil {
			b.Fatalf("counters: %+v", c)
		}
		n++
	}
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(n)
	b.ReportMetric(float64(cpu.Microseconds())/1e3, "cpu-ms/read")
	b.ReportMetric(100*2*cpu.Seconds()/10, "%cpu-of-10s-sample")
}
