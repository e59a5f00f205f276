package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/iperf3"
	"github.com/nsperf/nsperf/runner/netperf"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
)

// Options tune a run.
type Options struct {
	Out      string    // result file; its journal is Out + ".journal"
	Label    string    // e.g. the kernel under test
	Keep     bool      // leave the topology up after the run (`nsperf down RUNID` removes it)
	Progress io.Writer // progress lines; nil for none
	// ServerTimeout bounds the wait for a server to listen.
	ServerTimeout time.Duration
	// Slack is added to a workload's duration and omit to bound one client run.
	Slack time.Duration
	// Policy decides comparisons (alpha, CV limit).
	Policy results.Policy
}

// ErrRunsFailed is returned (with the result) when some tool runs failed.
var ErrRunsFailed = errors.New("some runs failed")

// Run measures a scenario: each matrix case in turn is built, measured and torn down. It
// returns the result even when interrupted (Complete false, with the context's error) or when
// runs failed (ErrRunsFailed); the result file and journal are written in every case in which
// measuring began.
func Run(ctx context.Context, s *scenarios.Scenario, opt Options) (res *results.Result, err error) {
	if opt.ServerTimeout == 0 {
		opt.ServerTimeout = 10 * time.Second
	}
	if opt.Slack == 0 {
		opt.Slack = 30 * time.Second
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}
	tools, err := requireTools(s)
	if err != nil {
		return nil, err
	}
	// The first case claims the run id; the others reuse it, one after the other.
	first, err := build(s.Cases[0].Scenario, "", topo.BuildOptions{Kept: opt.Keep && len(s.Cases) == 1}, progress)
	if err != nil {
		return nil, err
	}
	id := first.ID
	opt.Out = OutPath(opt, s, string(id))
	sum := sha256.Sum256(s.Text)
	r := &results.Result{
		Schema:      results.Schema,
		RunID:       string(id),
		Scenario:    results.ScenarioInfo{Name: s.Name, File: s.File, SHA256: hex.EncodeToString(sum[:]), Text: string(s.Text)},
		Label:       opt.Label,
		Start:       time.Now().UTC(),
		Settings:    results.Settings{Runs: s.Runs, Order: s.Order, Seed: s.Seed},
		Environment: envinfo.Collect(tools, map[string]func(string) string{"iperf3": iperf3.Version, "netperf": netperf.Version}),
	}
	if version, datapath, instance := first.OVS(); datapath != "" {
		r.Environment.OVS = &results.OVSInfo{Version: version, Datapath: datapath, Instance: instance}
	}
	journal, jerr := results.OpenJournal(opt.Out+".journal", r.RunID, s.Name)
	if jerr != nil {
		return nil, errors.Join(jerr, first.Teardown())
	}
	defer journal.Close()
	m := &measurement{ctx: ctx, opt: opt, progress: progress, journal: journal, total: s.TotalRuns(), started: time.Now()}
	var runErr error
	for i, c := range s.Cases {
		live := first
		if i > 0 {
			if live, runErr = build(c.Scenario, id, topo.BuildOptions{Kept: opt.Keep && i == len(s.Cases)-1}, progress); runErr != nil {
				break
			}
		}
		rc := results.Case{Matrix: c.Map(), Label: c.Label()}
		if len(rc.Matrix) == 0 {
			rc.Matrix = nil
		}
		runErr = m.measureCase(c, live, &rc)
		r.Cases = append(r.Cases, rc)
		for _, w := range live.Warnings() {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
		if opt.Keep && i == len(s.Cases)-1 {
			fmt.Fprintf(progress, "kept topology %s up; remove it with: nsperf down %s\n", live.ID, live.ID)
		} else if terr := live.Teardown(); terr != nil {
			runErr = errors.Join(runErr, terr)
		}
		if runErr != nil {
			break
		}
	}
	r.End = time.Now().UTC()
	r.Complete = runErr == nil
	if len(r.Cases) == 0 || (len(r.Cases) == 1 && len(r.Cases[0].Samples) == 0 && runErr != nil) {
		// Nothing was measured (a refused state, a failed build): no result to keep.
		os.Remove(opt.Out + ".journal")
		return nil, runErr
	}
	if werr := results.WriteFile(opt.Out, r); werr != nil {
		return r, errors.Join(runErr, werr)
	}
	if runErr == nil && m.failed > 0 {
		runErr = fmt.Errorf("%w: %d of %d (their errors are in %s)", ErrRunsFailed, m.failed, m.done, opt.Out)
	}
	return r, runErr
}

// requireTools checks that the programs the scenario's workloads drive are installed, and
// returns how to ask each for its version. A missing one is a capability the scenario needs
// (exit 4), with the way to install it.
func requireTools(s *scenarios.Scenario) (map[string][]string, error) {
	tools := map[string][]string{}
	for _, c := range s.Cases {
		for _, w := range c.Scenario.Workloads {
			switch {
			case w.Iperf3 != nil:
				tools["iperf3"] = []string{iperf3.Binary, "--version"}
			case w.Netperf != nil:
				tools["netperf"] = []string{netperf.Binary, "-V"}
				tools["netserver"] = nil
			}
		}
	}
	var missing []string
	for name := range tools {
		bin := map[string]string{"iperf3": iperf3.Binary, "netperf": netperf.Binary, "netserver": netperf.ServerBinary}[name]
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s is not installed (Debian: apt-get install %s; netperf is in the non-free component, which scripts/deps.sh enables)", bin, map[string]string{"iperf3": "iperf3", "netperf": "netperf", "netserver": "netperf"}[name]))
		}
	}
	delete(tools, "netserver")
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &topo.CapabilityError{Reasons: missing}
	}
	return tools, nil
}

