package claims

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSharedLabelWordsAreConditions: two pairs of one metric whose states' labels carry the
// same words besides the state ("stock, 1 queue" / "patched, 1 queue") are told apart by those
// words, a condition of each; a lone pair gets none. The figure in such a label is no reading.
func TestSharedLabelWordsAreConditions(t *testing.T) {
	for _, c := range []struct {
		name, body string
		cases      []string // the words in each claim's conditions; "" for none
	}{
		{"comma", "Forwarding, 64B frames:\n\nstock, 1 queue:    2.91 Mpps\npatched, 1 queue:    3.30 Mpps\nstock, 4 queues:   9.80 Mpps\npatched, 4 queues:  11.02 Mpps\n",
			[]string{"1 queue", "4 queues"}},
		{"setting words", "UDP rx:\nnet-next, busy poll off: 1.10 Mpps\nthis series, busy poll off: 1.21 Mpps\nnet-next, busy poll on: 1.52 Mpps\nthis series, busy poll on: 1.60 Mpps\n",
			[]string{"busy poll off", "busy poll on"}},
		{"parentheses", "Requests per second:\nbaseline (keepalive): 51200 rps\npatched (keepalive): 55010 rps\nbaseline (no keepalive): 20310 rps\npatched (no keepalive): 21950 rps\n",
			[]string{"keepalive", "no keepalive"}},
		{"one pair", "stock, 1 queue:    2.91 Mpps\npatched, 1 queue:    3.30 Mpps\n", []string{""}},
	} {
		r, err := Read(c.name, []byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cl := range r.Claims {
			vals := slices.Sorted(maps.Values(cl.Conditions))
			got = append(got, strings.Trim(strings.Join(vals, " "), "()"))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.cases) {
			t.Errorf("%s: conditions %q, want %q; claims:\n%s", c.name, got, c.cases, claimsText(r))
		}
	}
}

// TestLineLabelsTellClaimsApart: claims of one measurement, each on a line of its own, take
// their lines' labels as conditions ("64B:", "2) TCP_RR:", "8 queues:"), list markers off;
// labels that name states, or repeat, give none.
func TestLineLabelsTellClaimsApart(t *testing.T) {
	for _, c := range []struct {
		name, body string
		rows       []string
	}{
		{"sizes", "UDP forwarding:\n64B: 2.91 Mpps -> 3.30 Mpps\n1500B: 0.81 Mpps -> 0.82 Mpps\n", []string{"64B", "1500B"}},
		{"numbered", "1) TCP_STREAM: 9.11 -> 9.62 Gbit/s\n2) TCP_RR: 30211 -> 31888 trans/s\n3) UDP_RR: 33001 -> 33120 trans/s\n", []string{"", "TCP_RR", "UDP_RR"}},
		{"queues", "8 queues: before 5.1 Mpps, after 5.9 Mpps\n2 queues: before 1.4 Mpps, after 1.5 Mpps\n", []string{"8 queues", "2 queues"}},
		{"repeated", "rx: 2.91 Mpps -> 3.30 Mpps\nrx: 0.81 Mpps -> 0.82 Mpps\n", []string{"", ""}},
		{"under the states' headings", "Baseline\n  TX: 14.2 Mpps\n  RX: 13.9 Mpps\nWith patch\n  TX: 16.0 Mpps\n  RX: 15.1 Mpps\n", []string{"TX", "RX"}},
	} {
		checkRows(t, c.name, c.body, c.rows)
	}
}

// checkRows reads body under a Subject and checks each claim's row condition, in order ("" for
// none).
func checkRows(t *testing.T, name, body string, rows []string) {
	t.Helper()
	r, err := Read(name, []byte("Subject: x\n\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cl := range r.Claims {
		got = append(got, cl.Conditions["row"])
	}
	if fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("%s: rows %q, want %q:\n%s", name, got, rows, claimsText(r))
	}
}

// TestSettingZeroAgainstTheSubjectsVerb: two states that are one setting at zero and not
// ("busy_poll=0", "busy_poll=50") are ordered by the Subject's verb: enabling it, the zero is
// the baseline; disabling it, the zero is the change; a Subject of neither leaves them.
func TestSettingZeroAgainstTheSubjectsVerb(t *testing.T) {
	for _, tc := range []struct {
		subject       string
		before, after float64 // 0: no claim
	}{
		{"net: enable busy polling by default on veth", 21.3, 15.8},
		{"net: disable busy polling on veth by default", 15.8, 21.3},
		{"net: busy polling on veth", 0, 0},
	} {
		checkOrder(t, tc.subject, "Subject: [PATCH] "+tc.subject+"\n\nbusy_poll=0:   21.3 us\nbusy_poll=50:  15.8 us\n", tc.before, tc.after)
	}
}

// checkOrder reads body and checks its one claim goes from before to after, or that it has no
// claim where before is 0.
func checkOrder(t *testing.T, name, body string, before, after float64) {
	t.Helper()
	r, err := Read("x", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case before == 0 && len(r.Claims) != 0:
		t.Errorf("%s: %s", name, claimsText(r))
	case before != 0 && (len(r.Claims) != 1 || r.Claims[0].Before.Median != before || r.Claims[0].After.Median != after):
		t.Errorf("%s: %s", name, claimsText(r))
	}
}

// TestSettingZeroAgainstTheDiffOrItsOnOff: without a verb, a setting at zero is the baseline
// where its other value is its on (=1, on), or where the patch's diff adds the setting; at
// zero and 50 with neither, the states stay undecided.
func TestSettingZeroAgainstTheDiffOrItsOnOff(t *testing.T) {
	diff := "---\n net/core/dev.c | 1 +\n\ndiff --git a/net/core/dev.c b/net/core/dev.c\n--- a/net/core/dev.c\n+++ b/net/core/dev.c\n@@ -1,2 +1,3 @@\n int a;\n+int rx_poll_budget;\n int b;\n"
	for _, tc := range []struct {
		name, states, diff string
		before, after      float64 // 0: no claim
	}{
		{"off and on", "rx_poll_budget=0:   21.3 us\nrx_poll_budget=1:   15.8 us\n", "", 21.3, 15.8},
		{"on printed first", "rx_poll_budget=on:   15.8 us\nrx_poll_budget=off:  21.3 us\n", "", 21.3, 15.8},
		{"two values, the diff adds the setting", "rx_poll_budget=64:  15.8 us\nrx_poll_budget=0:   21.3 us\n", diff, 21.3, 15.8},
		{"two values, no diff", "rx_poll_budget=0:   21.3 us\nrx_poll_budget=64:  15.8 us\n", "", 0, 0},
	} {
		body := "Subject: [PATCH] net: veth: poll in the receive path\n\n" + tc.states + "\nSigned-off-by: A <a@example.org>\n" + tc.diff
		checkOrder(t, tc.name, body, tc.before, tc.after)
	}
}

// TestHeadingsTellClaimsApart: claims of one measurement whose lines stand under a line of
// their own, indented less ("- veth, 1 queue", "TCP_STREAM"), take its words as conditions;
// figures each followed by its case in parentheses ("3.21 Mpps (64B)") take that case.
func TestHeadingsTellClaimsApart(t *testing.T) {
	for _, c := range []struct {
		name, body string
		rows       []string
	}{
		{"bullets", "- veth, 1 queue\n  - before: 2.91 Mpps\n  - after: 3.30 Mpps\n- veth, 4 queues\n  - before: 9.80 Mpps\n  - after: 11.02 Mpps\n", []string{"veth, 1 queue", "veth, 4 queues"}},
		{"tests", "TCP_STREAM\n  base     9.11 Gbit/s\n  patched  9.62 Gbit/s\nTCP_MAERTS\n  base     9.01 Gbit/s\n  patched  9.40 Gbit/s\n", []string{"TCP_STREAM", "TCP_MAERTS"}},
		{"parentheses after each figure", "Before: 3.21 Mpps (64B), 0.81 Mpps (1518B)\nAfter:  3.88 Mpps (64B), 0.81 Mpps (1518B)\n", []string{"64B", "1518B"}},
	} {
		checkRows(t, c.name, c.body, c.rows)
	}
}
