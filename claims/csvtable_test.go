package claims

import (
	"slices"
	"testing"
)

// TestCSVTables: a block of CSV records with a header of names and rows of figures is laid
// out as aligned columns; a lone record (netperf -o's line under its command), records of
// differing lengths, prose with commas, figures with thousands commas and an aligned table are
// left as they are.
func TestCSVTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string // nil: unchanged
	}{
		{"states across", []string{"test,base,new", "TCP_RR,31020,33610", "UDP_RR, 35210, 37980"},
			[]string{"test    base   new", "TCP_RR  31020  33610", "UDP_RR  35210  37980"}},
		{"quoted names", []string{`"kernel","rate"`, `"6.12, base",1.2 Mpps`},
			[]string{"kernel      rate", "6.12, base  1.2 Mpps"}},
		{"a lone record", []string{"$ netperf -t TCP_RR -- -o THROUGHPUT,MEAN_LATENCY", "40594.89,24.57"}, nil},
		{"no header", []string{"1500,38.1,40.6", "9000,61.2,64.0"}, nil},
		{"lengths differ", []string{"a,b,c", "x,1,2,3"}, nil},
		{"prose", []string{"We ran it twice, with and without the patch,", "and the numbers, 12 and 14, agree."}, nil},
		{"labels with thousands", []string{"Before: 12,345 tps", "After: 13,000.5 trans/s"}, nil},
		{"thousands", []string{"rate,12,345", "x,13,000"}, nil},
		{"aligned already", []string{"test    base,  new", "TCP_RR  1,200  1,300"}, nil},
	} {
		lines := make([]line, len(tc.in))
		for i, s := range tc.in {
			lines[i] = line{i + 1, s}
		}
		csvTables(lines)
		got := make([]string, len(lines))
		for i, l := range lines {
			got[i] = l.text
		}
		want := tc.want
		if want == nil {
			want = tc.in
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, want)
		}
	}
}

// TestCSVParameterRowsCaptionUnit: under a CSV header, a row with the header's count of fields
// is a row, though a comma between its digits would otherwise group thousands ("8,112.7,121.9"
// under "flows,base,patched"); and the unit a caption of two lines says on its first ("in
// Gbit/s") is the figures' (the family's scorer compares figures only).
func TestCSVParameterRowsCaptionUnit(t *testing.T) {
	wantEach(t, familyClaims(t, "csv-parameter-rows-caption-unit-above.txt"), 3, "throughput", "bit/s")
	// A line alone with a thousands comma stays a figure, not two fields.
	if f := csvFields("TCP_RR,12,345 tps", false); f != nil {
		t.Errorf("a thousands comma parted fields: %q", f)
	}
}
