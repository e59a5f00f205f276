package claims

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The corpus (testdata/corpus, a copy of ../shared/claims-corpus) is real messages with the
// pairs a careful reader takes from them. It is split by a rule fixed before any result was
// looked at: messages with an even number are the development half, those with an odd number
// the held-out half. The reader is never changed for a held-out message's failure without a
// fixture of that layout's family, written fresh, failing first (testdata/layouts).

// expectedPair is one pair of expected.json: before is the state without the change.
type expectedPair struct {
	Before       float64   `json:"before"`
	After        float64   `json:"after"`
	BeforeValues []float64 `json:"before_values"`
	AfterValues  []float64 `json:"after_values"`
	Unit         string    `json:"unit"`
	Metric       string    `json:"metric"`
	Note         string    `json:"note"`
}

type expectedMessage struct {
	File     string         `json:"file"`
	NoClaims bool           `json:"no_claims"`
	Pairs    []expectedPair `json:"pairs"`
	Optional []expectedPair `json:"optional_pairs"`
}

// unitFactor turns a value in the unit an answer is written in into the unit the reader
// normalises to (bit/s, pps, us); the corpus's scorer (score.py) does the same.
var unitFactor = map[string]float64{
	"bit/s": 1, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9,
	"B/s": 8, "kB/s": 8e3, "MB/s": 8e6, "GB/s": 8e9, "GiB/s": 8 << 30,
	"pps": 1, "kpps": 1e3, "Mpps": 1e6, "Kqps": 1e3,
	"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6,
}

func closeTo(x, y float64) bool {
	if y == 0 {
		return math.Abs(x) < 1e-12
	}
	return math.Abs(x-y) <= 0.005*math.Abs(y)
}

// sideMatches: one side of a claim carries the expected value, as written or normalised, by
// its median or by its whole series.
func sideMatches(v Values, want float64, wantValues []float64, unit string) bool {
	factors := []float64{1}
	if f, ok := unitFactor[unit]; ok && f != 1 {
		factors = append(factors, f)
	}
	for _, f := range factors {
		if closeTo(v.Median, want*f) {
			return true
		}
		if len(wantValues) > 0 && len(wantValues) == len(v.Values) {
			got, exp := slices.Sorted(slices.Values(v.Values)), slices.Sorted(slices.Values(wantValues))
			all := true
			for i := range got {
				all = all && closeTo(got[i], exp[i]*f)
			}
			if all {
				return true
			}
		}
	}
	return false
}

// relation says how a claim carries an expected pair: "both", "swapped", "partial" or "".
func relation(c Claim, p expectedPair) string {
	b := sideMatches(c.Before, p.Before, p.BeforeValues, p.Unit)
	a := sideMatches(c.After, p.After, p.AfterValues, p.Unit)
	switch {
	case a && b:
		return "both"
	case sideMatches(c.Before, p.After, p.AfterValues, p.Unit) && sideMatches(c.After, p.Before, p.BeforeValues, p.Unit):
		return "swapped"
	case a || b:
		return "partial"
	}
	return ""
}

// corpusScore is what the reader finds of one message, or of a set of them.
type corpusScore struct {
	found, expected, wrong, invented int
	cleanNone, none                  int
	missed                           []string
}

func (s *corpusScore) add(o corpusScore) {
	s.found += o.found
	s.expected += o.expected
	s.wrong += o.wrong
	s.invented += o.invented
	s.cleanNone += o.cleanNone
	s.none += o.none
	s.missed = append(s.missed, o.missed...)
}

func (s corpusScore) String() string {
	return fmt.Sprintf("%d of %d pairs (%.0f%%), %d wrong, %d invented, no-claims messages clean %d of %d",
		s.found, s.expected, 100*float64(s.found)/float64(max(s.expected, 1)), s.wrong, s.invented, s.cleanNone, s.none)
}

// scoreMessage scores the claims of one message against its answer, as score.py does:
// required pairs found first, then optional readings (neutral), then what carries a
// required pair wrongly; a claim left over that matches nothing is invented.
func scoreMessage(m expectedMessage, claims []Claim) corpusScore {
	s := corpusScore{expected: len(m.Pairs)}
	used := map[int]bool{}
	found := make([]bool, len(m.Pairs))
	for i, p := range m.Pairs {
		for j, c := range claims {
			if !used[j] && relation(c, p) == "both" {
				found[i], used[j] = true, true
				s.found++
				break
			}
		}
	}
	for j, c := range claims {
		for _, p := range m.Optional {
			if !used[j] && relation(c, p) == "both" {
				used[j] = true
			}
		}
	}
	for i, p := range m.Pairs {
		if found[i] {
			continue
		}
		wrong := false
		for j, c := range claims {
			if !used[j] && relation(c, p) != "" {
				used[j], wrong = true, true
				s.wrong++
				break
			}
		}
		if !wrong {
			s.missed = append(s.missed, fmt.Sprintf("%s: %s %g -> %g %s", m.File, p.Metric, p.Before, p.After, p.Unit))
		}
	}
	for j, c := range claims {
		if used[j] {
			continue
		}
		dup := false
		for _, p := range append(append([]expectedPair{}, m.Pairs...), m.Optional...) {
			dup = dup || relation(c, p) == "both"
		}
		if !dup {
			s.invented++
		}
	}
	if m.NoClaims {
		s.none = 1
		if s.invented == 0 {
			s.cleanNone = 1
		}
	}
	return s
}

