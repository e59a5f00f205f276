package claims

import (
	"fmt"
	"testing"
)

// TestRunsSharingAUnit: a state's line of several runs whose unit is written once after the
// last ("w/o: 11.2, 11.4, 11.1 Gbps") or after each alike ("11.2 Gbps, 11.4 Gbps, ...") is
// one series of that state, as with the unit in the label; figures of other units on the
// line stay apart.
func TestRunsSharingAUnit(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{"w/o patch: 11.2, 11.4, 11.1 Gbps\nw/ patch:  12.0, 12.1, 11.9 Gbps\n", "[1.12e+10 1.14e+10 1.11e+10] -> [1.2e+10 1.21e+10 1.19e+10] bit/s"},
		{"before: 11.2 11.4 11.1 Gbps\nafter:  12.0 12.1 11.9 Gbps\n", "[1.12e+10 1.14e+10 1.11e+10] -> [1.2e+10 1.21e+10 1.19e+10] bit/s"},
		{"before: 2.1 Mpps, 2.2 Mpps, 2.0 Mpps\nafter: 2.4 Mpps, 2.5 Mpps, 2.4 Mpps\n", "[2.1e+06 2.2e+06 2e+06] -> [2.4e+06 2.5e+06 2.4e+06] pps"},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, c := range r.Claims {
			got += fmt.Sprintf("%v -> %v %s;", c.Before.Values, c.After.Values, c.Unit)
		}
		if got != tc.want+";" {
			t.Errorf("%q:\n got %s\nwant %s;", tc.body, got, tc.want)
		}
	}
}

// TestRunsUnderBareContrastWords: runs under "w/o:" and "w/:", or "without:" and "with:", the
// words of a contrast pair alone, are the two states' series.
func TestRunsUnderBareContrastWords(t *testing.T) {
	for _, body := range []string{"w/o: 11.2 11.4 11.1 Gbps\nw/:  12.0 12.1 11.9 Gbps\n", "without (Gbps): 11.2, 11.4, 11.1\nwith (Gbps):    12.0, 12.1, 11.9\n", "with: 12.0 12.1 11.9 Gbps\nwithout: 11.2 11.4 11.1 Gbps\n"} {
		r, err := Read("x", []byte("Subject: x\n\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || len(r.Claims[0].Before.Values) != 3 || r.Claims[0].Before.Values[0] != 11.2e9 || r.Claims[0].After.Values[0] != 12e9 {
			t.Errorf("%q: %s", body, claimsText(r))
		}
	}
}

// TestVsWithItsStatesAfter: "X vs Y" whose states follow in the same order, the after's
// first ("(patched vs baseline)", ", new vs old"), has X as the after's figure; in the
// before's order, or with no states named, X stays the before's.
func TestVsWithItsStatesAfter(t *testing.T) {
	for _, tc := range []struct {
		body          string
		before, after float64
	}{
		{"TCP_STREAM: 9.61 vs 9.12 Gbit/s (patched vs baseline)\n", 9.12e9, 9.61e9},
		{"rx: 3.9 vs 3.2 Mpps, new vs old.\n", 3.2e6, 3.9e6},
		{"TCP_STREAM: 9.12 vs 9.61 Gbit/s (baseline vs patched)\n", 9.12e9, 9.61e9},
		{"TCP_STREAM: 9.61 vs 9.12 Gbit/s (two runs each)\n", 9.61e9, 9.12e9},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != tc.before || r.Claims[0].After.Median != tc.after {
			t.Errorf("%q: %s", tc.body, claimsText(r))
		}
	}
}

// TestRateUnitFromTheProse: bare figures ("42.1k -> 40.4k", "from 1.91M to 2.2M") take a
// rate's unit from the words before them that name what is counted (an RR test,
// transactions, requests; packets per second); words that name no count, or several, give
// none.
func TestRateUnitFromTheProse(t *testing.T) {
	for _, tc := range []struct{ body, unit string }{
		{"The RR test shows a 4% regression (42.1k -> 40.4k), which is in the noise.\n", "trans/s"},
		{"The TCP_CRR rate went from 42.1k to 40.4k.\n", "trans/s"},
		{"Forwarded packets per second go from 1.91M to 2.2M.\n", "pps"},
		{"The number of requests served went from 120k to 131k per run.\n", ""},
		{"It went from 42.1k to 40.4k.\n", ""},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.unit == "" && len(r.Claims) > 0 && r.Claims[0].Unit != "":
			t.Errorf("%q: %s", tc.body, claimsText(r))
		case tc.unit != "" && (len(r.Claims) != 1 || r.Claims[0].Unit != tc.unit):
			t.Errorf("%q: %s, want %s", tc.body, claimsText(r), tc.unit)
		}
	}
}

