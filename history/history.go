// Package history keeps stored results in a database, so that runs can be listed, found again
// and followed over time: an embedded SQLite file by default (modernc.org/sqlite, pure Go), or
// a PostgreSQL database that a fleet of test machines shares (jackc/pgx). Both take the same
// schema, migrated by version, and the same queries. The result JSON files stay the source of
// truth: the history holds a copy of each result and the summary series read from it.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"modernc.org/sqlite" // registers "sqlite"
)

// EnvDB names the database when --db is not given.
const EnvDB = "NSPERF_DB"

// DefaultPath is where the SQLite history lives when neither --db nor NSPERF_DB names one:
// $XDG_DATA_HOME/nsperf/history.db, else ~/.local/share/nsperf/history.db.
func DefaultPath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "/root"
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "nsperf", "history.db")
}

// Resolve picks the database: --db, else NSPERF_DB, else DefaultPath.
func Resolve(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv(EnvDB); env != "" {
		return env
	}
	return DefaultPath()
}

// Error is a database that cannot be used: unreadable, corrupt, unreachable, or of a newer
// schema. It names the database and says what to do.
type Error struct {
	DB  string // the path or the URL without its password
	Err error
}

func (e *Error) Error() string { return "history " + e.DB + ": " + e.Err.Error() }

// wrap makes err an *Error of this database, with every password of its URL removed from the
// message (drivers quote the URL they could not use).
func (h *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	var he *Error
	if errors.As(err, &he) {
		return err
	}
	msg := scrub(err.Error(), h.secrets)
	if msg != err.Error() {
		err = errors.New(msg) // the cause's text held a password
	}
	return &Error{DB: h.name, Err: err}
}
func (e *Error) Unwrap() error { return e.Err }

// ErrNewerSchema is a database written by a newer nsperf: it is left as it is.
var ErrNewerSchema = errors.New("the database has a newer schema than this nsperf knows; use a newer nsperf (it is left unchanged)")

// DB is an open history.
type DB struct {
	db       *sql.DB
	name     string // for messages: the path, or the URL without its password
	postgres bool
	secrets  []string // what no message may print (passwords of the URL)
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// ErrNoHistory is an SQLite history that does not exist yet.
var ErrNoHistory = errors.New("no history here yet: complete runs record into it, and `nsperf history import FILE...` adds results")

// OpenExisting opens the history for reading: an SQLite file must exist already (reading
// creates none).
func OpenExisting(ctx context.Context, dsn string) (*DB, error) {
	if err := checkDSN(dsn); err != nil {
		return nil, &Error{DB: redact(dsn), Err: badDSN{err}}
	}
	if !IsPostgres(dsn) {
		if _, err := os.Lstat(dsn); errors.Is(err, os.ErrNotExist) {
			return nil, &Error{DB: dsn, Err: ErrNoHistory}
		}
	}
	return Open(ctx, dsn)
}

// Open opens the history at dsn (a file path, or postgres://...), creating an SQLite file and
// its directory when missing, and migrates its schema to the current version.
func Open(ctx context.Context, dsn string) (*DB, error) {
	h := &DB{name: redact(dsn), postgres: IsPostgres(dsn), secrets: secrets(dsn)}
	if err := checkDSN(dsn); err != nil {
		return nil, h.wrap(badDSN{err})
	}
	var err error
	if h.postgres {
		h.db, err = sql.Open("pgx", dsn)
	} else {
		if dir := filepath.Dir(dsn); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, h.wrap(err)
			}
		}
		h.db, err = sql.Open("sqlite", sqliteURI(dsn))
	}
	if err != nil {
		return nil, h.wrap(err)
	}
	// Switching a new file to WAL takes an exclusive lock and does not wait for it: a second
	// process opening the same new database at that moment gets SQLITE_BUSY at once. It
	// tries again, as the busy timeout would have it do.
	err = h.migrate(ctx)
	for deadline := time.Now().Add(30 * time.Second); busy(err) && time.Now().Before(deadline); err = h.migrate(ctx) {
		time.Sleep(waitlimit.Poll)
	}
	if err != nil {
		h.db.Close()
		if errors.Is(err, ErrNewerSchema) {
			return nil, h.wrap(err)
		}
		return nil, h.wrap(fmt.Errorf("%w (is it an nsperf history database? a corrupt SQLite file can be moved away; `nsperf history import` fills a new one from the result files)", err))
	}
	return h, nil
}