// build builds a case's topology under run id id, or under a fresh one (retrying on the rare
// collision) when id is "".
func build(s *scenarios.Scenario, id topo.RunID, bo topo.BuildOptions, progress io.Writer) (*topo.Live, error) {
	for attempt := 0; ; attempt++ {
		use := id
		if use == "" {
			use = topo.NewRunID()
		}
		fmt.Fprintf(progress, "building %s as run %s\n", s.Name, use)
		live, err := topo.Build(topo.NewPlan(s, use), bo)
		if err != nil && id == "" && errors.Is(err, fs.ErrExist) && attempt < 5 {
			continue
		}
		return live, err
	}
}

// Up builds a scenario's topology (its first case) and applies its baseline state, leaving
// both in place.
func Up(s *scenarios.Scenario, progress io.Writer) (*topo.Live, error) {
	live, err := build(s.Cases[0].Scenario, "", topo.BuildOptions{Kept: true}, progress)
	if err != nil {
		return nil, err
	}
	err = live.Check(s.States[:1])
	if err == nil {
		_, err = live.Apply(s.States[0])
	}
	if err != nil {
		return nil, errors.Join(err, live.Teardown())
	}
	return live, nil
}

type measurement struct {
	ctx      context.Context
	opt      Options
	progress io.Writer
	journal  *results.Journal

	total, done, failed int
	started             time.Time
}

