package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/littlebitlabs/minimal/fault"
)

// Database returns the database (projectID, typ, schema) with its DSN
// unsealed, or fault.NotFound. The DSN is for the process's own use (a
// connection test); callers that answer clients must drop it.
func (s *Store) Database(ctx context.Context, projectID, typ, schema string) (Database, error) {
	var d Database
	var sealed string
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT `+databaseCols+` FROM databases WHERE project_id = ? AND type = ? AND schema_name = ?`,
		projectID, typ, schema).Scan(&d.ID, &d.ProjectID, &d.Type, &d.Schema, &sealed, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Database{}, fault.New(fault.NotFound, "database %s/%s not found", typ, schema)
	}
	if err != nil {
		return Database{}, dbErr(err, "store: read database")
	}
	d.CreatedAt, d.UpdatedAt = fromNanos(created), fromNanos(updated)
	plain, err := s.Unseal(sealed)
	if err != nil {
		return Database{}, fault.Wrap(fault.KindOf(err), err, "store: DSN of database %s/%s cannot be decrypted", typ, schema)
	}
	d.DSN = string(plain)
	return d, nil
}

// SetDatabaseDSN replaces the DSN of the database (projectID, typ, schema),
// sealing it, and returns the database as stored. An empty DSN is
// fault.Invalid; an absent database fault.NotFound. Servers reopen the
// source when they see the change counter move.
func (s *Store) SetDatabaseDSN(ctx context.Context, projectID, typ, schema, dsn string) (Database, error) {
	if dsn == "" {
		return Database{}, fault.New(fault.Invalid, "database DSN is empty")
	}
	sealed, err := s.Seal([]byte(dsn))
	if err != nil {
		return Database{}, err
	}
	_, stamp := now()
	err = s.write(ctx, "store: update database", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE databases SET dsn_cipher = ?, updated_at = ? WHERE project_id = ? AND type = ? AND schema_name = ?`,
			sealed, stamp, projectID, typ, schema)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "database %s/%s not found", typ, schema))
	})
	if err != nil {
		return Database{}, err
	}
	return s.Database(ctx, projectID, typ, schema)
}
