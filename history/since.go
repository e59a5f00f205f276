package history

import (
	"fmt"
	"time"
)

// ParseSince reads history list's --since: a date (2026-11-30) or an RFC 3339 time.
func ParseSince(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a date (2026-11-30) or RFC 3339 time", s)
}
