package runner

import (
	"fmt"
	"os"
	"time"

	"github.com/nsperf/nsperf/internal/procstat"
)

// IdleGate waits before each round until the CPUs the tools are pinned to are idle: what else
// runs there (a build, another job on a shared machine) would halve a sample without anyone
// noticing, as Go's cmd/bench waits for a low load and NIPA for a quiet machine.
type IdleGate struct {
	// MaxBusy is the share of a pinned CPU's time that other work may take for the round to
	// begin (default 0.5).
	MaxBusy float64
	// Window is how long one look at the CPUs lasts (default 200 ms).
	Window time.Duration
	// Limit is how long to wait at most (default 10 s; negative: no gate). A round that
	// begins after the limit is marked busy in its samples and the diagnostics.
	Limit time.Duration
}

// Defaults of the idle gate.
const (
	DefaultIdleMaxBusy = 0.5
	DefaultIdleWindow  = 200 * time.Millisecond
	DefaultIdleLimit   = 10 * time.Second
)

// IdleWaitEnv names the environment variable that sets the idle gate's limit where a run
// does not (`--idle-wait`): a CI job on a shared runner, or a test suite whose own other lane
// keeps a CPU busy, waits that long instead of DefaultIdleLimit before each round.
const IdleWaitEnv = "NSPERF_IDLE_WAIT"

// IdleLimit is the idle gate's default limit: $NSPERF_IDLE_WAIT when it is a duration (0: no
// wait), else DefaultIdleLimit.
func IdleLimit() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(IdleWaitEnv)); err == nil && d >= 0 {
		return d
	}
	return DefaultIdleLimit
}

func (g IdleGate) withDefaults() IdleGate {
	if g.MaxBusy <= 0 {
		g.MaxBusy = DefaultIdleMaxBusy
	}
	if g.Window <= 0 {
		g.Window = DefaultIdleWindow
	}
	if g.Limit == 0 {
		if g.Limit = IdleLimit(); g.Limit == 0 {
			g.Limit = -1 // $NSPERF_IDLE_WAIT=0: no wait
		}
	}
	return g
}

// busiest is the pinned CPU that other work used most between two snapshots, and its share.
func busiest(before, after procstat.Snapshot, pinned []int) (cpu int, share float64) {
	cpu = -1
	for _, c := range pinned {
		d := after.PerCPU[c].Sub(before.PerCPU[c])
		if d.Total() == 0 {
			continue
		}
		if f := float64(d.Busy()) / float64(d.Total()); cpu < 0 || f > share {
			cpu, share = c, f
		}
	}
	return cpu, share
}

// waitIdle waits until no pinned CPU is busier than the gate allows, saying so on progress
// while it waits; busy says how busy the machine still was when the limit ended the wait.
// After a round that began busy, the next ones look once and do not wait again until a look
// finds the CPUs idle: a machine busy for good would cost the limit every round, for nothing.
func (m *measurement) waitIdle(pinned []int) (waited time.Duration, busy string) {
	g := m.opt.Idle
	if g.Limit < 0 || len(pinned) == 0 {
		return 0, ""
	}
	limit := g.Limit
	if m.stillBusy {
		limit = g.Window
	}
	said := m.stillBusy
	defer func() { m.stillBusy = busy != "" }()
	for {
		before := m.opt.Machine.CPUTimes()
		select {
		case <-m.ctx.Done():
			return waited, ""
		case <-time.After(g.Window):
		}
		cpu, share := busiest(before, m.opt.Machine.CPUTimes(), pinned)
		if share <= g.MaxBusy {
			return waited, ""
		}
		waited += g.Window
		if waited >= limit {
			return waited, fmt.Sprintf("CPU %d %.0f%% busy with other work after waiting %s", cpu, 100*share, waited)
		}
		if !said {
			fmt.Fprintf(m.progress, "waiting: CPU %d is %.0f%% busy with other work; the round begins when every pinned CPU is below %.0f%% (at most %s)\n", cpu, 100*share, 100*g.MaxBusy, g.Limit)
			said = true
		}
	}
}
