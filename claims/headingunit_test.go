package claims

import (
	"slices"
	"testing"
)

// TestHeadingUnit: the unit a heading over bare figures names, at its start (before a
// parenthesis or a comma), at its end (a word or words), or in parentheses; none where it
// names none.
func TestHeadingUnit(t *testing.T) {
	for h, want := range map[string]string{
		"Requests per second (UDP_RR, one flow)": "trans/s",
		"Transactions/s, one flow":               "trans/s",
		"UDP_RR transactions per second":         "trans/s",
		"Frames forwarded per second, 64 bytes":  "pps",
		"Throughput of 64 streams, Gbit/s":       "bit/s",
		"Goodput of the bulk flow (MB/s)":        "bit/s",
		"Results (10 runs)":                      "",
		"Results, in Mpps (3 runs each)":         "pps",
		"pps before":                             "pps",
		"rx_packets/s":                           "pps",
		"Cycles per packet":                      "", // a count of cycles, per packet: no rate
		"Two flows, 20 s each":                   "",
	} {
		u, ok := headingUnit(h)
		if got := u.norm; ok != (want != "") || got != want {
			t.Errorf("headingUnit(%q) = %q %v, want %q", h, got, ok, want)
		}
	}
	if u, _ := headingUnit("Goodput of the bulk flow (MB/s)"); u.factor != 8e6 {
		t.Errorf("MB/s: factor %v, want megabytes (8e6 bits)", u.factor)
	}
}

// TestCaptionEndingInItsUnit: a table's caption that ends in its figures' unit ("TCP_RR
// trans/s:", "UDP rx Mpps:") or opens with it ("Gbit/s, 5 runs each:") gives it to the
// figures, whose first column is the rows' names ("flows"), not their metric; "per second:"
// is no unit of its own.
func TestCaptionEndingInItsUnit(t *testing.T) {
	rows := "\n\nflows  base     patched\n1      25120    26050\n10     201300   214880\n"
	for _, tc := range []struct{ caption, unit string }{
		{"TCP_RR trans/s:", "trans/s"},
		{"UDP rx Mpps:", "pps"},
		{"Gbit/s, 5 runs each:", "bit/s"},
		{"Results per second:", ""},
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+tc.caption+rows))
		if err != nil || len(r.Claims) != 2 {
			t.Fatalf("%s: %v %d claims", tc.caption, err, len(r.Claims))
		}
		for _, c := range r.Claims {
			if c.Unit != tc.unit {
				t.Errorf("%s: unit %q (metric %q, quantity %q), want %q", tc.caption, c.Unit, c.Metric, c.Quantity, tc.unit)
			}
		}
	}
}

