package claims

import (
	"slices"
	"testing"
)

// TestHeadingNamesBothStatesInOrder: a heading that names both states, in the order of the two
// paragraphs under it, makes the first paragraph the first state's and the second the
// other's, however the author words it, wrapped or not; "with and without" reverses them.
func TestHeadingNamesBothStatesInOrder(t *testing.T) {
	const body = "\n\n  goodput:   4.12 Gbit/s\n  retrans:   310\n\n  goodput:   4.57 Gbit/s\n  retrans:   122\n"
	for _, tc := range []struct {
		heading       string
		before, after float64
	}{
		{"Before and after:", 4.12e9, 4.57e9},
		{"Goodput over a lossy path (netem loss 0.5%), before/after the change:", 4.12e9, 4.57e9},
		{"Goodput of a single stream over a path that loses half a percent, before and\nafter the change:", 4.12e9, 4.57e9},
		{"Goodput of a single stream over a path that loses half a percent, before and after\nthe change:", 4.12e9, 4.57e9},
		{"Without and with the series:", 4.12e9, 4.57e9},
		{"w/o vs w/:", 4.12e9, 4.57e9},
		{"With and without the fix:", 4.57e9, 4.12e9},
		{"Results after vs before:", 4.57e9, 4.12e9},
	} {
		r, err := Read("heading", []byte("Subject: [PATCH net] tcp: keep the lost retransmit's timestamp\n\n"+tc.heading+body))
		if err != nil {
			t.Fatal(err)
		}
		var got []Claim
		for _, c := range r.Claims {
			if c.Unit == "bit/s" {
				got = append(got, c)
			}
		}
		if len(got) != 1 || got[0].Before.Median != tc.before || got[0].After.Median != tc.after {
			t.Errorf("%q: goodput claims %+v, want %v -> %v", tc.heading, got, tc.before, tc.after)
		}
	}
}

// TestOneTreeExtendsAnother: among three trees no word places, the one that is another with
// something glued on by a plus is that one's patched state, across or down the table.
func TestOneTreeExtendsAnother(t *testing.T) {
	for name, table := range map[string]string{
		"across": "             v6.11   v6.12-rc3   v6.12-rc3+p\nudp_rr       51220   50871       54013\n",
		"down":   "kernel         udp_rr\nv6.11          51220\nv6.12-rc3      50871\nv6.12-rc3+p    54013\n",
	} {
		r, err := Read(name, []byte("Subject: [PATCH net-next] udp: cache the route of a connected socket\n\nUDP_RR, trans/s:\n\n"+table))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != 50871 || r.Claims[0].After.Median != 54013 {
			t.Errorf("%s: claims %+v, want 50871 -> 54013 (v6.12-rc3 against v6.12-rc3+p)", name, r.Claims)
		}
	}
}

// TestRowLabelWithWideSpace: a row's name with a wide space inside it ("udp_tx  64B"), all of
// it within the first column of the header, is one label: the cases stay apart.
func TestRowLabelWithWideSpace(t *testing.T) {
	r := familyClaims(t, "row-label-with-wide-space.txt")
	var rows []string
	for _, c := range r.Claims {
		rows = append(rows, c.Conditions["row"])
	}
	if want := []string{"udp_tx 64B", "udp_tx 1400B", "tcp_rr 100 flows"}; !slices.Equal(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
}

// TestHeadingOverTwoBareFigures: under a heading that names both states in order, a paragraph
// of two lines of one figure each is the two states' figures, in that order; three such lines
// are no pair (runs of one state, or cases no word tells apart).
func TestHeadingOverTwoBareFigures(t *testing.T) {
	for _, tc := range []struct {
		text          string
		before, after float64
		claims        int
	}{
		{"Goodput before and after the change:\n  812 Mbit/s\n  877 Mbit/s\n", 812e6, 877e6, 1},
		{"With and without the change:\n\n  877 Mbit/s\n  812 Mbit/s\n", 812e6, 877e6, 1},
		{"Before and after:\n  812 Mbit/s\n  877 Mbit/s\n  845 Mbit/s\n", 0, 0, 0},
	} {
		r, err := Read("bare", []byte("Subject: [PATCH net] tcp: keep the lost retransmit's timestamp\n\n"+tc.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != tc.claims || tc.claims == 1 && (r.Claims[0].Before.Median != tc.before || r.Claims[0].After.Median != tc.after) {
			t.Errorf("%q: claims %+v, want %d (%v -> %v)", tc.text, r.Claims, tc.claims, tc.before, tc.after)
		}
	}
}
