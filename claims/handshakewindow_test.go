package claims

import (
	"testing"

	"github.com/nsperf/nsperf/results"
)

// TestHandshakeWindows: a window a handshake's last ACK announces is the handshake window in
// bytes, however the author writes it (a sentence, an arrow, rows under a heading, sizes in
// KiB); a congestion window, a window of time, or a window without a handshake is not.
func TestHandshakeWindows(t *testing.T) {
	for _, c := range []struct {
		name, body    string
		before, after float64 // 0: not a handshake window
	}{
		{"a sentence", "With initrwnd 100 on the client's route, the receive window in the third ACK of the handshake went from 64256 to 144640 bytes.\n", 64256, 144640},
		{"an arrow in KiB", "SYN-ACK sent, then the client's last ACK: rwnd 62K -> 140K\n", 62 * 1024, 140 * 1024},
		{"rows under a heading", "Window announced by the final ACK of the 3WHS (bytes):\n\n  base     64000\n  patched  128000\n", 64000, 128000},
		{"a table of runs", "Initial receive window seen in tcpdump after the handshake:\n\n           run1    run2\n  before   29200   29200\n  after    58400   58400\n", 29200, 58400},
		{"a congestion window", "During the handshake the cwnd went from 10 to 40 segments and the window from 14480 to 57920 bytes.\n", 0, 0},
		{"a window of time", "Over a window of 10 seconds after the SYN flood, the rate went from 41230 to 44871.\n", 0, 0},
		{"no handshake", "The receive window of a bulk flow grows from 65536 to 6291456 bytes.\n", 0, 0},
		{"a scale, not a size", "The window scale in the SYN went from 7 to 9.\n", 0, 0},
	} {
		windows, all := claimsOf(t, c.name, c.body, results.HandshakeWindow)
		if c.before == 0 {
			if len(windows) > 0 {
				t.Errorf("%s: read as a handshake's window: %+v", c.name, windows)
			}
			continue
		}
		if len(windows) != 1 {
			t.Errorf("%s: %d handshake windows, want 1: %+v", c.name, len(windows), all)
			continue
		}
		got := windows[0]
		if got.Unit != "bytes" || got.Metric != "" || got.Before.Median != c.before || got.After.Median != c.after || !Measurable(got) {
			t.Errorf("%s: %s %s %v -> %v, want bytes %v -> %v", c.name, got.Quantity, got.Unit, got.Before.Median, got.After.Median, c.before, c.after)
		}
	}
}

// claimsOf reads a message of body under a Subject of its own and returns its claims of
// quantity, and all of them.
func claimsOf(t *testing.T, name, body, quantity string) (of, all []Claim) {
	t.Helper()
	r, err := Read(name, []byte("Subject: [PATCH net] tcp: a fix\n\n"+body+"\nSigned-off-by: A <a@example.org>\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Claims {
		if c.Quantity == quantity {
			of = append(of, c)
		}
	}
	return of, r.Claims
}
