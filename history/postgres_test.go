package history

import (
	"path/filepath"
	"testing"

	"github.com/nsperf/nsperf/testkit/testenv"
)

// TestPostgres holds PostgreSQL to what SQLite does: the same suite gives the same output,
// and two processes writing at once both land.
func TestPostgres(t *testing.T) {
	dsn := testenv.PostgresServer(t)
	got := suite(t, dsn)
	want := suite(t, filepath.Join(t.TempDir(), "history.db"))
	if got != want {
		t.Errorf("PostgreSQL printed\n%s\nSQLite printed\n%s", got, want)
	}
	concurrentWriters(t, dsn)
}
