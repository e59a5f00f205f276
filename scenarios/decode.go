package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a scenario, at a place in its file.
type Problem struct {
	File string
	Pos  Pos
	Path string // e.g. states[1].devices.client/eth0.gso_max_size
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Pos.Line, p.Pos.Col)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in one or more files; it is the error the loader returns.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// scalarDecoder is implemented by types written as one YAML scalar (e.g. Duration).
type scalarDecoder interface {
	UnmarshalScalar(string) error
}

// decoder turns a yaml.Node tree into Go values strictly: unknown keys, duplicate keys and
// wrong types are problems with their positions, and decoding goes on after each so that a
// user sees every problem at once.
type decoder struct {
	file      string
	problems  Problems
	positions map[string]Pos
}

func (d *decoder) problem(n *yaml.Node, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Pos: Pos{n.Line, n.Column}, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected node"
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "a mapping"
	case reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Uint32, reflect.Uint64, reflect.Uint:
		return "a non-negative integer"
	}
	return t.String()
}

// keyedMap is a map whose keys are a fixed set, checked like a struct's fields.
type keyedMap interface{ KnownKeys() []string }

var scalarDecoderType = reflect.TypeOf((*scalarDecoder)(nil)).Elem()

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if _, seen := d.positions[path]; !seen {
		d.positions[path] = Pos{n.Line, n.Column}
	}
	if v.Kind() == reflect.Pointer {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(scalarDecoderType) {
		if n.Kind != yaml.ScalarNode {
			d.problem(n, path, "want a scalar, got %s", kindName(n))
			return
		}
		if err := v.Addr().Interface().(scalarDecoder).UnmarshalScalar(n.Value); err != nil {
			d.problem(n, path, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.problem(n, path, "want a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	default:
		d.decodeScalar(n, v, path)
	}
}

// mappingPairs returns the key/value pairs of a mapping with YAML merge keys (<<) expanded,
// and reports duplicate keys.
func (d *decoder) mappingPairs(n *yaml.Node, path string) [][2]*yaml.Node {
	var pairs [][2]*yaml.Node
	seen := map[string]bool{}
	var merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			m := val
			for m.Kind == yaml.AliasNode {
				m = m.Alias
			}
			if m.Kind != yaml.MappingNode {
				d.problem(val, path, "merge key << wants a mapping, got %s", kindName(m))
				continue
			}
			merged = append(merged, d.mappingPairs(m, path)...)
			continue
		}
		if seen[k.Value] {
			d.problem(k, joinPath(path, k.Value), "duplicate key")
			continue
		}
		seen[k.Value] = true
		pairs = append(pairs, [2]*yaml.Node{k, val})
	}
	for _, p := range merged { // explicit keys win over merged ones
		if !seen[p[0].Value] {
			seen[p[0].Value] = true
			pairs = append(pairs, p)
		}
	}
	return pairs
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.problem(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	fields, plugins, known := structKeys(v.Type())
	t := v.Type()
	for _, p := range d.mappingPairs(n, path) {
		k, val := p[0], p[1]
		if i, ok := plugins[k.Value]; ok {
			d.positions[joinPath(path, k.Value)] = Pos{k.Line, k.Column}
			d.decodePlugin(val, v.Field(i), k.Value, joinPath(path, k.Value))
			continue
		}
		i, ok := fields[k.Value]
		if !ok {
			d.problem(k, joinPath(path, k.Value), "unknown key (known: %s)", strings.Join(known, ", "))
			continue
		}
		d.positions[joinPath(path, k.Value)] = Pos{k.Line, k.Column}
		// An integer field tagged ",auto" also takes the word auto, as AutoRuns.
		// The word is recorded as written (PATH=auto): a number written as -1 is no auto.
		if strings.Contains(t.Field(i).Tag.Get("yaml"), ",auto") && val.Kind == yaml.ScalarNode && val.Value == "auto" {
			v.Field(i).SetInt(AutoRuns)
			d.positions[joinPath(path, k.Value)+"=auto"] = Pos{val.Line, val.Column}
			continue
		}
		d.decode(val, v.Field(i), joinPath(path, k.Value))
	}
}

// pluginSet is a map field, tagged ",plugins", whose keys sit in its struct's mapping beside
// the struct's own: a workload's tools. Each key is a registered plug-in, made empty by
// newPlugin (a pointer) and then decoded.
type pluginSet interface {
	pluginKeys() []string
	newPlugin(key string) any
}

var pluginSetType = reflect.TypeOf((*pluginSet)(nil)).Elem()

// structKeys returns a struct type's YAML keys: its fields' by field index, its plug-in
// keys by the index of the field that holds them, and all of them in declaration order for
// messages.
func structKeys(t reflect.Type) (fields, plugins map[string]int, known []string) {
	fields, plugins = map[string]int{}, map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")
		if slices.Contains(tag[1:], "plugins") && t.Field(i).Type.Implements(pluginSetType) {
			for _, key := range reflect.Zero(t.Field(i).Type).Interface().(pluginSet).pluginKeys() {
				plugins[key] = i
				known = append(known, key)
			}
			continue
		}
		if tag[0] == "" || tag[0] == "-" {
			continue
		}
		fields[tag[0]] = i
		known = append(known, tag[0])
	}
	return fields, plugins, known
}

// decodePlugin decodes the plug-in key of a pluginSet field into a new entry of its map.
func (d *decoder) decodePlugin(n *yaml.Node, set reflect.Value, key, path string) {
	if set.IsNil() {
		set.Set(reflect.MakeMap(set.Type()))
	}
	spec := set.Interface().(pluginSet).newPlugin(key)
	value := reflect.New(reflect.TypeOf(spec)) // decoded through a pointer, kept as it is
	value.Elem().Set(reflect.ValueOf(spec))
	d.decode(n, value, path)
	set.SetMapIndex(reflect.ValueOf(key), value.Elem())
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.problem(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	var known []string
	if kk, ok := v.Interface().(keyedMap); ok {
		known = kk.KnownKeys()
	}
	for _, p := range d.mappingPairs(n, path) {
		k, val := p[0], p[1]
		key := joinPath(path, k.Value)
		if known != nil && !slices.Contains(known, k.Value) {
			d.problem(k, key, "unknown key (known: %s)", strings.Join(known, ", "))
			continue
		}
		d.positions[key] = Pos{k.Line, k.Column}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, key)
		v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.problem(n, path, "want %s, got %s", typeName(v.Type()), kindName(n))
		return
	}
	if n.Tag == "!!null" {
		return // an empty value leaves the default
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil || n.Tag != "!!bool" {
			d.problem(n, path, "want true or false, got %s", kindName(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		i, err := strconv.ParseInt(n.Value, 0, v.Type().Bits())
		if err != nil || n.Tag != "!!int" {
			d.problem(n, path, "want an integer, got %s", kindName(n))
			return
		}
		v.SetInt(i)
	case reflect.Uint32, reflect.Uint64, reflect.Uint:
		u, err := strconv.ParseUint(n.Value, 0, v.Type().Bits())
		if err != nil || n.Tag != "!!int" {
			if i, ierr := strconv.ParseInt(n.Value, 0, 64); ierr == nil && i < 0 {
				d.problem(n, path, "want a non-negative integer, got %d", i)
				return
			}
			d.problem(n, path, "want %s up to %d, got %s", typeName(v.Type()), uint64(1)<<v.Type().Bits()-1, kindName(n))
			return
		}
		v.SetUint(u)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || (n.Tag != "!!float" && n.Tag != "!!int") {
			d.problem(n, path, "want a number, got %s", kindName(n))
			return
		}
		v.SetFloat(f)
	default:
		d.problem(n, path, "cannot decode into %s", v.Type())
	}
}
