package topo

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"
)

// TestRetryDump: an interrupted dump is read again until it is whole, up to dumpAttempts
// times; other errors are returned at once.
func TestRetryDump(t *testing.T) {
	other := errors.New("permission denied")
	for _, tc := range []struct {
		name        string
		interrupted int   // reads the kernel interrupts before a whole one
		fail        error // what a whole read returns
		want        []string
		wantErr     error
		wantReads   int
	}{
		{"whole at once", 0, nil, []string{"eth0"}, nil, 1},
		{"interrupted twice", 2, nil, []string{"eth0"}, nil, 3},
		{"always interrupted", 99, nil, []string{"partial"}, netlink.ErrDumpInterrupted, dumpAttempts},
		{"another error", 0, other, nil, other, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := 0
			got, err := retryDump(func() ([]string, error) {
				reads++
				if reads <= tc.interrupted {
					return []string{"partial"}, netlink.ErrDumpInterrupted
				}
				if tc.fail != nil {
					return nil, tc.fail
				}
				return []string{"eth0"}, nil
			})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || reads != tc.wantReads || len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("got %v, %v after %d reads; want %v, %v after %d", got, err, reads, tc.want, tc.wantErr, tc.wantReads)
			}
		})
	}
}
