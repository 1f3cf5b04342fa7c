package ms

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
)

// A scripted database/sql driver that answers as go-mssqldb does (the same
// Go types per column type, the same type names), so that Source's
// streaming, decoding, chunking and transactions are tested without a
// server. Only what Source uses is implemented.

// fakeResult is the answer to one statement.
type fakeResult struct {
	cols  []fakeCol
	rows  [][]driver.Value
	errAt int   // Next fails with err before row errAt (when err is set)
	err   error // also the statement's own error when errAt < 0
	n     int64 // rows affected, for Exec
}

type fakeCol struct {
	name, typ string
	nullable  bool
}

// fakeDB records what Source sent and answers from its script.
type fakeDB struct {
	mu     sync.Mutex
	script func(query string, args []driver.NamedValue) fakeResult
	log    []string // "query: …", "begin", "commit", "rollback"
	args   [][]driver.NamedValue
}

func (f *fakeDB) record(s string, args []driver.NamedValue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
	if args != nil {
		f.args = append(f.args, args)
	}
}

func (f *fakeDB) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.log))
	for i, s := range f.log {
		if strings.HasPrefix(s, "query: ") || strings.HasPrefix(s, "exec: ") {
			s = s[:strings.IndexByte(s, ':')]
		}
		out[i] = s
	}
	return out
}

// source is a Source over the fake driver, with schema "dbo".
func (f *fakeDB) source() *Source {
	return &Source{db: sql.OpenDB(fakeConnector{f}), schema: "dbo"}
}

type fakeConnector struct{ f *fakeDB }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) { return &fakeConn{f: c.f}, nil }
func (c fakeConnector) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return nil, errors.New("use the connector") }

type fakeConn struct{ f *fakeDB }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not prepared") }
func (c *fakeConn) Close() error                        { return nil }
func (c *fakeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *fakeConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.f.record("begin", nil)
	return fakeTx{c.f}, nil
}

func (c *fakeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.f.record("query: "+query, args)
	res := c.f.script(query, args)
	if res.err != nil && res.errAt < 0 {
		return nil, res.err
	}
	return &fakeRows{res: res}, nil
}

func (c *fakeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.f.record("exec: "+query, args)
	res := c.f.script(query, args)
	if res.err != nil {
		return nil, res.err
	}
	return driver.RowsAffected(res.n), nil
}

type fakeTx struct{ f *fakeDB }

func (t fakeTx) Commit() error   { t.f.record("commit", nil); return nil }
func (t fakeTx) Rollback() error { t.f.record("rollback", nil); return nil }

type fakeRows struct {
	res fakeResult
	at  int
}

func (r *fakeRows) Columns() []string {
	out := make([]string, len(r.res.cols))
	for i, c := range r.res.cols {
		out[i] = c.name
	}
	return out
}

func (r *fakeRows) Close() error { return nil }

func (r *fakeRows) Next(dest []driver.Value) error {
	if r.res.err != nil && r.at == r.res.errAt {
		return r.res.err
	}
	if r.at >= len(r.res.rows) {
		return io.EOF
	}
	copy(dest, r.res.rows[r.at])
	r.at++
	return nil
}

func (r *fakeRows) ColumnTypeDatabaseTypeName(i int) string { return r.res.cols[i].typ }

func (r *fakeRows) ColumnTypeNullable(i int) (bool, bool) { return r.res.cols[i].nullable, true }

var (
	_ driver.QueryerContext                 = (*fakeConn)(nil)
	_ driver.ExecerContext                  = (*fakeConn)(nil)
	_ driver.ConnBeginTx                    = (*fakeConn)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*fakeRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*fakeRows)(nil)
)
