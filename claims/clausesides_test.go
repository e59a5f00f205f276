package claims

import (
	"fmt"
	"testing"
)

// pair is how onePair writes a claim's two medians.
func pair(before, after float64) string { return fmt.Sprintf("%g -> %g", before, after) }

// onePair reads a message and gives its one claim as pair writes it, "" for none, or how
// many there are.
func onePair(t *testing.T, text string) string {
	t.Helper()
	r, err := Read("message.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	switch len(r.Claims) {
	case 0:
		return ""
	case 1:
		return pair(r.Claims[0].Before.Median, r.Claims[0].After.Median)
	}
	return fmt.Sprintf("%d claims", len(r.Claims))
}

// TestClausesNamingTheirSides: a sentence whose two clauses each name their side somewhere in
// their words is one pair, whichever words another author would choose and in either order;
// clauses that name no side, or the same one, or differ only in a setting, are no pair.
func TestClausesNamingTheirSides(t *testing.T) {
	for _, c := range []struct {
		sentence string
		want     string // "" for no pair
	}{
		{"The stream ran at 9.1 Gbit/s prior to this change and at 9.9 Gbit/s with it.", pair(9.1e9, 9.9e9)},
		{"The stream ran at 9.9 Gbit/s with this series, but at 9.1 Gbit/s before it.", pair(9.1e9, 9.9e9)},
		{"Today one core forwards 2.2 Mpps; with the cache in place it forwards 2.6 Mpps.", pair(2.2e6, 2.6e6)},
		{"At present a core forwards 2.2 Mpps, and after the series 2.6 Mpps.", pair(2.2e6, 2.6e6)},
		{"The current driver needs 31.5 usec per request, while the patched one needs 28.0 usec.", pair(31.5, 28)},
		{"The flood used to reach 812,004 pps, the box now reaches 1,020,118 pps.", pair(812004, 1020118)},
		{"The mainline kernel sustains 14.2 Gbps, and the same box sustains 15.0 Gbps with my patch applied.", pair(14.2e9, 15e9)},
		{"Throughput went up by roughly 9%: it reached 31.7 Gbit/s where the unpatched kernel managed 29.1 Gbit/s.", pair(29.1e9, 31.7e9)},
		{"Requests per second rose from 1.82M to 2.05M on the same box.", pair(1.82e6, 2.05e6)},
		{"A flood used to complete 3,180 connections per second; it now completes 9,870.", pair(3180, 9870)},
		{"tcp_mtu_probe() shows up at 2.1% in perf top before the patch and at 0.4% after it.", pair(2.1, 0.4)},
		{"The rate went up by 2.1% before the patch and by 0.4% after it.", ""},
		{"Before this change the flood reached 1.71 Mpps at 100% CPU. After it, 2.35 Mpps.", pair(1.71e6, 2.35e6)},
		{"Before this change the flood reached 1.71 Mpps. A second flood reached 2.35 Mpps.", ""},
		// no side, the same side, or a setting that both clauses share; a stated change
		// the figures do not fit
		{"It reached 31.7 Gbit/s where the unpatched kernel managed 29.1 Gbit/s.", ""},
		{"Throughput went up by 30%: it reached 31.7 Gbit/s where the unpatched kernel managed 29.1 Gbit/s.", ""},
		{"One flow reaches 9.1 Gbit/s and four flows reach 9.9 Gbit/s.", ""},
		{"The stream ran at 9.1 Gbit/s with one queue and at 9.9 Gbit/s with four.", ""},
		{"Before the change tcp4 ran at 9.1 Gbit/s and before it tcp6 at 8.7 Gbit/s.", ""},
		{"Prior to this change a flow ran at 9.1 Gbit/s and a second one at 9.9 Mpps.", ""},
	} {
		if got := onePair(t, "Subject: [PATCH net-next] net: a change\n\n"+c.sentence+"\n"); got != c.want {
			t.Errorf("%q: %q, want %q", c.sentence, got, c.want)
		}
	}
}

