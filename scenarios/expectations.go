package scenarios

import (
	"bytes"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/nsperf/nsperf/internal/safefile"
)

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
