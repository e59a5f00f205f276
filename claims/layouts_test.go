package claims

import (
	"slices"
	"testing"
)

// TestLayoutsReadTheirFixtures: each layout of the lists (layouts.go) has fixtures of its
// family, and switching the layout off loses a pair of them: the entry is what reads its
// family, and no family is left without its fixture.
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
			n += scoreMessage(byFile[f], r.Claims).found
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
			t.Errorf("%s: its fixtures give %d pairs with it and %d without: it reads none of them", e.name, on, off)
		}
	}
}
