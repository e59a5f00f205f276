package topo

import (
	"os/exec"
	"testing"

	"github.com/nsperf/nsperf/internal/testenv"
)

// BenchmarkBuildTeardown builds and removes the default topology through netlink, as nsperf
// does (run with `make bench`).
func BenchmarkBuildTeardown(b *testing.B) {
	testenv.RequireRoot(b)
	s := loadDefault(b)
	for i := 0; i < b.N; i++ {
		l, err := Build(NewPlan(s, NewRunID()), BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Teardown(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildTeardownIP does the same steps with the iproute2 commands of the plan, one
// `ip` process per step, for comparison.
func BenchmarkBuildTeardownIP(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireTool(b, "ip")
	s := loadDefault(b)
	for i := 0; i < b.N; i++ {
		p := NewPlan(s, NewRunID())
		if out, err := exec.Command("sh", "-ec", p.Shell()+p.UndoShell()).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}
