package pg

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// setSchemaSQL makes names that are not schema-qualified resolve in the
// source's schema for the rest of the transaction (pg_temp last, so no
// temporary table can shadow a table). The schema travels as a bound value.
const setSchemaSQL = `SELECT set_config('search_path', quote_ident($1) || ', pg_temp', true)`

// Placeholder returns "$n".
func (s *Source) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

// RunRead runs an operator's statement in a READ ONLY transaction with the
// search path set to the source's schema, and streams its rows; closing the
// rows ends the transaction.
//
// Arguments are sent in the text format (see textArgs), so each takes the
// type PostgreSQL infers from where its placeholder stands, as in a
// prepared statement. Statements always go through the extended protocol:
// one statement per call, never several separated by ';'.
func (s *Source) RunRead(ctx context.Context, st dialects.Stmt) (dialects.Rows, error) {
	ctx, cancel := s.bound(ctx) // released when the rows close
	// Errors are mapped before cancel ends ctx, which would make them look
	// like timeouts.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		err = s.err(ctx, err)
		cancel()
		return nil, err
	}
	end := func() {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		cancel()
	}
	if _, err := tx.Exec(ctx, setSchemaSQL, s.schema); err != nil {
		err = s.err(ctx, err)
		end()
		return nil, err
	}
	r, err := s.query(ctx, tx, dialects.Stmt{SQL: st.SQL, Args: textArgs(st.Args)})
	if err != nil {
		end()
		return nil, readOnlyErr(err)
	}
	return &txRows{rows: r, end: end}, nil
}

// RunWrite runs the statements in order in one transaction with the search
// path set to the source's schema, and commits only if all succeed. Rows a
// statement returns (RETURNING) are read and dropped; RowsAffected sums the
// statements' counts.
func (s *Source) RunWrite(ctx context.Context, stmts []dialects.Stmt) (dialects.WriteResult, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // no-op after Commit
	if _, err := tx.Exec(ctx, setSchemaSQL, s.schema); err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	var res dialects.WriteResult
	for _, st := range stmts {
		// Query, not Exec: Exec without arguments would use the simple
		// protocol, which runs several ';'-separated statements.
		r, err := s.query(ctx, tx, dialects.Stmt{SQL: st.SQL, Args: textArgs(st.Args)})
		if err != nil {
			return dialects.WriteResult{}, err
		}
		for r.Next() {
		}
		if err := r.Close(); err != nil {
			return dialects.WriteResult{}, err
		}
		res.RowsAffected += r.rows.CommandTag().RowsAffected()
	}
	if err := tx.Commit(ctx); err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	return res, nil
}

// textArgs turns the neutral values of a custom call into text, so that
// PostgreSQL parses each with the input function of the type it inferred
// for the placeholder: an integer compared with a bigint column or
// concatenated to text works either way. nil stays NULL.
func textArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil, string:
			out[i] = v
		case int64:
			out[i] = strconv.FormatInt(v, 10)
		case bool:
			out[i] = strconv.FormatBool(v)
		default:
			// The engine sends only the types above; anything else goes to
			// pgx as it is.
			out[i] = v
		}
	}
	return out
}

// readOnlyErr names the failure of a read statement that tried to write:
// the definition is at fault, not the database (which mapErr would report
// as read-only, i.e. unavailable).
func readOnlyErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "25006" {
		return fault.Wrap(fault.Internal, err, "a read custom API's statement tried to write")
	}
	return err
}

// txRows ends a read transaction when its rows are closed.
type txRows struct {
	rows   *rows
	end    func()
	closed bool
}

func (r *txRows) Columns() []dialects.Column { return r.rows.Columns() }
func (r *txRows) Next() bool                 { return r.rows.Next() }
func (r *txRows) Values() ([]any, error)     { return r.rows.Values() }
func (r *txRows) Err() error                 { return readOnlyErr(r.rows.Err()) }

func (r *txRows) Close() error {
	err := r.rows.Close()
	if !r.closed {
		r.closed = true
		r.end()
	}
	return readOnlyErr(err)
}

var (
	_ dialects.Runner = (*Source)(nil)
	_ dialects.Rows   = (*txRows)(nil)
)
