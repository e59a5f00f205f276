package claims

import (
	"slices"
	"testing"
)

// TestLayoutsReadTheirFixtures: each layout of the lists (layouts.go) has fixtures of its
// family, and switching the layout off loses a pair of them or reads them worse (a pair
// wrong, a figure of no pair read as one, a figure without its unit): the entry is what reads its family, and no family
// is left without its fixture.
func TestLayoutsReadTheirFixtures(t *testing.T) {
	answers, texts := readMessages(t, "testdata/families")
	byFile := map[string]expectedMessage{}
	for _, m := range answers {
		byFile[m.File] = m
	}
	found := func(files []string) int {
		n := 0
		for _, f := range files {
			r, err := Read(f, texts[f])
			if err != nil {
				t.Fatal(err)
			}
			s := scoreMessage(byFile[f], r.Claims)
			n += s.found - s.wrong - s.invented
			for _, c := range r.Claims {
				if c.Unit == "" {
					n-- // a figure read without the unit its tool gives it
				}
			}
		}
		return n
	}
	type entry struct {
		name     string
		fixtures []string
	}
	entries := []entry{{netperfClassicLayout, netperfFixtures}}
	for _, l := range toolLayouts {
		entries = append(entries, entry{l.name, l.fixtures})
	}
	for _, l := range proseLayouts {
		entries = append(entries, entry{l.name, l.fixtures})
	}
	var names []string
	for _, e := range entries {
		if slices.Contains(names, e.name) {
			t.Errorf("two layouts named %q", e.name)
		}
		names = append(names, e.name)
		if len(e.fixtures) == 0 {
			t.Errorf("%s: no fixture of its family", e.name)
			continue
		}
		for _, f := range e.fixtures {
			if _, ok := byFile[f]; !ok {
				t.Errorf("%s: fixture %s is not in testdata/families", e.name, f)
			}
		}
		on := found(e.fixtures)
		layoutOff[e.name] = true
		off := found(e.fixtures)
		delete(layoutOff, e.name)
		if off >= on {
			t.Errorf("%s: its fixtures score %d (pairs found less wrong and invented) with it and %d without: it reads none of them", e.name, on, off)
		}
	}
}

// TestIperf3RowsWithoutHeader: iperf3's sender and receiver rows pasted without their
// header, their spaces squashed, are iperf3's summary: one claim of the receiver's bitrate,
// by iperf3, not two claims of figures the generic reader found on each row.
func TestIperf3RowsWithoutHeader(t *testing.T) {
	text := "Subject: x\n\nBefore:\n[ 5] 0.00-1.00 sec 2.05 GBytes 17.6 Gbits/sec 3939 sender\n" +
		"[ 5] 0.00-1.01 sec 2.05 GBytes 17.5 Gbits/sec receiver\n\nAfter:\n" +
		"[ 5] 0.00-1.00 sec 2.96 GBytes 25.4 Gbits/sec 0 sender\n[ 5] 0.00-1.01 sec 2.96 GBytes 25.2 Gbits/sec receiver\n"
	r, err := Read("m", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 || r.Claims[0].Tool != "iperf3" || r.Claims[0].Before.Median != 17.5e9 || r.Claims[0].After.Median != 25.2e9 {
		t.Errorf("claims:\n%s", claimsText(r))
	}
}
