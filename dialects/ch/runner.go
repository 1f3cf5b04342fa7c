package ch

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// readOnlySettings make the server refuse any statement that writes or
// changes a setting (readonly = 1) while a read custom API runs.
var readOnlySettings = clickhouse.Settings{"readonly": 1}

// Placeholder returns "?", which clickhouse-go replaces by the value,
// formatted and escaped, outside quotes and comments.
func (s *Source) Placeholder(int) string { return "?" }

// RunRead runs an operator's statement with the setting readonly = 1, so
// the server refuses a write (and a change of setting), and streams its
// rows. ClickHouse has no transactions: the statement reads what the
// table holds while it runs.
//
// Names not qualified resolve in the source's schema: the statement runs
// on connections whose database is the schema (see runConn). Arguments are
// bound by the driver: each '?' outside quotes and comments becomes the
// value as a literal, formatted and escaped (an int64 as a number, a bool
// as 1 or 0, nil as NULL, a string quoted). The native protocol carries
// one statement per query: the server refuses a ';' followed by another.
func (s *Source) RunRead(ctx context.Context, st dialects.Stmt) (dialects.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, s.err(ctx, err)
	}
	conn, err := s.runConn(ctx)
	if err != nil {
		return nil, err
	}
	qctx, stop, abort := s.bounded(ctx, s.statementLimit(), readOnlySettings)
	cr, err := conn.Query(qctx, st.SQL, st.Args...)
	if err != nil {
		err = s.failBounded(ctx, qctx, "", err)
		stop()
		return nil, readOnlyErr(err)
	}
	r, err := s.newRows(ctx, qctx, stop, abort, "", cr)
	if err != nil {
		return nil, readOnlyErr(err)
	}
	return dialects.MapErrRows(r, readOnlyErr), nil
}

// RunWrite runs one statement. ClickHouse has no transactions, so a write
// of several statements, which could not be all or nothing, is refused
// (Unsupported) before anything runs.
//
//   - An INSERT is one block, which a MergeTree table writes as one part,
//     whole or not at all. On ClickHouse 18.x write it as INSERT … SELECT
//     ?, ?: an INSERT … VALUES waits, over the native protocol, for data
//     blocks the client never sends, until the statement times out.
//     RowsAffected is the count of rows the server reports written, 0 when
//     it reports none (servers before 19.x do not).
//   - An ALTER TABLE … UPDATE/DELETE is a mutation, applied in the
//     background: RunWrite waits, as Write does, until every mutation of
//     the schema submitted no later than it is done, so a read after it
//     sees the change; past the statement timeout (a minute without one)
//     it answers Timeout and the mutation may still be applied later.
//     RowsAffected is 0: the rows a statement the gateway did not render
//     will change are unknowable beforehand. (Package custom accepts only
//     INSERT, UPDATE and DELETE statements today, so no definition holds
//     an ALTER yet.)
//
// Errors are mapped as for the gateway's own writes.
func (s *Source) RunWrite(ctx context.Context, stmts []dialects.Stmt) (dialects.WriteResult, error) {
	if len(stmts) != 1 {
		return dialects.WriteResult{}, fault.New(fault.Unsupported,
			"ClickHouse has no transactions: a custom API write on ch must be a single statement, got %d", len(stmts))
	}
	if err := ctx.Err(); err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	conn, err := s.runConn(ctx)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	st := stmts[0]
	wctx, run, stop := s.boundedWrite(ctx, "")
	defer stop()
	var wrote atomic.Uint64
	err = run(func(qctx context.Context) error {
		qctx = clickhouse.Context(qctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { wrote.Add(p.WroteRows) }))
		return conn.Exec(qctx, st.SQL, st.Args...)
	})
	if err != nil {
		return dialects.WriteResult{}, err
	}
	if !isAlter(st.SQL) {
		return dialects.WriteResult{RowsAffected: int64(min(wrote.Load(), 1<<63-1))}, nil
	}
	if err := s.waitMutations(ctx, wctx, run, conn, "", pendingInSchemaSQL, s.schema); err != nil {
		return dialects.WriteResult{}, err
	}
	return dialects.WriteResult{}, nil
}

// pendingInSchemaSQL counts the schema's mutations not yet done that were
// submitted no later than ours (a custom statement's table is not known
// here, so every table of the schema counts).
const pendingInSchemaSQL = `SELECT count() FROM system.mutations
WHERE database = ? AND is_done = 0 AND toUInt32(create_time) <= ?`

// isAlter reports whether a statement is an ALTER (a mutation, for a
// custom write), skipping leading blanks and comments.
func isAlter(sql string) bool {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n\f(")
		switch {
		case strings.HasPrefix(sql, "--"), strings.HasPrefix(sql, "#"):
			i := strings.IndexByte(sql, '\n')
			if i < 0 {
				return false
			}
			sql = sql[i+1:]
		case strings.HasPrefix(sql, "/*"):
			i := strings.Index(sql, "*/")
			if i < 0 {
				return false
			}
			sql = sql[i+2:]
		default:
			return len(sql) >= 5 && strings.EqualFold(sql[:5], "alter")
		}
	}
}

// runConn returns the pool custom statements run on, whose connections'
// database is the source's schema, so that names not qualified resolve
// there: the source's own when the DSN names the schema, else a second
// pool with the same options, opened on first use and closed with the
// source. (ClickHouse fixes a connection's database at its handshake; the
// gateway's own statements qualify every name and do not care.)
func (s *Source) runConn(ctx context.Context) (driver.Conn, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.closed.Load() { // Close sets it before it takes runMu
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	if s.run != nil {
		return s.run, nil
	}
	if s.opts.Auth.Database == s.schema {
		s.run = s.conn
		return s.run, nil
	}
	o := *s.opts
	o.Auth.Database = s.schema
	conn, err := clickhouse.Open(&o)
	if err != nil {
		return nil, mapErr(ctx, err, false)
	}
	s.run = conn
	return conn, nil
}

// readOnlyErr names the failure of a read statement that tried to write:
// the definition is at fault, not the database.
func readOnlyErr(err error) error {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && ex.Code == codeReadonly {
		return fault.Wrap(fault.Internal, err, "a read custom API's statement tried to write")
	}
	return err
}

var _ dialects.Runner = (*Source)(nil)
