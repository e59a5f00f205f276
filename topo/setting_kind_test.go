package topo_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/reproduce"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/fixture"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/topo/plan"
	"github.com/nsperf/nsperf/topo/runstate"
)

// testRings is a setting kind that exists only in this file: a device's ring sizes
// (`ethtool -G DEV rx N tx N`), its kernel a map the fake applier keeps.
type testRings map[string]testRingSizes

type testRingSizes struct {
	RX int `yaml:"rx"`
	TX int `yaml:"tx"`
}

func (r testRingSizes) String() string { return fmt.Sprintf("rx %d tx %d", r.RX, r.TX) }

// testRingsKernel is what the fake kernel's devices have, by "ns/dev"; built: 256 each.
var testRingsKernel = map[string]testRingSizes{}

func init() {
	scenarios.RegisterSetting(func() scenarios.Setting { return testRings{} })
	topo.RegisterApplier("test_rings", func() topo.SettingApplier { return testRingsApplier{} })
}

func (testRings) Key() string                   { return "test_rings" }
func (testRings) Scope() scenarios.Scope        { return scenarios.DeviceScope }
func (testRings) Phases() []int                 { return []int{scenarios.PhaseDeviceLast} }
func (testRings) MayDiffer() bool               { return false }
func (r testRings) Targets() []string           { return slices.Sorted(maps.Keys(r)) }
func (testRings) Kernel() scenarios.KernelNeeds { return scenarios.KernelNeeds{} }

func (r testRings) Check(c *scenarios.SettingCheck) {
	for _, ref := range r.Targets() {
		if ok, _ := c.Device(ref, ref); !ok {
			continue
		}
		if rx := r[ref].RX; rx < 64 || rx > 4096 {
			c.Problem(ref+".rx", "%d: want 64 to 4096 descriptors", rx)
		}
	}
}

func (r testRings) Command(ref string, _ int, sh scenarios.Shell) string {
	rs, ok := r[ref]
	if !ok {
		return ""
	}
	ns, dev := scenarios.SplitTarget(ref)
	return fmt.Sprintf("ip netns exec %s ethtool -G %s rx %d tx %d", shellq.Word(sh.NS(ns)), dev, rs.RX, rs.TX)
}

var ethtoolGRe = regexp.MustCompile(`^ethtool -G (\S+) rx (\d+) tx (\d+)$`)

// ReadToggle reads `ethtool -G DEV rx N tx N`.
func (testRings) ReadToggle(cmd string) (scenarios.SettingToggle, bool) {
	m := ethtoolGRe.FindStringSubmatch(strings.TrimSpace(cmd))
	if m == nil {
		return scenarios.SettingToggle{}, false
	}
	return scenarios.SettingToggle{Device: m[1], Values: map[string]string{"rx": m[2], "tx": m[3]}}, true
}

// DraftToggles drafts the last rings a message sets on both ends after, as built before; a
// shipped scenario must toggle rings for reproduce to measure them there.
func (testRings) DraftToggles(shown []scenarios.SettingToggle, on scenarios.DraftTopology) scenarios.SettingDraft {
	last := shown[len(shown)-1].Values
	return scenarios.SettingDraft{After: scenarios.DraftPerTarget("test_rings", on.Devices, last, ""), Toggles: []string{"rings"}}
}

type testRingsApplier struct{}

func (testRingsApplier) Check(*topo.Live, scenarios.Setting) []string { return nil }

func (testRingsApplier) Apply(_ *topo.Live, step plan.Step) (any, error) {
	r, _ := step.Setting.(testRings)
	want, ok := r[step.Target]
	if !ok {
		want = testRingSizes{256, 256}
	}
	testRingsKernel[step.Target] = want
	return testRingsKernel[step.Target], nil
}

func (testRingsApplier) Drift(_ *topo.Live, ref string, record any) ([]string, error) {
	if got := testRingsKernel[ref]; got != record.(testRingSizes) {
		return []string{fmt.Sprintf("%s rings are %s, applied %s", ref, got, record)}, nil
	}
	return nil, nil
}

func (testRingsApplier) Record(rec *results.StateRecord, records map[string]any) {
	for ref, r := range records {
		if rec.Settings == nil {
			rec.Settings = map[string]map[string]string{}
		}
		if rec.Settings["test_rings"] == nil {
			rec.Settings["test_rings"] = map[string]string{}
		}
		rec.Settings["test_rings"][ref] = r.(testRingSizes).String()
	}
}

