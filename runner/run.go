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
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/procstat"
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
	// Policy decides comparisons (alpha, CV limit); zero fields take the scenario's values.
	Policy results.Policy
	// MinChange overrides the scenario's min_change (default 2%) when set.
	MinChange *float64
	// Concurrent measures even while another nsperf run measures on this machine, with a
	// warning in the result, instead of waiting for it.
	Concurrent bool
	// BeforeRound is called before each round of each case; an error ends the run. A guest
	// of an A/B kernel run waits there for its turn (vm.GuestGate).
	BeforeRound func() error
}

// ErrRunsFailed is returned (with the result) when some tool runs failed.
var ErrRunsFailed = errors.New("some runs failed")

// ErrNotStored is returned (with the result) when the result file could not be written.
var ErrNotStored = errors.New("result not stored")

// ErrStateDrift is returned (with the result) when a device's knobs were changed from outside
// the run while it measured.
var ErrStateDrift = errors.New("the devices' state changed during the run")

// Defaults of Options.
const (
	DefaultServerTimeout = 10 * time.Second
	DefaultSlack         = 30 * time.Second
)

// OutPath is where a run's result goes: --out, or nsperf-results/SCENARIO-RUNID.json.
func OutPath(opt Options, s *scenarios.Scenario, id string) string {
	if opt.Out != "" && opt.Out != "-" {
		return opt.Out
	}
	return filepath.Join("nsperf-results", s.Name+"-"+id+".json")
}

// JournalPath is where a run's journal goes: next to its result file, or next to the default
// result path when the result goes to stdout (--out -).
func JournalPath(opt Options, s *scenarios.Scenario, id string) string {
	return OutPath(opt, s, id) + ".journal"
}

// Run measures a scenario: each matrix case in turn is built, measured and torn down. It
// returns the result even when interrupted (Complete false, with the context's error) or when
// runs failed (ErrRunsFailed); the result file and journal are written in every case in which
// measuring began.
func Run(ctx context.Context, s *scenarios.Scenario, opt Options) (res *results.Result, err error) {
	runStart := time.Now()
	if opt.ServerTimeout == 0 {
		opt.ServerTimeout = DefaultServerTimeout
	}
	if opt.Slack == 0 {
		opt.Slack = DefaultSlack
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
	switch {
	case opt.MinChange != nil:
		policy.MinChange = *opt.MinChange
	case s.MinChange != nil:
		policy.MinChange = float64(*s.MinChange)
	default:
		policy.MinChange = results.DefaultMinChange
	}
	// One measuring run at a time per machine: two at once halve each other's figures.
	lock, busy, err := topo.LockMeasuring(ctx, s.Name, opt.Concurrent, progress)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	cases := s.Expand()
	// The first case claims the run id; the others reuse it, one after the other.
	first, err := build(cases[0].Scenario, "", topo.BuildOptions{Kept: opt.Keep && len(cases) == 1}, progress)
	if err != nil {
		return nil, err
	}
	r := newResult(s, first, opt, policy, tools, busy)
	journal, jerr := results.NewJournal(JournalPath(opt, s, r.RunID), r)
	if jerr != nil {
		return nil, errors.Join(jerr, first.Teardown())
	}
	defer journal.Close()
	m := &measurement{ctx: ctx, opt: opt, policy: policy, progress: progress, journal: journal, total: s.TotalRuns(), started: time.Now(), gates: r.Settings.Gates}
	if s.Adaptive {
		// Every look tests at its share of alpha; the result's comparisons are decided at it.
		m.sequential = results.NewSequential(s.MaxRuns, policy.Alpha, len(cases))
		m.policy.Alpha = m.sequential.Alpha[0]
		r.Settings.Policy.Alpha = m.policy.Alpha
		r.Settings.Adaptive = &results.Adaptive{MaxRuns: s.MaxRuns, FamilyAlpha: policy.Alpha, Design: m.sequential.String()}
		fmt.Fprintf(progress, "adaptive: at most %d rounds; %s\n", s.MaxRuns, m.sequential)
	}
	runErr := m.measureCases(cases, first, r)
	if !m.firstSample.IsZero() {
		r.FirstSampleSeconds = m.firstSample.Sub(runStart).Seconds()
	}
	// The gated comparisons of all cases are decided as one family, as `nsperf report` does.
	r.Recompute()
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

// newResult starts the result of a run: what was measured, how, and on what.
func newResult(s *scenarios.Scenario, first *topo.Live, opt Options, policy results.Policy, tools []envinfo.Tool, busy string) *results.Result {
	sum := sha256.Sum256(s.Text)
	r := &results.Result{
		Schema:      results.Schema,
		RunID:       string(first.ID),
		Scenario:    results.ScenarioInfo{Name: s.Name, File: s.File, SHA256: hex.EncodeToString(sum[:]), Text: string(s.Text)},
		Label:       opt.Label,
		Start:       time.Now().UTC(),
		Settings:    results.Settings{Runs: s.Runs, Order: s.Order, Seed: s.Seed, Policy: policy, Concurrent: busy},
		Environment: envinfo.Collect(tools),
	}
	r.Settings.RunLength, r.Settings.Gates = map[string]string{}, map[string][]string{}
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			r.Settings.RunLength[w.Name] = w.Length().String()
			r.Settings.Gates[w.Name] = w.Gates()
		}
	}
	if busy != "" {
		r.Warnings = append(r.Warnings, "measured while another nsperf run was measuring on this machine ("+busy+"; --concurrent): both runs' figures may be skewed")
	}
	if version, datapath, instance := first.OVS(); datapath != "" {
		r.Environment.OVS = &results.OVSInfo{Version: version, Datapath: datapath, Instance: instance}
	}
	return r
}

