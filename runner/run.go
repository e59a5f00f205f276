package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/envinfo"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/iperf3"
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
}

// ErrRunsFailed is returned (with the result) when some tool runs failed.
var ErrRunsFailed = errors.New("some runs failed")

// Run measures a scenario. It returns the result even when interrupted (Complete false, with
// the context's error) or when runs failed (ErrRunsFailed); the result file and journal are
// written in every case in which measuring began.
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
	live, berr := build(s, topo.BuildOptions{Kept: opt.Keep}, progress)
	if berr != nil {
		return nil, berr
	}
	defer func() {
		if opt.Keep {
			fmt.Fprintf(progress, "kept topology %s up; remove it with: nsperf down %s\n", live.ID, live.ID)
			return
		}
		if terr := live.Teardown(); terr != nil {
			err = errors.Join(err, terr)
		}
	}()
	if err := live.Check(s.States); err != nil {
		return nil, err
	}
	opt.Out = OutPath(opt, s, string(live.ID))

	sum := sha256.Sum256(s.Text)
	var seed int64
	if s.Seed != nil {
		seed = *s.Seed
	}
	schedule := Schedule(s.StateNames(), s.Runs, s.Order, seed)
	r := &results.Result{
		Schema:   results.Schema,
		RunID:    string(live.ID),
		Scenario: results.ScenarioInfo{Name: s.Name, File: s.File, SHA256: hex.EncodeToString(sum[:]), Text: string(s.Text)},
		Label:    opt.Label,
		Start:    time.Now().UTC(),
		Settings: results.Settings{Runs: s.Runs, Order: s.Order, Seed: s.Seed, Schedule: schedule},
		Environment: envinfo.Collect(map[string][]string{"iperf3": {iperf3.Binary, "--version"}},
			map[string]func(string) string{"iperf3": iperf3.Version}),
		Cases: []results.Case{{}},
	}
	journal, jerr := results.OpenJournal(opt.Out+".journal", r.RunID, s.Name)
	if jerr != nil {
		return nil, jerr
	}
	defer journal.Close()

	m := &measurement{ctx: ctx, s: s, live: live, opt: opt, progress: progress, journal: journal, c: &r.Cases[0],
		total: s.TotalRuns(), started: time.Now()}
	runErr := m.rounds(schedule)
	r.End = time.Now().UTC()
	r.Complete = runErr == nil
	r.Cases[0].Summaries = results.Summarize(r.Cases[0].Samples, s.StateNames(), workloadNames(s))
	if werr := results.WriteFile(opt.Out, r); werr != nil {
		return r, errors.Join(runErr, werr)
	}
	if runErr == nil && m.failed > 0 {
		runErr = fmt.Errorf("%w: %d of %d (their errors are in %s)", ErrRunsFailed, m.failed, m.done, opt.Out)
	}
	return r, runErr
}

// build claims a fresh run id (retrying on the rare collision) and builds the topology.
func build(s *scenarios.Scenario, bo topo.BuildOptions, progress io.Writer) (*topo.Live, error) {
	for attempt := 0; ; attempt++ {
		id := topo.NewRunID()
		fmt.Fprintf(progress, "building %s as run %s\n", s.Name, id)
		live, err := topo.Build(topo.NewPlan(s, id), bo)
		if err != nil && errors.Is(err, fs.ErrExist) && attempt < 5 {
			continue
		}
		return live, err
	}
}

// Up builds a scenario's topology and applies its baseline state, leaving both in place.
func Up(s *scenarios.Scenario, progress io.Writer) (*topo.Live, error) {
	live, err := build(s, topo.BuildOptions{Kept: true}, progress)
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
	s        *scenarios.Scenario
	live     *topo.Live
	opt      Options
	progress io.Writer
	journal  *results.Journal
	c        *results.Case

	total, done, failed int
	started             time.Time
}

