package claims

import (
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
