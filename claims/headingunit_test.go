package claims

import "testing"

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