// TestSettingKindIsOneFile: a setting kind defined in this file alone is decoded with
// positions, validated, planned with its shell text, applied and read back, recorded, checked
// for drift, refused by compare where two results' states differ in it, read as a toggle by
// claims and drafted as a scenario's state from it, with no other file naming it.
func TestSettingKindIsOneFile(t *testing.T) {
	withRings := strings.Replace(fixture.PairScenario, "devices: {client/eth0: {gso_max_size: 185000}}",
		"devices: {client/eth0: {gso_max_size: 185000}}\n    test_rings: {client/eth0: {rx: 1024, tx: 512}}", 1)
	bad := strings.Replace(withRings, "rx: 1024", "rx: 9", 1)
	_, err := scenarios.Parse("pair.yaml", []byte(bad), scenarios.Options{})
	if err == nil || !strings.Contains(err.Error(), "pair.yaml:12:32: states[1].test_rings.client/eth0.rx: 9: want 64 to 4096 descriptors") {
		t.Errorf("a ring size out of range: %v", err)
	}
	s, err := scenarios.Parse("pair.yaml", []byte(withRings), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := topo.NewPlan(s, topo.NewRunID())
	cmds := plan.StateShell(p.StateSteps(s.States[1]))
	if want := "ip netns exec " + p.RunID.Namespace("client") + " ethtool -G eth0 rx 1024 tx 512"; !slices.Contains(cmds, want) {
		t.Errorf("commands %q, want %q", cmds, want)
	}

	testenv.RootTest(t, runstate.Dir)
	l, err := topo.Build(p, topo.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Teardown()
	for _, st := range s.States {
		rec, err := l.Apply(st)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"off": "rx 256 tx 256", "on": "rx 1024 tx 512"}[st.Name]
		if got := rec.Settings["test_rings"]["client/eth0"]; got != want || rec.Settings["test_rings"]["server/eth0"] != "rx 256 tx 256" {
			t.Errorf("state %s recorded %v, want client/eth0 %s", st.Name, rec.Settings, want)
		}
		if drift, err := l.Drift(); err != nil || len(drift) != 0 {
			t.Errorf("state %s: drift right after applying: %v %v", st.Name, drift, err)
		}
	}
	testRingsKernel["client/eth0"] = testRingSizes{128, 512}
	if drift, err := l.Drift(); err != nil || !slices.Equal(drift, []string{"client/eth0 rings are rx 128 tx 512, applied rx 1024 tx 512"}) {
		t.Errorf("drift %q %v", drift, err)
	}

	a := fixture.PairResult("nsp0001", "", "k", withRings, map[string][]float64{"off": {10, 10.1, 9.9}, "on": {12, 12.1, 11.9}})
	b := fixture.PairResult("nsp0002", "", "k", strings.Replace(withRings, "rx: 1024", "rx: 2048", 1), map[string][]float64{"off": {10, 10.1, 9.9}, "on": {12, 12.1, 11.9}})
	var inc *compare.IncomparableError
	if _, err := compare.New([]compare.Side{{Source: "a", Result: a}, {Source: "b", Result: b}}, compare.Options{}); !errors.As(err, &inc) || !strings.Contains(err.Error(), "states.on.test_rings.client/eth0.rx: 1024 / 2048") {
		t.Errorf("compare: %v, want the rings' difference", err)
	}

	rep, err := claims.Read("message", []byte("With bigger rings:\n\n  # ethtool -G eth0 rx 1024 tx 512\n"))
	if err != nil {
		t.Fatal(err)
	}
	var read []claims.Toggle
	for _, tg := range rep.Toggles {
		if tg.Settings["test_rings"] != nil {
			read = append(read, tg)
		}
	}
	if len(read) != 1 || read[0].Device != "eth0" || read[0].Settings["test_rings"]["rx"] != strconv.Itoa(1024) {
		t.Errorf("claims' toggles %+v, want the rings command read by its kind", rep.Toggles)
	}
	var draft bytes.Buffer
	if err := rep.WriteScenario(&draft, "rings"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(draft.String(), "compare_to: \"before\"\n    test_rings:\n      client/eth0: {rx: 1024, tx: 512}\n      server/eth0: {rx: 1024, tx: 512}\n") {
		t.Errorf("the drafted scenario lacks the rings after:\n%s", draft.String())
	}
	if _, err := scenarios.Parse("rings.yaml", draft.Bytes(), scenarios.Options{}); err != nil {
		t.Errorf("the drafted scenario does not load: %v\n%s", err, draft.String())
	}
	if why := reproduce.DraftFor(rep, []*scenarios.Scenario{s}); !strings.Contains(why, "toggles rings, which no shipped scenario's states set") {
		t.Errorf("reproduce: %q, want the rings drafted", why)
	}
}
