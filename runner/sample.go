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
	d, instances := driver(w), w.Instances()
	died := func() (tool.Server, proc.Process, bool) {
		for _, spec := range instances {
			srv := d.Server(spec)
			if shared := servers[srv.Key]; !srv.PerRun && proc.Exited(shared) && m.ctx.Err() == nil {
				return srv, shared, true
			}
		}
		return tool.Server{}, nil, false
	}
	if srv, shared, ok := died(); ok {
		return results.Sample{}, serverDied(srv, shared)
	}
	sample := m.run(live, d, instances, results.Sample{Round: round, State: state, Workload: w.Name, Tool: w.Tool()})
	if srv, shared, ok := died(); ok && sample.Error != "" {
		return sample, serverDied(srv, shared)
	}
	if err := m.ctx.Err(); err != nil {
		return sample, err // a run cut short by the interrupt is no sample
	}
	return sample, nil
}

// run is one run of a tool, with one client or several at once (workloads[].clients): the
// fixed ports cleared of TIME_WAIT, the one-off servers started and listening, then the
// clients, bounded by the run's length and the slack. A failure of any client is the run's,
// recorded in the sample with the time it took and what clients and servers printed.
func (m *measurement) run(live machine.Network, d tool.Driver, instances []scenarios.ToolSpec, sample results.Sample) results.Sample {
	name := sample.Tool
	sample.Argv, sample.Start = d.Client(instances[0]), time.Now().UTC()
	if len(instances) > 1 {
		for _, spec := range instances {
			sample.ClientsArgv = append(sample.ClientsArgv, d.Client(spec))
		}
	}
	var printed []proc.Process // clients first, then the one-off servers
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
	for _, spec := range instances {
		for _, p := range d.FixedPorts(spec) {
			if _, err := live.ClearTimeWait(p.NS, p.Port); err != nil {
				return fail(err)
			}
		}
	}
	var perRunServers []proc.Process
	for _, spec := range instances {
		srv := d.Server(spec)
		if !srv.PerRun {
			continue
		}
		server, err := live.Start(m.ctx, srv.NS, withBuilt(srv.Argv, m.opt.Built))
		if err != nil {
			return fail(err)
		}
		defer server.Stop()
		perRunServers = append(perRunServers, server)
		printed = append(printed, server)
		if err := proc.WaitListening(m.ctx, server, srv.Port, m.opt.ServerTimeout); err != nil {
			return fail(fmt.Errorf("%s server: %w", name, err))
		}
	}
	limit := instances[0].Length() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	var pinned []int
	for _, spec := range instances {
		for _, c := range pinnedCPUs(spec) {
			if !slices.Contains(pinned, c) {
				pinned = append(pinned, c)
			}
		}
	}
	counters := live.Counters(pinned)
	before := m.opt.Machine.CPUTimes()
	var clients []proc.Process
	for i, spec := range instances {
		client, err := live.Start(ctx, clientNS(spec), withBuilt(d.Client(spec), m.opt.Built))
		if err != nil {
			cancel() // the clients started before it stop with the context
			for _, c := range clients {
				<-c.Done()
			}
			return fail(fmt.Errorf("client %d of %d: %w", i+1, len(instances), err))
		}
		clients = append(clients, client)
	}
	printed = append(slices.Clone(clients), printed...)
	for _, c := range clients {
		<-c.Done()
	}
	for _, server := range perRunServers { // a one-off server ends with its test
		select {
		case <-server.Done():
		case <-time.After(time.Second):
		}
	}
	sample.Noise = noise(before, m.opt.Machine.CPUTimes(), pinned, clients, perRunServers)
	delta := live.Counters(pinned).Delta(counters)
	sample.Counters = &delta
	var outputs, rows []string
	var figures [][]results.Metric
	for i, client := range clients {
		outputs = append(outputs, string(client.Stdout()))
		metrics, row, perr := d.Parse(instances[i], client.Stdout(), []byte(client.Stderr()))
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			sample.Output = strings.Join(outputs, "")
			return fail(fmt.Errorf("%s client timed out after %s", name, limit))
		case perr != nil:
			if client.Err() != nil {
				perr = fmt.Errorf("%w (exit: %v)", perr, client.Err())
			}
			if len(clients) > 1 {
				perr = fmt.Errorf("client %d of %d: %w", i+1, len(clients), perr)
			}
			sample.Output = strings.Join(outputs, "")
			return fail(perr)
		}
		for _, mt := range metrics {
			if err := mt.CheckValue(); err != nil {
				return fail(fmt.Errorf("%s output: %w", name, err))
			}
		}
		figures, rows = append(figures, metrics), append(rows, row)
	}
	sample.Output = strings.Join(outputs, "")
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Metrics = results.WithClients(figures)
	if len(rows) == 1 {
		sample.Row = rows[0]
	}
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
// the pinned CPUs' busy time that the clients and one-off servers did not use, and the
// clients' context switches.
func noise(before, after procstat.Snapshot, pinned []int, clients, servers []proc.Process) *results.Noise {
	all := after.All.Sub(before.All)
	if all.Total() == 0 {
		return nil
	}
	n := &results.Noise{
		StealPct:   100 * float64(all.Steal) / float64(all.Total()),
		SoftirqPct: 100 * float64(all.SoftIRQ) / float64(all.Total()),
	}
	toolTicks := 0.0
	for i, p := range append(slices.Clone(clients), servers...) {
		if cpu, switches, ok := p.Usage(); ok {
			toolTicks += cpu.Seconds() * procstat.ClockTicks
			if i < len(clients) {
				n.ContextSwitches += switches
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
		for _, spec := range w.Instances() {
			srv := driver(w).Server(spec)
			if srv.PerRun || servers[srv.Key] != nil {
				continue
			}
			p, err := live.Start(m.ctx, srv.NS, withBuilt(srv.Argv, m.opt.Built))
			if err != nil {
				return servers, err
			}
			servers[srv.Key] = p
			if err := proc.WaitListening(m.ctx, p, srv.Port, m.opt.ServerTimeout); err != nil {
				return servers, fmt.Errorf("%s in %s: %w", serverName(srv), srv.NS, err)
			}
		}
	}
	return servers, nil
}
