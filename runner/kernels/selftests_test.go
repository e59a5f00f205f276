package kernels

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/vm"
)

// TestBuildSelftests: a scenario whose tool is built from a kernel tree gets its programs
// built before it runs, from the patch's base tree when there is one, else the tree the plan
// finds (the default kernel's source); a run given them (a guest's, from its host) builds
// nothing; the guest's request carries them to the guest's run.
func TestBuildSelftests(t *testing.T) {
	testenv.RequireTool(t, "cc")
	t.Setenv("NSPERF_KERNEL_CACHE", t.TempDir())
	tree := t.TempDir()
	for _, name := range []string{"udpgso_bench_tx", "udpgso_bench_rx"} {
		path := filepath.Join(tree, "tools/testing/selftests/net", name+".c")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := scenarios.Load("veth-udpgso", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	p := Plan{Scenario: s, SelftestTree: func(context.Context) (string, error) { asked++; return tree, nil }}
	if err := p.buildSelftests(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"udpgso_bench_tx", "udpgso_bench_rx"} {
		b := p.Run.Built[name]
		if fi, err := os.Stat(b.Path); err != nil || fi.Mode()&0o111 == 0 || !strings.HasPrefix(b.Path, kbuild.CacheDir()) || !strings.Contains(b.Provenance, "built from "+tree) {
			t.Errorf("%s: %+v %v", name, b, err)
		}
	}
	// The patch's base tree wins over the default one.
	q := Plan{Scenario: s, baseTree: tree, SelftestTree: func(context.Context) (string, error) {
		t.Error("the default tree was fetched though the base's is known")
		return "", nil
	}}
	if err := q.buildSelftests(context.Background()); err != nil || q.Run.Built["udpgso_bench_tx"] != p.Run.Built["udpgso_bench_tx"] {
		t.Errorf("from the base's tree: %+v %v", q.Run.Built, err)
	}
	// A guest is given its host's builds, as copies in its exchange directory (the host's
	// cache may be where it sees nothing: under /tmp, a --vm-hide), and builds nothing.
	req := Plan{ScenarioArg: "veth-udpgso", Run: runner.Options{Built: p.Run.Built}}
	req.VM.Kernels = make([]vm.Kernel, 1)
	guestReq := req.guestRequest(0, "virtual")
	plan, err := guestReq.Plan(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan.SelftestTree = func(context.Context) (string, error) { t.Error("a guest looked for a tree"); return "", nil }
	copies := req.guestOptions().Programs
	for _, name := range []string{"udpgso_bench_tx", "udpgso_bench_rx"} {
		in, host := plan.Run.Built[name], p.Run.Built[name]
		if in.Path != vm.GuestDir+"/built-"+name || in.Provenance != host.Provenance || copies["built-"+name] != host.Path {
			t.Errorf("in the guest: %s %+v, host's %+v, copied %v", name, in, host, copies)
		}
	}
	if err := plan.buildSelftests(context.Background()); err != nil {
		t.Errorf("in the guest: %v", err)
	}
	if p.Run.Built["udpgso_bench_tx"].Path == vm.GuestDir+"/built-udpgso_bench_tx" {
		t.Error("the host's request was changed")
	}
	// A scenario without such a tool needs no tree.
	plain := Plan{Scenario: pairScenario(t), SelftestTree: func(context.Context) (string, error) { t.Error("fetched for iperf3"); return "", nil }}
	if err := plain.buildSelftests(context.Background()); err != nil || len(plain.Run.Built) != 0 || asked != 1 {
		t.Errorf("iperf3: %v %v, asked %d", plain.Run.Built, err, asked)
	}
}
