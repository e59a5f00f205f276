package runner

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/scenarios"
)

// TestPinnedCPUsOfRun: a run's pinned CPUs are those of all its clients' and servers' ends,
// each once, in the order the ends name them; ends not pinned add none.
func TestPinnedCPUsOfRun(t *testing.T) {
	cpu := func(c int) *int { return &c }
	ends := func(client, server *int) scenarios.ToolSpec {
		return &scenarios.Iperf3{Client: scenarios.Side{CPU: client}, Server: scenarios.Side{CPU: server}}
	}
	for _, tc := range []struct {
		name      string
		instances []scenarios.ToolSpec
		want      []int
	}{
		{"none pinned", []scenarios.ToolSpec{ends(nil, nil)}, nil},
		{"one client", []scenarios.ToolSpec{ends(cpu(0), cpu(1))}, []int{0, 1}},
		{"both ends on one CPU", []scenarios.ToolSpec{ends(cpu(3), cpu(3))}, []int{3}},
		{"clients sharing a CPU", []scenarios.ToolSpec{ends(cpu(2), cpu(0)), ends(cpu(0), nil), ends(nil, cpu(1))}, []int{2, 0, 1}},
	} {
		if got := pinnedCPUsOfRun(tc.instances); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestParseClients: the figures of a run's ended clients, one a client, and what they printed;
// a client whose output does not parse fails the run naming it (and how it exited) when there
// are several, and so does a figure no measurement has, or a run cut off by its deadline.
func TestParseClients(t *testing.T) {
	ok := func(bps string) *fakeProcess {
		return &fakeProcess{stdout: `{"start":{"version":"iperf 3.12"},"end":{"sum_received":{"bits_per_second":` + bps + `,"seconds":1},"sum_sent":{"retransmits":0}}}`}
	}
	broken := &fakeProcess{stdout: "iperf3: error - unable to connect", err: errors.New("exit status 1")}
	live := context.Background()
	dead, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	<-dead.Done()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		clients []*fakeProcess
		figures int
		want    string // the error; "" when the run is measured
	}{
		{"two clients", live, []*fakeProcess{ok("1e9"), ok("2e9")}, 2, ""},
		{"the second does not parse", live, []*fakeProcess{ok("1e9"), broken}, 0, "client 2 of 2: "},
		{"a lone client does not parse", live, []*fakeProcess{broken}, 0, "(exit: exit status 1)"},
		{"a figure beyond any measurement", live, []*fakeProcess{ok("1e300")}, 0, "iperf3 output: metric throughput is 1e+300 bit/s"},
		{"cut off", dead, []*fakeProcess{ok("1e9")}, 0, "iperf3 client timed out after 2s"},
	} {
		var instances []scenarios.ToolSpec
		var clients []proc.Process
		printed := ""
		for _, c := range tc.clients {
			instances = append(instances, &scenarios.Iperf3{})
			clients = append(clients, c)
			printed += c.stdout
		}
		figures, _, output, err := parseClients(tc.ctx, drivers["iperf3"], instances, clients, "iperf3", 2*time.Second)
		switch {
		case tc.want == "" && err != nil, tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case len(figures) != tc.figures:
			t.Errorf("%s: %d clients' figures, want %d", tc.name, len(figures), tc.figures)
		case tc.want == "" && output != printed:
			t.Errorf("%s: output %q", tc.name, output)
		}
	}
}

// TestCollectBeforeSample: the collector is off between a sample's start and end, for two
// samples that overlap until the last ends, and then as it was; a resume called twice
// counts once.
func TestCollectBeforeSample(t *testing.T) {
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	was := debug.SetGCPercent(150)
	defer debug.SetGCPercent(was)
	first := collectBeforeSample()
	if p := percent(); p != -1 {
		t.Fatalf("GC percent inside a sample: %d", p)
	}
	second := collectBeforeSample()
	first()
	first()
	if p := percent(); p != -1 {
		t.Fatalf("GC percent after the first of two overlapping samples ended: %d", p)
	}
	second()
	if p := percent(); p != 150 {
		t.Fatalf("GC percent after both ended: %d, want 150", p)
	}
	cycles := gcCycles()
	resume := collectBeforeSample()
	if gcCycles() <= cycles {
		t.Errorf("no collection before the sample: %d cycles, then %d", cycles, gcCycles())
	}
	// What a sample allocates (its looks, the tools' output) is not collected inside it.
	cycles = gcCycles()
	var kept [][]byte
	for range 64 {
		kept = append(kept, make([]byte, 256<<10))
	}
	if gcCycles() != cycles {
		t.Errorf("16 MiB allocated inside a sample were collected there (%d collections)", gcCycles()-cycles)
	}
	resume()
	_ = kept
}
