package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/migrations"
)

// DBFile is the name of the SQLite file inside the data directory.
const DBFile = "control.db"

// dsnParams are applied to every SQLite connection: wait up to 5 s for a
// lock, write-ahead log so readers never block the writer, synchronous
// NORMAL (with WAL: a commit survives a crash of the process and never
// corrupts the file; only a power loss can take the last commits, and the
// journal of MCP calls is written twice per call, so a sync per commit
// would cost more than the call), enforce foreign keys, and start every
// transaction with BEGIN IMMEDIATE so two writers queue on the busy timeout
// instead of deadlocking on a lock upgrade.
const dsnParams = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"

// Store is a handle on the control-plane database. It is safe for
// concurrent use by several goroutines, and several Stores (in one process
// or several) may share one data directory or one PostgreSQL control plane.
type Store struct {
	db   *sql.DB
	keys *sealer
	dia  dialect
	// pgcfg is the PostgreSQL configuration, for LISTEN connections; nil
	// on SQLite.
	pgcfg *pgx.ConnConfig
	hub   hub
	// stmts holds the prepared statements of the hot paths, by query
	// (prepared.go).
	stmts sync.Map
	// journalQ feeds the journal writer (journal_writer.go), which closes
	// journalDone when it has stopped.
	journalQ      chan *journalOp
	journalDone   chan struct{}
	journalMu     sync.RWMutex // guards journalClosed and the closing of journalQ
	journalClosed bool
	// seen is the journal writer's memory of the sessions it has journaled
	// calls of (only the writer goroutine uses it; see applyJournal).
	seen map[string]Session
	// jconn is the journal writer's connection on SQLite (only the writer
	// goroutine uses it; see recordJournal).
	jconn journalConn
	// lastCall is the LastSeenAt (time.Time) the read-only calls accepted
	// by BeginReadCall gave each session, by id, before the journal
	// writer writes it; lastCalls counts its stores, to bound it.
	lastCall  sync.Map
	lastCalls atomic.Int64
	// checker groups the session checks of read-only calls
	// (session_check.go).
	checker sessionChecker
	// audit is the connection the audit log is written on (audit.go).
	audit auditConn
	// closing ends with Close (shut), and with it the Changes channels.
	closing context.Context
	shut    context.CancelFunc
}

// Open opens (creating it if needed) the control-plane store of dataDir:
// it creates the directory with mode 0700 and loads the master key (see
// package doc); then, when EnvControlDSN is set, it connects to that
// PostgreSQL database, else it opens <dataDir>/control.db; and it applies
// pending migrations.
func Open(ctx context.Context, dataDir string) (*Store, error) {
	return OpenControl(ctx, dataDir, os.Getenv(EnvControlDSN))
}

// OpenControl is Open with the control plane named by the caller instead
// of EnvControlDSN: controlDSN empty for the SQLite file in dataDir, or a
// PostgreSQL connection string. The data directory is used either way, for
// the master key file (when EnvMasterKey is unset) and by callers for
// token files.
func OpenControl(ctx context.Context, dataDir, controlDSN string) (*Store, error) {
	if dataDir == "" {
		return nil, fault.New(fault.Invalid, "store: data directory is empty")
	}
	if strings.ContainsAny(dataDir, "?#") {
		return nil, fault.New(fault.Invalid, "store: data directory %q must not contain '?' or '#'", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: create data directory %q", dataDir)
	}
	key, err := loadMasterKey(dataDir)
	if err != nil {
		return nil, err
	}
	keys, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	s := &Store{keys: keys, dia: sqliteDialect}
	if controlDSN = strings.TrimSpace(controlDSN); controlDSN != "" {
		s.dia = postgres
		if s.db, s.pgcfg, err = openPostgres(ctx, controlDSN); err != nil {
			return nil, err
		}
	} else if s.db, err = openSQLite(ctx, dataDir); err != nil {
		return nil, err
	}
	if err := migrate(ctx, s.db, s.dia); err != nil {
		s.db.Close()
		return nil, err
	}
	s.prepareHot(ctx)
	s.closing, s.shut = context.WithCancel(context.Background())
	s.journalQ, s.journalDone = make(chan *journalOp, journalQueue), make(chan struct{})
	s.seen = map[string]Session{}
	go s.runJournal()
	return s, nil
}

// Exists reports whether there is a control-plane store to open for
// dataDir without creating one: with EnvControlDSN set, the PostgreSQL
// control plane is taken to exist; otherwise <dataDir>/control.db must.
func Exists(dataDir string) bool {
	if strings.TrimSpace(os.Getenv(EnvControlDSN)) != "" {
		return true
	}
	_, err := os.Stat(filepath.Join(dataDir, DBFile))
	return err == nil
}

// sqliteConns bounds the SQLite connections: readers run in parallel under
// WAL, writers take turns whatever the number. The session checker, the
// audit writer (auditConn) and the journal writer (journalConn) each keep
// one of them once they have used it.
const sqliteConns = 8

// openSQLite opens <dataDir>/control.db, private to this user (privateDB).
func openSQLite(ctx context.Context, dataDir string) (*sql.DB, error) {
	path := filepath.Join(dataDir, DBFile)
	if err := privateDB(path); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: make %s private", DBFile)
	}
	db, err := sql.Open("sqlite", path+"?"+dsnParams)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: open %s", DBFile)
	}
	// Keep every connection open: opening one applies the pragmas and reads
	// the schema again, which costs more than most statements here.
	db.SetMaxOpenConns(sqliteConns)
	db.SetMaxIdleConns(sqliteConns)
	// The first connection turns a new file into WAL mode, which takes the
	// file's exclusive lock; SQLite answers SQLITE_BUSY at once, without
	// its busy timeout, to one of several processes (or Stores) doing so
	// together, as waiting could deadlock. The loser tries again.
	for deadline := time.Now().Add(openBusyWait); ; {
		err := db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		if !sqliteBusy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, dbErr(err, "store: open %s", DBFile)
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, dbErr(ctx.Err(), "store: open %s", DBFile)
		case <-time.After(openBusyPause):
		}
	}
}

