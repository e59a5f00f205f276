package claims

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

// TestStatePairs: each pair of names real messages give the states names its before and its
// after; names that only look like states (a size with a plus, a count, a preposition) name
// none.
func TestStatePairs(t *testing.T) {
	for _, p := range statePairs {
		if side, _, _ := stateOf(p[0]); side != "before" {
			t.Errorf("%q: %q, want before", p[0], side)
		}
		if side, _, _ := stateOf(p[1]); side != "after" {
			t.Errorf("%q: %q, want after", p[1], side)
		}
	}
	for _, name := range []string{"64k+", "64k+ messages", "15648792", "20481733", "GRO on vxlan", "1500 MTU", "TCP_RR", "tcp_stream", "nthreads=25", "4 queues"} {
		if side, _, _ := stateOf(name); side != "" {
			t.Errorf("%q names the state %s: it names none", name, side)
		}
	}
	for name, want := range map[string]string{"4f1c2b7a": "before", "v6.12 + series": "after", "net + patch 2": "after", "+ whole series": "after", "patch 4": "after", "patches 1-3": "after", "whole series": "after", "all patches": "after", "HEAD~1": "before", "HEAD^": "before", "before-fix": "before", "after-fix": "after", "Results before the patch": "before", "the commit before it, txonly": "", "a run after the reboot": ""} {
		if side, _, _ := stateOf(name); side != want {
			t.Errorf("%q: %q, want %s", name, side, want)
		}
	}
}

// TestOtherToolsAreNotDriven: no program the message names as one nsperf cannot drive is run
// by a tool of the registry (udpgso_bench_tx is udpgso's), and none is a tool of the registry
// by name (pktgen, which runs no program of its own).
func TestOtherToolsAreNotDriven(t *testing.T) {
	for _, p := range append(scenarios.ToolProcesses(), scenarios.ToolNames()...) {
		for _, o := range otherTools {
			if o.re.MatchString(p) || o.re.MatchString(p+" -c") {
				t.Errorf("%s, which a tool of nsperf runs, is listed as a program nsperf does not drive (%s)", p, o.name)
			}
		}
	}
}

// TestUnreadTableSaid: a table whose states nothing tells gives no claim, and says so.
func TestUnreadTableSaid(t *testing.T) {
	data, err := os.ReadFile("testdata/families/table-states-untold.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read("t", data)
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, u := range r.Unparsed {
		said = said || strings.Contains(u.Reason, "a table whose states could not be told")
	}
	if len(r.Claims) != 0 || !said {
		t.Errorf("claims %v, not read %v: want none, and the table said to be unread", r.Claims, r.Unparsed)
	}
}

// TestConditionHeadingEndsEarlierState: a heading over lines that name their states
// themselves ("Benchmark:" over "1. Baseline: ..." and "2. ...") is a condition, and the
// state an earlier heading left ("In pseudo code, roughly:" far above, a state no word
// decides) is not the state of those lines.
func TestConditionHeadingEndsEarlierState(t *testing.T) {
	var lines []line
	for i, text := range []string{"Benchmark:", "  1. Baseline:  26.0 Mpps", "  2. Batched:   35.5 Mpps (+36.5%)"} {
		lines = append(lines, line{n: i + 1, text: text})
	}
	earlier := block{side: "?", state: "In pseudo code, roughly"}
	got := enterHeading(earlier, "Benchmark", lines, 0, map[string][]int{})
	if got.side != "" || got.state != "" || got.cond == "" {
		t.Errorf("after the condition heading: %+v, want no state and the heading as the condition", got)
	}
}

// TestContrastPairs: each contrast pair names its two states in a table whose header spans
// them over the same sub-columns, the pair's first word the before; either order of the
// columns gives the same pairs, and a name without its contrasting twin names no state.
func TestContrastPairs(t *testing.T) {
	for _, c := range contrastPairs {
		for _, swap := range []bool{false, true} {
			first, second := c[0]+" batching", c[1]+" batching"
			lo, hi := "10.0", "12.5"
			if swap {
				first, second, lo, hi = second, first, hi, lo
			}
			msg := "Subject: x\n\n" +
				fmt.Sprintf("      | %-16s | %-16s |\n", first, second) +
				"      | 1 flow | 8 flows | 1 flow | 8 flows |\n" +
				"tcp   | " + lo + "   | 20.0    | " + hi + "   | 21.0    |\n" +
				"udp   | " + lo + "   | 30.0    | " + hi + "   | 33.0    |\n"
			r, err := Read("contrast", []byte(msg))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Claims) != 4 {
				t.Errorf("%q / %q (swapped %v): %d claims, want 4: %+v", c[0], c[1], swap, len(r.Claims), r.Claims)
				continue
			}
			if got := r.Claims[0]; got.Before.Median != 10 || got.After.Median != 12.5 {
				t.Errorf("%q / %q (swapped %v): %v -> %v, want 10 -> 12.5", c[0], c[1], swap, got.Before.Median, got.After.Median)
			}
		}
		if !contrasting(c[0], c[1]) || !contrasting(c[1], c[0]) {
			t.Errorf("%q and %q do not contrast", c[0], c[1])
		}
	}
	if side, _ := nameByContrast("with batching", []string{"with batching", "with copying"}); side != "" {
		t.Errorf("with batching beside with copying: %q, want no side", side)
	}
}

