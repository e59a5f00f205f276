package testenv

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// PostgresServer starts a PostgreSQL server of its own for the test: a new cluster (initdb)
// in a temporary directory, run as the postgres user, listening on a unix socket only, with
// a database "nsperf". It is stopped and removed when the test ends, failed or not. Returns
// the DSN.
func PostgresServer(t *testing.T) string {
	t.Helper()
	RequireRoot(t) // the server runs as the postgres user
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		RequireTool(t, "initdb") // fails in CI, skips elsewhere: scripts/deps.sh installs postgresql
	}
	bin := filepath.Dir(bins[len(bins)-1])
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("no postgres user (the postgresql package makes it): %v", err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "nsperf-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	ownPostgres.Store(data, true)
	for _, d := range []string{data, sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(d, uid, gid)
	}
	os.Chmod(dir, 0o755)
	as := func(name string, args ...string) *exec.Cmd {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
	}
	if out, err := as("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// Registered before the start: a start that half-succeeds is stopped too.
	t.Cleanup(func() {
		if out, err := as("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Logf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	opts := "-c listen_addresses='' -k " + sock + " -c fsync=off"
	if out, err := as("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(data, "server.log"), "-w", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(data, "server.log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	if out, err := as("createdb", "-h", sock, "-U", "postgres", "nsperf").CombinedOutput(); err != nil {
		t.Fatalf("createdb: %v\n%s", err, out)
	}
	return "postgres:///nsperf?host=" + sock + "&user=postgres"
}