// busy reports an SQLite "database is locked" (SQLITE_BUSY and its extended codes).
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

// Close closes the database.
func (h *DB) Close() error { return h.db.Close() }

// Name is the database as messages name it.
func (h *DB) Name() string { return h.name }

// ErrBadDSN is a --db that is neither a usable path nor a postgres:// URL (a usage error).
var ErrBadDSN = errors.New("not a history database name")

type badDSN struct{ error }

func (badDSN) Is(target error) bool { return target == ErrBadDSN }

// checkDSN refuses what is neither a file path nor a postgres:// URL (a keyword DSN such as
// "host=db password=x" would become an SQLite file named after the password), an in-memory
// SQLite database (a history that keeps nothing), and an SQLite path that is neither a
// regular file nor a new one (a symlink, even a dangling one, a device such as /dev/null, a
// directory).
func checkDSN(dsn string) error {
	switch {
	case IsPostgres(dsn):
		authority := strings.SplitN(dsn[strings.Index(dsn, "://")+3:], "/", 2)[0]
		if strings.Count(authority, "@") > 1 {
			return errors.New("the URL's user information holds an unescaped @: write it as %40")
		}
		return nil
	case strings.Contains(dsn, "://"), strings.HasPrefix(dsn, "file:"):
		return errors.New("neither a file path nor a postgres:// URL: give a path for SQLite, or postgres://USER:PASSWORD@HOST/DB")
	case keywordDSN.MatchString(dsn):
		return errors.New("a keyword DSN (host=... dbname=...) is not taken: give it as a postgres:// URL")
	case dsn == ":memory:" || dsn == "":
		return errors.New("an in-memory database keeps nothing: give a file path")
	}
	st, err := os.Lstat(dsn)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("not a regular file (%s): give the path of an SQLite file, or of a new one", st.Mode().Type())
	}
	return nil
}

// keywordDSN matches libpq's keyword/value connection strings.
var keywordDSN = regexp.MustCompile(`(^|\s)(host|hostaddr|port|dbname|user|password|sslmode|service)\s*=`)

// sqliteURI is the URI modernc.org/sqlite opens a path with: the path escaped, so that ?, #
// and % in a file name are part of the name, never options. WAL lets readers go on while a run
// writes; the busy timeout makes two writers wait for each other instead of failing; immediate
// transactions take the write lock at BEGIN, so that two migrations or imports never deadlock
// on lock upgrades.
func sqliteURI(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return (&url.URL{Scheme: "file", Path: path}).String() + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(wal)&_txlock=immediate"
}

// keywordPassword is the password of a keyword DSN, which is refused, but named in the
// refusal.
var keywordPassword = regexp.MustCompile(`password\s*=\s*(\S+)`)

// secrets are the passwords a DSN carries: a postgres:// URL's, in its user information or
// its query, and a keyword DSN's.
func secrets(dsn string) []string {
	var out []string
	for _, m := range keywordPassword.FindAllStringSubmatch(dsn, -1) {
		out = append(out, m[1])
	}
	// Any URL's user information, not only a postgres:// one's: a URL refused for its scheme
	// (POSTGRES://, mysql://) is printed in the refusal.
	if !strings.Contains(dsn, "://") {
		return out
	}
	rest := dsn[strings.Index(dsn, "://")+3:]
	if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
		if _, pass, ok := strings.Cut(rest[:at], ":"); ok && pass != "" {
			out = append(out, pass)
			if p, err := url.PathUnescape(pass); err == nil && p != pass {
				out = append(out, p)
			}
		}
	}
	if _, query, ok := strings.Cut(dsn, "?"); ok {
		if v, err := url.ParseQuery(query); err == nil {
			for _, p := range v["password"] {
				if p != "" {
					out = append(out, p, url.QueryEscape(p))
				}
			}
		}
	}
	return out
}

