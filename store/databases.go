package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// Database is a registered database connection of a project. DSN is the
// plaintext connection string: it is sealed before it is stored and
// unsealed when read, and never leaves the process through the store.
type Database struct {
	// ID is the store-assigned UUID; ignored by AddDatabase.
	ID string
	// ProjectID is the owning project.
	ProjectID string
	// Type is the dialect code: "pg", "ms", "ma", "ch", "mi", ….
	Type string
	// Schema is the schema exposed; (ProjectID, Type, Schema) is unique.
	Schema string
	// DSN is the connection string, in memory only.
	DSN string
	// CreatedAt and UpdatedAt are set by the store (UTC).
	CreatedAt, UpdatedAt time.Time
}

// Lock is an operator's CRUD mask on the tables matching Pattern in a
// project; effective rights are the token's key_type ANDed with every
// matching lock.
type Lock struct {
	// ID is the store-assigned UUID; ignored by AddLock.
	ID string
	// ProjectID is the owning project.
	ProjectID string
	// Pattern is "type[/schema[/table]]", one to three segments, each a
	// path.Match glob ("pg", "pg/public", "pg/*/audit_*"); unique within
	// the project.
	Pattern string
	// Mask is the 4-character CRUD mask allowed ("-r--" freezes writes).
	Mask string
}

// AddDatabase registers a database in a project, sealing its DSN, and
// returns it with ID and timestamps assigned. A malformed type or schema,
// or an empty DSN, is fault.Invalid; an unknown project fault.NotFound; an
// existing (project, type, schema) fault.Conflict.
func (s *Store) AddDatabase(ctx context.Context, d Database) (Database, error) {
	if err := checkDBType(d.Type); err != nil {
		return Database{}, err
	}
	if err := checkSchema(d.Schema); err != nil {
		return Database{}, err
	}
	if d.DSN == "" {
		return Database{}, fault.New(fault.Invalid, "database DSN is empty")
	}
	sealed, err := s.Seal([]byte(d.DSN))
	if err != nil {
		return Database{}, err
	}
	if d.ID, err = newID(); err != nil {
		return Database{}, err
	}
	var stamp int64
	d.CreatedAt, stamp = now()
	d.UpdatedAt = d.CreatedAt
	err = s.write(ctx, "store: add database", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, d.ProjectID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "database %s/%s is already registered in this project", d.Type, d.Schema),
			`SELECT 1 FROM databases WHERE project_id = ? AND type = ? AND schema_name = ?`, d.ProjectID, d.Type, d.Schema); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO databases (id, project_id, type, schema_name, dsn_cipher, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`, d.ID, d.ProjectID, d.Type, d.Schema, sealed, stamp, stamp)
		return err
	})
	if err != nil {
		return Database{}, err
	}
	return d, nil
}

const databaseCols = `id, project_id, type, schema_name, dsn_cipher, created_at, updated_at`

// Databases lists the databases of every project with DSNs unsealed,
// ordered by project, type and schema. A DSN that cannot be unsealed (wrong
// master key) fails the whole call.
func (s *Store) Databases(ctx context.Context) ([]Database, error) {
	return s.databases(ctx, `SELECT `+databaseCols+` FROM databases ORDER BY project_id, type, schema_name`)
}

// DatabasesOf lists the databases of one project with DSNs unsealed,
// ordered by type and schema. An unknown project yields an empty list.
func (s *Store) DatabasesOf(ctx context.Context, projectID string) ([]Database, error) {
	return s.databases(ctx, `SELECT `+databaseCols+` FROM databases WHERE project_id = ? ORDER BY type, schema_name`, projectID)
}

func (s *Store) databases(ctx context.Context, query string, args ...any) ([]Database, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbErr(err, "store: list databases")
	}
	type row struct {
		d      Database
		sealed string
	}
	scanned, err := collect(rows, func(r interface{ Scan(...any) error }) (row, error) {
		var x row
		var created, updated int64
		err := r.Scan(&x.d.ID, &x.d.ProjectID, &x.d.Type, &x.d.Schema, &x.sealed, &created, &updated)
		x.d.CreatedAt, x.d.UpdatedAt = fromNanos(created), fromNanos(updated)
		return x, err
	}, "store: list databases")
	if err != nil {
		return nil, err
	}
	out := make([]Database, 0, len(scanned))
	for _, x := range scanned {
		plain, err := s.Unseal(x.sealed)
		if err != nil {
			return nil, fault.Wrap(fault.KindOf(err), err, "store: DSN of database %s/%s cannot be decrypted", x.d.Type, x.d.Schema)
		}
		x.d.DSN = string(plain)
		out = append(out, x.d)
	}
	return out, nil
}

// RemoveDatabase unregisters the database (projectID, typ, schema). An
// absent one is fault.NotFound.
func (s *Store) RemoveDatabase(ctx context.Context, projectID, typ, schema string) error {
	return s.write(ctx, "store: remove database", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM databases WHERE project_id = ? AND type = ? AND schema_name = ?`,
			projectID, typ, schema)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "database %s/%s not found", typ, schema))
	})
}

