package results

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/golden"
	"github.com/nsperf/nsperf/scenarios"
)

// ktapResult has a passing and a failing expectation, an uncovered gated regression, an
// unavailable state and an evidence warning.
func ktapResult(t *testing.T) *Result {
	r := expectResult(t, []scenarios.Expectation{
		{Workload: "tcp4", Metric: Throughput, Change: cond(t, ">= +5%"), Significant: yes()},
		{Workload: "tcp4", Metric: Throughput, Change: cond(t, ">= +20%")},
	})
	r.RunID, r.Environment.KernelRelease = "nsp0000", "6.18.44"
	c := &r.Cases[0]
	c.States = append(c.States, StateRecord{Name: "big", CompareTo: "off", Unavailable: "gso_max_size 524280 > tso_max_size 65536 of ovs/int0"})
	c.Evidence = append(c.Evidence, Evidence{State: "on", Warning: true, Text: "on: BIG TCP not in effect on client/eth0: # of packets"})
	return r
}

func TestKTAPGolden(t *testing.T) {
	var b bytes.Buffer
	if err := KTAP(&b, ktapResult(t)); err != nil {
		t.Fatal(err)
	}
	tests, err := readKTAP(b.String())
	if err != nil {
		t.Fatalf("not KTAP: %v\n%s", err, b.String())
	}
	// 2 expectations, 4 gated comparisons, 1 skipped state; failures: the +20% expectation
	// and the uncovered min_latency regression.
	var fails, skips int
	for _, tc := range tests {
		if !tc.ok {
			fails++
		}
		if tc.directive == "SKIP" {
			skips++
			if !strings.Contains(tc.reason, "unavailable: gso_max_size 524280 > tso_max_size 65536") {
				t.Errorf("skip without its reason: %+v", tc)
			}
		}
	}
	if len(tests) != 7 || fails != 2 || skips != 1 {
		t.Errorf("%d tests, %d failed, %d skipped:\n%s", len(tests), fails, skips, b.String())
	}
	golden.Check(t, filepath.Join("testdata", "ktap.golden"), b.String())
}

type ktapResultLine struct {
	ok                bool
	number            int
	name              string
	directive, reason string
}

var (
	ktapResultRE = regexp.MustCompile(`^(ok|not ok) ([0-9]+)(?: ([^#]*[^# ]))?(?: # (SKIP|TODO|XFAIL|TIMEOUT|ERROR)(?: (.*))?)?$`)
	ktapPlanRE   = regexp.MustCompile(`^1\.\.([0-9]+)$`)
)

// readKTAP is a strict reader of flat KTAP version 1 (Documentation/dev-tools/ktap.rst): the
// version line first, one plan before any result, results numbered 1 to N in order with
// names free of '#', directives SKIP, TODO, XFAIL, TIMEOUT or ERROR, and nothing but
// "# " diagnostics besides.
func readKTAP(text string) ([]ktapResultLine, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "KTAP version 1" {
		return nil, fmt.Errorf("line 1: want \"KTAP version 1\"")
	}
	plan := -1
	var out []ktapResultLine
	for i, l := range lines[1:] {
		n := i + 2
		switch {
		case strings.HasPrefix(l, "# "):
		case ktapPlanRE.MatchString(l):
			if plan >= 0 || len(out) > 0 {
				return nil, fmt.Errorf("line %d: a second plan, or a plan after results", n)
			}
			plan, _ = strconv.Atoi(ktapPlanRE.FindStringSubmatch(l)[1])
		case ktapResultRE.MatchString(l):
			m := ktapResultRE.FindStringSubmatch(l)
			num, _ := strconv.Atoi(m[2])
			if plan < 0 || num != len(out)+1 {
				return nil, fmt.Errorf("line %d: result %d out of order (plan %d)", n, num, plan)
			}
			out = append(out, ktapResultLine{ok: m[1] == "ok", number: num, name: m[3], directive: m[4], reason: m[5]})
		default:
			return nil, fmt.Errorf("line %d: %q is neither a result, a plan nor a diagnostic", n, l)
		}
	}
	if plan != len(out) {
		return nil, fmt.Errorf("plan 1..%d, %d results", plan, len(out))
	}
	return out, nil
}

func TestReadKTAPIsStrict(t *testing.T) {
	for _, bad := range []string{
		"KTAP version 2\n1..0\n",
		"KTAP version 1\nok 1 a\n1..1\n",
		"KTAP version 1\n1..2\nok 1 a\n",
		"KTAP version 1\n1..1\nok 2 a\n",
		"KTAP version 1\n1..1\nfine 1 a\n",
		"KTAP version 1\n1..1\nok 1 a # MAYBE\n",
	} {
		if _, err := readKTAP(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