// measureCase runs the rounds of one case on its built topology. States the kernel cannot
// apply end the run (exit 4), unless they are optional: then they are recorded as
// unavailable and the others are measured.
func (m *measurement) measureCase(c scenarios.Case, live *topo.Live, rc *results.Case) (err error) {
	s := c.Scenario
	// A daemon the topology needs (ovs-vswitchd) dying ends the case with its error.
	ctx, cancel := context.WithCancelCause(m.ctx)
	defer cancel(nil)
	go func() {
		select {
		case derr := <-live.Failed():
			cancel(derr)
		case <-ctx.Done():
		}
	}()
	outer := m.ctx
	m.ctx = ctx
	defer func() {
		m.ctx = outer
		if err != nil && errors.Is(err, context.Canceled) {
			err = context.Cause(ctx) // the interrupt itself, or the daemon's death
		}
	}()
	states := map[string]scenarios.State{}
	records := map[string]*results.StateRecord{}
	rc.States = make([]results.StateRecord, len(s.States))
	var available []string
	for i, st := range s.States {
		states[st.Name] = st
		rc.States[i] = results.StateRecord{Name: st.Name}
		if i > 0 {
			rc.States[i].CompareTo = s.Baseline(st)
		}
		records[st.Name] = &rc.States[i]
		rc.States[i].Commands = topo.StateShell(s, st, live.ID)
		if err := live.CheckState(st); err != nil {
			var capErr *topo.CapabilityError
			if !st.Optional || !errors.As(err, &capErr) {
				return live.Check(required(s.States)) // every required state's problems at once
			}
			m.unavailable(records[st.Name], capErr, s.Runs*len(s.Workloads))
			continue
		}
		available = append(available, st.Name)
	}
	var seed int64
	if s.Seed != nil {
		seed = *s.Seed
	}
	rc.Schedule = Schedule(available, s.Runs, s.Order, seed)
	servers, err := m.startNetservers(live, s)
	defer func() {
		for _, p := range servers {
			p.stop()
		}
	}()
	if err != nil {
		return err
	}
	policy := m.opt.Policy
	if policy.Alpha == 0 {
		policy.Alpha = s.Alpha
	}
	if policy.CVLimit == 0 {
		policy.CVLimit = float64(s.CVLimit)
	}
	defer func() {
		rc.Summaries = results.Summarize(rc.Samples, rc.States, workloadNames(s), policy)
		rc.Expectations = results.Evaluate(*rc, s.Expect)
	}()
	applied := ""
	for round, order := range rc.Schedule {
		for _, name := range order {
			if err := m.ctx.Err(); err != nil {
				return err
			}
			rec := records[name]
			if rec.Unavailable != "" {
				continue
			}
			if applied != name {
				devices, err := live.Apply(states[name])
				var capErr *topo.CapabilityError
				if err != nil && states[name].Optional && errors.As(err, &capErr) {
					m.unavailable(rec, capErr, s.Runs*len(s.Workloads)-countState(rc.Samples, name))
					applied = ""
					continue
				}
				if err != nil {
					return err
				}
				applied = name
				if rec.Devices == nil {
					record(rec, devices)
				}
			}
			for _, w := range s.Workloads {
				var sample results.Sample
				if w.Netperf != nil {
					sample = m.netperf(live, round+1, name, w)
				} else {
					sample = m.iperf3(live, round+1, name, w)
				}
				if err := m.ctx.Err(); err != nil {
					return err // a run cut short by the interrupt is no sample
				}
				rc.Samples = append(rc.Samples, sample)
				if err := m.journal.Append(sample); err != nil {
					return err
				}
				m.done++
				if sample.Error != "" {
					m.failed++
				}
				m.report(c.Label(), round+1, len(rc.Schedule), sample)
			}
		}
	}
	return nil
}

// required returns the states that are not optional.
func required(states []scenarios.State) []scenarios.State {
	var out []scenarios.State
	for _, st := range states {
		if !st.Optional {
			out = append(out, st)
		}
	}
	return out
}

// unavailable marks an optional state as unavailable and takes its remaining runs out of the
// count.
func (m *measurement) unavailable(rec *results.StateRecord, err *topo.CapabilityError, remaining int) {
	rec.Unavailable = strings.Join(err.Reasons, "; ")
	fmt.Fprintf(m.progress, "state %s unavailable (optional): %s\n", rec.Name, rec.Unavailable)
	m.total -= remaining
}

func countState(samples []results.Sample, state string) int {
	n := 0
	for _, s := range samples {
		if s.State == state {
			n++
		}
	}
	return n
}

// record keeps what a state really was, as read back after applying it.
func record(rec *results.StateRecord, devices map[string]topo.DeviceState) {
	rec.Devices = map[string]map[string]uint64{}
	for ref, d := range devices {
		rec.Devices[ref] = d.Attrs.Map()
		if len(d.Features) > 0 {
			if rec.Features == nil {
				rec.Features = map[string]map[string]bool{}
			}
			rec.Features[ref] = d.Features
		}
		if d.Lower != "" {
			if rec.Lower == nil {
				rec.Lower = map[string]string{}
			}
			rec.Lower[ref] = d.Lower
		}
		if d.Recreated {
			rec.Recreated = append(rec.Recreated, ref)
		}
		if d.Qdisc != "" {
			if rec.Qdiscs == nil {
				rec.Qdiscs = map[string]string{}
			}
			rec.Qdiscs[ref] = d.Qdisc
		}
	}
	sort.Strings(rec.Recreated)
}

