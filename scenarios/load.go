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
