package claims

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRatesByGrammar: a rate spelled by its parts reads as the listed spellings do, and
// words that only look like one are no unit.
func TestRatesByGrammar(t *testing.T) {
	for _, c := range []struct {
		written string
		norm    string
		factor  float64
	}{
		{"Gbit/sec", "bit/s", 1e9}, {"Gbits/second", "bit/s", 1e9}, {"Mbit per second", "bit/s", 1e6},
		{"Gb/sec", "bit/s", 1e9}, {"KBytes/s", "bit/s", 8e3}, {"GiB/sec", "bit/s", 8 << 30},
		{"Mpkt/s", "pps", 1e6}, {"Mpackets/sec", "pps", 1e6}, {"kframes/s", "pps", 1e3}, {"kmsg/s", "pps", 1e3}, {"Mmessages/sec", "pps", 1e6}, {"msgs/s", "pps", 1},
		{"cycles/pkt", "cycles", 1}, {"ns/byte", "us", 1e-3},
		{"Krps", "trans/s", 1e3}, {"Mqps", "trans/s", 1e6}, {"t/s", "trans/s", 1}, {"kops/s", "trans/s", 1e3}, {"conn/s", "trans/s", 1}, {"kconns/sec", "trans/s", 1e3}, {"connections per second", "trans/s", 1},
		{"requests / second", "trans/s", 1}, {"Mbit / s", "bit/s", 1e6}, {"Gbs", "bit/s", 1e9}, {"Gbs/sec", "bit/s", 1e9}, {"Mbs/s", "bit/s", 1e6},
		{"10^6bits/second", "bit/s", 1e6}, {"k/s", "pps", 1e3}, {"M/s", "pps", 1e6}, {"μs", "us", 1}, {"microseconds", "us", 1}, {"nanoseconds", "us", 1e-3},
	} {
		u, ok := lookupUnit(c.written)
		if !ok || u.norm != c.norm || u.factor != c.factor {
			t.Errorf("%q: %+v %v, want %s x%g", c.written, u, ok, c.norm, c.factor)
		}
	}
	for _, word := range []string{"Mbits", "GB", "GBs", "MBs/sec", "KiB", "ms/s", "flows/sec/core", "bytes", "pkts", "10^99bit/s", "Xbit/s"} {
		if u, ok := lookupUnit(word); ok && u.kind != "time" && u.kind != "packets" {
			t.Errorf("%q read as %+v", word, u)
		}
	}
}

// TestFigureWithSpacedUnit: a figure whose unit stands a space apart, spelled out or with a
// scale glued on the number, reads as its written-together form; a scale before a unit that
// has its own, or words that are no unit, do not.
func TestFigureWithSpacedUnit(t *testing.T) {
	for _, c := range []struct {
		written string
		value   float64
		norm    string
	}{
		{"61.4k transactions per second", 61400, "trans/s"}, {"61400 transactions per second", 61400, "trans/s"},
		{"2.38M packets per second", 2.38e6, "pps"}, {"1.5 M frames/sec", 1.5e6, "pps"}, {"12k trans/s", 12000, "trans/s"},
		{"9.4 Gbit/s", 9.4e9, "bit/s"}, {"35 usec", 35, "us"},
	} {
		v, u, ok := parseValue(c.written)
		if !ok || u.norm != c.norm || v != c.value {
			t.Errorf("%q: %g %+v %v, want %g %s", c.written, v, u, ok, c.value, c.norm)
		}
	}
	for _, s := range []string{"1.2k Gbit/s", "57.9k", "4 queues per second", "3 of them", "12k"} {
		if v, u, ok := parseValue(s); ok {
			t.Errorf("%q read as %g %+v", s, v, u)
		}
	}
}

// TestRunsTakeTheirLabelsUnit: a state's runs in a row take the unit its label gives ("Before
// (Gbps): 9.41 9.38 9.44"), as a single figure after such a label does.
func TestRunsTakeTheirLabelsUnit(t *testing.T) {
	text := "Subject: x\n\nStream rate, three runs each:\n\nBefore (Gbps): 9.41 9.38 9.44\nAfter (Gbps):  9.90 9.87 9.93\n"
	r, err := Read("runs.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 {
		t.Fatalf("%d claims, want 1: %+v", len(r.Claims), r.Claims)
	}
	c := r.Claims[0]
	if c.Unit != "bit/s" || c.Metric != "throughput" || len(c.Before.Values) != 3 || c.Before.Median != 9.41e9 || c.After.Median != 9.9e9 {
		t.Errorf("claim %s %s %v -> %v, want throughput in bit/s, 9.41e9 -> 9.9e9 of three runs", c.Metric, c.Unit, c.Before, c.After)
	}
}

