package claims

import "testing"

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
		{"Mpkt/s", "pps", 1e6}, {"Mpackets/sec", "pps", 1e6}, {"kframes/s", "pps", 1e3},
		{"Krps", "trans/s", 1e3}, {"Mqps", "trans/s", 1e6}, {"t/s", "trans/s", 1}, {"kops/s", "trans/s", 1e3},
		{"10^6bits/second", "bit/s", 1e6}, {"μs", "us", 1}, {"microseconds", "us", 1}, {"nanoseconds", "us", 1e-3},
	} {
		u, ok := lookupUnit(c.written)
		if !ok || u.norm != c.norm || u.factor != c.factor {
			t.Errorf("%q: %+v %v, want %s x%g", c.written, u, ok, c.norm, c.factor)
		}
	}
	for _, word := range []string{"Mbits", "GB", "KiB", "ms/s", "flows/sec/core", "bytes", "pkts", "10^99bit/s", "Xbit/s"} {
		if u, ok := lookupUnit(word); ok && u.kind != "time" && u.kind != "packets" {
			t.Errorf("%q read as %+v", word, u)
		}
	}
}