// TestSidesOf: the two labels of a comparison decided by one scorer, either order; labels
// that name no state, or two of one side, are no decision.
func TestSidesOf(t *testing.T) {
	for _, c := range []struct{ a, b, sideA string }{
		{"before", "after", "before"}, {"vanilla", "patched", "before"}, {"w/o", "w/", "before"},
		{"without", "with", "before"}, {"v6.9", "v6.9+this", "before"}, {"net-next", "net-next + series", "before"},
		{"non-GRO", "GRO", "before"}, {"baseline", "with batching", "before"}, {"GRO off", "GRO on", "before"},
		{"old", "new", "before"}, {"1.0", "1.0+fix", "before"},
		{"6.12-rc1", "6.12-rc1+", "before"}, {"mainline", "mainline+v2", "before"}, {"base", "base+1-5", "before"},
		{"ref", "patch", "before"}, {"pre", "post", "before"}, {"net-next", "net-next+v3", "before"},
	} {
		for _, swap := range []bool{false, true} {
			a, b, want := c.a, c.b, c.sideA
			if swap {
				a, b, want = b, a, opposite(want)
			}
			if got, other := sidesOf(a, b, true); got != want || other != opposite(want) {
				t.Errorf("sidesOf(%q, %q) = %q, %q; want %q first", a, b, got, other, want)
			}
		}
	}
	for _, c := range [][2]string{{"tx", "rx"}, {"min", "max"}, {"run 1", "run 2"}, {"before", "baseline"}, {"patched", "new"}, {"", ""}} {
		if a, b := sidesOf(c[0], c[1], true); a != "" || b != "" {
			t.Errorf("sidesOf(%q, %q) = %q, %q; want no decision", c[0], c[1], a, b)
		}
	}
	if a, b := sidesOf("6.8-rc3 reaches", "6.8-rc3 with the patch reaches", false); a != "before" || b != "after" {
		t.Errorf("a version and the same version with the patch: %q, %q", a, b)
	}
	if a, b := sidesOf("before the patch the box did", "on four queues", false); a != "" || b != "" {
		t.Errorf("a sentence's condition decided as a state: %q, %q", a, b)
	}
}

// TestNamedBySubject: of a baseline's alternatives, the one the Subject names by a word the
// others lack; none where the Subject names none or two of them.
func TestNamedBySubject(t *testing.T) {
	for _, c := range []struct {
		names   []string
		subject string
		want    int
	}{
		{[]string{"epoll busypoll", "userspace busypoll"}, "net: add busy polling to epoll", 0},
		{[]string{"sysctl busy_read", "napi cache"}, "net: a napi id cache for sk_busy_loop", 1},
		{[]string{"epoll busypoll", "userspace busypoll"}, "net: faster wakeups", -1},
		{[]string{"epoll busypoll", "userspace busypoll"}, "net: epoll and userspace polling", -1},
	} {
		if got := namedBySubject(c.names, c.subject); got != c.want {
			t.Errorf("namedBySubject(%q, %q) = %d, want %d", c.names, c.subject, got, c.want)
		}
	}
}