// iperf3 runs one iperf3 measurement: a one-off server, ready when it listens, then the client.
func (m *measurement) iperf3(live *topo.Live, round int, state string, w scenarios.Workload) results.Sample {
	cfg := w.Iperf3
	argv := iperf3.ClientArgs(cfg)
	sample := results.Sample{Round: round, State: state, Workload: w.Name, Tool: "iperf3", Argv: argv, Start: time.Now().UTC()}
	fail := func(err error, stderr ...string) results.Sample {
		sample.Error = err.Error()
		sample.Stderr = strings.TrimSpace(strings.Join(stderr, "\n"))
		sample.Seconds = time.Since(sample.Start).Seconds()
		return sample
	}
	server, err := start(m.ctx, live, cfg.Server.NS, iperf3.ServerArgs(cfg))
	if err != nil {
		return fail(err)
	}
	defer server.stop()
	if err := server.waitListening(m.ctx, cfg.Port, m.opt.ServerTimeout); err != nil {
		return fail(fmt.Errorf("iperf3 server: %w", err), server.stderr.String())
	}
	ctx, cancel := context.WithTimeout(m.ctx, cfg.Duration.Std()+cfg.Omit.Std()+m.opt.Slack)
	defer cancel()
	client, err := start(ctx, live, cfg.Client.NS, argv)
	if err != nil {
		return fail(err)
	}
	<-client.done
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Output = client.stdout.String()
	metrics, perr := iperf3.Parse(client.stdout.Bytes())
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fail(fmt.Errorf("iperf3 client timed out after %s", cfg.Duration.Std()+cfg.Omit.Std()+m.opt.Slack), client.stderr.String(), server.stderr.String())
	case perr != nil:
		if client.err != nil {
			perr = fmt.Errorf("%w (exit: %v)", perr, client.err)
		}
		return fail(perr, client.stderr.String(), server.stderr.String())
	}
	sample.Metrics = metrics
	return sample
}

// startNetservers starts one netserver per server namespace and control port, in the
// foreground, and waits until each listens.
func (m *measurement) startNetservers(live *topo.Live, s *scenarios.Scenario) ([]*process, error) {
	var servers []*process
	seen := map[string]bool{}
	for _, w := range s.Workloads {
		n := w.Netperf
		if n == nil || seen[n.Server.NS+"/"+fmt.Sprint(n.Port)] {
			continue
		}
		seen[n.Server.NS+"/"+fmt.Sprint(n.Port)] = true
		p, err := start(m.ctx, live, n.Server.NS, netperf.ServerArgs(n))
		if err != nil {
			return servers, err
		}
		servers = append(servers, p)
		if err := p.waitListening(m.ctx, n.Port, m.opt.ServerTimeout); err != nil {
			return servers, fmt.Errorf("netserver in %s: %w", n.Server.NS, err)
		}
	}
	return servers, nil
}

// netperf runs one netperf test against the case's netserver.
func (m *measurement) netperf(live *topo.Live, round int, state string, w scenarios.Workload) results.Sample {
	cfg := w.Netperf
	argv := netperf.ClientArgs(cfg)
	sample := results.Sample{Round: round, State: state, Workload: w.Name, Tool: "netperf", Argv: argv, Start: time.Now().UTC()}
	limit := cfg.Duration.Std() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	client, err := start(ctx, live, cfg.Client.NS, argv)
	if err != nil {
		sample.Error = err.Error()
		return sample
	}
	<-client.done
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Output = client.stdout.String()
	metrics, row, perr := netperf.Parse(client.stdout.String()+client.stderr.String(), cfg.Test, cfg.Outputs)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		sample.Error = fmt.Sprintf("netperf timed out after %s", limit)
	case perr != nil:
		sample.Error = perr.Error()
		if client.err != nil {
			sample.Error += fmt.Sprintf(" (exit: %v)", client.err)
		}
	}
	if sample.Error != "" {
		sample.Stderr = strings.TrimSpace(client.stderr.String())
		return sample
	}
	sample.Metrics, sample.Row = metrics, row
	return sample
}

// report prints one progress line: where the run is, the last figure and the time left.
func (m *measurement) report(label string, round, rounds int, s results.Sample) {
	figure := "FAILED: " + s.Error
	for _, mt := range s.Metrics {
		if mt.Name == results.Throughput {
			figure = results.FormatValue(mt.Value, mt.Unit)
		}
	}
	perRun := time.Since(m.started) / time.Duration(m.done)
	left := (perRun * time.Duration(m.total-m.done)).Round(time.Second)
	if label != "" {
		label = "[" + label + "] "
	}
	fmt.Fprintf(m.progress, "[%d/%d] %sround %d/%d  %-8s %-10s %s  (%s left)\n", m.done, m.total, label, round, rounds, s.State, s.Workload, figure, left)
}

func workloadNames(s *scenarios.Scenario) []string {
	names := make([]string, len(s.Workloads))
	for i, w := range s.Workloads {
		names[i] = w.Name
	}
	return names
}
