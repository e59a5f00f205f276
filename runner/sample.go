package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// sample runs one workload once; an error ends the case (interrupt, a shared server gone).
func (m *measurement) sample(live machine.Network, servers map[string]proc.Process, round int, state string, w scenarios.Workload) (results.Sample, error) {
	d, spec := driver(w), w.Spec()
	srv := d.Server(spec)
	shared := servers[srv.Key]
	if !srv.PerRun && proc.Exited(shared) && m.ctx.Err() == nil {
		return results.Sample{}, serverDied(srv, shared)
	}
	sample := m.run(live, d, spec, srv, results.Sample{Round: round, State: state, Workload: w.Name, Tool: w.Tool()})
	if sample.Error != "" && !srv.PerRun && proc.Exited(shared) && m.ctx.Err() == nil {
		return sample, serverDied(srv, shared)
	}
	if err := m.ctx.Err(); err != nil {
		return sample, err // a run cut short by the interrupt is no sample
	}
	return sample, nil
}

// run is one run of a tool: its fixed ports cleared of TIME_WAIT, its one-off server started
// and listening, then the client, bounded by the run's length and the slack. A failure is
// recorded in the sample with the time it took and what client and server printed.
func (m *measurement) run(live machine.Network, d tool.Driver, spec scenarios.ToolSpec, srv tool.Server, sample results.Sample) results.Sample {
	name := sample.Tool
	sample.Argv, sample.Start = d.Client(spec), time.Now().UTC()
	var printed []proc.Process // client first, then the one-off server
	fail := func(err error) results.Sample {
		var text []string
		for _, p := range printed {
			if t := strings.TrimSpace(p.Stderr()); t != "" {
				text = append(text, t)
			}
		}
		sample.Error, sample.Stderr = err.Error(), strings.Join(text, "\n")
		sample.Seconds = time.Since(sample.Start).Seconds()
		return sample
	}
	for _, p := range d.FixedPorts(spec) {
		if _, err := live.ClearTimeWait(p.NS, p.Port); err != nil {
			return fail(err)
		}
	}
	var perRunServer proc.Process
	if srv.PerRun {
		server, err := live.Start(m.ctx, srv.NS, srv.Argv)
		if err != nil {
			return fail(err)
		}
		defer server.Stop()
		perRunServer = server
		printed = append(printed, server)
		if err := proc.WaitListening(m.ctx, server, srv.Port, m.opt.ServerTimeout); err != nil {
			return fail(fmt.Errorf("%s server: %w", name, err))
		}
	}
	limit := spec.Length() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	pinned := pinnedCPUs(spec)
	counters := live.Counters(pinned)
	before := m.opt.Machine.CPUTimes()
	client, err := live.Start(ctx, clientNS(spec), sample.Argv)
	if err != nil {
		return fail(err)
	}
	printed = append([]proc.Process{client}, printed...)
	<-client.Done()
	if perRunServer != nil { // a one-off server ends with its test
		select {
		case <-perRunServer.Done():
		case <-time.After(time.Second):
		}
	}
	sample.Noise = noise(before, m.opt.Machine.CPUTimes(), pinned, client, perRunServer)
	delta := live.Counters(pinned).Delta(counters)
	sample.Counters = &delta
	sample.Output = string(client.Stdout())
	metrics, row, perr := d.Parse(spec, client.Stdout(), []byte(client.Stderr()))
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fail(fmt.Errorf("%s client timed out after %s", name, limit))
	case perr != nil:
		if client.Err() != nil {
			perr = fmt.Errorf("%w (exit: %v)", perr, client.Err())
		}
		return fail(perr)
	}
	for _, mt := range metrics {
		if err := mt.CheckValue(); err != nil {
			return fail(fmt.Errorf("%s output: %w", name, err))
		}
	}
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Metrics, sample.Row = results.WithEfficiency(metrics), row
	return sample
}

// pinnedCPUs are the CPUs a workload's ends are pinned to.
func pinnedCPUs(spec scenarios.ToolSpec) []int {
	client, server := spec.Ends()
	var out []int
	for _, c := range []*int{client.CPU, server.CPU} {
		if c != nil && !slices.Contains(out, *c) {
			out = append(out, *c)
		}
	}
	return out
}

// noise is what else the machine did while a sample ran: steal and softirq over all CPUs,
// the pinned CPUs' busy time that the client and a one-off server did not use, and the
// client's context switches.
func noise(before, after procstat.Snapshot, pinned []int, client, server proc.Process) *results.Noise {
	all := after.All.Sub(before.All)
	if all.Total() == 0 {
		return nil
	}
	n := &results.Noise{
		StealPct:   100 * float64(all.Steal) / float64(all.Total()),
		SoftirqPct: 100 * float64(all.SoftIRQ) / float64(all.Total()),
	}
	toolTicks := 0.0
	for _, p := range []proc.Process{client, server} {
		if p == nil {
			continue
		}
		if cpu, switches, ok := p.Usage(); ok {
			toolTicks += cpu.Seconds() * procstat.ClockTicks
			if p == client {
				n.ContextSwitches = switches
			}
		}
	}
	var busy, total uint64
	for _, c := range pinned {
		d := after.PerCPU[c].Sub(before.PerCPU[c])
		busy, total = busy+d.Busy(), total+d.Total()
	}
	if total > 0 {
		n.OtherPinnedPct = 100 * max(0, float64(busy)-toolTicks) / float64(total)
	}
	return n
}

// serverDied is the error of a case whose shared server exited: every later run against it
// would fail.
func serverDied(srv tool.Server, p proc.Process) error {
	return fmt.Errorf("%s in namespace %s (port %d) exited during the run (%v)%s; the case is stopped", serverName(srv), srv.NS, srv.Port, p.Err(), tail(p.Stderr()))
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return ": " + s
}

// startSharedServers starts the servers that live through a case (netserver), one per Key,
// in the foreground, and waits until each listens. They are returned by Key.
func (m *measurement) startSharedServers(live machine.Network, s *scenarios.Scenario) (map[string]proc.Process, error) {
	servers := map[string]proc.Process{}
	for _, w := range s.Workloads {
		srv := driver(w).Server(w.Spec())
		if srv.PerRun || servers[srv.Key] != nil {
			continue
		}
		p, err := live.Start(m.ctx, srv.NS, srv.Argv)
		if err != nil {
			return servers, err
		}
		servers[srv.Key] = p
		if err := proc.WaitListening(m.ctx, p, srv.Port, m.opt.ServerTimeout); err != nil {
			return servers, fmt.Errorf("%s in %s: %w", serverName(srv), srv.NS, err)
		}
	}
	return servers, nil
}
