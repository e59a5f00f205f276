package scenarios

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxCases bounds a matrix: every case builds a topology and measures every state.
const MaxCases = 64

var (
	matrixRef     = regexp.MustCompile(`\$\{([^}]*)\}`)
	matrixNameRE  = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	matrixWholeRE = regexp.MustCompile(`^\$\{([^}]*)\}$`)
)

// matrixVar is one variable of a matrix with its values, as YAML scalars (so that a number
// substituted for a whole value stays a number).
type matrixVar struct {
	name   string
	values []*yaml.Node
}

// matrixVars reads the matrix: mapping of the document, if any.
func matrixVars(file string, doc *yaml.Node) ([]matrixVar, Problems) {
	m := mappingValue(doc, "matrix")
	if m == nil {
		return nil, nil
	}
	var vars []matrixVar
	var problems Problems
	add := func(n *yaml.Node, path, format string, args ...any) {
		problems = append(problems, Problem{File: file, Pos: Pos{n.Line, n.Column}, Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if m.Kind != yaml.MappingNode {
		add(m, "matrix", "want a mapping of variables to lists of values, e.g. {mtu: [1500, 8000]}")
		return nil, problems
	}
	cases := 1
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, list := m.Content[i], m.Content[i+1]
		path := "matrix." + k.Value
		if !matrixNameRE.MatchString(k.Value) {
			add(k, path, "%q: a matrix variable is lower-case letters, digits and '_'", k.Value)
			continue
		}
		if list.Kind != yaml.SequenceNode {
			add(list, path, "want a list of values, e.g. [1500, 8000]")
			continue
		}
		if len(list.Content) == 0 {
			add(list, path, "empty: a matrix variable needs at least one value")
			continue
		}
		v := matrixVar{name: k.Value}
		for j, item := range list.Content {
			if item.Kind != yaml.ScalarNode {
				add(item, fmt.Sprintf("%s[%d]", path, j), "want a scalar value")
				continue
			}
			v.values = append(v.values, item)
		}
		cases *= len(list.Content)
		vars = append(vars, v)
	}
	if cases > MaxCases {
		add(m, "matrix", "%d cases; at most %d (every case builds a topology and measures every state)", cases, MaxCases)
	}
	return vars, problems
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// checkRefs reports ${names} that are not matrix variables, and variables never used.
func checkRefs(file string, doc *yaml.Node, vars []matrixVar) Problems {
	known := map[string]bool{}
	var names []string
	for _, v := range vars {
		known[v.name] = true
		names = append(names, v.name)
	}
	used := map[string]bool{}
	var problems Problems
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if path == "" && n.Content[i].Value == "matrix" {
					continue
				}
				walk(n.Content[i], joinPath(path, n.Content[i].Value))
				walk(n.Content[i+1], joinPath(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			for _, m := range matrixRef.FindAllStringSubmatch(n.Value, -1) {
				used[m[1]] = true
				if !known[m[1]] {
					hint := "the scenario has no matrix"
					if len(names) > 0 {
						hint = "matrix variables: " + strings.Join(names, ", ")
					}
					problems = append(problems, Problem{File: file, Pos: Pos{n.Line, n.Column}, Path: path,
						Msg: fmt.Sprintf("unknown variable ${%s} (%s)", m[1], hint)})
				}
			}
		}
	}
	walk(doc, "")
	m := mappingValue(doc, "matrix")
	for i, v := range vars {
		if !used[v.name] {
			k := m.Content[2*i]
			problems = append(problems, Problem{File: file, Pos: Pos{k.Line, k.Column}, Path: "matrix." + v.name,
				Msg: fmt.Sprintf("never used: write ${%s} where its values go", v.name)})
		}
	}
	return problems
}

// combinations returns every combination of the variables' values, the first variable
// changing slowest.
func combinations(vars []matrixVar) [][]*yaml.Node {
	combos := [][]*yaml.Node{nil}
	for _, v := range vars {
		var next [][]*yaml.Node
		for _, c := range combos {
			for _, val := range v.values {
				next = append(next, append(append([]*yaml.Node(nil), c...), val))
			}
		}
		combos = next
	}
	return combos
}

// substitute returns a copy of the tree with ${name} replaced by the combination's values. A
// scalar that is only a reference takes the value's type (mtu: ${mtu} stays a number); a
// reference inside a longer string is replaced as text.
func substitute(n *yaml.Node, vars []matrixVar, combo []*yaml.Node) *yaml.Node {
	value := map[string]*yaml.Node{}
	for i, v := range vars {
		value[v.name] = combo[i]
	}
	copies := map[*yaml.Node]*yaml.Node{}
	var clone func(n *yaml.Node) *yaml.Node
	clone = func(n *yaml.Node) *yaml.Node {
		if n == nil {
			return nil
		}
		if c, ok := copies[n]; ok {
			return c
		}
		c := *n
		copies[n] = &c
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = clone(child)
		}
		c.Alias = clone(n.Alias)
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
			if m := matrixWholeRE.FindStringSubmatch(n.Value); m != nil && value[m[1]] != nil {
				c.Value, c.Tag, c.Style = value[m[1]].Value, value[m[1]].Tag, value[m[1]].Style
			} else {
				c.Value = matrixRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
					if v := value[ref[2:len(ref)-1]]; v != nil {
						return v.Value
					}
					return ref
				})
				c.Tag = "!!str"
			}
		}
		return &c
	}
	return clone(n)
}
