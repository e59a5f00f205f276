package vm

import (
	"bytes"
	"github.com/nsperf/nsperf/kconfig"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/scenarios"
)

// TestKconfigGolden: the fragment of every shipped scenario, as `nsperf kconfig` prints it
// (less its first line, the command).
func TestKconfigGolden(t *testing.T) {
	ss, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		t.Run(s.Name, func(t *testing.T) {
			var b bytes.Buffer
			WriteFragment(&b, Fragment([]*scenarios.Scenario{s}, true))
			golden.Check(t, filepath.Join("testdata", "kconfig", s.Name+".golden"), b.String())
		})
	}
}

// TestKconfigAgreesWithModules: the modules a fragment builds are exactly the ones a guest
// of the scenario loads (BootModules and Needs): the two come from one table and never
// disagree.
func TestKconfigAgreesWithModules(t *testing.T) {
	ss, err := scenarios.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		required, optional := Needs(s)
		want := append(append(slices.Clone(BootModules), required...), optional...)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := ModulesOf(Fragment([]*scenarios.Scenario{s}, true)); !slices.Equal(got, want) {
			t.Errorf("%s: the fragment builds %v, the guest loads %v", s.Name, got, want)
		}
		for _, m := range want {
			if _, ok := moduleOptions[m]; !ok {
				t.Errorf("%s: module %s has no config option", s.Name, m)
			}
		}
	}
}

func TestCheckConfig(t *testing.T) {
	s, err := scenarios.Load("vxlan-lowerdev", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	need := Fragment([]*scenarios.Scenario{s}, true)
	var full bytes.Buffer
	WriteFragment(&full, need)
	if w, err := CheckConfig(kconfig.Parse(".config", full.Bytes()), need); err != nil || len(w) != 0 {
		t.Errorf("the fragment itself: %v %v", w, err)
	}
	partial := strings.NewReplacer("CONFIG_VXLAN=y", "# CONFIG_VXLAN is not set", "CONFIG_NF_TABLES=y", "CONFIG_NF_TABLES=n").Replace(full.String())
	w, err := CheckConfig(kconfig.Parse("/src/linux/.config", []byte(partial)), need)
	if err == nil || err.Error() != "CONFIG_VXLAN is not set in .config: the scenario needs vxlan (`nsperf kconfig` prints the fragment to merge)" {
		t.Errorf("missing vxlan: %v", err)
	}
	if len(w) != 1 || !strings.Contains(w[0], "CONFIG_NF_TABLES is not set in .config: the scenario uses nf_tables when there") {
		t.Errorf("warnings %v", w)
	}
}

// TestLinkKindsDeclareTheirOptions: every link kind, whether or not a shipped scenario uses
// it, declares the modules it needs with the options that build them, and those are what a
// guest loads and `nsperf kconfig` prints. A kind without its options fails here.
func TestLinkKindsDeclareTheirOptions(t *testing.T) {
	specs := scenarios.LinkKindSpecs()
	if len(specs) != len(scenarios.LinkKinds()) || len(specs) < 3 {
		t.Fatalf("link kinds %v, specs %v", scenarios.LinkKinds(), specs)
	}
	for _, kind := range scenarios.LinkKinds() {
		mods := specs[kind].Modules()
		if len(mods) == 0 {
			t.Errorf("link kind %s declares no kernel module", kind)
		}
		for _, m := range mods {
			if len(m.Options) == 0 {
				t.Errorf("link kind %s: module %s has no config option that builds it", kind, m.Name)
			}
			if got := moduleOptions[m.Name]; !slices.Equal(got, m.Options) {
				t.Errorf("link kind %s: module %s: the kconfig table has %v, the kind declares %v", kind, m.Name, got, m.Options)
			}
			if !slices.Contains(ModulesOf([]Option{{Name: first(m.Options)}}), m.Name) {
				t.Errorf("link kind %s: CONFIG_%s does not build %s", kind, first(m.Options), m.Name)
			}
		}
	}
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}