// measureCases builds, measures and tears down each case in turn under the first case's run
// id; the last case's topology stays up with --keep.
func (m *measurement) measureCases(cases []scenarios.Case, first *topo.Live, r *results.Result) error {
	last := len(cases) - 1
	for i, c := range cases {
		live := first
		if i > 0 {
			var err error
			if live, err = build(c.Scenario, first.ID, topo.BuildOptions{Kept: m.opt.Keep && i == last}, m.progress); err != nil {
				return err
			}
		}
		rc := results.Case{Matrix: c.Map(), Label: c.Label()}
		if len(rc.Matrix) == 0 {
			rc.Matrix = nil
		}
		m.caseIndex = i
		err := m.measureCase(c, live, &rc)
		r.Cases = append(r.Cases, rc)
		for _, w := range live.Warnings() {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
		if m.opt.Keep && i == last {
			live.Keep()
			fmt.Fprintf(m.progress, "kept topology %s up; remove it with: nsperf down %s\n", live.ID, live.ID)
		} else if terr := live.Teardown(); terr != nil {
			err = errors.Join(err, terr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// requireTools checks that the programs the scenario's workloads drive are installed, and
// returns those whose version the result records. A missing one is a capability the scenario
// needs (exit 4), with the way to install it.
func requireTools(s *scenarios.Scenario) ([]envinfo.Tool, error) {
	var missing []string
	var versioned []envinfo.Tool
	seen := map[string]bool{}
	for _, c := range s.Expand() {
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
		p := topo.NewPlan(s, use)
		if dp := p.Datapath(); dp != "" {
			fmt.Fprintf(progress, "building %s as run %s (OVS datapath %s)\n", s.Name, use, dp)
		} else {
			fmt.Fprintf(progress, "building %s as run %s\n", s.Name, use)
		}
		live, err := topo.Build(p, bo)
		if err != nil && id == "" && errors.Is(err, fs.ErrExist) && attempt < 5 {
			continue
		}
		return live, err
	}
}

// Up builds a scenario's topology (its first case) and applies its baseline state, leaving
// both in place.
func Up(s *scenarios.Scenario, progress io.Writer) (*topo.Live, error) {
	first := s.Expand()[0].Scenario
	live, err := build(first, "", topo.BuildOptions{Kept: true}, progress)
	if err != nil {
		return nil, err
	}
	err = live.Check(first.States[:1])
	if err == nil {
		_, err = live.Apply(first.States[0])
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

	// sequential is the design of an adaptive run; gates the workloads' gated metrics.
	sequential results.Sequential
	gates      map[string][]string

	total, done, failed, invalid int
	drifts                       []string
	started                      time.Time
	firstSample                  time.Time // when the first tool run began
}

// measureCase runs the rounds of one case on its built topology. States the kernel cannot
// apply end the run (exit 4), unless they are optional: then they are recorded as
// unavailable and the others are measured.
func (m *measurement) measureCase(c scenarios.Case, live *topo.Live, rc *results.Case) (err error) {
	defer m.stopWhenDaemonDies(live)(&err)
	cr := &caseRun{m: m, label: c.Label(), s: c.Scenario, live: live, rc: rc}
	if err := cr.prepare(); err != nil {
		return err
	}
	servers, err := m.startSharedServers(live, cr.s)
	defer func() {
		for _, p := range servers {
			p.stop()
		}
	}()
	if err != nil {
		return err
	}
	cr.servers = servers
	defer cr.summarize()
	return cr.rounds()
}

// stopWhenDaemonDies makes a daemon the topology needs (ovs-vswitchd) dying cancel the case,
// with the daemon's error; the returned function restores the run's context and turns the
// cancellation into that cause.
func (m *measurement) stopWhenDaemonDies(live *topo.Live) func(*error) {
	ctx, cancel := context.WithCancelCause(m.ctx)
	go func() {
		select {
		case derr := <-live.Failed():
			cancel(derr)
		case <-ctx.Done():
		}
	}()
	outer := m.ctx
	m.ctx = ctx
	return func(err *error) {
		m.ctx = outer
		if *err != nil && errors.Is(*err, context.Canceled) {
			*err = context.Cause(ctx) // the interrupt itself, or the daemon's death
		}
		cancel(nil)
	}
}

// caseRun is the measuring of one case: its states' records, the state applied now, and the
// shared servers.
type caseRun struct {
	m       *measurement
	label   string
	s       *scenarios.Scenario
	live    *topo.Live
	rc      *results.Case
	servers map[string]*process

	states  map[string]scenarios.State
	records map[string]*results.StateRecord
	// open are the gated comparisons the last look of an adaptive run left undecided.
	open []string
	// applied is the state the devices are in ("" for none known), as Apply returned them.
	applied        string
	appliedDevices map[string]topo.DeviceState
}

// prepare records each state with its commands, finds which states this kernel can apply,
// schedules the rounds over those, and starts the case in the journal.
func (cr *caseRun) prepare() error {
	s, rc := cr.s, cr.rc
	cr.states, cr.records = map[string]scenarios.State{}, map[string]*results.StateRecord{}
	rc.States = make([]results.StateRecord, len(s.States))
	var available []string
	for i, st := range s.States {
		cr.states[st.Name] = st
		rc.States[i] = results.StateRecord{Name: st.Name}
		if i > 0 {
			rc.States[i].CompareTo = s.Baseline(st)
		}
		cr.records[st.Name] = &rc.States[i]
		rc.States[i].Commands = plan.StateShell(cr.live.Plan.StateSteps(st))
		if err := cr.live.CheckState(st); err != nil {
			var capErr *topo.CapabilityError
			if !st.Optional || !errors.As(err, &capErr) {
				return cr.live.Check(required(s.States)) // every required state's problems at once
			}
			cr.m.unavailable(cr.records[st.Name], capErr, s.Runs*len(s.Workloads))
			continue
		}
		available = append(available, st.Name)
	}
	var seed int64
	if s.Seed != nil {
		seed = *s.Seed
	}
	rc.Schedule = Schedule(available, s.Runs, s.Order, seed)
	return cr.m.journal.BeginCase(cr.m.caseIndex, *rc)
}

// rounds measures every workload in every state of every round, in the schedule's order.
func (cr *caseRun) rounds() error {
	for round, order := range cr.rc.Schedule {
		if cr.m.opt.BeforeRound != nil {
			if err := cr.m.opt.BeforeRound(); err != nil {
				return err
			}
		}
	states:
		for _, name := range order {
			for _, w := range cr.s.Workloads {
				if err := cr.m.ctx.Err(); err != nil {
					return err
				}
				if cr.records[name].Unavailable != "" {
					continue states
				}
				available, err := cr.apply(name)
				if err != nil {
					return err
				}
				if !available {
					continue states
				}
				if err := cr.measure(round+1, len(cr.rc.Schedule), name, w); err != nil {
					return err
				}
			}
		}
		if cr.s.Adaptive && cr.stopAfter(round+1) {
			cr.rc.Schedule = cr.rc.Schedule[:round+1]
			return nil
		}
	}
	if cr.s.Adaptive {
		cr.rc.Adaptive = fmt.Sprintf("%d rounds, the maximum: undecided after the last look: %s", len(cr.rc.Schedule), strings.Join(cr.open, "; "))
	}
	return nil
}

// stopAfter is an adaptive run's look after a round: it stops when every gated comparison of
// the case is decided at the look's alpha.
func (cr *caseRun) stopAfter(round int) bool {
	seq := cr.m.sequential
	k := seq.Look(round)
	if k < 0 {
		return false
	}
	_, open := results.DecideLook(*cr.rc, workloadNames(cr.s), cr.m.gates, seq.Alpha[k], cr.m.policy.CVLimit, cr.m.policy.MinChange)
	cr.open = open
	fmt.Fprintf(cr.m.progress, "look %d of %d after round %d: %d gated comparisons undecided\n", k+1, len(seq.Looks), round, len(open))
	if len(open) > 0 {
		return false
	}
	cr.rc.Adaptive = fmt.Sprintf("%d rounds: every gated comparison decided at look %d of %d (%s)", round, k+1, len(seq.Looks), seq)
	return true
}

// apply puts the devices into a state unless they are in it, and records the state as read
// back the first time. An optional state the kernel refuses only now becomes unavailable.
func (cr *caseRun) apply(name string) (available bool, err error) {
	if cr.applied == name {
		return true, nil
	}
	st, rec := cr.states[name], cr.records[name]
	began := time.Now()
	devices, err := cr.live.Apply(st)
	applied := time.Since(began).Seconds()
	var capErr *topo.CapabilityError
	if err != nil && st.Optional && errors.As(err, &capErr) {
		cr.m.unavailable(rec, capErr, cr.s.Runs*len(cr.s.Workloads)-countState(cr.rc.Samples, name))
		cr.applied = ""
		return false, nil
	}
	if err != nil {
		return false, err
	}
	cr.applied, cr.appliedDevices = name, devices
	rec.ApplySeconds = append(rec.ApplySeconds, applied)
	if rec.Devices == nil {
		record(rec, devices)
		if err := cr.m.journal.State(cr.m.caseIndex, *rec); err != nil {
			return false, err
		}
	}
	return true, nil
}

// measure takes one sample of a workload in the applied state, reads every device back
// after it, and journals it: a knob changed from outside during the sample means it measured
// another state than the one recorded, and the sample is kept but marked invalid.
func (cr *caseRun) measure(round, rounds int, state string, w scenarios.Workload) error {
	m := cr.m
	sample, err := m.sample(cr.live, cr.servers, round, state, w)
	if err != nil {
		return err
	}
	if m.firstSample.IsZero() {
		m.firstSample = sample.Start
	}
	drift, err := cr.live.Drift(cr.appliedDevices)
	if err != nil {
		return err
	}
	if len(drift) > 0 {
		sample.Invalid = "state changed during the sample: " + strings.Join(drift, "; ")
		m.invalid++
		m.drifts = append(m.drifts, fmt.Sprintf("round %d, state %s, workload %s: %s", round, state, w.Name, strings.Join(drift, "; ")))
		cr.applied = "" // apply the state again before the next sample
	}
	cr.rc.Samples = append(cr.rc.Samples, sample)
	if err := m.journal.Append(m.caseIndex, sample); err != nil {
		return err
	}
	m.done++
	if sample.Error != "" {
		m.failed++
	}
	m.report(cr.label, round, rounds, sample)
	return nil
}

// summarize computes the case's statistics and checks its expectations, whatever samples
// there are.
func (cr *caseRun) summarize() {
	cr.rc.Summaries = results.Summarize(cr.rc.Samples, cr.rc.States, workloadNames(cr.s), cr.m.policy)
	cr.rc.Expectations = results.Evaluate(*cr.rc, cr.s.Expect)
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
	var perRunServer *process
	if srv.PerRun {
		server, err := start(m.ctx, live, srv.NS, srv.Argv)
		if err != nil {
			return fail(err)
		}
		defer server.stop()
		perRunServer = server
		stderr = append(stderr, &server.stderr)
		if err := server.waitListening(m.ctx, srv.Port, m.opt.ServerTimeout); err != nil {
			return fail(fmt.Errorf("%s server: %w", name, err))
		}
	}
	limit := spec.Length() + m.opt.Slack
	ctx, cancel := context.WithTimeout(m.ctx, limit)
	defer cancel()
	before := procstat.Read()
	client, err := start(ctx, live, clientNS(spec), sample.Argv)
	if err != nil {
		return fail(err)
	}
	stderr = append([]*bytes.Buffer{&client.stderr}, stderr...)
	<-client.done
	if perRunServer != nil { // a one-off server ends with its test
		select {
		case <-perRunServer.done:
		case <-time.After(time.Second):
		}
	}
	sample.Noise = noise(before, procstat.Read(), pinnedCPUs(spec), client, perRunServer)
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
func noise(before, after procstat.Snapshot, pinned []int, client, server *process) *results.Noise {
	all := after.All.Sub(before.All)
	if all.Total() == 0 {
		return nil
	}
	n := &results.Noise{
		StealPct:   100 * float64(all.Steal) / float64(all.Total()),
		SoftirqPct: 100 * float64(all.SoftIRQ) / float64(all.Total()),
	}
	toolTicks := 0.0
	for _, p := range []*process{client, server} {
		if p == nil || !p.exited() { // ProcessState is set when it has exited
			continue
		}
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			toolTicks += cpu.Seconds() * procstat.ClockTicks
			if p == client {
				n.ContextSwitches = ru.Nvcsw + ru.Nivcsw
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
