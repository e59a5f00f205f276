package results

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNthSmallestIsTheSortedElement: against sorting, on random, tied, sorted and constant
// input of every small size and every index.
func TestNthSmallestIsTheSortedElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		for _, kind := range []string{"random", "ties", "sorted", "reversed", "constant"} {
			v := make([]float64, n)
			for i := range v {
				switch kind {
				case "random":
					v[i] = rng.NormFloat64()
				case "ties":
					v[i] = float64(rng.IntN(3))
				case "sorted":
					v[i] = float64(i)
				case "reversed":
					v[i] = float64(n - i)
				case "constant":
					v[i] = 7
				}
			}
			want := slices.Sorted(slices.Values(v))
			for i := range n {
				if got := nthSmallest(slices.Clone(v), i); got != want[i] {
					t.Fatalf("%s n=%d i=%d: %v, want %v (%v)", kind, n, i, got, want[i], v)
				}
			}
		}
	}
}

// TestLargeFilesRefusedBySize: a result or journal above MaxResultSize is refused by its
// size, before a byte is decoded, and one of a thousand runs per state is well below it.
func TestLargeFilesRefusedBySize(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"r.json", "r.json.journal"} {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"journal": "` + JournalSchema + `", "result": {`)
		f.Truncate(MaxResultSize + 1) // sparse: nothing more is written
		f.Close()
		_, _, err = ReadFile(p)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the limit is 64 MiB") {
			t.Errorf("%s: %v", name, err)
		}
		if _, _, err := ReadJournal(p); err == nil || !strings.Contains(err.Error(), "the limit is 64 MiB") {
			t.Errorf("%s as a journal: %v", name, err)
		}
	}
	// 1000 runs of two states, 62 metrics each: what a long run stores.
	var samples []Sample
	for i := 1; i <= 1000; i++ {
		for _, st := range []string{"off", "on"} {
			s := sample(i, st, "tcp4", 9e9+float64(i%7)*1e8, 60)
			for k := range 60 {
				s.Metrics = append(s.Metrics, Metric{fmt.Sprintf("side_metric_%02d", k), "count", float64(i * k)})
			}
			samples = append(samples, s)
		}
	}
	r := testResult()
	r.Settings.Runs = 1000
	r.Cases[0].Samples = samples
	p := filepath.Join(dir, "long.json")
	if err := WriteFile(p, r); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Size() > MaxResultSize/3 {
		t.Errorf("a 1000-run result is %d bytes: too near the bound", st.Size())
	}
	if got, _, err := ReadFile(p); err != nil || len(got.Cases[0].Samples) != 2000 {
		t.Errorf("the 1000-run result: %v", err)
	}
}
