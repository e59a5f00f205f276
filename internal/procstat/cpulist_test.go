package procstat

import (
	"slices"
	"testing"
)

func TestCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cpus []int
		out  string
	}{
		{"0-2,5,domain,7-8", []int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
		{"3", []int{3}, "3"},
		{"", nil, ""},
		{"0,1", []int{0, 1}, "0-1"},
	} {
		got := ParseCPUList(tc.in)
		if !slices.Equal(got, tc.cpus) {
			t.Errorf("ParseCPUList(%q) = %v, want %v", tc.in, got, tc.cpus)
		}
		if s := FormatCPUList(got); s != tc.out {
			t.Errorf("FormatCPUList(%v) = %q, want %q", got, s, tc.out)
		}
	}
}
