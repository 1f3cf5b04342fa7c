package dialects

import (
	"context"
	"database/sql"
)

// Runner is an optional ability of a Source: running statements an
// operator wrote rather than plans the gateway rendered — the custom APIs.
// The engine finds it by a type assertion on the Source; a type without it
// answers a custom API call with fault.Unsupported.
//
// A statement's SQL comes from a definition checked by package custom; its
// Args are the caller's values, already validated against their declared
// types: nil, string (text, and the text form of number, date, timestamp
// and uuid values), int64 or bool. They are bound, never spliced. Names in
// the SQL that are not schema-qualified resolve in the Source's schema.
type Runner interface {
	// Placeholder returns the text of the n-th (1-based) bound argument in
	// this database's SQL: "$1" for PostgreSQL, "?" for MySQL.
	Placeholder(n int) string
	// RunRead runs one statement in a read-only transaction and streams
	// its rows; closing the rows ends the transaction. A statement that
	// tries to write fails.
	RunRead(ctx context.Context, st Stmt) (Rows, error)
	// RunWrite runs the statements in order in one transaction and commits
	// only when every one succeeded; RowsAffected is their sum. On any
	// error nothing is written.
	RunWrite(ctx context.Context, stmts []Stmt) (WriteResult, error)
}

// MapErrRows wraps rows so that the errors of Err and Close pass through
// mapErr: a Runner names, say, a read statement's attempt to write.
func MapErrRows(rows Rows, mapErr func(error) error) Rows { return &errRows{rows, mapErr} }

type errRows struct {
	Rows
	mapErr func(error) error
}

func (r *errRows) Err() error   { return r.mapErr(r.Rows.Err()) }
func (r *errRows) Close() error { return r.mapErr(r.Rows.Close()) }

// ExecTx runs stmts in order in tx and commits when every one succeeded,
// summing their RowsAffected: the write of a database/sql Runner. Errors go
// through mapErr; the caller rolls tx back (a no-op after the commit).
func ExecTx(ctx context.Context, tx *sql.Tx, stmts []Stmt, mapErr func(error) error) (WriteResult, error) {
	var res WriteResult
	for _, st := range stmts {
		r, err := tx.ExecContext(ctx, st.SQL, st.Args...)
		if err != nil {
			return WriteResult{}, mapErr(err)
		}
		n, err := r.RowsAffected()
		if err != nil {
			return WriteResult{}, mapErr(err)
		}
		res.RowsAffected += n
	}
	if err := tx.Commit(); err != nil {
		return WriteResult{}, mapErr(err)
	}
	return res, nil
}
