package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"

	"golang.org/x/sys/unix"
)

// sample runs one workload once; an error ends the case (interrupt, a shared server gone).
func (m *measurement) sample(live machine.Network, servers map[string]proc.Process, round int, state string, w scenarios.Workload) (results.Sample, error) {
	d, instances := driver(w), w.Instances()
	died := func() (tool.Server, proc.Process, bool) {
		for _, spec := range instances {
			srv := d.Server(spec)
			if shared := servers[srv.Key]; !srv.PerRun && !srv.None() && proc.Exited(shared) && m.ctx.Err() == nil {
				return srv, shared, true
			}
		}
		return tool.Server{}, nil, false
	}
	if srv, shared, ok := died(); ok {
		return results.Sample{}, serverDied(srv, shared)
	}
	var capture tcpCapture
	if m.captures != nil {
		capture.handshake, capture.every = m.captures(w)
	}
	sample := m.run(live, d, instances, capture, results.Sample{Round: round, State: state, Workload: w.Name, Tool: w.Tool()})
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
func (m *measurement) run(live machine.Network, d tool.Driver, instances []scenarios.ToolSpec, capture tcpCapture, sample results.Sample) results.Sample {
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
	if err := clearFixedPorts(live, d, instances); err != nil {
		return fail(err)
	}
	if err := m.prepare(live, d, instances, name); err != nil {
		return fail(err)
	}
	servers, err := m.startPerRunServers(live, d, instances, name)
	defer stopServers(servers)
	perRunServers := processes(servers)
	printed = perRunServers
	if err != nil {
		return fail(err)
	}
	limit := instances[0].Length() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	pinned := pinnedCPUsOfRun(instances)
	resumeGC := collectBeforeSample()
	counters := live.Counters(pinned)
	before := m.opt.Machine.CPUTimes()
	selfBefore, gcBefore := selfUsage(), gcCycles()
	stopWatching := watchTCP(live, instances[0], capture)
	clients, err := m.startClients(ctx, cancel, live, d, instances)
	if err != nil {
		stopWatching()
		resumeGC()
		return fail(err)
	}
	printed = append(slices.Clone(clients), printed...)
	awaitRun(clients, servers)
	sample.Noise = noise(before, m.opt.Machine.CPUTimes(), pinned, clients, perRunServers)
	if sample.Noise != nil {
		self := selfUsage()
		sample.Noise.SelfMajorFaults = self.Majflt - selfBefore.Majflt
		sample.Noise.SelfCPUSeconds = float64(self.Utime.Nano()+self.Stime.Nano()-selfBefore.Utime.Nano()-selfBefore.Stime.Nano()) / 1e9
		sample.Noise.SelfGCCycles = gcCycles() - gcBefore
	}
	delta := live.Counters(pinned).Delta(counters)
	tcp, err := stopWatching()
	resumeGC()
	if err != nil {
		delta.Errors = append(delta.Errors, err.Error())
	}
	delta.TCP = tcp
	sample.Counters = &delta
	figures, rows, output, err := parseClients(ctx, d, instances, clients, name, limit)
	sample.Output = output
	if err == nil {
		var measured string
		figures, measured, err = parseServers(d, instances, figures, servers)
		sample.Output += measured
	}
	if err != nil {
		return fail(err)
	}
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Metrics = results.WithClients(figures)
	if len(rows) == 1 {
		sample.Row = rows[0]
	}
	return sample
}

// A run's TCP connection is looked at first after firstTCPLook, then at twice the wait
// before, up to every tcpLook: its state is kept as last seen while it was open, at most that
// long before it closed, and a short transfer is seen too. A look is one netlink dump in the
// client's namespace, tens of microseconds.
const (
	firstTCPLook = 10 * time.Millisecond
	tcpLook      = 200 * time.Millisecond
)

// handshakeWindowMoved is how many bytes the run's connection has moved when the look that
// finds its handshake ends a capture of handshakes: more than a tool's control connection
// (iperf3's, to the same port) moves, so that the data connection's is the one kept. A
// capture that never ends early stops by itself after topo.MaxHandshakes or at the run's end.
const handshakeWindowMoved = 64 << 10

// tcpCapture is what a run captures of its TCP connection, as its workload's record: list
// asks (scenarios.Scenario.Captures): its handshakes for the window of the last ACK; with
// every, each of its segments to the end, for the waits of its retransmissions.
type tcpCapture struct{ handshake, every bool }

// watchTCP starts watching the TCP connection from the client of spec to its server while the
// run goes on (`ss -ti`, as often as firstTCPLook and tcpLook say), when the tool measures over
// TCP, and captures what want says (results.HandshakeWindow, results.RetransmitWait). Start it
// before the clients; stop ends the watch and returns the state last seen (nil if none was: a
// connection shorter than the first look), with what failed.
func watchTCP(live machine.Network, spec scenarios.ToolSpec, want tcpCapture) (stop func() (map[string]float64, error)) {
	client, server := spec.Ends()
	peer, err := netip.ParseAddr(server.Addr)
	if !spec.TCP() || err != nil {
		return func() (map[string]float64, error) { return nil, nil }
	}
	var capture machine.TCPCapture
	var failed error
	if want.handshake || want.every {
		capture, failed = live.CaptureTCP(client.NS, peer, want.every)
	}
	done, ended := make(chan struct{}), make(chan struct{})
	var last *machine.TCPConnection
	window, windowSeen := uint32(0), false
	closeCapture := func() {
		if capture != nil {
			failed = errors.Join(failed, capture.Close())
			capture = nil
		}
	}
	go func() {
		defer close(ended)
		wait := firstTCPLook
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-timer.C:
				wait = min(2*wait, tcpLook)
				timer.Reset(wait)
				info, err := live.TCPInfo(client.NS, peer)
				if err != nil {
					failed = errors.Join(failed, fmt.Errorf("tcp_info: %w", err))
					return
				}
				if info == nil || !sameOrBusier(info, last) {
					continue
				}
				last = info
				if capture != nil && !windowSeen && info.Moved >= handshakeWindowMoved {
					if window, windowSeen = capture.Window(info.LocalPort, info.RemotePort); windowSeen && !want.every {
						closeCapture()
					}
				}
			}
		}
	}()
	return func() (map[string]float64, error) {
		close(done)
		<-ended
		if last == nil {
			closeCapture()
			return nil, failed
		}
		out := maps.Clone(last.Info)
		if capture != nil {
			if !windowSeen {
				if window, windowSeen = capture.Window(last.LocalPort, last.RemotePort); !windowSeen {
					window, windowSeen = capture.Latest(last.RemotePort)
				}
			}
			if want.every {
				maps.Copy(out, retransmitWaits(capture.Waits(last.LocalPort, last.RemotePort)))
			}
		}
		closeCapture()
		if windowSeen {
			out[results.HandshakeWindow] = float64(window)
		}
		return out, failed
	}
}

