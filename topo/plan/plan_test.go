package plan

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/scenarios"
)

// testFacts is a machine without the openvswitch module, as CI's.
var testFacts = Facts{Datapath: scenarios.DatapathNetdev, StateDir: "/run/nsperf"}

func loadDefault(t testing.TB) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load(scenarios.DefaultScenario, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanGolden(t *testing.T) {
	s := loadDefault(t)
	p := New(s, "nsp0000", testFacts)
	var b strings.Builder
	b.WriteString(p.Shell())
	for _, st := range s.States {
		b.WriteString("# state " + st.Name + "\n")
		for _, line := range StateShell(p.StateSteps(st)) {
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("# undo\n" + p.UndoShell())
	golden.Check(t, filepath.Join("testdata", "veth-bigtcp.plan.golden"), b.String())
}

func TestRunIDs(t *testing.T) {
	id := NewRunID()
	if _, err := ParseRunID(string(id)); err != nil {
		t.Fatal(err)
	}
	if id.Namespace("client") != string(id)+"-client" || id.Alias() != "nsperf:"+string(id) {
		t.Fatal(id.Namespace("client"), id.Alias())
	}
	for _, bad := range []string{"", "nsp", "nsp12345", "abc1234", "nsp3F9A"} {
		if _, err := ParseRunID(bad); err == nil {
			t.Errorf("ParseRunID(%q) accepted", bad)
		}
	}
}

func TestOVSPlanGolden(t *testing.T) {
	s, err := scenarios.Load("ovs-internal-tso", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := New(s, "nsp0000", testFacts)
	golden.Check(t, filepath.Join("testdata", "ovs-internal-tso.plan.golden"), p.Shell()+"# undo\n"+p.UndoShell())
}

// TestPlanQuotesEveryValue: even a name that validation would refuse is written into the plan
// script as one quoted shell word, never as shell syntax.
func TestPlanQuotesEveryValue(t *testing.T) {
	s := loadDefault(t)
	evil := "e$(id>P)"
	s.Topology.Links[0].Veth.A.Name = evil
	devices := s.States[1].Settings["devices"].(scenarios.DeviceKnobs)
	for ref, ds := range devices {
		if strings.HasPrefix(ref, "client/") {
			delete(devices, ref)
			devices["client/"+evil] = ds
		}
	}
	p := New(s, "nsp0000", testFacts)
	script := p.Shell() + strings.Join(StateShell(p.StateSteps(s.States[1])), "\n")
	if strings.Contains(strings.ReplaceAll(script, "'"+evil+"'", ""), evil) {
		t.Errorf("an unquoted %s in the plan:\n%s", evil, script)
	}
	if !strings.Contains(script, "'"+evil+"'") {
		t.Errorf("the name is not in the plan at all:\n%s", script)
	}
}

// TestPlanImportsNoKernelLibrary: planning stays pure, so that `nsperf plan` and these tests
// need no root; the libraries that talk to the kernel or to OVS belong to package topo.
func TestPlanImportsNoKernelLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, kernel := range []string{"github.com/vishvananda/", "github.com/safchain/ethtool", "github.com/ovn-org/libovsdb", "github.com/nsperf/nsperf/topo/ovs"} {
			if strings.HasPrefix(dep, kernel) {
				t.Errorf("package plan depends on %s", dep)
			}
		}
	}
}

// TestStateStepsCoverEveryDevice: each state has knob, qdisc and offload steps for every
// device (the live side resets what the state leaves out), and a device created anew in each
// state is recreated after the devices built once and set after that.
func TestStateStepsCoverEveryDevice(t *testing.T) {
	s, err := scenarios.Load("vxlan-lowerdev", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := New(s, "nsp0000", testFacts)
	steps := p.StateSteps(s.States[0])
	at := map[string]int{}
	for i, st := range steps {
		at[string(st.Kind)+" "+st.SettingKey+" "+st.NS+"/"+st.Dev] = i
	}
	var recreated string
	for _, l := range s.Topology.Links {
		if l.Vxlan != nil && l.Vxlan.Recreate {
			recreated = l.Vxlan.Endpoint().Ref()
		}
	}
	if recreated == "" {
		t.Fatal("vxlan-lowerdev recreates no device")
	}
	for _, ep := range s.Devices() {
		for _, kind := range []string{"devices", "qdiscs", "offloads", "xdp"} {
			i, ok := at[string(SetSetting)+" "+kind+" "+ep.Ref()]
			if !ok {
				t.Errorf("no %s step for %s", kind, ep.Ref())
			}
			if ep.Ref() != recreated && i > at[string(Recreate)+"  "+recreated] {
				t.Errorf("%s of %s after the recreation", kind, ep.Ref())
			}
			if ep.Ref() == recreated && i < at[string(Recreate)+"  "+recreated] {
				t.Errorf("%s of the recreated %s before its recreation", kind, ep.Ref())
			}
		}
	}
	// Every build step that leaves something behind names its undo.
	for _, st := range p.Steps {
		switch st.Kind {
		case AddNamespace, AddVeth, AddLink, StartOVS, ConnectOVS:
			if st.Undo == nil || st.Undo.Do == "" {
				t.Errorf("%s %s/%s has no undo", st.Kind, st.NS, st.Dev)
			}
		}
	}
}