// openSQLite retries a first connection SQLite refused as busy every
// openBusyPause for openBusyWait, the busy timeout of the connections.
const (
	openBusyWait  = 5 * time.Second
	openBusyPause = 10 * time.Millisecond
)

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY (of any extended
// kind).
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// privateDB makes the SQLite file path and its companions mode 0600,
// whatever the process's umask: it creates the file (empty, which SQLite
// takes for an empty database) when absent, and tightens an existing one
// and its -wal, -shm and -journal files (written 0644 by older versions).
// SQLite creates the -wal, -shm and -journal files with the mode of the
// database file, so they are 0600 from then on.
func privateDB(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Backend names the control plane's database: "SQLite" or "PostgreSQL".
func (s *Store) Backend() string { return s.dia.name }

// Ping checks that the control plane answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return dbErr(err, "store: ping the %s control plane", s.dia.name)
	}
	return nil
}

// Close releases the database handle and closes the Changes channels. The
// Store must not be used after.
func (s *Store) Close() error {
	s.shut()
	s.closeJournal()
	s.checker.closeRaw()
	s.audit.close()
	s.closeStmts()
	if err := s.db.Close(); err != nil {
		return fault.Wrap(fault.Internal, err, "store: close")
	}
	return nil
}

// SchemaVersion reports the highest migration version applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, dbErr(err, "store: read schema version")
	}
	return v, nil
}

// migrate creates schema_migrations if needed and applies every pending
// migration, each in its own transaction together with its record. It runs
// on one connection, inside the dialect's migration lock when it has one.
func migrate(ctx context.Context, db *sql.DB, d dialect) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return dbErr(err, "store: migrate")
	}
	defer conn.Close()
	if d.migrateLock != "" {
		if _, err := conn.ExecContext(ctx, d.migrateLock); err != nil {
			return dbErr(err, "store: take the migration lock")
		}
		defer func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, uerr := conn.ExecContext(uctx, d.migrateUnlock); uerr != nil {
				// Never hand a connection that may still hold the lock back
				// to the pool: dropping it ends its session and the lock.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	_, err = conn.ExecContext(ctx, createSchemaMigrations)
	if err != nil {
		return dbErr(err, "store: create schema_migrations")
	}
	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range migrations.All() {
		if applied[m.Version] {
			continue
		}
		if err := applyMigration(ctx, conn, d, m); err != nil {
			return err
		}
	}
	return nil
}

// createSchemaMigrations creates the record of applied migrations.
const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at BIGINT  NOT NULL
)`

func appliedVersions(ctx context.Context, q querier) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, dbErr(err, "store: read schema_migrations")
	}
	defer rows.Close()
	out := make(map[int]bool)
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, dbErr(err, "store: read schema_migrations")
		}
		out[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "store: read schema_migrations")
	}
	return out, nil
}

// migrationBackend is the name migrations give d's backend (see
// migrations.Migration.Only).
func migrationBackend(d dialect) string {
	if d.name == postgres.name {
		return migrations.PostgreSQL
	}
	return migrations.SQLite
}

// applyMigration runs m unless another process applied it since we looked:
// the check is repeated inside the write transaction, which BEGIN IMMEDIATE
// makes exclusive among writers on SQLite (on PostgreSQL the advisory lock
// taken by migrate already does). A migration of the other backend only is
// recorded without running.
func applyMigration(ctx context.Context, conn *sql.Conn, d dialect, m migrations.Migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err, "store: migration %04d_%s", m.Version, m.Name)
	}
	defer tx.Rollback()
	done, err := exists(ctx, tx, `SELECT 1 FROM schema_migrations WHERE version = ?`, m.Version)
	if err != nil {
		return dbErr(err, "store: migration %04d_%s", m.Version, m.Name)
	}
	if done {
		return nil
	}
	if m.For(migrationBackend(d)) {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return dbErr(err, "store: migration %04d_%s", m.Version, m.Name)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixNano()); err != nil {
		return dbErr(err, "store: record migration %04d_%s", m.Version, m.Name)
	}
	if err := tx.Commit(); err != nil {
		return dbErr(err, "store: commit migration %04d_%s", m.Version, m.Name)
	}
	return nil
}

// write runs fn in a transaction, bumps the change counter in the same
// transaction and commits. An error from fn rolls everything back; errors
// that are not already *fault.Error are classified by dbErr.
//
// The counter moves first, before fn: on PostgreSQL its row lock makes
// write transactions take turns from there to commit, as BEGIN IMMEDIATE
// does on SQLite, and under READ COMMITTED every statement of fn then sees
// all the writes committed before — so fn's checks (absent, present) still
// hold when it commits. The dialect's notification goes out at commit.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err, "%s", op)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE changes SET seq = seq + 1 WHERE id = 1`); err != nil {
		return dbErr(err, "%s", op)
	}
	if err := fn(tx); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return err
		}
		return dbErr(err, "%s", op)
	}
	if s.dia.notify != "" {
		if _, err := tx.ExecContext(ctx, s.dia.notify); err != nil {
			return dbErr(err, "%s", op)
		}
	}
	if err := tx.Commit(); err != nil {
		return dbErr(err, "%s", op)
	}
	s.hub.poke()
	return nil
}