// TestRegressionFixThreeStates: a fix's three states, the tree before and after the change
// that regressed (named by its id, as a commit, or as the regression) and this fix, compare
// the tree after the regression with the fix, in any order and under either word for the fix;
// two states of another change alone stay its comparison.
func TestRegressionFixThreeStates(t *testing.T) {
	for _, c := range []struct {
		rows []string
		want string
	}{
		{[]string{"before 9c1d2e3f4a:  5.62 Mpps", "after 9c1d2e3f4a:  4.31 Mpps", "with this fix:  5.58 Mpps"}, pair(4.31e6, 5.58e6)},
		{[]string{"with this fix:  5.58 Mpps", "before commit 9c1d2e3f4a:  5.62 Mpps", "after commit 9c1d2e3f4a:  4.31 Mpps"}, pair(4.31e6, 5.58e6)},
		{[]string{"pre-regression:  5.62 Mpps", "post-regression:  4.31 Mpps", "patched:  5.58 Mpps"}, pair(4.31e6, 5.58e6)},
		{[]string{"before the regression:  5.62 Mpps", "after the regression:  4.31 Mpps", "+ this fix:  5.58 Mpps"}, pair(4.31e6, 5.58e6)},
		{[]string{"before 9c1d2e3f4a:  5.62 Mpps", "after 9c1d2e3f4a:  4.31 Mpps"}, pair(5.62e6, 4.31e6)},
	} {
		text := "Subject: [PATCH net] net: fix a regression\n\nForwarding rate:\n\n"
		for _, row := range c.rows {
			text += "  " + row + "\n"
		}
		if got := onePair(t, text); got != c.want {
			t.Errorf("%q: %q, want %q", c.rows, got, c.want)
		}
	}
}

// TestRegressionFixInASentence: the trees before and after a regression and this fix, named
// in the clauses of one sentence or on lines of their own ("after it" referring to the
// regression), compare the tree after the regression with the fix; without a third clause
// naming the fix, or with the patch as the change the first two name, the two clauses are the
// pair.
func TestRegressionFixInASentence(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Before the regression the stream ran at 9.4 Gbit/s, after it 8.1 Gbit/s, and with this patch 9.3 Gbit/s.", pair(8.1e9, 9.3e9)},
		{"Prior to the regression we had 31.2k trans/s, after it 27.9k trans/s, and with the fix applied 31.0k trans/s.", pair(27900, 31000)},
		{"Before commit 1a2b3c4d5e6f we saw 2.10 Mpps and after it 1.62 Mpps; this fix brings it back to 2.05 Mpps.", pair(1.62e6, 2.05e6)},
		{"Before the regression:  9.4 Gbit/s\nAfter it:  8.1 Gbit/s\nWith this patch:  9.3 Gbit/s", pair(8.1e9, 9.3e9)},
		{"Before the patch 9.4 Gbit/s, after it 9.9 Gbit/s, and with the cache warm 10.1 Gbit/s.", pair(9.4e9, 9.9e9)},
		{"Before the regression the stream ran at 9.4 Gbit/s and after it 8.1 Gbit/s.", pair(9.4e9, 8.1e9)},
	} {
		if got := onePair(t, "Subject: [PATCH net] tcp: restore the fast path\n\n"+c.text+"\n"); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}

// TestSettingValuesAsStates: two states that are one setting at two numbers are ordered by a
// sentence saying the change takes it from one to the other, else by the Subject's verb
// (raising: the smaller is the baseline; lowering: the larger), whatever their print order;
// with neither, no pair.
func TestSettingValuesAsStates(t *testing.T) {
	rows := "Page load time:\n\n  initcwnd 10:  412 ms\n  initcwnd 32:  301 ms\n"
	reversed := "Page load time:\n\n  initcwnd 32:  301 ms\n  initcwnd 10:  412 ms\n"
	for _, c := range []struct{ subject, body, want string }{
		{"tcp: raise the initial congestion window", rows, pair(412000, 301000)},
		{"tcp: raise the initial congestion window", reversed, pair(412000, 301000)},
		{"tcp: lower the initial congestion window", rows, pair(301000, 412000)},
		{"tcp: change the initial congestion window", rows + "\nThis takes it from 10 to 32.\n", pair(412000, 301000)},
		{"tcp: change the initial congestion window", reversed + "\nThis takes it from 32 down to 10.\n", pair(301000, 412000)},
		{"tcp: change the initial congestion window", rows, ""},
	} {
		if got := onePair(t, "Subject: [PATCH net-next] "+c.subject+"\n\n"+c.body); got != c.want {
			t.Errorf("%s / %q: %q, want %q", c.subject, c.body, got, c.want)
		}
	}
}

