package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
)

// Options tune a run.
type Options struct {
	Out      string    // result file; its journal is Out + ".journal"; "-": no file (the caller prints it)
	Label    string    // e.g. the kernel under test
	Keep     bool      // leave the topology up after the run (`nsperf down RUNID` removes it)
	Progress io.Writer // progress lines; nil for none
	// ServerTimeout bounds the wait for a server to listen.
	ServerTimeout time.Duration
	// Slack is added to a workload's duration and omit to bound one client run.
	Slack time.Duration
	// Policy decides comparisons (alpha, CV limit).
	Policy results.Policy
	// Concurrent measures even while another nsperf run measures on this machine, with a
	// warning in the result, instead of waiting for it.
	Concurrent bool
}

// ErrRunsFailed is returned (with the result) when some tool runs failed.
var ErrRunsFailed = errors.New("some runs failed")

// ErrNotStored is returned (with the result) when the result file could not be written.
var ErrNotStored = errors.New("result not stored")

// ErrStateDrift is returned (with the result) when a device's knobs were changed from outside
// the run while it measured.
var ErrStateDrift = errors.New("the devices' state changed during the run")

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
	policy := opt.Policy
	if policy.Alpha == 0 {
		policy.Alpha = s.Alpha
	}
	if policy.CVLimit == 0 {
		policy.CVLimit = float64(s.CVLimit)
	}
	// One measuring run at a time per machine: two at once halve each other's figures.
	lock, busy, err := topo.LockMeasuring(ctx, s.Name, opt.Concurrent, progress)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// The first case claims the run id; the others reuse it, one after the other.
	first, err := build(s.Cases[0].Scenario, "", topo.BuildOptions{Kept: opt.Keep && len(s.Cases) == 1}, progress)
	if err != nil {
		return nil, err
	}
	id := first.ID
	sum := sha256.Sum256(s.Text)
	r := &results.Result{
		Schema:      results.Schema,
		RunID:       string(id),
		Scenario:    results.ScenarioInfo{Name: s.Name, File: s.File, SHA256: hex.EncodeToString(sum[:]), Text: string(s.Text)},
		Label:       opt.Label,
		Start:       time.Now().UTC(),
		Settings:    results.Settings{Runs: s.Runs, Order: s.Order, Seed: s.Seed, Policy: policy, Concurrent: busy},
		Environment: envinfo.Collect(tools),
	}
	if busy != "" {
		r.Warnings = append(r.Warnings, "measured while another nsperf run was measuring on this machine ("+busy+"; --concurrent): both runs' figures may be skewed")
	}
	if version, datapath, instance := first.OVS(); datapath != "" {
		r.Environment.OVS = &results.OVSInfo{Version: version, Datapath: datapath, Instance: instance}
	}
	journal, jerr := results.NewJournal(JournalPath(opt, s, r.RunID), r)
	if jerr != nil {
		return nil, errors.Join(jerr, first.Teardown())
	}
	defer journal.Close()
	m := &measurement{ctx: ctx, opt: opt, policy: policy, progress: progress, journal: journal, total: s.TotalRuns(), started: time.Now()}
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
		m.caseIndex = i
		runErr = m.measureCase(c, live, &rc)
		r.Cases = append(r.Cases, rc)
		for _, w := range live.Warnings() {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
		if opt.Keep && i == len(s.Cases)-1 {
			live.Keep()
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
	if !journal.Written() {
		// Nothing was measured (a refused state, a failed build): no result to keep, and no
		// file of an earlier run at the same path is touched.
		return nil, runErr
	}
	if opt.Out != "-" {
		if werr := results.WriteFile(OutPath(opt, s, r.RunID), r); werr != nil {
			return r, errors.Join(runErr, fmt.Errorf("%w: %w (the samples are in %s)", ErrNotStored, werr, JournalPath(opt, s, r.RunID)))
		}
	}
	if runErr == nil && m.invalid > 0 {
		runErr = fmt.Errorf("%w: %d of %d samples were taken while a device differed from the applied state (changed from outside nsperf), and are left out of the statistics:\n  %s",
			ErrStateDrift, m.invalid, m.done, strings.Join(m.drifts, "\n  "))
	}
	if runErr == nil && m.failed > 0 {
		runErr = fmt.Errorf("%w: %d of %d (their errors are in the result)", ErrRunsFailed, m.failed, m.done)
	}
	return r, runErr
}

// requireTools checks that the programs the scenario's workloads drive are installed, and
// returns those whose version the result records. A missing one is a capability the scenario
// needs (exit 4), with the way to install it.
func requireTools(s *scenarios.Scenario) ([]envinfo.Tool, error) {
	var missing []string
	var versioned []envinfo.Tool
	seen := map[string]bool{}
	for _, c := range s.Cases {
		for _, w := range c.Scenario.Workloads {
			if seen[w.Tool()] {
				continue
			}
			seen[w.Tool()] = true
			d := driver(w)
			for _, p := range d.Programs() {
				if _, err := exec.LookPath(p.Binary); err != nil {
					missing = append(missing, missingProgram(p))
				}
			}
			versioned = append(versioned, versionedPrograms(d)...)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &topo.CapabilityError{Reasons: missing}
	}
	return versioned, nil
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
	live.Keep()
	return live, nil
}

type measurement struct {
	ctx       context.Context
	opt       Options
	policy    results.Policy
	progress  io.Writer
	journal   *results.Journal
	caseIndex int

	total, done, failed, invalid int
	drifts                       []string
	started                      time.Time
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
		rc.States[i].Commands = plan.StateShell(live.Plan.StateSteps(st))
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
	if err := m.journal.BeginCase(m.caseIndex, *rc); err != nil {
		return err
	}
	servers, err := m.startSharedServers(live, s)
	defer func() {
		for _, p := range servers {
			p.stop()
		}
	}()
	if err != nil {
		return err
	}
	defer func() {
		rc.Summaries = results.Summarize(rc.Samples, rc.States, workloadNames(s), m.policy)
		rc.Expectations = results.Evaluate(*rc, s.Expect)
	}()
	applied := ""
	var appliedDevices map[string]topo.DeviceState
	for round, order := range rc.Schedule {
	states:
		for _, name := range order {
			rec := records[name]
			for _, w := range s.Workloads {
				if err := m.ctx.Err(); err != nil {
					return err
				}
				if rec.Unavailable != "" {
					continue states
				}
				if applied != name {
					devices, err := live.Apply(states[name])
					var capErr *topo.CapabilityError
					if err != nil && states[name].Optional && errors.As(err, &capErr) {
						m.unavailable(rec, capErr, s.Runs*len(s.Workloads)-countState(rc.Samples, name))
						applied = ""
						continue states
					}
					if err != nil {
						return err
					}
					applied, appliedDevices = name, devices
					if rec.Devices == nil {
						record(rec, devices)
						if err := m.journal.State(m.caseIndex, *rec); err != nil {
							return err
						}
					}
				}
				sample, err := m.sample(live, servers, round+1, name, w)
				if err != nil {
					return err
				}
				// Read every device back: a knob changed from outside during the sample means
				// it measured another state than the one recorded.
				drift, err := live.Drift(appliedDevices)
				if err != nil {
					return err
				}
				if len(drift) > 0 {
					sample.Invalid = "state changed during the sample: " + strings.Join(drift, "; ")
					m.invalid++
					m.drifts = append(m.drifts, fmt.Sprintf("round %d, state %s, workload %s: %s", round+1, name, w.Name, strings.Join(drift, "; ")))
					applied = "" // apply the state again before the next sample
				}
				rc.Samples = append(rc.Samples, sample)
				if err := m.journal.Append(m.caseIndex, sample); err != nil {
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

// sample runs one workload once; an error ends the case (interrupt, a shared server gone).
func (m *measurement) sample(live *topo.Live, servers map[string]*process, round int, state string, w scenarios.Workload) (results.Sample, error) {
	d, spec := driver(w), w.Spec()
	srv := d.Server(spec)
	shared := servers[srv.Key]
	if !srv.PerRun && shared.exited() && m.ctx.Err() == nil {
		return results.Sample{}, serverDied(srv, shared)
	}
	sample := m.run(live, d, spec, srv, results.Sample{Round: round, State: state, Workload: w.Name, Tool: w.Tool()})
	if sample.Error != "" && !srv.PerRun && shared.exited() && m.ctx.Err() == nil {
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
func (m *measurement) run(live *topo.Live, d tool.Driver, spec scenarios.ToolSpec, srv tool.Server, sample results.Sample) results.Sample {
	name := sample.Tool
	sample.Argv, sample.Start = d.Client(spec), time.Now().UTC()
	var stderr []*bytes.Buffer
	fail := func(err error) results.Sample {
		var text []string
		for _, b := range stderr {
			if t := strings.TrimSpace(b.String()); t != "" {
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
	if srv.PerRun {
		server, err := start(m.ctx, live, srv.NS, srv.Argv)
		if err != nil {
			return fail(err)
		}
		defer server.stop()
		stderr = append(stderr, &server.stderr)
		if err := server.waitListening(m.ctx, srv.Port, m.opt.ServerTimeout); err != nil {
			return fail(fmt.Errorf("%s server: %w", name, err))
		}
	}
	limit := spec.Length() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	client, err := start(ctx, live, clientNS(spec), sample.Argv)
	if err != nil {
		return fail(err)
	}
	stderr = append([]*bytes.Buffer{&client.stderr}, stderr...)
	<-client.done
	sample.Output = client.stdout.String()
	metrics, row, perr := d.Parse(spec, client.stdout.Bytes(), client.stderr.Bytes())
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fail(fmt.Errorf("%s client timed out after %s", name, limit))
	case perr != nil:
		if client.err != nil {
			perr = fmt.Errorf("%w (exit: %v)", perr, client.err)
		}
		return fail(perr)
	}
	sample.Seconds = time.Since(sample.Start).Seconds()
	sample.Metrics, sample.Row = metrics, row
	return sample
}

// serverDied is the error of a case whose shared server exited: every later run against it
// would fail.
func serverDied(srv tool.Server, p *process) error {
	return fmt.Errorf("%s in namespace %s (port %d) exited during the run (%v)%s; the case is stopped", serverName(srv), srv.NS, srv.Port, p.err, tail(p.stderr.String()))
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
		rec.Devices[ref] = d.Attrs.Widen()
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

// startSharedServers starts the servers that live through a case (netserver), one per Key,
// in the foreground, and waits until each listens. They are returned by Key.
func (m *measurement) startSharedServers(live *topo.Live, s *scenarios.Scenario) (map[string]*process, error) {
	servers := map[string]*process{}
	for _, w := range s.Workloads {
		srv := driver(w).Server(w.Spec())
		if srv.PerRun || servers[srv.Key] != nil {
			continue
		}
		p, err := start(m.ctx, live, srv.NS, srv.Argv)
		if err != nil {
			return servers, err
		}
		servers[srv.Key] = p
		if err := p.waitListening(m.ctx, srv.Port, m.opt.ServerTimeout); err != nil {
			return servers, fmt.Errorf("%s in %s: %w", serverName(srv), srv.NS, err)
		}
	}
	return servers, nil
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
