package mi

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/littlebitlabs/minimal/fault"
)

// The fixed layout of a mini-app table file, statement for statement as
// mini-app-mcp runs it on open (store.rs, row_history.rs). Schema fields are
// never columns: a row's fields live in the data JSON.
var layoutDDL = []string{
	`
    CREATE TABLE IF NOT EXISTS rows (
        id          TEXT    PRIMARY KEY,
        data        TEXT    NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    )
`,
	`
    CREATE TABLE IF NOT EXISTS _aliases (
        name           TEXT    PRIMARY KEY,
        filter         TEXT    NOT NULL,
        default_limit  INTEGER,
        description    TEXT,
        params_schema  TEXT
    )
`,
	`
    CREATE TABLE IF NOT EXISTS _row_history (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        table_name      TEXT    NOT NULL,
        row_id          TEXT    NOT NULL,
        version         INTEGER NOT NULL,
        recorded_at     INTEGER NOT NULL,
        op              TEXT    NOT NULL CHECK (op IN ('create','update','delete')),
        data_json       TEXT,
        prev_data_json  TEXT
    )
`,
	`
    CREATE UNIQUE INDEX IF NOT EXISTS idx_row_history_version
        ON _row_history(table_name, row_id, version)
`,
	`
    CREATE INDEX IF NOT EXISTS idx_row_history_lookup
        ON _row_history(table_name, row_id, recorded_at DESC)
`,
	`
    CREATE TABLE IF NOT EXISTS _row_history_archive (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        table_name      TEXT    NOT NULL,
        row_id          TEXT    NOT NULL,
        version_start   INTEGER NOT NULL,
        version_end     INTEGER NOT NULL,
        recorded_start  INTEGER NOT NULL,
        recorded_end    INTEGER NOT NULL,
        entry_count     INTEGER NOT NULL,
        format          TEXT    NOT NULL DEFAULT 'jsonl-zstd',
        blob            BLOB    NOT NULL
    )
`,
	`
    CREATE INDEX IF NOT EXISTS idx_row_history_archive_lookup
        ON _row_history_archive(table_name, row_id, recorded_start DESC)
`,
}

// nextVersionSQL numbers a history entry after both the raw entries and
// those mini-app-mcp has rolled into the archive.
const nextVersionSQL = `SELECT MAX(v) + 1 FROM (
    SELECT COALESCE(MAX(version), 0) AS v FROM _row_history WHERE table_name = ?1 AND row_id = ?2
    UNION ALL
    SELECT COALESCE(MAX(version_end), 0) AS v FROM _row_history_archive WHERE table_name = ?1 AND row_id = ?2
)`

const insertHistorySQL = `INSERT INTO _row_history (table_name, row_id, version, recorded_at, op, data_json, prev_data_json) VALUES (?, ?, ?, ?, ?, ?, NULL)`

// dbFile is where a table's rows live: <dir>/<name>/<name>.db.
func dbFile(dir, name string) string { return filepath.Join(dir, name, name+".db") }

// schemaFile is the table's schema: <dir>/<name>/schema.yaml.
func schemaFile(dir, name string) string { return filepath.Join(dir, name, "schema.yaml") }

// sqliteDSN is the modernc.org/sqlite DSN of a table file: WAL, a 5 s busy
// timeout, and write transactions that take the write lock when they begin
// (a deferred one could not wait for a concurrent writer under WAL).
func sqliteDSN(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + esc + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
}

// openTableDB opens (creating if absent) a table file and makes sure its
// layout exists, as mini-app-mcp does when it mounts the table.
func openTableDB(ctx context.Context, path string, maxConns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		db.SetMaxOpenConns(maxConns)
	}
	if err := ensureLayout(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func ensureLayout(ctx context.Context, db *sql.DB) error {
	for _, stmt := range layoutDDL {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	// Files from mini-app-mcp before aliases took parameters lack this
	// column; mini-app-mcp adds it on open, and so do we.
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('_aliases') WHERE name = 'params_schema'`).Scan(&n)
	if err != nil {
		return err
	}
	if n == 0 {
		if _, err := db.ExecContext(ctx, `ALTER TABLE _aliases ADD COLUMN params_schema TEXT`); err != nil {
			return err
		}
	}
	return nil
}

// tableNameRE is the name rule of mini-app-mcp's schema_create.
var tableNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// CreateTable creates the table name under the scope root dir as
// mini-app-mcp's schema_create does: it creates <dir>/<name>/<name>.db with
// the mini-app layout and writes schemaYAML to <dir>/<name>/schema.yaml
// (through a temporary file and a rename, so a reader never sees half a
// schema). The yaml must parse as a mini-app schema. An existing schema is
// a Conflict.
func CreateTable(dir, name string, schemaYAML []byte) error {
	dir = trimFileURL(dir)
	if dir == "" {
		return fault.New(fault.Invalid, "mi: directory is empty")
	}
	if !tableNameRE.MatchString(name) {
		return fault.New(fault.Invalid, "table name %q must match [A-Za-z0-9_-]+", name)
	}
	if _, err := parseSchema(schemaYAML); err != nil {
		return fault.Wrap(fault.Invalid, err, "schema parse error")
	}
	target := schemaFile(dir, name)
	if _, err := os.Stat(target); err == nil {
		return fault.New(fault.Conflict, "schema already exists: %s", name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fault.Wrap(fault.Internal, err, "io error")
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return fault.Wrap(fault.Internal, err, "io error")
	}
	db, err := openTableDB(context.Background(), dbFile(dir, name), 1)
	if err != nil {
		return storageErr(context.Background(), err)
	}
	if err := db.Close(); err != nil {
		return storageErr(context.Background(), err)
	}
	tmp := target + ".tmp"
	if err := os.WriteFile(tmp, schemaYAML, 0o644); err != nil {
		return fault.Wrap(fault.Internal, err, "io error")
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return fault.Wrap(fault.Internal, err, "io error")
	}
	return nil
}

// trimFileURL accepts a directory written as a path or a file:// URL.
func trimFileURL(dsn string) string {
	dsn = strings.TrimSpace(dsn)
	switch {
	case strings.HasPrefix(dsn, "file://"):
		dsn = strings.TrimPrefix(dsn, "file://")
	case strings.HasPrefix(dsn, "file:"):
		dsn = strings.TrimPrefix(dsn, "file:")
	}
	if dsn == "" {
		return ""
	}
	return filepath.Clean(dsn)
}

// storageErr classifies a database/sql or SQLite error: a lapsed context is
// Timeout, a locked database Unavailable, a constraint Conflict, the rest
// Internal. The driver error stays wrapped.
func storageErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fault.Wrap(fault.Timeout, err, "statement timed out")
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return fault.Wrap(fault.Unavailable, err, "request canceled")
	}
	var se interface{ Code() int }
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fault.Wrap(fault.Unavailable, err, "table file is busy")
		case sqlite3.SQLITE_CONSTRAINT:
			return fault.Wrap(fault.Conflict, err, "constraint violation")
		}
	}
	return fault.Wrap(fault.Internal, err, "storage error")
}

// notFound is the answer for a table that is not in the directory.
func notFound(name string) error {
	return fault.New(fault.NotFound, "table not found: %s", name)
}

var errSourceClosed = fault.New(fault.Unavailable, "mi: source is closed")