// TestColumnOrderNamedInASentence: rows of a name and two figures whose columns no header
// names are pairs where a sentence says which column is which state, however it says it;
// without such a sentence they are none.
func TestColumnOrderNamedInASentence(t *testing.T) {
	// rows that repeat a name are runs, not cases: none of them is a pair
	runs := "Subject: x\n\nNumbers with the patch applied are on the right:\n\n  tcp4    9.12 Gbps   9.61 Gbps\n  tcp6    8.80 Gbps   9.35 Gbps\n  tcp4    9.10 Gbps   9.60 Gbps\n"
	if got := onePair(t, runs); got != "" {
		t.Errorf("rows of a repeated name: %q, want no pair", got)
	}
	rows := "\n  tcp4    9.12 Gbps   9.61 Gbps\n  tcp6    8.80 Gbps   9.35 Gbps\n"
	for _, c := range []struct {
		above, below string
		leftBefore   bool
		pairs        int
	}{
		{"Numbers with the patch applied are on the right:", "", true, 2},
		{"Left: vanilla, right: patched.", "", true, 2},
		{"The first column is without the patch.", "", true, 2},
		{"Patched numbers on the left, baseline on the right:", "", false, 2},
		{"", "(Gbit/s, base then patched)", true, 2},
		{"", "(Gbit/s, patched then base)", false, 2},
		{"Two runs of the same kernel:", "", true, 0},
	} {
		text := "Subject: [PATCH net-next] net: a change\n\n" + c.above + "\n" + rows + "\n" + c.below + "\n"
		r, err := Read("message.txt", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != c.pairs {
			t.Errorf("%q %q: %d claims, want %d", c.above, c.below, len(r.Claims), c.pairs)
			continue
		}
		for _, cl := range r.Claims {
			if (cl.Before.Median < cl.After.Median) != c.leftBefore {
				t.Errorf("%q %q: %g -> %g, the left column's side wrong", c.above, c.below, cl.Before.Median, cl.After.Median)
			}
		}
	}
}

// TestRequestRatesInProse: a rate of requests the words spell ("requests per second rose from
// 1.82M to 2.05M", "the request rate rises from 1.82M/s to 2.05M/s") is transactions per
// second, as an RR test's is, not packets; packets stay packets.
func TestRequestRatesInProse(t *testing.T) {
	for sentence, want := range map[string]string{
		"With 1000 connections, requests per second rose from 1.82M to 2.05M.":   "trans/s",
		"With 1000 connections, the request rate rises from 1.82M/s to 2.05M/s.": "trans/s",
		"Connections per second climbed from 41k to 47k.":                        "trans/s",
		"With 8 queues, packets per second rise from 1.82M to 2.05M.":            "pps",
		"With 8 queues, the forwarding rate rises from 1.82M/s to 2.05M/s.":      "pps",
	} {
		r, err := Read("message.txt", []byte("Subject: [PATCH net-next] net: a change\n\n"+sentence+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Unit != want || r.Claims[0].Before.Median != 1.82e6 && r.Claims[0].Before.Median != 41000 {
			t.Errorf("%q: %+v, want one claim in %s", sentence, r.Claims, want)
		}
	}
}

// TestValueFirstStaysInItsSentence: the words after a figure name its state only up to the
// end of their sentence; two figures of one state in a sentence and the other state's figure
// in the next are not read as a pair of the first sentence's figures.
func TestValueFirstStaysInItsSentence(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Before this change one flood reached 1.71 Mpps and another 1.80 Mpps.\nAfter it, 2.35 Mpps.\n", ""},
		{"One queue did 3.4 Gbit/s and the other 3.9 Gbit/s. With the patch, 4.4 Gbit/s.\n", ""},
		{"We measured 1.71 Mpps before, and 2.35 Mpps after.\n", pair(1.71e6, 2.35e6)},
		{"perf record with 1s periods,\n3 further periods after a restart.\n", ""},
		{"Flood at 2s intervals, 3 more runs after a reboot.\n", ""},
		{"It reached ~18.4Mpps without the prefetch but ~19.6 with it.\n", pair(18.4e6, 19.6e6)},
		{"We measured 2.35 Mpps with the patch and 1.71 Mpps\nwithout it.\n", pair(1.71e6, 2.35e6)},
	} {
		if got := onePair(t, "Subject: [PATCH net-next] veth: skip a lookup\n\n"+c.text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}

// TestLabelUnitBeforeANote: a column's name that is its unit and then a note of what it is of
// ("CPU% (tx)", "Mpps [rx]") names the unit; a note alone names none.
func TestLabelUnitBeforeANote(t *testing.T) {
	for _, c := range []struct{ label, norm string }{
		{"CPU% (tx)", "%"}, {"Mpps [rx]", "pps"}, {"Gbit/s (median of 5)", "bit/s"}, {"threads (per socket)", ""}, {"(tx)", ""},
	} {
		u, ok := labelUnit(c.label)
		if got := map[bool]string{true: u.norm, false: ""}[ok]; got != c.norm {
			t.Errorf("%q: unit %q, want %q", c.label, got, c.norm)
		}
	}
}

// TestWasBeforeAShare: a percentage and the one it replaced ("71% (was 78%)", "down from")
// are a pair where the words before name a share (CPU, cycles, loss), and no pair elsewhere,
// where percentages more often state changes.
func TestWasBeforeAShare(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{" - softirq CPU on the rx core: 38% (was 52%)\n", pair(52, 38)},
		{"Packet loss at 10k flows is now 0.4%, down from 2.9%.\n", pair(2.9, 0.4)},
		{"softirq time 31% (was 44%) on the rx core\n", pair(44, 31)},
		{"The gain is 5% (was 3% in v1).\n", ""},
		{"Receiver softirq load at 64 flows was 41% patched vs 55% on net-next.\n", pair(55, 41)},
		{"The share of cycles in vxlan_rcv() on the receiving\nside goes from 6.1% to 2.2% in perf top.\n", pair(6.1, 2.2)},
		{"The gain was 5% patched vs 3% with v1.\n", ""},
		{"Throughput improved by 12%, up from 9% in the first version.\n", ""},
		{"One tx queue now sustains 3.35 Mpps instead of 2.80\nMpps.\n", pair(2.80e6, 3.35e6)},
	} {
		if got := onePair(t, "Subject: [PATCH net-next] ice: use page_pool fragments\n\n"+c.text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}

// TestVsOrderNote: a note after "X vs Y" that says which state comes first or last orders the
// pair, whichever state it names.
func TestVsOrderNote(t *testing.T) {
	for _, c := range []struct{ note, want string }{
		{"(net-next first)", pair(17.1e9, 18.3e9)},
		{"(baseline first)", pair(17.1e9, 18.3e9)},
		{"(patched first)", pair(18.3e9, 17.1e9)},
		{"(base last)", pair(18.3e9, 17.1e9)},
		{"(unpatched last, 3 runs)", pair(18.3e9, 17.1e9)},
	} {
		text := "Subject: Re: [PATCH net-next] virtio_net: free tx skbs in napi poll\n\nThe absolute values: 17.1 vs 18.3 Gbit/s\n" + c.note + ", a bit more than I wrote.\n"
		if got := onePair(t, text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.note, got, c.want)
		}
	}
}

// TestRowsTakeTheCaptionsUnit: rows of two bare figures, their order named in a sentence,
// take the unit that sentence gives, its scale written apart or not ("in M pps", "unit is
// Kpps"); none given, they stay bare.
func TestRowsTakeTheCaptionsUnit(t *testing.T) {
	for _, c := range []struct {
		caption string
		unit    string
		before  float64
	}{
		{`Numbers are "base / patched", in M pps:`, "pps", 1.12e6},
		{`Numbers are "base / patched", unit is Kpps:`, "pps", 1120},
		{`Numbers are "base / patched", in Gbit/s:`, "bit/s", 1.12e9},
		{`Numbers are "base / patched":`, "", 1.12},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+c.caption+"\n\n  1 vCPU   :  1.12 / 1.31\n  2 vCPUs  :  2.05 / 2.44\n"))
		if err != nil || len(r.Claims) != 2 || r.Claims[0].Unit != c.unit || r.Claims[0].Before.Median != c.before {
			t.Errorf("%q: %v %s", c.caption, err, claimsText(r))
		}
	}
}

// TestPerfStatWindowIsNoResult: perf stat's "seconds time elapsed" is the length of the
// window it counted a CPU or the system for (a sleep's), no result; where perf stat ran the
// program itself, it is how long the program took.
func TestPerfStatWindowIsNoResult(t *testing.T) {
	block := func(banner, cycles, elapsed string) string {
		return " Performance counter stats for '" + banner + "':\n\n    " + cycles + "      cycles\n\n      " + elapsed + " seconds time elapsed\n"
	}
	for _, c := range []struct {
		banner string
		want   int // claims
	}{{"CPU(s) 3", 1}, {"system wide", 1}, {"./udp_flood -n 1000000", 2}} {
		text := "Subject: x\n\nBefore:\n\n" + block(c.banner, "12,345,678,901", "8.000912345") + "\nAfter:\n\n" + block(c.banner, "11,876,543,210", "7.250177001")
		r, err := Read("x", []byte(text))
		if err != nil || len(r.Claims) != c.want {
			t.Errorf("%q: %v, %d claims, want %d: %s", c.banner, err, len(r.Claims), c.want, claimsText(r))
		}
	}
}

// TestStatesOfTwoKindsInASentence: two figures whose words name states of different kinds (the
// change's "now" against a build's setting, a plus adding one thing to another) are no pair;
// words of one kind are.
func TestStatesOfTwoKindsInASentence(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"On a lockdep + kmemleak build the suite runs for about 80 seconds;\na plain build is done in 9 seconds.\n", ""},
		{"The suite now runs for about 80 seconds; a non-debug build is done in 9 seconds.\n", ""},
		{"With this patch: 9.9 Gbit/s, without it: 9.1 Gbit/s.\n", pair(9.1e9, 9.9e9)},
		{"The forwarding rate with GRO disabled is 1.2 Mpps and with GRO enabled 1.9 Mpps.\n", pair(1.2e6, 1.9e6)},
	} {
		if got := onePair(t, "Subject: [PATCH net] selftests: net: wait for the tunnel\n\n"+c.text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}

// TestKeyValueStatesInKeys: key=value lines whose keys name the states give each measurement's
// pair in the unit the key's last word names; keys that differ in a word naming no state, or
// in two words, give none.
func TestKeyValueStatesInKeys(t *testing.T) {
	for _, c := range []struct {
		line string
		want string
		unit string
	}{
		{"  case=fwd rules=32 base_mpps=2.71 patched_mpps=3.36", pair(2.71e6, 3.36e6), "pps"},
		{"  case=fwd patched_mpps=3.36 base_mpps=2.71", pair(2.71e6, 3.36e6), "pps"},
		{"  lat_us_old=41.2 lat_us_new=35.9", pair(41.2, 35.9), "us"},
		{"  rx_mpps=2.71 tx_mpps=3.36", "", ""},
		{"  base_rx_mpps=2.71 patched_tx_mpps=3.36", "", ""},
	} {
		r, err := Read("x", []byte("Subject: x\n\nResults:\n\n"+c.line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		got, unit := "", ""
		if len(r.Claims) == 1 {
			got, unit = pair(r.Claims[0].Before.Median, r.Claims[0].After.Median), r.Claims[0].Unit
		}
		if got != c.want || unit != c.unit {
			t.Errorf("%q: got %q %q, want %q %q (%s)", c.line, got, unit, c.want, c.unit, claimsText(r))
		}
	}
}

// TestCountPerUnitOfWorkFromTo: "from X to Y" of bare figures is a pair where the sentence
// names a count per unit of work before them (cycles, misses per packet); sizes and settings
// taken from one figure to another are none.
func TestCountPerUnitOfWorkFromTo(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"dTLB-load-misses per packet fell from 0.8 (base) to 0.3 (patched).", pair(0.8, 0.3)},
		{"Cycles per packet dropped from 742 to 560 with the patch.", pair(742, 560)},
		{"Instructions per request fell from 11,200 to 9,850.", pair(11200, 9850)},
		{"The ring went from 512 to 1024 entries.", ""},
		{"Bytes per packet went from 64 to 1500 in the sweep.", ""},
		{"We raised the budget from 64 to 300.", ""},
	} {
		if got := onePair(t, "Subject: [PATCH net-next] x\n\n"+c.text+"\n"); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}

// TestFloodPingTime: the time on a flood ping's count line (ping -f -c N) is how long the count
// took, a result; a ping at its interval takes the time its count sets, no result.
func TestFloodPingTime(t *testing.T) {
	block := func(cmd, ms string) string {
		return "  # " + cmd + "\n  --- 10.0.0.2 ping statistics ---\n  200000 packets transmitted, 200000 received, 0% packet loss, time " + ms + "ms\n"
	}
	for _, c := range []struct {
		cmd  string
		want string
	}{{"ping -f -c 200000 10.0.0.2", pair(9120e3, 7410e3)}, {"ping -c 200000 -f 10.0.0.2", pair(9120e3, 7410e3)}, {"ping -c 10 10.0.0.2", ""}} {
		text := "Subject: x\n\nBefore:\n\n" + block(c.cmd, "9120") + "\nAfter:\n\n" + block(c.cmd, "7410")
		if got := onePair(t, text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.cmd, got, c.want)
		}
	}
}

// TestCompoundNameDecides: two states whose names differ by a hyphenated name of code's
// ("copy" and "zero-copy") are told apart by the Subject naming the compound: what the patch
// brings, or what it takes away; the compound does not name its last part.
func TestCompoundNameDecides(t *testing.T) {
	block := func(name, rate string) string {
		return name + ":\n[  5]   0.00-10.00  sec  10.0 GBytes  " + rate + " Gbits/sec                  receiver\n\n"
	}
	for _, c := range []struct {
		subject, first, second string
		want                   string
	}{
		{"net: foo: add zero-copy receive", "copy", "zero-copy", pair(7.1e9, 7.6e9)},
		{"net: foo: add zero-copy receive", "zero-copy", "copy", pair(7.6e9, 7.1e9)},
		{"net: foo: drop zero-copy receive", "copy", "zero-copy", pair(7.6e9, 7.1e9)},
		{"net: foo: rework the copy path", "copy", "zero-copy", ""},
	} {
		text := "Subject: [PATCH net-next] " + c.subject + "\n\n" + block(c.first, "7.1") + block(c.second, "7.6")
		if got := onePair(t, text); got != c.want {
			t.Errorf("%q, %s then %s: %q, want %q", c.subject, c.first, c.second, got, c.want)
		}
	}
}

// TestNamesHoldNoFigure: in a sentence of several states, the number after "patch", "commit"
// or "step" says which one and is no figure, and a state's name holds no measured figure: no
// pair of such numbers is made (it had read 23.9 -> 2 Gbit/s from the first sentence).
func TestNamesHoldNoFigure(t *testing.T) {
	for _, s := range []string{
		"Subject: x\n\nGoodput went from 21.4 Gbit/s on bpf-next to 22.0 Gbit/s with patch 2 and to 23.9 Gbit/s with the whole series.\n",
		"Subject: x\n\nLatency was 41 us before the change, then 37 us after step 1 and 35 us after step 2.\n",
	} {
		r, err := Read("m", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		written := map[float64]bool{21.4e9: true, 22.0e9: true, 23.9e9: true, 41: true, 37: true, 35: true}
		for _, c := range r.Claims {
			for _, v := range append(append([]float64{}, c.Before.Values...), c.After.Values...) {
				if !written[v] {
					t.Errorf("%q: %g is no figure of the text (a patch's or a step's number?): %+v", s, v, c)
				}
			}
		}
	}
}

// TestCountSweptIsNoPair: clauses that differ in a count of one thing ("with 2 threads", "with
// 6 threads") sweep a condition, whatever state word one of them carries, and are no pair; the
// same count on both sides, with the patch's words on one, is a pair; and a note in
// parentheses after the first figure does not hide the second state.
func TestCountSweptIsNoPair(t *testing.T) {
	for _, c := range []struct {
		sentence string
		want     string
	}{
		{"With 2 threads the patched driver forwards 5.2 Mpps, with 6 threads 7.7 Mpps.", ""},
		{"With 2 queues bpf-next does 5.2 Mpps, with 2 queues and the patch 5.9 Mpps.", pair(5.2e6, 5.9e6)},
		{"bpf-next: 5.2 Mpps (one core busy), this series: 5.9 Mpps (one core busy)", pair(5.2e6, 5.9e6)},
	} {
		if got := onePair(t, "Subject: x\n\n"+c.sentence+"\n"); got != c.want {
			t.Errorf("%q: %q, want %q", c.sentence, got, c.want)
		}
	}
}
