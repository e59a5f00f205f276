package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
)

// Options tune a run.
type Options struct {
	Out      string    // result file; its journal is Out + ".journal"; "-": no file (the caller prints it)
	Label    string    // e.g. the kernel under test
	Keep     bool      // leave the topology up after the run (`nsperf down RUNID` removes it)
	Progress io.Writer // progress lines; nil for none
	// Built are the programs nsperf compiled from a kernel tree for the tools that have no
	// package (tool.Program.Source), by name: what runs in their place, and where each came
	// from (recorded as its version). SelftestPrograms says which a scenario needs.
	Built map[string]tool.Built
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
	// Look, when set, decides an adaptive run's look instead of the case's own comparisons:
	// it returns the gated comparisons still undecided at alpha (nsperf run --bisect: the
	// case against the known-good kernel's result).
	Look func(c results.Case, gates map[string][]string, alpha float64) (open []string)
	// BeforeRound is called before each round of each case; an error ends the run. A guest
	// of an A/B kernel run waits there for its turn (vm.GuestGate).
	BeforeRound func() error
	// Machine builds the topologies and holds the measuring lock: host.Machine (package
	// machine/host) for this machine, a fake in the engine's tests. Required.
	Machine machine.Machine
	// Idle is the gate that waits before each round until the pinned CPUs are idle.
	Idle IdleGate
	// VirtualTime says that this machine's clock is a guest's virtual one (QEMU icount,
	// sleep=off): while the guest waits for the host (a 9p read of a tool's binary, a write
	// of the journal), its clock jumps to the next timer, so a time limit in the guest can
	// expire while nothing is wrong. The client and server limits are then off, and the host
	// bounds the guest in wall time (kernels.Deadline); progress counts virtual seconds.
	VirtualTime bool
	// StatesOptional makes every state but the baseline optional: one this kernel cannot
	// apply is recorded as unavailable with its reason, and the others are measured. The
	// guests of an A/B run of two kernels run so: a patch that raises a device's limit makes
	// a state possible on one kernel only, and that is what the A/B shows.
	StatesOptional bool
	// Annotate, when set, adds to the result before it is written, so that it is written
	// once, whole (reproduce sets the claims beside their measurement).
	Annotate func(*results.Result)
	// Phase, when set, is told what the run does from now on: results.PhaseSetup (building
	// a case's topology), a state's name (applying it and its samples), results.PhaseTeardown.
	// A counting pass attributes the kernel's calls to them (coverage.Counter.Mark).
	Phase func(string)
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
	// noLimit is the client and server limit in virtual time: none that a guest's clock
	// could reach by its jumps (the host's wall-time deadline bounds the guest instead).
	noLimit = waitlimit.None
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

// withDefaults fills the options a caller left zero.
func (opt Options) withDefaults() Options {
	if opt.ServerTimeout == 0 {
		opt.ServerTimeout = DefaultServerTimeout
	}
	if opt.VirtualTime {
		opt.ServerTimeout, opt.Slack = noLimit, noLimit
	}
	if opt.Slack == 0 {
		opt.Slack = DefaultSlack
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	opt.Idle = opt.Idle.withDefaults()
	return opt
}

// ResolvePolicy is the policy a run decides with: the options' values where set, else the
// scenario's, else the defaults.
func ResolvePolicy(s *scenarios.Scenario, opt Options) results.Policy {
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
		if policy.MinChangeFrom == "" { // a guest's host says where its floor comes from
			policy.MinChangeFrom = "--min-change"
		}
	case s.MinChange != nil:
		policy.MinChange, policy.MinChangeFrom = float64(*s.MinChange), "the scenario's min_change"
	default:
		policy.MinChange, policy.MinChangeFrom = results.DefaultMinChange, ""
	}
	// The result records the values decided with, not 0 for "the default".
	return policy.Effective()
}

// Run measures a scenario: each matrix case in turn is built, measured and torn down. It
// returns the result even when interrupted (Complete false, with the context's error) or when
// runs failed (ErrRunsFailed); the result file and journal are written in every case in which
// measuring began.
func Run(ctx context.Context, s *scenarios.Scenario, opt Options) (res *results.Result, err error) {
	runStart := time.Now()
	opt = opt.withDefaults()
	if opt.Machine == nil {
		return nil, errors.New("runner: no machine to measure on (Options.Machine)")
	}
	tools, err := requireTools(opt.Machine, s, opt.Built)
	if err != nil {
		return nil, err
	}
	policy := ResolvePolicy(s, opt)
	release, busy, err := opt.Machine.LockMeasuring(ctx, s.Name, opt.Concurrent, opt.Progress)
	if err != nil {
		return nil, err
	}
	defer release()
	cases := s.Expand()
	if opt.StatesOptional {
		for _, c := range cases {
			for i := 1; i < len(c.Scenario.States); i++ {
				c.Scenario.States[i].Optional = true
			}
		}
	}
	// The first case claims the run id; the others reuse it, one after the other.
	phase(opt, results.PhaseSetup)
	first, err := build(opt.Machine, cases[0].Scenario, "", opt.Keep && len(cases) == 1, opt.Progress)
	if err != nil {
		return nil, err
	}
	r := newResult(s, first, opt, policy, tools, busy)
	journal, jerr := results.NewJournal(JournalPath(opt, s, r.RunID), r)
	if jerr != nil {
		return nil, errors.Join(jerr, first.Teardown())
	}
	defer journal.Close()
	m := newMeasurement(ctx, s, opt, policy, journal, r, len(cases))
	runErr := m.measureCases(cases, first, r)
	if !m.firstSample.IsZero() {
		r.FirstSampleSeconds = m.firstSample.Sub(runStart).Seconds()
	}
	// Every statistic of the run, from the samples, by the code `nsperf report` and `compare`
	// use: summaries, the gated comparisons of all cases decided as one family, expectations.
	// The scenario was validated before the run: its expectations read, so this cannot fail.
	if err := r.Recompute(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	r.End = time.Now().UTC()
	r.Complete = runErr == nil
	if !journal.Written() {
		// Nothing was measured (a refused state, a failed build): no result to keep, and no
		// file of an earlier run at the same path is touched.
		return nil, runErr
	}
	if opt.Annotate != nil {
		opt.Annotate(r)
	}
	if opt.Out != "-" {
		if werr := results.WriteFile(OutPath(opt, s, r.RunID), r); werr != nil {
			// Say what was saved: the journal holds what it synced, which may be less than
			// what was measured when the disk filled up during the run.
			saved := fmt.Sprintf("the journal %s holds %d of the %d samples measured", JournalPath(opt, s, r.RunID), journal.Saved(), m.done)
			return r, errors.Join(runErr, fmt.Errorf("%w: %w (%s)", ErrNotStored, werr, saved))
		}
	}
	if runErr == nil {
		runErr = m.verdictError()
	}
	return r, runErr
}

// newResult starts the result of a run: what was measured, how, and on what.
func newResult(s *scenarios.Scenario, first machine.Network, opt Options, policy results.Policy, tools []envinfo.Tool, busy string) *results.Result {
	r := &results.Result{
		Schema:      results.Schema,
		RunID:       string(first.RunID()),
		Scenario:    results.ScenarioInfo{Name: s.Name, File: s.File, SHA256: scenarios.TextSHA256(s.Text), Text: string(s.Text)},
		Label:       opt.Label,
		Start:       time.Now().UTC(),
		Settings:    results.Settings{Runs: s.Runs, Order: s.Order, Seed: s.Seed, Policy: policy, Concurrent: busy},
		Environment: opt.Machine.Environment(tools, scenarioPinned(s)),
	}
	for _, p := range SelftestPrograms(s) {
		if r.Environment.Tools == nil {
			r.Environment.Tools = map[string]string{}
		}
		r.Environment.Tools[p.Name] = opt.Built[p.Name].Provenance
	}
	r.Settings.RunLength, r.Settings.Gates = map[string]string{}, s.Gates()
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			r.Settings.RunLength[w.Name] = w.Length().String()
		}
	}
	if busy != "" {
		r.Warnings = append(r.Warnings, ConcurrentWarning(busy, "machine"))
	}
	if version, datapath, instance := first.OVS(); datapath != "" {
		r.Environment.OVS = &results.OVSInfo{Version: version, Datapath: datapath, Instance: instance}
	}
	return r
}

