package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/proc"
	"github.com/nsperf/nsperf/machine"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// measureCase runs the rounds of one case on its built topology. States the kernel cannot
// apply end the run (exit 4), unless they are optional: then they are recorded as
// unavailable and the others are measured.
func (m *measurement) measureCase(c scenarios.Case, live machine.Network, rc *results.Case) (err error) {
	defer m.stopWhenDaemonDies(live)(&err)
	cr := &caseRun{m: m, label: c.Label(), s: c.Scenario, live: live, rc: rc, pinned: scenarioPinned(c.Scenario)}
	if err := cr.prepare(); err != nil {
		return err
	}
	servers, err := m.startSharedServers(live, cr.s)
	defer func() {
		for _, p := range servers {
			p.Stop()
		}
	}()
	if err != nil {
		return err
	}
	cr.servers = servers
	return cr.rounds() // the statistics are the result's, computed once at the end (Run)
}

// stopWhenDaemonDies makes a daemon the topology needs (ovs-vswitchd) dying cancel the case,
// with the daemon's error; the returned function restores the run's context and turns the
// cancellation into that cause.
func (m *measurement) stopWhenDaemonDies(live machine.Network) func(*error) {
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
	live    machine.Network
	rc      *results.Case
	servers map[string]proc.Process

	states  map[string]scenarios.State
	records map[string]*results.StateRecord
	// open are the gated comparisons the last look of an adaptive run left undecided.
	open []string
	// applied is the state the devices are in ("" for none known), as Apply returned them.
	applied string
	// pinned are the CPUs the case's tools are pinned to; idleWait and busy what the idle
	// gate said before the round being measured.
	pinned   []int
	idleWait time.Duration
	busy     string
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
		rc.States[i].Commands = cr.live.StateCommands(st)
		if err := cr.live.CheckState(st); err != nil {
			var capErr *capability.Error
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
	rc.BigPackets = cr.live.CountBigPackets(scenarios.LimitDevices(s.States))
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
		cr.idleWait, cr.busy = cr.m.waitIdle(cr.pinned)
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
	var open []string
	if look := cr.m.opt.Look; look != nil {
		open = look(*cr.rc, cr.m.gates, seq.Alpha[k])
	} else {
		_, open = results.DecideLook(*cr.rc, workloadNames(cr.s), cr.m.gates, seq.Alpha[k], cr.m.policy.CVLimit, cr.m.policy.MinChange)
	}
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
	phase(cr.m.opt, name)
	began := time.Now()
	readBack, err := cr.live.Apply(st)
	applied := time.Since(began).Seconds()
	var capErr *capability.Error
	if err != nil && st.Optional && errors.As(err, &capErr) {
		cr.m.unavailable(rec, capErr, cr.s.Runs*len(cr.s.Workloads)-countState(cr.rc.Samples, name))
		cr.applied = ""
		return false, nil
	}
	if err != nil {
		return false, err
	}
	cr.applied = name
	rec.ApplySeconds = append(rec.ApplySeconds, applied)
	if len(rec.ApplySeconds) == 1 { // what the state really was, as read back after applying it
		rec.SetReadBack(readBack)
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
	sample.IdleWaitSeconds, sample.BusyAtStart = cr.idleWait.Seconds(), cr.busy
	drift, err := cr.live.Drift()
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
	m.report(cr.label, round, rounds, sample, w.Gates())
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

func countState(samples []results.Sample, state string) int {
	n := 0
	for _, s := range samples {
		if s.State == state {
			n++
		}
	}
	return n
}

func workloadNames(s *scenarios.Scenario) []string {
	names := make([]string, len(s.Workloads))
	for i, w := range s.Workloads {
		names[i] = w.Name
	}
	return names
}