// redact is a DSN without its passwords: the user information's and password= values, in
// place (a one-letter password must not blank every such letter of the text).
func redact(dsn string) string {
	out := keywordPassword.ReplaceAllString(dsn, "password=***")
	if i := strings.Index(out, "://"); i >= 0 {
		rest := out[i+3:]
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				out = out[:i+3] + user + ":***" + rest[at:]
			}
		}
	}
	return out
}

// scrub takes the passwords out of a message: where they stand as a password (":P@",
// "password=P"), and anywhere when they are long enough not to be a common word's letters.
func scrub(msg string, secrets []string) string {
	for _, p := range secrets {
		msg = strings.ReplaceAll(msg, ":"+p+"@", ":***@")
		msg = strings.ReplaceAll(msg, "password="+p, "password=***")
		if len(p) >= 6 {
			msg = strings.ReplaceAll(msg, p, "***")
		}
	}
	return msg
}

// q adapts a query written with ? placeholders to the database: PostgreSQL numbers them.
func (h *DB) q(query string) string {
	if !h.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrations are the schema, one step per version; a step never changes once released.
var migrations = []string{
	// 1: runs with their result JSON; the summary series of every run.
	`CREATE TABLE runs (
		run_id   TEXT NOT NULL,
		started  TEXT NOT NULL,
		scenario TEXT NOT NULL,
		sha256   TEXT NOT NULL,
		label    TEXT NOT NULL,
		kernel   TEXT NOT NULL,
		hostname TEXT NOT NULL,
		complete INTEGER NOT NULL,
		result   TEXT NOT NULL,
		PRIMARY KEY (run_id, started)
	);
	CREATE INDEX runs_by_scenario ON runs (scenario, started);
	CREATE TABLE series (
		run_id     TEXT NOT NULL,
		started    TEXT NOT NULL,
		case_label TEXT NOT NULL,
		workload   TEXT NOT NULL,
		metric     TEXT NOT NULL,
		state      TEXT NOT NULL,
		unit       TEXT NOT NULL,
		n          INTEGER NOT NULL,
		median     DOUBLE PRECISION NOT NULL,
		lo         DOUBLE PRECISION,
		hi         DOUBLE PRECISION,
		cv         DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (run_id, started, case_label, workload, metric, state)
	);
	CREATE INDEX series_by_item ON series (workload, metric, state, case_label)`,
	// 2: acknowledged change points; "" in case_label, workload or state matches any.
	`CREATE TABLE acks (
		run_id     TEXT NOT NULL,
		case_label TEXT NOT NULL,
		workload   TEXT NOT NULL,
		metric     TEXT NOT NULL,
		state      TEXT NOT NULL,
		reason     TEXT NOT NULL,
		acked      TEXT NOT NULL,
		PRIMARY KEY (run_id, case_label, workload, metric, state)
	)`,
	// 3: the clock a run measured on (results.Clock.Key): virtual-time and wall-clock figures
	// are series of their own. Every run recorded before it ran on the wall clock.
	`ALTER TABLE runs ADD COLUMN clock TEXT NOT NULL DEFAULT 'wall'`,
	// 4: how nsperf built the run's kernel (results.KernelBuild.Patch: with or without a
	// patch series, by its subjects), and the outcomes of the claims it reproduced
	// (results.Reproduction.Summary); "" where there is none and for runs before.
	`ALTER TABLE runs ADD COLUMN patch TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN claims TEXT NOT NULL DEFAULT ''`,
}

// SchemaVersion is the schema this nsperf writes.
var SchemaVersion = len(migrations)

// migrate brings the schema to SchemaVersion in one transaction that holds the database's
// write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock), so that two processes
// opening a new database at once migrate it once.
func (h *DB) migrate(ctx context.Context) error {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if h.postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7325601)`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS nsperf_schema (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var version int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM nsperf_schema`).Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO nsperf_schema (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w (schema %d; this nsperf knows %d)", ErrNewerSchema, version, SchemaVersion)
	}
	for v := version; v < SchemaVersion; v++ {
		for _, stmt := range strings.Split(migrations[v], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("schema version %d: %w", v+1, err)
			}
		}
	}
	if version < SchemaVersion {
		if _, err := tx.ExecContext(ctx, h.q(`UPDATE nsperf_schema SET version = ?`), SchemaVersion); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// timeFormat stores times so that they sort as text, in UTC.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}
