package ma

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
)

// restoreTimeout bounds the USE that gives a pinned connection its default
// database back; a connection that does not answer in time is discarded.
const restoreTimeout = 5 * time.Second

// Placeholder returns "?": MySQL's placeholders are not numbered.
func (s *Source) Placeholder(int) string { return "?" }

// RunRead runs an operator's statement in a READ ONLY transaction (START
// TRANSACTION READ ONLY) on one connection whose default database is the
// source's schema, and streams its rows; closing the rows rolls the
// transaction back and hands the connection back to the pool.
//
// The server refuses a write to a table in a READ ONLY transaction (error
// 1792), which is reported as a fault of the definition. (MySQL still
// lets such a transaction write TEMPORARY tables, which no other session
// sees.)
//
// Arguments are bound: with arguments the statement is prepared on the
// connection, run and closed (custom statements bypass the statement
// cache, whose statements are prepared on any connection of the pool);
// without, it goes as one text query. Either way one statement only: the
// driver never enables multi-statements (Open forces it off), so a ';'
// followed by a second statement is a syntax error.
func (s *Source) RunRead(ctx context.Context, st dialects.Stmt) (dialects.Rows, error) {
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	qctx, cancel := s.bound(ctx)
	// Errors are mapped before cancel ends qctx, which would make them
	// look like timeouts.
	conn, done, err := s.pin(qctx)
	if err != nil {
		err = s.err(qctx, err)
		cancel()
		return nil, err
	}
	tx, err := conn.BeginTx(qctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		err = s.err(qctx, err)
		done()
		cancel()
		return nil, err
	}
	ended := false
	end := func() {
		if !ended {
			ended = true
			_ = tx.Rollback()
			done()
		}
	}
	rs, err := tx.QueryContext(qctx, st.SQL, st.Args...)
	if err != nil {
		err = readOnlyErr(s.err(qctx, err))
		end()
		cancel()
		return nil, err
	}
	r, err := s.newRows(qctx, rs, end, nil)
	if err != nil {
		end() // newRows has closed rs
		cancel()
		return nil, readOnlyErr(err)
	}
	r.cancel = cancel
	return dialects.MapErrRows(r, readOnlyErr), nil
}

// RunWrite runs the statements in order in one transaction, on one
// connection whose default database is the source's schema, and commits
// only if all succeed; RowsAffected sums the statements' counts (an UPDATE
// counts the rows it matched, as everywhere in this package). Errors are
// mapped as for the gateway's own writes: a duplicate key is a Conflict,
// a CHECK, NOT NULL or foreign key violation Invalid.
//
// Only statements on transactional tables (InnoDB) are undone by the
// rollback; a statement that commits implicitly (DDL) is not, which is why
// package custom accepts only data statements in a write.
func (s *Source) RunWrite(ctx context.Context, stmts []dialects.Stmt) (dialects.WriteResult, error) {
	if s.closed.Load() {
		return dialects.WriteResult{}, fault.New(fault.Unavailable, "database source is closed")
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	conn, done, err := s.pin(ctx)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	defer done()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit; runs before done
	return dialects.ExecTx(ctx, tx, stmts, func(err error) error { return s.err(ctx, err) })
}

// pin takes one connection from the pool for a custom statement's
// transaction, its default database the source's schema, so that names
// not qualified resolve there. When the schema is the DSN's database,
// every connection already has it; otherwise the connection is switched
// with USE (the schema is checked configuration, quoted as any
// identifier) and done switches it back to the DSN's database before it
// returns to the pool, or discards it when that fails or the DSN names
// none.
func (s *Source) pin(ctx context.Context) (conn *sql.Conn, done func(), err error) {
	conn, err = s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if s.schema == s.dsnDB {
		return conn, func() { _ = conn.Close() }, nil
	}
	use, err := useSQL(s.schema)
	if err == nil {
		_, err = conn.ExecContext(ctx, use)
	}
	if err != nil {
		discard(conn)
		return nil, nil, err
	}
	return conn, func() {
		back, err := useSQL(s.dsnDB)
		if s.dsnDB != "" && err == nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
			_, err = conn.ExecContext(rctx, back)
			cancel()
			if err == nil {
				_ = conn.Close()
				return
			}
		}
		discard(conn)
	}, nil
}

// useSQL is the USE statement that makes db the default database.
func useSQL(db string) (string, error) {
	var b sqlgen.Builder
	b.Init(&mariaDB, nil)
	b.Str("USE ")
	b.Ident(db)
	st, err := b.Stmt()
	return st.SQL, err
}

// discard closes conn and keeps the pool from reusing its session.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// readOnlyErr names the failure of a read statement that tried to write:
// the definition is at fault, not the database (which mapErr reports as
// read-only, i.e. unavailable).
func readOnlyErr(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == erReadOnlyTx {
		return fault.Wrap(fault.Internal, err, "a read custom API's statement tried to write")
	}
	return err
}

var _ dialects.Runner = (*Source)(nil)