// TestSpreadColumnIsNoClaim: a table's column of the runs' spread ("stdev", "sd", "+/-")
// beside their mean is no measurement of its own.
func TestSpreadColumnIsNoClaim(t *testing.T) {
	for _, spread := range []string{"stdev", "std dev", "sd", "+/-"} {
		body := "Subject: x\n\nGbit/s, 10 runs:\n\n          mean     " + spread + "\nbefore    9.11     0.12\nafter     9.63     0.09\n"
		r, err := Read("x", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Before.Median != 9.11e9 || r.Claims[0].After.Median != 9.63e9 {
			t.Errorf("%s: %s", spread, claimsText(r))
		}
	}
}

// TestUnitRowUnderTheStates: a second header row that gives each state's column its unit,
// under a corner cell left empty or none, in a table cut by pipes or by spaces.
func TestUnitRowUnderTheStates(t *testing.T) {
	for _, body := range []string{
		"                  |  baseline  |  patched\n                  |  Mpps      |  Mpps\n------------------|------------|----------\nXDP_DROP          |  24.1      |  26.9\nXDP_TX            |  11.2      |  12.0\n",
		"action    |  baseline  |  patched\n          |  Mpps      |  Mpps\nXDP_DROP  |  24.1      |  26.9\nXDP_TX    |  11.2      |  12.0\n",
		"action      baseline    patched\n            Mpps        Mpps\nXDP_DROP    24.1        26.9\nXDP_TX      11.2        12.0\n",
	} {
		r, err := Read("x", []byte("Subject: x\n\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 2 || r.Claims[0].Unit != "pps" || r.Claims[0].Before.Median != 24.1e6 || r.Claims[1].After.Median != 12e6 {
			t.Errorf("%q: %s", body, claimsText(r))
		}
	}
}

// TestGluedPercentIsAShare: a column named with the percent sign glued to it ("cpu%", mpstat's
// "%soft") holds shares, whatever unit a note under the table gives the other columns.
func TestGluedPercentIsAShare(t *testing.T) {
	mpstat := "Subject: x\n\nmpstat -P 1 1:\n\n             %usr   %sys   %soft   %idle\nbefore       0.2    1.1    61.3    37.4\nafter        0.1    1.0    44.9    54.0\n"
	if r, err := Read("x", []byte(mpstat)); err != nil || len(r.Claims) != 4 || r.Claims[2].Unit != "%" || r.Claims[2].Before.Median != 61.3 {
		t.Errorf("mpstat's columns: %v %s", err, claimsText(r))
	}
	body := "Subject: x\n\n                 before            after\n               tput   cpu%      tput   cpu%\n1 stream       9.1    45        9.5    41\n8 streams     38.0   180       41.2   172\n(Gbit/s)\n"
	r, err := Read("x", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]int{}
	for _, c := range r.Claims {
		units[c.Unit]++
	}
	if len(r.Claims) != 4 || units["bit/s"] != 2 || units["%"] != 2 {
		t.Errorf("units %v:\n%s", units, claimsText(r))
	}
}

// TestOneRowWithItsUnitAfter: one row of bare figures under the states' names with the unit
// written once after them ("1.92    2.15  Mpps") is the states' figures in that unit.
func TestOneRowWithItsUnitAfter(t *testing.T) {
	r, err := Read("x", []byte("Subject: x\n\nSame test on arm64:\n  before  after\n  1.92    2.15  Mpps\n"))
	if err != nil || len(r.Claims) != 1 || r.Claims[0].Unit != "pps" || r.Claims[0].Before.Median != 1.92e6 || r.Claims[0].After.Median != 2.15e6 {
		t.Errorf("%v %s", err, claimsText(r))
	}
}

// TestUnitsFromAroundTheFigures: bare figures take the unit the text gives them elsewhere: a
// heading without a colon over rows indented under it, a note in parentheses under a long
// table, the one unit a row writes on its last figure.
func TestUnitsFromAroundTheFigures(t *testing.T) {
	for file, want := range map[string][]string{
		"heading-without-colon-unit-over-indented-rows.txt": {"trans/s"},
		"long-table-unit-in-note.txt":                       {"pps", "pps"},
		"table-unit-on-last-figure.txt":                     {"trans/s", "bit/s", "bit/s"},
		"unit-with-scale-in-brackets.txt":                   {"pps", "pps"},
		"scientific-notation-with-unit.txt":                 {"bit/s"},
		"caption-setting-and-unit-in-parens-no-colon.txt":   {"bit/s", "bit/s"},
		"rows-with-plus-digits-states-across.txt":           {"bit/s", "bit/s", "bit/s"},
		"table-unit-in-a-sentence-below.txt":                {"pps", "pps", "pps"},
		"one-row-table-unit-in-a-sentence-below.txt":        {"bit/s"},
		"numbered-runs-each-comparing.txt":                  {"trans/s"},
		"caption-rate-in-words.txt":                         {"pps", "pps", "trans/s"},
		"command-quoted-in-a-sentence.txt":                  {"trans/s"},
	} {
		r := familyClaims(t, file)
		var got []string
		for _, c := range r.Claims {
			got = append(got, c.Unit)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: units %q, want %q", file, got, want)
		}
	}
}
