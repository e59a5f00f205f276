package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/nsperf/nsperf/internal/safefile"
)

//go:embed library/*.yaml
var library embed.FS

// DefaultScenario is what `make run` measures.
const DefaultScenario = "veth-bigtcp"

// Options are the facts about the machine that validation needs; they are passed in so that
// validation stays pure.
type Options struct {
	CPUs int // number of CPUs a workload may be pinned to; 0 skips the check
}

// Parse decodes and validates a scenario, expanding its matrix into cases: each case is
// decoded and validated on its own. With a matrix, the scenario returned describes the file
// (its name, text and, for the fields a matrix may vary, the first case's values) and Expand
// returns the cases, each a scenario of its own. The error, if any, is Problems: every problem found, a problem
// that only some cases have naming them.
func Parse(file string, data []byte, opt Options) (*Scenario, error) {
	doc, problem := parseDocument(file, data)
	if problem != nil {
		return nil, Problems{*problem}
	}
	vars, problems := matrixVars(file, doc)
	problems = append(problems, checkRefs(file, doc, vars)...)
	if len(problems) > 0 {
		return nil, sortProblems(problems)
	}
	combos := combinations(vars)
	var cases []Case
	var unique Problems
	labels := map[string][]string{} // problem -> the cases that have it
	for _, combo := range combos {
		node := doc
		if len(vars) > 0 {
			node = substitute(doc, vars, combo)
		}
		c := Case{Scenario: decodeScenario(file, data, node, opt, &problems)}
		for i, v := range vars {
			c.Values = append(c.Values, MatrixValue{Name: v.name, Value: combo[i].Value})
		}
		for _, p := range problems {
			key := p.String()
			if labels[key] == nil {
				unique = append(unique, p)
			}
			labels[key] = append(labels[key], c.Label())
		}
		problems = nil
		cases = append(cases, c)
	}
	if len(unique) > 0 {
		for i, p := range unique {
			if l := labels[p.String()]; len(l) < len(combos) {
				unique[i].Msg += " (in case " + strings.Join(l, "; ") + ")"
			}
		}
		return nil, sortProblems(unique)
	}
	if len(vars) == 0 {
		return cases[0].Scenario, nil // without a matrix, the scenario is its one case
	}
	s := decodeScenario(file, data, substitute(doc, vars, combos[0]), opt, &problems) // valid: it is the first case
	s.cases = cases
	return s, nil
}

// Expand returns the concrete scenarios to measure, one per matrix combination in order; a
// scenario without a matrix is its own one case. The cases of a matrix are scenarios of their
// own: changing the scenario after loading changes none of them (Overrides.Apply changes
// all).
func (s *Scenario) Expand() []Case {
	if len(s.cases) == 0 {
		return []Case{{Scenario: s}}
	}
	return s.cases
}

// parseDocument parses the YAML text into the node of its one document.
func parseDocument(file string, data []byte) (*yaml.Node, *Problem) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		p := syntaxProblem(file, err)
		return nil, &p
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Problem{File: file, Pos: Pos{extra.Line, extra.Column}, Msg: "more than one YAML document; a scenario is one document"}
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	return doc, nil
}

// decodeScenario decodes one concrete (matrix-free) document, applies the defaults and
// validates it, adding what is wrong to problems.
func decodeScenario(file string, data []byte, doc *yaml.Node, opt Options, problems *Problems) *Scenario {
	s := &Scenario{File: file, Text: data}
	d := &decoder{file: file, positions: map[string]Pos{}}
	d.decode(doc, reflect.ValueOf(s).Elem(), "")
	s.positions = d.positions
	s.applyDefaults()
	*problems = append(*problems, d.problems...)
	if len(d.problems) == 0 || d.problems[0].Path != "" {
		// Validation is skipped only when the document itself is not a mapping.
		*problems = append(*problems, s.validate(opt, d.problems)...)
	}
	return s
}

