package runner

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/runstate"
)

// hook is a progress writer that calls onSample after each finished sample, with the run id,
// while the runner waits: what it does happens between two samples.
type hook struct {
	mu       sync.Mutex
	text     strings.Builder
	runID    string
	onSample func(runID string, n int)
}

var buildingLine = regexp.MustCompile(`as run (nsp[0-9a-f]{4})`)
var sampleLine = regexp.MustCompile(`^\[(\d+)/\d+\]`)

func (h *hook) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.text.Write(p)
	for _, line := range strings.Split(string(p), "\n") {
		if m := buildingLine.FindStringSubmatch(line); m != nil {
			h.runID = m[1]
		}
		if m := sampleLine.FindStringSubmatch(line); m != nil && h.onSample != nil {
			n := 0
			for _, c := range m[1] {
				n = 10*n + int(c-'0')
			}
			h.onSample(h.runID, n)
		}
	}
	return len(p), nil
}

func (h *hook) String() string { h.mu.Lock(); defer h.mu.Unlock(); return h.text.String() }

// inNamespace runs fn with the calling thread in a named namespace.
func inNamespace(t *testing.T, name string, fn func() error) {
	t.Helper()
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := netnsx.Do(h, fn); err != nil {
		t.Error(err)
	}
}

// TestStateDriftInvalidatesSample: a knob changed from outside the run while it measures makes
// the sample invalid (kept, named, left out of the statistics) and the run exit with
// ErrStateDrift naming the device and the knob.
func TestStateDriftInvalidatesSample(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	s := short(t, 1, time.Second)
	h := &hook{}
	h.onSample = func(id string, n int) {
		if n != 1 {
			return
		}
		// After the first sample (state off, tcp4), before the second (off, tcp6) on the same
		// applied state: the outside world shrinks gso_max_size.
		inNamespace(t, id+"-client", func() error {
			link, err := netlink.LinkByName("eth0")
			if err != nil {
				return err
			}
			return netlink.LinkSetGSOMaxSize(link, 32000)
		})
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: h})
	if !errors.Is(err, ErrStateDrift) || !strings.Contains(err.Error(), "client/eth0 gso_max_size is 32000, applied 65536") {
		t.Fatalf("Run: %v, want ErrStateDrift naming client/eth0 gso_max_size", err)
	}
	c := r.Cases[0]
	if c.Samples[1].Invalid == "" || c.Samples[0].Invalid != "" || c.Samples[2].Invalid != "" {
		t.Errorf("invalid marks: %q %q %q; want only the second sample", c.Samples[0].Invalid, c.Samples[1].Invalid, c.Samples[2].Invalid)
	}
	for _, sum := range c.Summaries {
		if sum.Workload == c.Samples[1].Workload && sum.State == c.Samples[1].State && sum.Stats.N != 0 {
			t.Errorf("the invalid sample counts in %s/%s/%s: n=%d", sum.Workload, sum.Metric, sum.State, sum.Stats.N)
		}
	}
}

// plantTimeWait leaves a TIME_WAIT socket on local port port in a namespace: a connection
// from that port to a listener in the same namespace, closed by the client first.
func plantTimeWait(t *testing.T, ns, addr string, port int) {
	inNamespace(t, ns, func() error {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
		if err != nil {
			return err
		}
		defer ln.Close()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr), Port: port},
			Control: func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) })
			}}
		conn, err := d.Dial("tcp", ln.Addr().String())
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil // the port is taken already: the previous run's connection is in TIME_WAIT
		}
		if err != nil {
			return err
		}
		server, err := ln.Accept()
		if err != nil {
			return err
		}
		conn.Close() // the client closes first: TIME_WAIT on its side
		time.Sleep(50 * time.Millisecond)
		server.Close()
		return nil
	})
}

// TestFixedClientPortBackToBack: 20 back-to-back runs on one fixed client port all succeed,
// although before each the port has a connection in TIME_WAIT (as the previous run's may be).
func TestFixedClientPortBackToBack(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	s := short(t, 10, time.Second)
	s.Workloads = s.Workloads[:1] // tcp4, --cport 40000
	if w, _ := s.Workloads[0].Spec().(*scenarios.Iperf3); w == nil || w.CPort == 0 {
		t.Fatalf("veth-bigtcp's first workload has no fixed client port: %+v", w)
	}
	cport := s.Workloads[0].Spec().(*scenarios.Iperf3).CPort
	h := &hook{}
	planted := 0
	h.onSample = func(id string, n int) {
		plantTimeWait(t, id+"-client", "198.18.0.1", cport)
		planted++
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: h})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, h)
	}
	if n := len(r.Cases[0].Samples); n != 20 || planted < 19 {
		t.Fatalf("%d samples, %d TIME_WAITs planted; want 20 and 19", n, planted)
	}
	for _, sample := range r.Cases[0].Samples {
		if sample.Error != "" {
			t.Errorf("round %d %s: %s", sample.Round, sample.State, sample.Error)
		}
	}
}

// TestNetserverDeathStopsCase: netserver dying mid-run stops the case at once, naming it,
// instead of failing every later netperf run.
func TestNetserverDeathStopsCase(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "netperf")
	s, err := scenarios.Load("testdata/netperf.yaml", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &hook{onSample: func(string, int) { exec.Command("pkill", "-KILL", "-x", "netserver").Run() }}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: h})
	if err == nil || !strings.Contains(err.Error(), "netserver in namespace server") || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("Run: %v, want the netserver's death named", err)
	}
	if n := len(r.Cases[0].Samples); n > 2 {
		t.Errorf("%d samples after netserver died with the first", n)
	}
}

// TestMeasuringLock: a second run waits (saying so) while another measures, and stops waiting
// when interrupted, having built nothing; with Concurrent it measures at once and its result
// says so.
func TestMeasuringLock(t *testing.T) {
	testenv.RootTest(t, runstate.Dir, "iperf3")
	held, busy, err := runstate.LockMeasuring(context.Background(), "other", false, nil)
	if err != nil || busy != "" {
		t.Fatalf("LockMeasuring: %v %q", err, busy)
	}
	defer held.Release()
	s := short(t, 1, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	h := &hook{}
	done := make(chan error)
	go func() {
		_, err := Run(ctx, s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Progress: h})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(h.String(), "waiting: another nsperf run is measuring") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting run: %v\n%s", err, h)
	}
	if strings.Contains(h.String(), "building") {
		t.Errorf("the waiting run built its topology:\n%s", h)
	}
	r, err := Run(context.Background(), s, Options{Machine: host.Machine{}, Out: filepath.Join(t.TempDir(), "r.json"), Concurrent: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Settings.Concurrent == "" || len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, " "), "another nsperf run") {
		t.Errorf("concurrent run not marked: settings %+v warnings %v", r.Settings, r.Warnings)
	}
}