// TestPriorToLeadsTheBefore: "prior to" the change leads the before's clause as "before"
// does, first or second on the line.
func TestPriorToLeadsTheBefore(t *testing.T) {
	for _, body := range []string{
		"Prior to this patch: ~2.1Mpps. With this patch: ~2.6Mpps.\n",
		"Prior to the fix we saw 2.1 Mpps, after it 2.6 Mpps.\n",
		"With the patch: 2.6 Mpps; prior to it: 2.1 Mpps.\n",
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != 2.1e6 || r.Claims[0].After.Median != 2.6e6 {
			t.Errorf("%q: %s", body, claimsText(r))
		}
	}
}

// TestRunsDownWithoutLabels: rows without labels under the states' names, each column's
// figures alike, are one measurement's runs, one claim; rows far apart stay claims of their
// own.
func TestRunsDownWithoutLabels(t *testing.T) {
	for _, tc := range []struct {
		body   string
		claims int
	}{
		{"I get the following numbers (Mpps, higher is better):\n\n  baseline  patched\n  4.51      4.89\n  4.49      4.93\n  4.55      4.90\n", 1},
		{"Numbers (Mpps):\n\n  baseline  patched\n  4.51      4.89\n  0.80      0.81\n", 2},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != tc.claims || tc.claims == 1 && (len(r.Claims[0].Before.Values) != 3 || r.Claims[0].After.Median != 4.9e6) {
			t.Errorf("%q: %s", tc.body, claimsText(r))
		}
	}
}

// TestVsAfterASignedChange: "X vs Y" after a signed percentage ("throughput: +4.1% (9.71
// Gbps vs 9.33 Gbps)") is ordered so that the change is the one stated.
func TestVsAfterASignedChange(t *testing.T) {
	for _, tc := range []struct {
		body          string
		before, after float64
	}{
		{"throughput: +4.1% (9.71 Gbps vs 9.33 Gbps)\n", 9.33e9, 9.71e9},
		{"rx rate: -3.9% (9.33 Mpps vs 9.71 Mpps)\n", 9.71e6, 9.33e6},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != tc.before || r.Claims[0].After.Median != tc.after {
			t.Errorf("%q: %s", tc.body, claimsText(r))
		}
	}
}

// TestVsBeforeASignedChange: "X vs Y" followed by a signed percentage ("9.71 Gbps vs 9.33
// Gbps (+4.1%)") is ordered so that the change is the one stated.
func TestVsBeforeASignedChange(t *testing.T) {
	for _, tc := range []struct {
		body          string
		before, after float64
	}{
		{"throughput: 9.71 Gbps vs 9.33 Gbps (+4.1%)\n", 9.33e9, 9.71e9},
		{"throughput 9.33 vs 9.71 Gbps (-3.9%)\n", 9.71e9, 9.33e9},
		{"throughput 9.33 vs 9.71 Gbps (+4.1%)\n", 9.33e9, 9.71e9},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != tc.before || r.Claims[0].After.Median != tc.after || r.Claims[0].Mismatch {
			t.Errorf("%q: %s", tc.body, claimsText(r))
		}
	}
}

// TestStatesInALineWithThousands: two states' labelled figures on one line, written with
// thousands separators and a stated change after them, are the pair.
func TestStatesInALineWithThousands(t *testing.T) {
	for _, body := range []string{
		"Baseline: 1,211,343 pps; patched: 1,377,929 pps (+13.7%)\n",
		"Baseline: 1,211,343 pps, patched: 1,377,929 pps (+13.7%)\n",
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != 1211343 || r.Claims[0].After.Median != 1377929 {
			t.Errorf("%q: %s", body, claimsText(r))
		}
	}
}