// readMessages reads a folder's answers (expected.json, the corpus's format) and each
// message's text.
func readMessages(t *testing.T, dir string) ([]expectedMessage, map[string][]byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answers []expectedMessage
	if err := json.Unmarshal(data, &answers); err != nil {
		t.Fatal(err)
	}
	texts := map[string][]byte{}
	for _, m := range answers {
		if texts[m.File], err = os.ReadFile(filepath.Join(dir, m.File)); err != nil {
			t.Fatal(err)
		}
	}
	return answers, texts
}

// readCorpus reads the answers and, for each message, the reader's claims.
// late is the held-out messages of the corpus's later additions (numbers above 50); unseen is
// those of them whose number is 3 modulo 4, a quarter set apart by that rule before any of
// them was read, which no rule of the reader was written against: the most honest figure.
// (051's claims were read once, for a pair the single-space tables invented; its text was not.)
func readCorpus(t *testing.T) (dev, heldOut, late, unseen corpusScore) {
	t.Helper()
	answers, texts := readMessages(t, "testdata/corpus")
	for _, m := range answers {
		r, err := Read(m.File, texts[m.File])
		if err != nil {
			t.Errorf("%s: %v", m.File, err)
			continue
		}
		n, err := strconv.Atoi(m.File[:strings.IndexByte(m.File, '-')])
		if err != nil {
			t.Fatalf("%s: a corpus file's name starts with its number", m.File)
		}
		if n%2 == 1 {
			heldOut.add(scoreMessage(m, r.Claims))
			if n > 50 {
				late.add(scoreMessage(m, r.Claims))
			}
			if n > 50 && n%4 == 3 {
				unseen.add(scoreMessage(m, r.Claims))
			}
		} else {
			dev.add(scoreMessage(m, r.Claims))
		}
	}
	return dev, heldOut, late, unseen
}

// Floors: the pairs each half finds at least, never lowered to let a change pass. Raise them
// with the reader.
const (
	devFloor     = 104
	heldOutFloor = 80
)

// TestCorpus: the reader on real messages, each half against its floor, nothing invented,
// the messages without claims clean. It prints both figures; the README and docs/claims.md
// quote the held-out one.
func TestCorpus(t *testing.T) {
	dev, held, late, unseen := readCorpus(t)
	t.Logf("development half (even numbers): %v", dev)
	t.Logf("held-out half (odd numbers): %v", held)
	t.Logf("held-out messages added last (odd numbers above 50): %v", late)
	t.Logf("of those, the quarter never developed on (numbers 3 modulo 4): %v", unseen)
	for _, half := range []struct {
		name  string
		s     corpusScore
		floor int
	}{{"development", dev, devFloor}, {"held-out", held, heldOutFloor}} {
		if half.s.found < half.floor {
			t.Errorf("%s half: %v, below its floor of %d pairs; missed:\n%s", half.name, half.s, half.floor, strings.Join(half.s.missed, "\n"))
		}
		if half.s.wrong > 0 || half.s.invented > 0 || half.s.cleanNone < half.s.none {
			t.Errorf("%s half: %v", half.name, half.s)
		}
	}
}

// knownGaps are the families the reader does not read yet, each with why: the test keeps
// them failing, so that one read whole is noticed and taken out.
var knownGaps = map[string]string{
	"aligned-rows-named-with-releases.txt": "two figures of one unit within a factor of two on an aligned row without a header are read as one state's runs; only the sentence above (\"rxdrop, then txonly\") says they are two cases",
}

// TestFamilies: fixtures written for this test, one or more per family of layouts that real
// messages use (testdata/families, answers in the corpus's format in expected.json; no line of
// them is a corpus message's). Each gives every pair a careful reader takes, and nothing else.
func TestFamilies(t *testing.T) {
	answers, texts := readMessages(t, "testdata/families")
	files, _ := filepath.Glob("testdata/families/*.txt")
	if len(files) != len(answers) {
		t.Errorf("%d fixtures, %d answers: each fixture has its answer", len(files), len(answers))
	}
	for _, m := range answers {
		r, err := Read(m.File, texts[m.File])
		if err != nil {
			t.Errorf("%s: %v", m.File, err)
			continue
		}
		s := scoreMessage(m, r.Claims)
		switch whole := s.found == s.expected && s.wrong == 0 && s.invented == 0; {
		case !whole && knownGaps[m.File] == "":
			t.Errorf("%s: %v; missed %v; claims:\n%s", m.File, s, s.missed, claimsText(r))
		case whole && knownGaps[m.File] != "":
			t.Errorf("%s is read whole now: take it out of knownGaps", m.File)
		case !whole:
			t.Logf("known gap: %s: %s (%v)", m.File, knownGaps[m.File], s)
		}
	}
}

func claimsText(r *Report) string {
	var b strings.Builder
	for _, c := range r.Claims {
		fmt.Fprintf(&b, "  %s %s %v -> %v %s (lines %v)\n", c.Tool, c.Metric, c.Before.Values, c.After.Values, c.Unit, c.Lines)
	}
	return b.String()
}