// scenarioPinned are the CPUs any workload of the scenario is pinned to.
func scenarioPinned(s *scenarios.Scenario) []int {
	var out []int
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			for _, spec := range w.Instances() {
				for _, cpu := range pinnedCPUs(spec) {
					if !slices.Contains(out, cpu) {
						out = append(out, cpu)
					}
				}
			}
		}
	}
	sort.Ints(out)
	return out
}

// measureCases builds, measures and tears down each case in turn under the first case's run
// id; the last case's topology stays up with --keep.
func (m *measurement) measureCases(cases []scenarios.Case, first machine.Network, r *results.Result) error {
	last := len(cases) - 1
	for i, c := range cases {
		live := first
		if i > 0 {
			var err error
			phase(m.opt, results.PhaseSetup)
			if live, err = build(m.opt.Machine, c.Scenario, first.RunID(), m.opt.Keep && i == last, m.progress); err != nil {
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
		kept := false
		if m.opt.Keep && i == last {
			// Left up only as it is: what would not outlive this process (an XDP program
			// whose pin did not hold it) is an error, and the topology is torn down.
			if kerr := live.Keep(); kerr != nil {
				err = errors.Join(err, fmt.Errorf("--keep: %w", kerr))
			} else {
				kept = true
				fmt.Fprintf(m.progress, "kept topology %s up; remove it with: nsperf down %s\n", live.RunID(), live.RunID())
			}
		}
		if !kept {
			phase(m.opt, results.PhaseTeardown)
			if terr := live.Teardown(); terr != nil {
				err = errors.Join(err, terr)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// phase tells opt.Phase, if set, what the run does from now on.
func phase(opt Options, name string) {
	if opt.Phase != nil {
		opt.Phase(name)
	}
}

// SelftestPrograms are the programs the scenario's tools build from a kernel tree
// (tool.Program.Source), each once: what a caller builds into Options.Built.
func SelftestPrograms(s *scenarios.Scenario) []tool.Program {
	var out []tool.Program
	seen := map[string]bool{}
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			for _, p := range driver(w).Programs() {
				if p.Source != "" && !seen[p.Name] {
					seen[p.Name] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// withBuilt is argv with a program built from a kernel tree in place of its name.
func withBuilt(argv []string, built map[string]tool.Built) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if b, ok := built[a]; ok && b.Path != "" {
			out[i] = b.Path // taskset -c N PROGRAM ...: the program is not always first
			break
		}
	}
	return out
}

// requireTools checks that the programs the scenario's workloads drive are installed, and
// returns those whose version the result records. A missing one is a capability the scenario
// needs (exit 4), with the way to install it.
func requireTools(m machine.Machine, s *scenarios.Scenario, built map[string]tool.Built) ([]envinfo.Tool, error) {
	var missing []string
	var versioned []envinfo.Tool
	seen, seenProgram := map[string]bool{}, map[string]bool{}
	for _, c := range s.Expand() {
		for _, w := range c.Scenario.Workloads {
			d := driver(w)
			programs := d.Programs()
			if sp, ok := d.(tool.SpecPrograms); ok {
				programs = sp.ProgramsOf(w.Spec())
			}
			if !seen[w.Tool()] {
				seen[w.Tool()] = true
				if k, ok := d.(tool.InKernel); ok {
					if err := k.Available(); err != nil {
						missing = append(missing, err.Error())
					}
				}
			}
			for _, p := range programs {
				if seenProgram[p.Name] {
					continue
				}
				seenProgram[p.Name] = true
				versioned = append(versioned, versionedPrograms(p)...)
				if p.Source != "" {
					if built[p.Name].Path == "" {
						missing = append(missing, fmt.Sprintf("%s is built from a kernel source tree's %s, and none was built for this run (nsperf run builds it from the base's tree)", p.Name, p.Source))
					}
					continue
				}
				if _, err := m.LookPath(p.Binary); err != nil {
					missing = append(missing, missingProgram(p))
				}
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &capability.Error{Reasons: missing}
	}
	return versioned, nil
}

// measurement is the measuring of a whole run, across its cases: the counts behind the
// progress lines and the run's error.
type measurement struct {
	ctx      context.Context
	opt      Options
	policy   results.Policy
	progress io.Writer
	journal  *results.Journal
	// clientSeconds is the samples' own time so far (their clients'), for the time left in
	// virtual time.
	clientSeconds float64
	caseIndex     int

	// sequential is the design of an adaptive run; gates the workloads' gated metrics.
	sequential results.Sequential
	gates      map[string][]string

	total, done, failed, invalid int
	drifts                       []string
	started                      time.Time
	firstSample                  time.Time // when the first tool run began
	// stillBusy: the last round began on CPUs busy with other work after the idle gate's limit.
	stillBusy bool
	// captures says what a workload's runs capture of its TCP connection (Scenario.Captures:
	// what its record: list asks, in every state alike).
	captures func(scenarios.Workload) (handshake, every bool)
}

func newMeasurement(ctx context.Context, s *scenarios.Scenario, opt Options, policy results.Policy, journal *results.Journal, r *results.Result, cases int) *measurement {
	m := &measurement{ctx: ctx, opt: opt, policy: policy, progress: opt.Progress, journal: journal, total: s.TotalRuns(), started: time.Now(), gates: r.Settings.Gates,
		captures: s.Captures}
	if s.Adaptive {
		// Every look tests at its share of alpha; the result's comparisons are decided at it.
		m.sequential = results.NewSequential(s.MaxRuns, policy.Alpha, cases)
		m.policy.Alpha = m.sequential.Alpha[0]
		r.Settings.Policy.Alpha = m.policy.Alpha
		r.Settings.Adaptive = &results.Adaptive{MaxRuns: s.MaxRuns, FamilyAlpha: policy.Alpha, Design: m.sequential.String()}
		fmt.Fprintf(m.progress, "adaptive: at most %d rounds; %s\n", s.MaxRuns, m.sequential)
	}
	return m
}

// verdictError is the error of a run that measured to its end: samples taken while a device
// drifted, or tool runs that failed.
func (m *measurement) verdictError() error {
	if m.invalid > 0 {
		return fmt.Errorf("%w: %d of %d samples were taken while a device differed from the applied state (changed from outside nsperf), and are left out of the statistics:\n  %s",
			ErrStateDrift, m.invalid, m.done, strings.Join(m.drifts, "\n  "))
	}
	if m.failed > 0 {
		return fmt.Errorf("%w: %d of %d (their errors are in the result)", ErrRunsFailed, m.failed, m.done)
	}
	return nil
}

// report prints one progress line: where the run is, the last figure and the time left.
func (m *measurement) report(label string, round, rounds int, s results.Sample, gates []string) {
	figure := "FAILED: " + s.Error
	if s.Error == "" && len(s.Metrics) > 0 {
		// The workload's first gate (a UDP flow's packets, a ping-pong's latency), else the
		// throughput, else what it measured first.
		shown := s.Metrics[0]
		for _, want := range append(slices.Clone(gates), results.Throughput) {
			if i := slices.IndexFunc(s.Metrics, func(mt results.Metric) bool { return mt.Name == want }); i >= 0 {
				shown = s.Metrics[i]
				break
			}
		}
		figure = shown.Name + " " + results.FormatValue(shown.Value, shown.Unit)
		if shown.Name == results.Throughput {
			figure = results.FormatValue(shown.Value, shown.Unit)
		}
	}
	perRun := time.Since(m.started) / time.Duration(m.done)
	if m.opt.VirtualTime {
		// The guest's clock also runs through its waits for the host and for the other guest
		// (it jumps to its next timer when idle), which the time since the start would count:
		// the samples' own time is what is left to measure.
		m.clientSeconds += s.Seconds
		perRun = time.Duration(m.clientSeconds / float64(m.done) * float64(time.Second))
	}
	left := (perRun * time.Duration(m.total-m.done)).Round(time.Second).String()
	if m.opt.VirtualTime {
		left += " of virtual time"
	}
	if label != "" {
		label = "[" + label + "] "
	}
	fmt.Fprintf(m.progress, "[%d/%d] %sround %d/%d  %-8s %-10s %s  (%s left)\n", m.done, m.total, label, round, rounds, s.State, s.Workload, figure, left)
}

// unavailable marks an optional state as unavailable and takes its remaining runs out of the
// count.
func (m *measurement) unavailable(rec *results.StateRecord, err *capability.Error, remaining int) {
	rec.Unavailable = strings.Join(err.Reasons, "; ")
	fmt.Fprintf(m.progress, "state %s unavailable (optional): %s\n", rec.Name, rec.Unavailable)
	m.total -= remaining
}
