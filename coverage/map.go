package coverage

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/scenarios"
)

// MapVersion is the version of Map's JSON.
const MapVersion = 1

// Schedule is each scenario's schedule while it is traced: one run of a second per state and
// workload (or the shortest its tool measures in), nothing omitted. Every path a state's
// traffic takes is taken many times in a second, and the trace of every call is costly.
var Schedule = scenarios.Overrides{Runs: 1, Duration: time.Second, Omit: 0, ToolMinimum: true}

// Map is which kernel functions each shipped scenario's traffic runs through, measured by
// `nsperf coverage` (make coverage-map) in a guest: each scenario's states run once with the
// function tracer on every function the kernel source defines under SourceRoots.
type Map struct {
	Version int `json:"version"`
	// Kernel is the release it was measured on; Source the tree its functions were read from.
	Kernel string `json:"kernel"`
	Source string `json:"source"`
	Method string `json:"method"`
	// SourceFiles are the files of Source the trace could see run (IndexSource's): a touched
	// file not among them (a path of another tree) is unknown to the map, not unrun.
	SourceFiles []string `json:"source_files"`
	// Scenarios are by name.
	Scenarios map[string]ScenarioMap `json:"scenarios"`
}

// IndexedFiles are the files of an index (IndexSource), sorted.
func IndexedFiles(index map[string][]string) []string {
	var out []string
	for _, files := range index {
		out = append(out, files...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Traces reports whether the map's source has the file, so that its functions' running was
// seen (or not) by the trace.
func (m *Map) Traces(file string) bool {
	if m == nil {
		return false
	}
	_, found := slices.BinarySearch(m.SourceFiles, file)
	return found
}

// ScenarioMap is what one scenario ran through: the functions that ran, by the file that
// defines them (a static function whose name other files define too is under each).
type ScenarioMap struct {
	Files      map[string][]string `json:"files"`
	LostEvents int                 `json:"lost_events,omitempty"`
}

//go:embed map.json
var shippedMap []byte

// Shipped is the map that ships with nsperf (coverage/map.json).
var Shipped = sync.OnceValues(func() (*Map, error) { return ReadMap(shippedMap) })

// maxMapFile bounds a map read from a file (nsperf coverage --update): the shipped one is
// about 1 MB.
const maxMapFile = 64 << 20

// ReadMapFile reads the map of a file: regular and at most maxMapFile bytes, so that a FIFO or
// /dev/zero is refused at once.
func ReadMapFile(path string) (*Map, error) {
	data, err := safefile.ReadRegular(path, maxMapFile)
	if err != nil {
		return nil, err
	}
	m, err := decodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a coverage map: %w", path, err)
	}
	return m, nil
}

// Merge puts the scenarios of from into m, replacing m's of the same name: both must have been
// measured on the same kernel, from the same source, by the same method.
func (m *Map) Merge(from *Map) error {
	if m.Kernel != from.Kernel || m.Source != from.Source || m.Method != from.Method {
		return fmt.Errorf("measured on %s (%s), these on %s (%s): measure every scenario again (make coverage-map)", m.Kernel, m.Source, from.Kernel, from.Source)
	}
	if m.Scenarios == nil {
		m.Scenarios = map[string]ScenarioMap{}
	}
	maps.Copy(m.Scenarios, from.Scenarios)
	return nil
}

// Encode is the map's JSON as it ships (coverage/map.json): indented, one final newline.
func (m *Map) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", " ")
	return append(data, '\n'), err
}

// ReadMap reads a map's JSON.
func ReadMap(data []byte) (*Map, error) {
	m, err := decodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("coverage map: %w", err)
	}
	return m, nil
}

// decodeMap decodes a map's JSON of this version.
func decodeMap(data []byte) (*Map, error) {
	var m Map
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m.Version != MapVersion {
		return nil, fmt.Errorf("version %d, this nsperf reads %d", m.Version, MapVersion)
	}
	return &m, nil
}

// ScenarioOf is what a trace found, with each function under the files that define it
// (index: IndexSource).
func ScenarioOf(functions []string, lost int, index map[string][]string) ScenarioMap {
	sm := ScenarioMap{Files: map[string][]string{}, LostEvents: lost}
	for _, fn := range functions {
		for _, file := range index[fn] {
			sm.Files[file] = append(sm.Files[file], fn)
		}
	}
	for file := range sm.Files {
		sort.Strings(sm.Files[file])
	}
	return sm
}

// Knows reports whether the map has the scenario.
func (m *Map) Knows(scenario string) bool {
	if m == nil {
		return false
	}
	_, ok := m.Scenarios[scenario]
	return ok
}

// RanFunctions are the targets whose function ran in the scenario, in their own file.
func (m *Map) RanFunctions(scenario string, targets []Target) []Target {
	var out []Target
	for _, t := range targets {
		if slices.Contains(m.Scenarios[scenario].Files[t.File], t.Function) {
			out = append(out, t)
		}
	}
	return out
}

// RanFiles are the files (or folders, ending in "/") some function of which ran in the
// scenario.
func (m *Map) RanFiles(scenario string, files []string) []string {
	var out []string
	for _, f := range files {
		for ran := range m.Scenarios[scenario].Files {
			if ran == f || (path.Ext(f) != ".c" && path.Dir(ran) == path.Dir(f)) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// Runs says how a scenario's traffic reaches a patch, in words, and how strongly: 2 when
// the map measured the patch's functions running in it, 1 when it measured some function of
// a touched file running (or, for a scenario the map does not have, the scenario declares a
// touched file among its link kinds' sources, scenarios.Exercises), else 0.
func (m *Map) Runs(s *scenarios.Scenario, fns []Target, touched []string) (strength int, how string) {
	if !m.Knows(s.Name) {
		if paths := scenarios.Exercises(s, touched); len(paths) > 0 {
			return 1, "its traffic runs through " + strings.Join(paths, " ") + " (its link kinds' sources)"
		}
		return 0, ""
	}
	if ran := m.RanFunctions(s.Name, fns); len(ran) > 0 {
		var names []string
		for _, t := range ran {
			names = append(names, t.Function)
		}
		return 2, "its traffic runs the patched " + strings.Join(names, ", ") + " (measured: nsperf coverage)"
	}
	if files := m.RanFiles(s.Name, touched); len(files) > 0 {
		return 1, "its traffic runs through " + strings.Join(files, " ") + " (measured: nsperf coverage)"
	}
	return 0, ""
}