// TestNamedByChange: where the Subject names none of a baseline's alternatives, a sentence
// that says what the patch does names one; a sentence naming two, or two sentences naming
// different ones, decide nothing, nor does a sentence that is no statement of the patch.
func TestNamedByChange(t *testing.T) {
	text := func(ss ...string) []line {
		var out []line
		for k, s := range ss {
			out = append(out, line{k + 1, s}, line{k + 1, ""})
		}
		return out
	}
	names := []string{"inline refill", "deferred refill"}
	for _, c := range []struct {
		subject string
		lines   []line
		want    int
	}{
		{"ixgbe: faster rx", text("This patch moves the refill inline, into the poll loop."), 0},
		{"ixgbe: deferred refill", text("This patch moves the refill inline."), 1}, // the Subject first
		{"ixgbe: faster rx", text("Unlike the deferred refill, this patch keeps it inline."), -1},
		{"ixgbe: faster rx", text("The patch goes inline.", "Our change keeps it deferred."), -1},
		{"ixgbe: faster rx", text("An inline refill was measured first."), -1},
	} {
		if got := namedByChange(names, c.subject, c.lines); got != c.want {
			t.Errorf("namedByChange(%q, %q) = %d, want %d", names, c.subject, got, c.want)
		}
	}
}

// TestSubjectPhrase: a Subject names a state by two or more words of its label in a row, one
// of them its own, however it joins them; one shared word, or one word alone, is no phrase.
func TestSubjectPhrase(t *testing.T) {
	for _, c := range []struct {
		name, other, subject string
		want                 bool
	}{
		{"rings of whole pages", "rings of half pages", "net: foo: fill the rx rings with whole-pages", true},
		{"rings of half pages", "rings of whole pages", "net: foo: fill the rx rings with whole-pages", false},
		{"single queue lock", "per-ring locks", "r8169: take a single tx_queue lock", true},
		{"gro on", "gro off", "net: make gro faster", false},      // a shared word with one of its own not beside it
		{"batched", "one at a time", "veth: batched xmit", false}, // one word: what the patch is about
	} {
		if got := subjectPhrase(c.name, c.other, c.subject); got != c.want {
			t.Errorf("subjectPhrase(%q, %q, %q) = %v, want %v", c.name, c.other, c.subject, got, c.want)
		}
	}
}

// TestCueVote: the word just before a state's name in the prose places it; both states
// placed one way, or nothing said, is no vote.
func TestCueVote(t *testing.T) {
	for _, c := range []struct {
		a, b string
		text []string
		want int
	}{
		{"16-way", "32-way", []string{"there is no reason to keep 16-way tables"}, 1},
		{"32-way", "16-way", []string{"I tried the 32-way version"}, -1},
		{"list", "rbtree", []string{"the new rbtree is faster than the current list"}, 1},
		{"list", "rbtree", []string{"the new list", "the new rbtree"}, 0},                             // both after
		{"list", "rbtree", []string{"a list and an rbtree"}, 0},                                       // nothing said
		{"bitmap (Mpps)", "linear scan (Mpps)", []string{"it replaces the existing linear scan"}, -1}, // a header's unit is no part of the name
		{"linear", "(Mpps)", []string{"the existing linear scan"}, 0},                                 // a unit is no state: a header cut wrong
		{"A", "B", []string{"the current A"}, 0},                                                      // one letter: too short to look for
		{"a very long state name", "b", []string{"the current a very long state name"}, 0},            // a line, not a name
		{"caf\xe9", "b\xf3\xe5 x", []string{"the current caf\xe9 and b\xf3\xe5 x"}, 1},                // names in Latin-1, read raw: no panic, still found
	} {
		if got := cueVote(c.a, c.b, c.text); got != c.want {
			t.Errorf("cueVote(%q, %q, %q) = %d, want %d", c.a, c.b, c.text, got, c.want)
		}
	}
}

// TestSentenceSide: a sentence names its patch's state by the patch's words, wherever they
// stand and however another author words it; a sentence naming both states, or only words a
// tree or a time shares with prose ("current", "new", "now"), names none.
func TestSentenceSide(t *testing.T) {
	for s, want := range map[string]string{
		"The numbers I got on the unpatched kernel, ten runs each, were":          "before",
		"Here is what the benchmark printed before this series was applied":       "before",
		"Measured on a machine that does not have the fix, as a reference point":  "before",
		"On a build that doesn't include the patch, the same test looked like so": "before",
		"And once the patch is in, on the very same machine, they become":         "after",
		"The same run again, this time with the series applied on top of it":      "after",
		"Before this patch the loop took longer, and with it the loop is shorter": "",
		"The current code is what we measured at first, and now the new numbers":  "",
		"Ten runs of a route lookup microbenchmark, median of the ns per lookup":  "",
		"Ping-pong over veth, 64 byte messages, 20 s, before and after the patch": "",
		"The rates with and without the series, on one core, in the same order":   "",
	} {
		if got := sentenceSide(s); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
		if got, _, _ := stateOf(s); got != want {
			t.Errorf("stateOf(%q): %q, want %q", s, got, want)
		}
	}
}