// TestTableUnitFromNoteBelow: a note under a table that opens with a unit ("(Gbit/s, median
// of 20 runs)") gives the table's bare figures that unit, as a caption above it does.
func TestTableUnitFromNoteBelow(t *testing.T) {
	text := "Subject: x\n\n" +
		"                    TCP_STREAM   TCP_MAERTS\n" +
		"v6.9                38.42        41.10\n" +
		"v6.9 + this patch   39.95        41.03\n" +
		"(Gbit/s, median of 20 runs)\n"
	r, err := Read("note.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 2 {
		t.Fatalf("%d claims, want 2: %+v", len(r.Claims), r.Claims)
	}
	for _, c := range r.Claims {
		if c.Unit != "bit/s" || c.Before.Median < 1e9 {
			t.Errorf("%v: %s %v -> %v, want Gbit/s figures", c.Conditions, c.Unit, c.Before.Median, c.After.Median)
		}
	}
}

// TestJudgedChangeOfATime: a change the text judges ("improvement", "faster") of a time is a
// fall of the figures, not a mismatch; one it only places ("increase") is not turned round.
func TestJudgedChangeOfATime(t *testing.T) {
	for _, c := range []struct {
		text     string
		stated   float64
		mismatch bool
	}{
		{"Loading 1M routes:\n  Before: 61.2 seconds\n  After:  37.9 seconds\n  Improvement: ~38%\n", -0.38, false},
		{"Loading 1M routes got 2x faster: 61.2 s before, 30.6 s after.\n", -0.5, false},
		{"Loading 1M routes:\n  Before: 30.6 seconds\n  After:  61.2 seconds\n  Increase: 100%\n", 1, false},
		{"Loading 1M routes, an improvement of 38%:\n  Before: 37.9 seconds\n  After:  61.2 seconds\n", -0.38, true},
	} {
		r, err := Read("t.txt", []byte("Subject: x\n\n"+c.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != 1 || r.Claims[0].Stated == nil {
			t.Errorf("%q: claims %+v, want one with a stated change", c.text, r.Claims)
			continue
		}
		if got := r.Claims[0]; *got.Stated != c.stated || got.Mismatch != c.mismatch {
			t.Errorf("%q: stated %v mismatch %v, want %v %v", c.text, *got.Stated, got.Mismatch, c.stated, c.mismatch)
		}
	}
}

// TestBannerHeadingThatStartsWithACount: a banner whose heading starts with a figure ("== 100
// flows ==") is a heading over its block, not the header of a table that takes the rows'
// units away.
func TestBannerHeadingThatStartsWithACount(t *testing.T) {
	text := "Subject: x\n\n== 1 flow ==\nbase    9.41 Gbps\npatch   9.43 Gbps\n\n== 100 flows ==\nbase    8.12 Gbps\npatch   9.02 Gbps\n"
	r, err := Read("banner.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 2 {
		t.Fatalf("%d claims, want 2: %+v", len(r.Claims), r.Claims)
	}
	for _, c := range r.Claims {
		if c.Unit != "bit/s" || c.Metric != "throughput" {
			t.Errorf("%v: %s in %q, want throughput in bit/s", c.Lines, c.Metric, c.Unit)
		}
	}
}

// TestLongParagraphStillRead: a mail without empty lines is one block longer than the prose
// layouts read at once; its sentences are still read, a window at a time.
func TestLongParagraphStillRead(t *testing.T) {
	var b strings.Builder
	b.WriteString("Subject: x\n\n")
	for range maxProseLines + 100 {
		b.WriteString("A line of the cover letter that says what the series does, in words only.\n")
	}
	b.WriteString("Before the patch we got 10.2 Gbps, with the patch 12.9 Gbps.\n")
	for range 50 {
		b.WriteString("More of the same words, and no figure among them at all.\n")
	}
	r, err := Read("long.txt", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 || r.Claims[0].Before.Median != 10.2e9 || r.Claims[0].After.Median != 12.9e9 {
		t.Errorf("claims %+v, want 10.2 -> 12.9 Gbit/s", r.Claims)
	}
}

// TestSplitAssignments: a NAME=figure token is cut where the figure has its unit glued on or
// the name is a unit; a bare figure after a name is a tool's record of its run, left whole.
func TestSplitAssignments(t *testing.T) {
	for in, want := range map[string]string{
		"IOPS=1204k, BW=4703MiB/s":             "IOPS= 1204k, BW= 4703MiB/s",
		"SentMessages=89107 RunTime=1.000 sec": "SentMessages=89107 RunTime=1.000 sec",
		"lat=4.1us avg-latency=4.153":          "lat= 4.1us avg-latency=4.153",
		"a=b x=":                               "a=b x=",
	} {
		if got := strings.Join(splitAssignments(strings.Fields(in)), " "); got != want {
			t.Errorf("splitAssignments(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDurationFigures: a time in minutes and seconds (or hours and minutes) written as one
// word becomes seconds; the shell's own `time` lines, lone minutes or seconds, and words that
// only contain such letters stay as they are.
func TestDurationFigures(t *testing.T) {
	for in, want := range map[string]string{
		"took 3m12s before and 2m47s after": "took 192 s before and 167 s after",
		"from 1m05.4s to 58.2s":             "from 65.4 s to 58.2s",
		"the build: 1h05m, then 1h2m30s":    "the build: 3900 s, then 3750 s",
		"real\t0m4.218s":                    "real\t0m4.218s",
		"timeout 5m, 30s apart":             "timeout 5m, 30s apart",
		"10ms of 3m":                        "10ms of 3m",
		"sha 4m2s9, x3m12sy":                "sha 4m2s9, x3m12sy",
	} {
		if got := durationFigures(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestCaptionEventListIsNoUnit: a caption listing perf's events with commas
// ("-e instructions,cycles,branch-misses") names the rows, not the unit of every row: only
// the cycles row is in cycles (the families' scorer compares figures, not units).
func TestCaptionEventListIsNoUnit(t *testing.T) {
	text, err := os.ReadFile("testdata/families/event-list-caption-not-unit.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read("x", text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"instructions": "", "cycles": "cycles", "branch-misses": ""}
	for _, c := range r.Claims {
		if u, ok := want[c.Conditions["row"]]; !ok || c.Unit != u {
			t.Errorf("row %q: unit %q, want %q", c.Conditions["row"], c.Unit, u)
		}
		delete(want, c.Conditions["row"])
	}
	if len(want) > 0 {
		t.Errorf("rows not read: %v\n%s", want, claimsText(r))
	}
}

// TestStatedInChangeColumn: a table's change column ("delta", "change") states each row's
// change; the claim carries it, and a stated change the figures do not give is a mismatch.
func TestStatedInChangeColumn(t *testing.T) {
	for _, tc := range []struct {
		table    string
		stated   []float64
		mismatch []bool
	}{
		{"test base patched delta\nudp_64 812340 901200 +10.9%\nudp_1400 401877 412003 +2.5%\n", []float64{0.109, 0.025}, []bool{false, false}},
		{"test        base    patched  change\nTCP_STREAM  21.4    23.0     +9.5%\nTCP_RR      41203   43988    +6.8%\n", []float64{0.095, 0.068}, []bool{true, false}},
	} {
		r, err := Read("x", []byte("Subject: [PATCH] net: x\n\n"+tc.table))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != len(tc.stated) {
			t.Fatalf("%d claims, want %d:\n%s", len(r.Claims), len(tc.stated), claimsText(r))
		}
		for k, c := range r.Claims {
			if c.Stated == nil || *c.Stated != tc.stated[k] || c.Mismatch != tc.mismatch[k] {
				t.Errorf("claim %d: stated %v mismatch %v, want %v %v", k, c.Stated, c.Mismatch, tc.stated[k], tc.mismatch[k])
			}
		}
	}
}

// TestUnitFirstThenItsCase: a column named by its unit and then its case ("Mpps (64B)") and a
// label that opens with a rate in words ("Packets per second through cake ...") give their
// figures that rate (unit-first-then-its-case.txt; the family's scorer compares figures only).
func TestUnitFirstThenItsCase(t *testing.T) {
	wantEach(t, familyClaims(t, "unit-first-then-its-case.txt"), 3, "packet_rate", "pps")
}

// familyClaims are the claims read from a family's fixture.
func familyClaims(t *testing.T, file string) *Report {
	t.Helper()
	data, err := os.ReadFile("testdata/families/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantEach fails unless r has n claims, each of metric in unit (a family whose scorer
// compares the figures only).
func wantEach(t *testing.T, r *Report, n int, metric, unit string) {
	t.Helper()
	if len(r.Claims) != n {
		t.Fatalf("%d claims, want %d:\n%s", len(r.Claims), n, claimsText(r))
	}
	for _, c := range r.Claims {
		if c.Metric != metric || c.Unit != unit {
			t.Errorf("want each of %s in %s; claims:\n%s", metric, unit, claimsText(r))
			return
		}
	}
}

// TestLabelledUnderNetperfCommand: a state's one bare number under the netperf command that
// printed it is that test's figure: a stream's in 10^6bits/s (or -f g's 10^9), a
// request/response test's in transactions/s; with -o (selectors) or a byte format (-f M) the
// number's kind is not guessed.
func TestLabelledUnderNetperfCommand(t *testing.T) {
	data, err := os.ReadFile("testdata/families/labelled-results-under-netperf-command.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 2 || r.Claims[0].Metric != "throughput" || r.Claims[0].Before.Median != 37221.45e6 ||
		r.Claims[1].Metric != "transaction_rate" || r.Claims[1].Unit != "trans/s" {
		t.Errorf("claims:\n%s", claimsText(r))
	}
	for cmd, want := range map[string]float64{"netperf -f g -H 10.0.0.2": 37.5e9, "netperf -o THROUGHPUT -H 10.0.0.2": 0, "netperf -f M -H 10.0.0.2": 0} {
		r, err := Read("x", []byte("Subject: x\n\n$ "+cmd+"\n  before:  37.5\n  after:   39.0\n"))
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		if len(r.Claims) == 1 && r.Claims[0].Unit == "bit/s" {
			got = r.Claims[0].Before.Median
		}
		if got != want {
			t.Errorf("%s: %v, want %v:\n%s", cmd, got, want, claimsText(r))
		}
	}
}

// TestHeadingUnitAmongItsParts: a heading whose unit is one of its parts between commas, a
// blank line above its rows, gives every row that unit (heading-unit-among-its-parts.txt;
// the family's scorer compares figures only).
func TestHeadingUnitAmongItsParts(t *testing.T) {
	r := familyClaims(t, "heading-unit-among-its-parts.txt")
	if len(r.Claims) != 3 {
		t.Fatalf("claims:\n%s", claimsText(r))
	}
	for _, c := range r.Claims {
		if c.Unit != "us" {
			t.Errorf("want each in us; claims:\n%s", claimsText(r))
			break
		}
	}
}

// TestFootnoteUnitsByKind: a note under a table that opens with a unit and says what it is
// for gives it to the columns without one of their own (footnote-units-by-kind.txt; the
// family's scorer compares figures only).
func TestFootnoteUnitsByKind(t *testing.T) {
	r := familyClaims(t, "footnote-units-by-kind.txt")
	units := []string{}
	for _, c := range r.Claims {
		units = append(units, c.Unit)
	}
	if strings.Join(units, " ") != "bit/s bit/s trans/s" {
		t.Errorf("units %v; claims:\n%s", units, claimsText(r))
	}
}

// TestCaptionNamesAnRRTest: a table's caption that names one request/response test and no
// unit makes its bare figures transactions per second; one that names a stream too gives no
// unit (caption-names-an-rr-test.txt; the family's scorer compares figures only).
func TestCaptionNamesAnRRTest(t *testing.T) {
	wantEach(t, familyClaims(t, "caption-names-an-rr-test.txt"), 2, "transaction_rate", "trans/s")
	both := "Subject: x\n\nTCP_RR and TCP_STREAM flows, their sum:\n\n        before     after\nmean    1.21M      1.38M\n"
	r, err := Read("x", []byte(both))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Claims {
		if c.Unit == "trans/s" {
			t.Errorf("a caption of an RR test and a stream gave transactions/s:\n%s", claimsText(r))
		}
	}
}

// TestUnitWithItsCounter: a unit written with the counter it was read from in parentheses
// ("cycles(tsc)", "ns(clock)") is the unit; a word in parentheses that no unit starts is none,
// and a unit glued to its number stays as it was.
func TestUnitWithItsCounter(t *testing.T) {
	for in, want := range map[string]string{
		"bulk free: 71 cycles(tsc) 19.8 ns(clock) per object": "71 cycles, 0.0198 us",
		"per object: 131 cycles(tsc)":                         "131 cycles",
		"per object: 131 foo(bar)":                            "131 ",
		"per object: 131cycles 40ns":                          "131 cycles, 0.04 us",
	} {
		var got []string
		for _, f := range readFigures(in).figures {
			got = append(got, strings.TrimSpace(fmt.Sprintf("%g %s", f.value, f.unit.norm)))
		}
		if strings.Join(got, ", ") != strings.TrimSpace(want) {
			t.Errorf("%q: %q, want %q", in, strings.Join(got, ", "), want)
		}
	}
}