const lockCols = `id, project_id, pattern, mask`

func scanLock(row interface{ Scan(...any) error }) (Lock, error) {
	var l Lock
	err := row.Scan(&l.ID, &l.ProjectID, &l.Pattern, &l.Mask)
	return l, err
}

// AddLock stores a lock and returns it with ID assigned. A malformed
// pattern or mask is fault.Invalid; an unknown project fault.NotFound; a
// pattern already locked in the project fault.Conflict.
func (s *Store) AddLock(ctx context.Context, l Lock) (Lock, error) {
	if err := checkPattern("lock pattern", l.Pattern); err != nil {
		return Lock{}, err
	}
	if err := checkMask("lock mask", l.Mask); err != nil {
		return Lock{}, err
	}
	var err error
	if l.ID, err = newID(); err != nil {
		return Lock{}, err
	}
	_, stamp := now()
	err = s.write(ctx, "store: add lock", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, l.ProjectID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "lock on %q already exists in this project", l.Pattern),
			`SELECT 1 FROM locks WHERE project_id = ? AND pattern = ?`, l.ProjectID, l.Pattern); err != nil {
			return err
		}
		if _, err := bumpPolicy(ctx, tx, l.ProjectID, 0); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO locks (id, project_id, pattern, mask, created_at) VALUES (?, ?, ?, ?, ?)`,
			l.ID, l.ProjectID, l.Pattern, l.Mask, stamp)
		return err
	})
	if err != nil {
		return Lock{}, err
	}
	return l, nil
}

// Locks lists the locks of a project, ordered by pattern.
func (s *Store) Locks(ctx context.Context, projectID string) ([]Lock, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+lockCols+` FROM locks WHERE project_id = ? ORDER BY pattern`, projectID)
	if err != nil {
		return nil, dbErr(err, "store: list locks")
	}
	return collect(rows, scanLock, "store: list locks")
}

// AllLocks lists the locks of every project, ordered by project and
// pattern, for a server reloading its caches.
func (s *Store) AllLocks(ctx context.Context) ([]Lock, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+lockCols+` FROM locks ORDER BY project_id, pattern`)
	if err != nil {
		return nil, dbErr(err, "store: list locks")
	}
	return collect(rows, scanLock, "store: list locks")
}

// RemoveLock deletes the lock on pattern in a project. An absent one is
// fault.NotFound.
func (s *Store) RemoveLock(ctx context.Context, projectID, pattern string) error {
	return s.write(ctx, "store: remove lock", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM locks WHERE project_id = ? AND pattern = ?`, projectID, pattern)
		if err != nil {
			return err
		}
		if err := mustAffect(res, fault.New(fault.NotFound, "lock on %q not found", pattern)); err != nil {
			return err
		}
		_, err = bumpPolicy(ctx, tx, projectID, 0)
		return err
	})
}