func sortProblems(problems Problems) Problems {
	sort.SliceStable(problems, func(i, j int) bool {
		a, b := problems[i].Pos, problems[j].Pos
		return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
	})
	return problems
}

func syntaxProblem(file string, err error) Problem {
	msg := err.Error()
	if errors.Is(err, io.EOF) {
		return Problem{File: file, Msg: "empty file: a scenario needs at least name, topology, states and workloads"}
	}
	// yaml.v3 says "yaml: line N: message"; turn it into file:N:1.
	var line int
	if _, scanErr := fmt.Sscanf(msg, "yaml: line %d:", &line); scanErr == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		return Problem{File: file, Pos: Pos{line, 1}, Msg: "YAML syntax: " + msg}
	}
	return Problem{File: file, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// applyDefaults fills what the scenario leaves out; a value written in the file, even 0, stays
// and is validated.
func (s *Scenario) applyDefaults() {
	if !s.written("runs") {
		s.Runs = DefaultRuns
	}
	if s.Runs == AutoRuns && s.written("runs=auto") {
		s.SetAuto(s.MaxRuns)
	}
	if !s.written("order") {
		s.Order = DefaultOrder
	}
	for i := range s.Expect {
		e := &s.Expect[i]
		if e.Metric == "" && e.Workload != "" {
			e.Metric = MetricThroughput
		}
		// A change of two states' scenario is the second state's: named here, so that a run
		// whose states differ (an A/A run) finds the expectation not applicable to it.
		if e.State == "" && (e.Change != nil || e.Significant != nil) && len(s.States) == 2 {
			e.State = s.States[1].Name
		}
	}
	if o := s.Topology.OVS; o != nil && !s.written("topology.ovs.datapath") {
		o.Datapath = DatapathAuto
	}
	for i, l := range s.Topology.Links {
		if names, specs := l.kinds(); len(specs) == 1 {
			path := fmt.Sprintf("topology.links[%d].%s.", i, names[0])
			specs[0].setDefaults(func(key string) bool { return s.written(path + key) })
		}
	}
	for i, w := range s.Workloads {
		if names, specs := w.tools(); len(specs) == 1 {
			path := fmt.Sprintf("workloads[%d].%s.", i, names[0])
			specs[0].setDefaults(func(key string) bool { return s.written(path + key) })
		}
	}
}

// written reports whether the file sets the field at path.
func (s *Scenario) written(path string) bool {
	_, ok := s.positions[path]
	return ok
}

// pos returns where path (or its nearest parent that has a position) stands in the file.
func (s *Scenario) pos(path string) Pos {
	for {
		if p, ok := s.positions[path]; ok {
			return p
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return s.positions[""]
		}
		path = path[:i]
	}
}

// MaxFileSize bounds a scenario file; the largest shipped one is a few KiB.
const MaxFileSize = 1 << 20

// Load reads a scenario from a file, or from the shipped library when arg names one.
// Only a regular file of at most MaxFileSize is read: a FIFO or a device is refused at once,
// never read from.
func Load(arg string, opt Options) (*Scenario, error) {
	data, err := safefile.ReadRegular(arg, MaxFileSize)
	if err == nil {
		return Parse(arg, data, opt)
	}
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("scenario %w; a scenario is a YAML file of at most %s", err, safefile.Size(MaxFileSize))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	name := strings.TrimSuffix(arg, ".yaml")
	if !strings.Contains(name, "/") {
		if data, libErr := library.ReadFile("library/" + name + ".yaml"); libErr == nil {
			return Parse(name+".yaml", data, opt)
		}
	}
	return nil, fmt.Errorf("scenario %s: no such file, and no shipped scenario of that name (see `nsperf list`)", arg)
}

// Shipped returns the scenarios embedded in the binary, by name.
func Shipped() ([]*Scenario, error) {
	entries, err := fs.Glob(library, "library/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range entries {
		data, err := library.ReadFile(e)
		if err != nil {
			return nil, err
		}
		s, err := Parse(path.Base(e), data, Options{})
		if err != nil {
			return nil, fmt.Errorf("shipped scenario %s: %w", path.Base(e), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// TotalRuns is the number of tool runs the scenario makes, over all its cases.
func (s *Scenario) TotalRuns() int {
	n := 0
	for _, c := range s.concrete() {
		n += c.Runs * len(c.States) * len(c.Workloads)
	}
	return n
}

// EstimatedDuration is the measuring time (without set-up) a run takes, over all its cases.
func (s *Scenario) EstimatedDuration() time.Duration {
	var total time.Duration
	for _, c := range s.concrete() {
		var per time.Duration
		for _, w := range c.Workloads {
			per += w.Length()
		}
		total += per * time.Duration(c.Runs*len(c.States))
	}
	return total
}

// concrete returns the scenarios of the cases, each once.
func (s *Scenario) concrete() []*Scenario {
	var out []*Scenario
	for _, c := range s.Expand() {
		out = append(out, c.Scenario)
	}
	return out
}

// Overrides are command-line changes to a scenario's method.
type Overrides struct {
	AA       bool          // A/A control: the baseline against a copy of itself
	Auto     bool          // --runs auto: adaptive runs
	MaxRuns  int           // --max-runs: with auto, at most this many rounds (0: the scenario's, else 20)
	OVSDB    string        // "": keep; unix:PATH: use that existing OVS instead of a private one
	Runs     int           // 0: keep
	Duration time.Duration // 0: keep
	Omit     time.Duration // <0: keep
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

// LoadExpectations reads a file of expectations: a YAML list, written as under expect: in a
// scenario (`nsperf compare --expect FILE`).
func LoadExpectations(file string) ([]Expectation, error) {
	data, err := safefile.ReadRegular(file, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("expectations: %w", err)
	}
	doc, problem := parseDocument(file, data)
	if problem != nil {
		return nil, Problems{*problem}
	}
	return decodeExpectations(file, doc)
}

// decodeExpectations decodes a YAML list of expectations, with the defaults of a scenario's.
func decodeExpectations(file string, list *yaml.Node) ([]Expectation, error) {
	var exps []Expectation
	d := &decoder{file: file, positions: map[string]Pos{}}
	d.decode(list, reflect.ValueOf(&exps).Elem(), "expect")
	problems := d.problems
	for i := range exps {
		e := &exps[i]
		if e.Metric == "" && e.Workload != "" {
			e.Metric = MetricThroughput
		}
		kinds := 0
		for _, set := range []bool{e.Change != nil || e.Significant != nil, e.CV != nil, e.Value != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			path := fmt.Sprintf("expect[%d]", i)
			problems = append(problems, Problem{File: file, Pos: d.positions[path], Path: path, Msg: "an expectation checks one thing: change (with significant), cv, or value"})
		}
	}
	if len(problems) > 0 {
		return nil, sortProblems(problems)
	}
	return exps, nil
}

// StoredExpectations are the expectations and workload names of a scenario text stored in a
// result. A text that no longer validates (written by another nsperf version, or edited)
// still gives its expect: list, which is decoded on its own; only when that list itself cannot
// be read is it an error: a result's expectations are never dropped in silence.
func StoredExpectations(file string, text []byte) (exps []Expectation, workloads []string, err error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil, nil // a result that stored no scenario text
	}
	if s, err := Parse(file, text, Options{}); err == nil {
		for _, w := range s.Workloads {
			workloads = append(workloads, w.Name)
		}
		return s.Expect, workloads, nil
	}
	doc, problem := parseDocument(file, text)
	if problem != nil {
		return nil, nil, fmt.Errorf("the stored scenario text: %w", Problems{*problem})
	}
	if doc.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("the stored scenario text is not a mapping")
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "expect" {
			exps, err := decodeExpectations(file, doc.Content[i+1])
			if err != nil {
				return nil, nil, fmt.Errorf("the stored scenario text no longer validates, and its expect: cannot be read: %w", err)
			}
			return exps, nil, nil
		}
	}
	return nil, nil, nil
}
