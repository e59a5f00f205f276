package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Overrides are command-line changes to a scenario's method.
type Overrides struct {
	AA       bool          // A/A control: the baseline against a copy of itself
	Auto     bool          // --runs auto: adaptive runs
	MaxRuns  int           // --max-runs: with auto, at most this many rounds (0: the scenario's, else 20)
	OVSDB    string        // "": keep; unix:PATH: use that existing OVS instead of a private one
	Runs     int           // 0: keep
	Duration time.Duration // 0: keep
	// ToolMinimum raises Duration to the shortest run a workload's tool can measure in
	// (pktgen's with xdp-bench: MinXDPBenchDuration) instead of refusing it: the coverage
	// map's one short run of everything.
	ToolMinimum bool
	Omit        time.Duration // <0: keep
	// Record (--record) adds side metrics of a TCP connection to every workload that can
	// record them (Scenario.CanRecord): a name none can record is refused. RecordClaimed does
	// the same where a workload can and is silent where none can: reproduce's, for the side
	// metrics its claims give.
	Record, RecordClaimed []string
}

// SetRuns reads --runs: a number of runs per state and workload, auto (adaptive), or ""
// for the scenario's.
func (o *Overrides) SetRuns(v string) error {
	n, err := strconv.Atoi(v)
	switch {
	case v == "":
	case v == "auto":
		o.Auto = true
	case err != nil:
		return fmt.Errorf("--runs %q: want a number of runs or auto", v)
	default:
		o.Runs = n
	}
	return nil
}

// Apply changes the scenario and checks the new values like the loader would.
func (o Overrides) Apply(s *Scenario) error {
	if o.Runs != 0 {
		if problem := runsProblem(o.Runs); problem != "" {
			return fmt.Errorf("--runs %s", problem)
		}
	}
	if o.MaxRuns != 0 {
		if problem := runsProblem(o.MaxRuns); problem != "" || !o.Auto {
			return fmt.Errorf("--max-runs %d: want 1 to %d, with --runs auto", o.MaxRuns, MaxRuns)
		}
	}
	if o.Duration != 0 && (o.Duration < time.Second || o.Duration%time.Second != 0) {
		return fmt.Errorf("--duration %s: want whole seconds, at least 1s", o.Duration)
	}
	if o.Omit >= 0 && o.Omit%time.Second != 0 {
		return fmt.Errorf("--omit %s: want whole seconds", o.Omit)
	}
	if o.OVSDB != "" {
		if s.Topology.OVS == nil {
			return fmt.Errorf("--ovsdb %s: scenario %s has no Open vSwitch bridges", o.OVSDB, s.Name)
		}
		if !ovsDBRE.MatchString(o.OVSDB) {
			return fmt.Errorf("--ovsdb %q: want unix:PATH of an existing ovsdb-server (letters, digits, '.', '_', '-', '/')", o.OVSDB)
		}
	}
	// The scenario as the file describes it changes with its cases: a run records its method.
	targets := s.concrete()
	if len(s.cases) > 0 {
		targets = append([]*Scenario{s}, targets...)
	}
	for _, c := range targets {
		if o.AA {
			// The baseline twice, the copy compared with it: any difference found is noise.
			base := c.States[0]
			again := base
			again.Name, again.CompareTo, again.Optional = base.Name+"-again", base.Name, false
			// Expectations that name the states left out are not applicable to this run, and
			// the result says so (results.Evaluate).
			c.States = []State{base, again}
		}
		if o.OVSDB != "" {
			c.Topology.OVS.DB = o.OVSDB
			if err := checkExistingOVS(c); err != nil {
				return fmt.Errorf("--ovsdb %s: %w", o.OVSDB, err)
			}
		}
		switch {
		case o.Auto:
			max := o.MaxRuns
			if max == 0 {
				max = c.MaxRuns
			}
			c.SetAuto(max)
		case o.Runs != 0:
			c.Runs, c.Adaptive, c.MaxRuns = o.Runs, false, 0
		}
		if err := o.record(c); err != nil {
			return err
		}
		for _, w := range c.Workloads {
			if spec := w.Spec(); spec != nil {
				if err := spec.override(o); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// record adds the side metrics of Record and RecordClaimed to the workloads of s that can
// record them.
func (o Overrides) record(s *Scenario) error {
	for _, name := range slices.Concat(o.Record, o.RecordClaimed) {
		strict := slices.Contains(o.Record, name)
		var why []string
		for i, w := range s.Workloads {
			ok, reason := s.CanRecord(w, name)
			if !ok {
				why = append(why, reason)
				continue
			}
			if !slices.Contains(w.Record, name) {
				s.Workloads[i].Record = append(slices.Clone(w.Record), name)
			}
		}
		if strict && len(why) == len(s.Workloads) {
			return fmt.Errorf("--record %s: no workload of %s can record it: %s", name, s.Name, strings.Join(slices.Compact(why), "; "))
		}
	}
	return nil
}

// checkExistingOVS refuses what an existing OVS cannot give: it runs in the root namespace,
// which is not nsperf's, so internal ports must move into scenario namespaces and no
// workload may run in the ovs namespace.
func checkExistingOVS(s *Scenario) error {
	var problems []string
	for _, b := range s.Topology.OVS.Bridges {
		for _, p := range b.Ports {
			if p.Internal != "" && p.NS == "" {
				problems = append(problems, fmt.Sprintf("internal port %s stays in the root namespace; give it ns: to move it into one of the scenario's", p.Internal))
			}
		}
	}
	for _, w := range s.Workloads {
		if c, sv := w.Sides(); c.NS == OVSNamespace || sv.NS == OVSNamespace {
			problems = append(problems, fmt.Sprintf("workload %s runs in the ovs namespace, which with an existing OVS is the root namespace; nsperf runs tools only in namespaces it built", w.Name))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
