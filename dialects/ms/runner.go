package ms

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// defaultSchemaSQL asks the server where names not qualified resolve: the
// database user's default schema (SQL Server has no per-session search
// path).
const defaultSchemaSQL = `SELECT SCHEMA_NAME() AS s`

// Placeholder returns "@pn", go-mssqldb's name of the n-th argument.
func (s *Source) Placeholder(n int) string { return "@p" + strconv.Itoa(n) }

// RunRead runs an operator's statement in a READ COMMITTED transaction and
// streams its rows; closing the rows rolls the transaction back. SQL Server
// has no READ ONLY transaction: a read definition's statement that writes
// is not refused, but whatever it wrote is rolled back with the
// transaction (and holds its locks until then).
//
// Names not qualified resolve in the database user's default schema,
// which no session setting can change: a call on a source whose schema is
// not that one is refused (Unsupported) before the statement runs, rather
// than reading another schema's table of the same name.
//
// Arguments are bound (sp_executesql). SQL Server runs a batch, so the
// rule of one statement per entry rests on package custom's check of the
// text, not on the server.
func (s *Source) RunRead(ctx context.Context, st dialects.Stmt) (dialects.Rows, error) {
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	qctx, cancel := s.bound(ctx)
	tx, err := s.begin(qctx)
	if err != nil {
		cancel()
		return nil, err
	}
	r, err := s.query(qctx, tx, st)
	if err != nil {
		_ = tx.Rollback()
		cancel()
		return nil, err
	}
	r.cancel = func() {
		_ = tx.Rollback()
		cancel()
	}
	return r, nil
}

// RunWrite runs the statements in order in one READ COMMITTED
// transaction and commits only if all succeed; RowsAffected sums the
// counts the server reports. Errors are mapped as for the gateway's own
// writes: a duplicate key is a Conflict, a CHECK or foreign key violation
// Invalid. Names resolve as for RunRead.
func (s *Source) RunWrite(ctx context.Context, stmts []dialects.Stmt) (dialects.WriteResult, error) {
	if s.closed.Load() {
		return dialects.WriteResult{}, fault.New(fault.Unavailable, "database source is closed")
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tx, err := s.begin(ctx)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	// A no-op after Commit; it may fail when the server has already rolled
	// back (a batch-aborting error): the work is undone either way.
	defer func() { _ = tx.Rollback() }()
	return dialects.ExecTx(ctx, tx, stmts, func(err error) error { return s.err(ctx, err) })
}

// begin starts a custom statement's transaction, once the server has
// shown that names not qualified resolve in the source's schema.
func (s *Source) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, s.err(ctx, err)
	}
	var def sql.NullString
	if err := tx.QueryRowContext(ctx, defaultSchemaSQL).Scan(&def); err != nil {
		_ = tx.Rollback()
		return nil, s.err(ctx, err)
	}
	if def.String != s.schema {
		_ = tx.Rollback()
		return nil, fault.New(fault.Unsupported,
			"custom APIs on SQL Server need the database user's default schema to be the source's: names resolve in %q, the source is %q",
			def.String, s.schema)
	}
	return tx, nil
}

var _ dialects.Runner = (*Source)(nil)