func (m *measurement) rounds(schedule [][]string) error {
	applied := ""
	recorded := map[string]bool{}
	states := map[string]scenarios.State{}
	for _, st := range m.s.States {
		states[st.Name] = st
	}
	for _, st := range m.s.States { // recorded in scenario order, whatever the schedule
		m.c.States = append(m.c.States, results.StateRecord{Name: st.Name})
	}
	for round, order := range schedule {
		for _, name := range order {
			if err := m.ctx.Err(); err != nil {
				return err
			}
			if applied != name {
				eff, err := m.live.Apply(states[name])
				if err != nil {
					return err
				}
				applied = name
				if !recorded[name] {
					recorded[name] = true
					m.record(name, eff)
				}
			}
			for _, w := range m.s.Workloads {
				sample := m.iperf3(round+1, name, w)
				if err := m.ctx.Err(); err != nil {
					return err // a run cut short by the interrupt is no sample
				}
				m.c.Samples = append(m.c.Samples, sample)
				if err := m.journal.Append(sample); err != nil {
					return err
				}
				m.done++
				if sample.Error != "" {
					m.failed++
				}
				m.report(round+1, len(schedule), sample)
			}
		}
	}
	return nil
}

func (m *measurement) record(state string, eff map[string]topo.Attrs) {
	devices := map[string]map[string]uint64{}
	for ref, a := range eff {
		devices[ref] = map[string]uint64{
			"mtu": uint64(a.MTU), "gso_max_size": uint64(a.GSOMaxSize), "gso_max_segs": uint64(a.GSOMaxSegs),
			"gro_max_size": uint64(a.GROMaxSize), "gso_ipv4_max_size": uint64(a.GSOIPv4MaxSize),
			"gro_ipv4_max_size": uint64(a.GROIPv4MaxSize), "tso_max_size": uint64(a.TSOMaxSize), "tso_max_segs": uint64(a.TSOMaxSegs),
		}
	}
	for i := range m.c.States {
		if m.c.States[i].Name == state {
			m.c.States[i].Devices = devices
		}
	}
}

// iperf3 runs one iperf3 measurement: a one-off server, ready when it listens, then the client.
func (m *measurement) iperf3(round int, state string, w scenarios.Workload) results.Sample {
	cfg := w.Iperf3
	argv := iperf3.ClientArgs(cfg)
	sample := results.Sample{Round: round, State: state, Workload: w.Name, Tool: "iperf3", Argv: argv, Start: time.Now().UTC()}
	fail := func(err error, stderr ...string) results.Sample {
		sample.Error = err.Error()
		sample.Stderr = strings.TrimSpace(strings.Join(stderr, "\n"))
		sample.Seconds = time.Since(sample.Start).Seconds()
		return sample
	}
	server, err := start(m.ctx, m.live, cfg.Server.NS, iperf3.ServerArgs(cfg))
	if err != nil {
		return fail(err)
	}
	defer server.stop()
	if err := server.waitListening(m.ctx, cfg.Port, m.opt.ServerTimeout); err != nil {
		return fail(fmt.Errorf("iperf3 server: %w", err), server.stderr.String())
	}
	ctx, cancel := context.WithTimeout(m.ctx, cfg.Duration.Std()+cfg.Omit.Std()+m.opt.Slack)
	defer cancel()
	client, err := start(ctx, m.live, cfg.Client.NS, argv)
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

// report prints one progress line: where the run is, the last figure and the time left.
func (m *measurement) report(round, rounds int, s results.Sample) {
	figure := "FAILED: " + s.Error
	if v, ok := s.Value(results.Throughput); ok {
		figure = results.FormatValue(v, "bit/s")
	}
	perRun := time.Since(m.started) / time.Duration(m.done)
	left := (perRun * time.Duration(m.total-m.done)).Round(time.Second)
	fmt.Fprintf(m.progress, "[%d/%d] round %d/%d  %-8s %-10s %s  (%s left)\n", m.done, m.total, round, rounds, s.State, s.Workload, figure, left)
}

func workloadNames(s *scenarios.Scenario) []string {
	names := make([]string, len(s.Workloads))
	for i, w := range s.Workloads {
		names[i] = w.Name
	}
	return names
}