// ChangeSeq returns the change counter. It only ever grows; any write to the
// store moves it. Polling it is one indexed single-row read.
func (s *Store) ChangeSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.QueryRowContext(ctx, `SELECT seq FROM changes WHERE id = 1`).Scan(&seq); err != nil {
		return 0, dbErr(err, "store: read change counter")
	}
	return seq, nil
}

// Bootstrapped reports whether at least one org exists.
func (s *Store) Bootstrapped(ctx context.Context) (bool, error) {
	ok, err := exists(ctx, s.db, `SELECT 1 FROM orgs LIMIT 1`)
	if err != nil {
		return false, dbErr(err, "store: read orgs")
	}
	return ok, nil
}

// SQLSTATE codes of PostgreSQL errors that dbErr classifies.
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	// pgClassConnection is the class of connection exceptions (08…);
	// pgShuttingDown covers admin, crash and startup shutdown (57P01-3).
	pgClassConnection = "08"
	pgShuttingDown    = "57P0"
)

// querier is what *sql.DB, *sql.Conn and *sql.Tx have in common.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// exists reports whether query returns at least one row.
func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// mustAffect turns "no row changed" into a NotFound error.
func mustAffect(res sql.Result, notFound *fault.Error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound
	}
	return nil
}

// dbErr classifies a database error: a uniqueness violation (SQLite's
// constraint error, PostgreSQL's SQLSTATE 23505) is Conflict; on PostgreSQL
// a serialization failure or deadlock, a server shutting down or a
// connection that cannot be made or broke is Unavailable (worth a retry);
// a passed deadline is Timeout, a cancelled context Unavailable, the rest
// Internal. The driver's text stays in the cause, not in the message.
func dbErr(err error, format string, args ...any) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fault.Wrap(fault.Conflict, err, format+": already exists", args...)
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == pgUniqueViolation:
			return fault.Wrap(fault.Conflict, err, format+": already exists", args...)
		case pe.Code == pgSerializationFailure, pe.Code == pgDeadlockDetected:
			return fault.Wrap(fault.Unavailable, err, format+": concurrent update, try again", args...)
		case strings.HasPrefix(pe.Code, pgClassConnection), strings.HasPrefix(pe.Code, pgShuttingDown):
			return fault.Wrap(fault.Unavailable, err, format+": control plane unavailable", args...)
		}
	}
	// The network between a replica and its PostgreSQL control plane: no
	// connection could be made (a connect timeout included), or one broke.
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) {
		return fault.Wrap(fault.Unavailable, err, format+": control plane unreachable", args...)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(fault.Timeout, err, format, args...)
	case errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Unavailable, err, format, args...)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fault.Wrap(fault.Unavailable, err, format+": control plane unreachable", args...)
	}
	return fault.Wrap(fault.Internal, err, format, args...)
}

// newID returns a fresh time-ordered UUID (version 7) as text.
func newID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "store: generate id")
	}
	return id.String(), nil
}

// now returns the current time truncated to what the database keeps
// (nanoseconds, no monotonic reading, UTC) and its stored form.
func now() (time.Time, int64) {
	n := time.Now().UnixNano()
	return time.Unix(0, n).UTC(), n
}

// fromNanos converts a stored timestamp back to a time.Time in UTC.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// boolInt is the stored form of a boolean.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