// sameOrBusier says whether a look's connection replaces the one seen before: the same one,
// or one that carried as many data segments. When the run's connection closes, a tool's
// control connection may be the only one left to see for a look or two (netperf's, which
// sends the results after the test): its state is not the run's.
func sameOrBusier(info, before *machine.TCPConnection) bool {
	return before == nil || info.LocalPort == before.LocalPort && info.RemotePort == before.RemotePort ||
		info.DataSegments >= before.DataSegments
}

// retransmitWaits are a connection's retransmissions as side metrics: how many there were,
// and the median of their waits in µs where there was one.
func retransmitWaits(waits []time.Duration) map[string]float64 {
	out := map[string]float64{results.RetransmitsSeen: float64(len(waits))}
	if len(waits) > 0 {
		us := make([]float64, len(waits))
		for i, w := range waits {
			us[i] = float64(w.Microseconds())
		}
		slices.Sort(us)
		out[results.RetransmitWait] = results.SortedMedian(us)
	}
	return out
}

// clearFixedPorts removes the sockets the previous run left in TIME_WAIT on the ports every
// run binds again (`ss -K`), so that this run can bind them.
func clearFixedPorts(live machine.Network, d tool.Driver, instances []scenarios.ToolSpec) error {
	for _, spec := range instances {
		for _, p := range d.FixedPorts(spec) {
			if _, err := live.ClearTimeWait(p.NS, p.Port); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepare runs each client's preparing command (tool.Preparer) to its end in the client's
// namespace; one that fails fails the run, with what it printed.
func (m *measurement) prepare(live machine.Network, d tool.Driver, instances []scenarios.ToolSpec, name string) error {
	pr, ok := d.(tool.Preparer)
	if !ok {
		return nil
	}
	for _, spec := range instances {
		argv := pr.Prepare(spec)
		if argv == nil {
			continue
		}
		p, err := live.Start(m.ctx, clientNS(spec), withBuilt(argv, m.opt.Built))
		if err != nil {
			return err
		}
		select {
		case <-p.Done():
		case <-time.After(waitlimit.Of(m.opt.ServerTimeout)): // a server's wait, as long on a slowed clock
			p.Stop()
			return fmt.Errorf("%s: preparing (%s) did not end after %s", name, strings.Join(argv, " "), m.opt.ServerTimeout)
		case <-m.ctx.Done():
			p.Stop()
			return m.ctx.Err()
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("%s: preparing (%s): %w: %s", name, strings.Join(argv, " "), err, strings.TrimSpace(p.Stderr()))
		}
	}
	return nil
}

// runServer is a one-off server of a run, with what its tool says of it and the client it
// serves (an index of the run's instances).
type runServer struct {
	proc.Process
	srv      tool.Server
	instance int
}

// processes are the servers' processes.
func processes(servers []runServer) []proc.Process {
	out := make([]proc.Process, len(servers))
	for i, s := range servers {
		out[i] = s.Process
	}
	return out
}

// startPerRunServers starts the one-off servers of a run (iperf3's: one test each) and waits
// until each listens, or says it is ready. It returns those it started, also on an error: the
// caller stops them (stopServers) once it has read what they printed.
func (m *measurement) startPerRunServers(live machine.Network, d tool.Driver, instances []scenarios.ToolSpec, name string) ([]runServer, error) {
	var servers []runServer
	for i, spec := range instances {
		srv := d.Server(spec)
		if !srv.PerRun {
			continue
		}
		server, err := live.Start(m.ctx, srv.NS, withBuilt(srv.Argv, m.opt.Built))
		if err != nil {
			return servers, err
		}
		servers = append(servers, runServer{server, srv, i})
		if srv.Ready != nil {
			err = proc.WaitOutput(m.ctx, server, srv.Ready, m.opt.ServerTimeout)
		} else {
			err = proc.WaitListening(m.ctx, server, srv.Port, m.opt.ServerTimeout)
		}
		if err != nil {
			return servers, fmt.Errorf("%s server: %w", name, err)
		}
	}
	return servers, nil
}

// stopServers stops a run's one-off servers, the last started first: with SIGINT those that
// must undo what they set up (tool.Server.Interrupt), else killed.
func stopServers(servers []runServer) {
	for i := len(servers) - 1; i >= 0; i-- {
		if servers[i].srv.Interrupt {
			servers[i].Interrupt(tool.ServerGrace)
		} else {
			servers[i].Stop()
		}
	}
}

// parseServers adds to each client's figures what its one-off server measured, for a tool
// whose server measures too (tool.ServerParser): the servers are stopped first, so that each
// has printed all it will. output is what they printed, kept with the sample beside the
// clients'.
func parseServers(d tool.Driver, instances []scenarios.ToolSpec, figures [][]results.Metric, servers []runServer) (_ [][]results.Metric, output string, _ error) {
	sp, ok := d.(tool.ServerParser)
	if !ok || len(servers) == 0 {
		return figures, "", nil
	}
	stopServers(servers)
	for _, s := range servers {
		output += string(s.Stdout())
		more, err := sp.ParseServer(instances[s.instance], figures[s.instance], s.Stdout(), s.Stderr())
		if err != nil {
			return nil, output, fmt.Errorf("%s: %w", serverName(s.srv), err)
		}
		for _, mt := range more {
			if err := mt.CheckValue(); err != nil {
				return nil, output, fmt.Errorf("%s output: %w", serverName(s.srv), err)
			}
		}
		figures[s.instance] = append(figures[s.instance], more...)
	}
	return figures, output, nil
}

// pinnedCPUsOfRun are the CPUs a run's ends, every client's and server's, are pinned to,
// each once.
func pinnedCPUsOfRun(instances []scenarios.ToolSpec) []int {
	var pinned []int
	for _, spec := range instances {
		for _, c := range pinnedCPUs(spec) {
			if !slices.Contains(pinned, c) {
				pinned = append(pinned, c)
			}
		}
	}
	return pinned
}

// startClients starts a run's clients one after another, bounded by ctx. When one fails to
// start, the ones started before it are stopped (cancel) and waited for.
func (m *measurement) startClients(ctx context.Context, cancel context.CancelFunc, live machine.Network, d tool.Driver, instances []scenarios.ToolSpec) ([]proc.Process, error) {
	var clients []proc.Process
	for i, spec := range instances {
		client, err := live.Start(ctx, clientNS(spec), withBuilt(d.Client(spec), m.opt.Built))
		if err != nil {
			cancel() // the clients started before it stop with the context
			for _, c := range clients {
				<-c.Done()
			}
			return nil, fmt.Errorf("client %d of %d: %w", i+1, len(instances), err)
		}
		clients = append(clients, client)
	}
	return clients, nil
}

// awaitRun waits for a run's clients to end, then up to a second for each one-off server.
func awaitRun(clients []proc.Process, servers []runServer) {
	for _, c := range clients {
		<-c.Done()
	}
	for _, server := range servers { // a one-off server ends with its test, unless it is interrupted
		if server.srv.Interrupt {
			continue
		}
		select {
		case <-server.Done():
		case <-time.After(time.Second):
		}
	}
}

// parseClients reads the figures and the row of each ended client of a run, and output, what
// they printed. A run cut off by ctx's deadline (limit), a client's output that does not
// parse, or a figure no measurement has fails the run.
func parseClients(ctx context.Context, d tool.Driver, instances []scenarios.ToolSpec, clients []proc.Process, name string, limit time.Duration) (figures [][]results.Metric, rows []string, output string, err error) {
	var outputs []string
	for i, client := range clients {
		outputs = append(outputs, string(client.Stdout()))
		metrics, row, perr := d.Parse(instances[i], client.Stdout(), []byte(client.Stderr()))
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			return nil, nil, strings.Join(outputs, ""), fmt.Errorf("%s client timed out after %s", name, limit)
		case perr != nil:
			if client.Err() != nil {
				perr = fmt.Errorf("%w (exit: %v)", perr, client.Err())
			}
			if len(clients) > 1 {
				perr = fmt.Errorf("client %d of %d: %w", i+1, len(clients), perr)
			}
			return nil, nil, strings.Join(outputs, ""), perr
		}
		for _, mt := range metrics {
			if err := mt.CheckValue(); err != nil {
				return nil, nil, "", fmt.Errorf("%s output: %w", name, err)
			}
		}
		figures, rows = append(figures, metrics), append(rows, row)
	}
	return figures, rows, strings.Join(outputs, ""), nil
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

// sampleHeadroom is how much nsperf may allocate inside a sample before its garbage
// collector runs there after all (collectBeforeSample): far more than a sample's looks at
// its connection and the tools' output take.
const sampleHeadroom = 256 << 20

// collectBeforeSample collects nsperf's garbage now, between samples, and holds its
// collector off until the returned func: inside a sample a collection would take the CPU time
// of the tools it measures. In a guest, whose two vCPUs are both measured, a collection of a
// few hundred milliseconds landed in one sample of ten and took 10% off its throughput
// (docs/method.md, "Virtual time: repeatability and the floor"). A sample that allocates more
// than sampleHeadroom is collected anyway (the memory limit). The collector's settings are the
// process's: samples that overlap (runs of one test binary in parallel) hold it off together,
// and the last to end gives it back.
func collectBeforeSample() (resume func()) {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.depth == 0 {
		runtime.GC()
		var stats runtime.MemStats
		runtime.ReadMemStats(&stats)
		// The limit is of all the memory the runtime holds (what it has mapped and not given
		// back), not of the live heap alone: below what it holds, it would collect all along.
		gcHold.limit = debug.SetMemoryLimit(int64(stats.Sys-stats.HeapReleased) + sampleHeadroom)
		gcHold.percent = debug.SetGCPercent(-1)
	}
	gcHold.depth++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHold.Lock()
			defer gcHold.Unlock()
			if gcHold.depth--; gcHold.depth == 0 {
				debug.SetGCPercent(gcHold.percent)
				debug.SetMemoryLimit(gcHold.limit)
			}
		})
	}
}

// gcHold is the collector's settings while samples hold it off.
var gcHold struct {
	sync.Mutex
	depth   int
	percent int
	limit   int64
}

// gcCycles counts nsperf's garbage collections so far (runtime/metrics, without stopping the
// world).
func gcCycles() int64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// selfUsage is nsperf's own rusage (getrusage(RUSAGE_SELF)): its CPU time, which a sample
// shares with the tools on a machine of few CPUs (a guest's), and its major page faults, the
// pages it had to read from storage since it started: from a disk on a host, from the host
// over 9p in a guest, where a page of nsperf's code read inside a sample's window is host
// I/O in the measured window (vm.LockOwnPages).
func selfUsage() unix.Rusage {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return ru
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
			if srv.PerRun || srv.None() || servers[srv.Key] != nil {
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
