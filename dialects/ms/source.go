package ms

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func init() { dialects.Register("ms", Open) }

// defaultSchema is used when the registration names none.
const defaultSchema = "dbo"

// appName is what the server shows for the gateway's sessions
// (sys.dm_exec_sessions.program_name) unless the DSN names another.
const appName = "minimal"

// Source is a database/sql pool over go-mssqldb limited to one schema.
type Source struct {
	db     *sql.DB
	schema string
	// timeout bounds every call: SQL Server has no per-session statement
	// timeout, so the bound is a context deadline, which the driver turns
	// into an attention (cancel) sent to the server.
	timeout time.Duration
	// guidConv is the DSN's "guid conversion" option: the driver then
	// returns uniqueidentifier bytes already in canonical order.
	guidConv bool
	closed   atomic.Bool
}

// Open creates the pool for cfg; the DSN is go-mssqldb's, e.g.
// sqlserver://user:pass@host:1433?database=db. It does not connect: the
// first statement (or Ping) does, so a database that is down at start-up is
// reported as Unavailable when used, not as a failed registration.
func Open(ctx context.Context, cfg dialects.Config) (dialects.Source, error) {
	mc, err := msdsn.Parse(cfg.DSN)
	if err != nil {
		// msdsn keeps credentials out of its messages; the message shown
		// to callers names nothing of the DSN.
		return nil, fault.Wrap(fault.Invalid, err, "invalid SQL Server connection string (%s)", dsnForms)
	}
	if _, ok := mc.Parameters[msdsn.AppName]; !ok {
		mc.AppName = appName
	}
	db := sql.OpenDB(newConnector(mc))
	db.SetMaxOpenConns(cfg.PoolSize())
	db.SetMaxIdleConns(cfg.PoolSize())
	db.SetConnMaxIdleTime(5 * time.Minute)
	schema := cfg.Schema
	if schema == "" {
		schema = defaultSchema
	}
	return &Source{db: db, schema: schema, timeout: cfg.StatementTimeout, guidConv: mc.Encoding.GuidConversion}, nil
}

// Dialect returns the SQL Server renderer.
func (s *Source) Dialect() dialects.Dialect { return Dialect{} }

// Ping checks that a connection can be had and answers.
func (s *Source) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return fault.New(fault.Unavailable, "database source is closed")
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return s.err(ctx, s.db.PingContext(ctx))
}

// Close closes the pool; later calls fail as Unavailable.
func (s *Source) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		return s.db.Close()
	}
	return nil
}

func (s *Source) err(ctx context.Context, err error) error {
	return mapErr(ctx, err, s.closed.Load())
}

// bound applies the statement timeout to ctx.
func (s *Source) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}

// plan binds a plan to this source's schema: an empty schema means ours, any
// other is not found here.
func (s *Source) plan(p *query.Plan) (*query.Plan, error) {
	if p == nil {
		return nil, fault.New(fault.Invalid, "no plan")
	}
	if p.Schema == s.schema {
		return p, nil
	}
	if p.Schema != "" {
		return nil, fault.New(fault.NotFound, "table %q not found", p.Table)
	}
	cp := *p
	cp.Schema = s.schema
	return &cp, nil
}

// tablesSQL lists the columns of every user table and view of a schema
// from the sys catalog views. An alias type (CREATE TYPE … FROM) is
// described by its base type for the kind and by its own name for DBType;
// CLR types (geometry, hierarchyid …) by their name. A column that a
// single-column foreign key declares names the table and column it
// references (sys.foreign_keys, sys.foreign_key_columns) when that table is
// of the same schema, the first such key by name (code point order) when
// there are two, as PostgreSQL's introspection does.
const tablesSQL = `
SELECT o.object_id,
       o.name,
       c.name,
       ty.name,
       COALESCE(bt.name, ty.name),
       c.max_length,
       c.precision,
       c.scale,
       CAST(COALESCE(c.is_nullable, 1) AS bit),
       CAST(CASE WHEN pk.column_id IS NULL THEN 0 ELSE 1 END AS bit),
       CAST(COALESCE(c.is_identity, 0) AS bit),
       CAST(COALESCE(c.is_computed, 0) AS bit),
       CAST(CASE WHEN dc.object_id IS NULL THEN 0 ELSE 1 END AS bit),
       COALESCE(dc.definition, cc.definition, N''),
       COALESCE(fk.ref_table, N''),
       COALESCE(fk.ref_column, N'')
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
JOIN sys.columns AS c ON c.object_id = o.object_id
JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
LEFT JOIN sys.types AS bt ON bt.user_type_id = ty.system_type_id
     AND ty.is_user_defined = 1 AND ty.is_assembly_type = 0
LEFT JOIN sys.default_constraints AS dc ON dc.object_id = c.default_object_id
LEFT JOIN sys.computed_columns AS cc ON cc.object_id = c.object_id AND cc.column_id = c.column_id
LEFT JOIN (
    SELECT ic.object_id, ic.column_id
    FROM sys.indexes AS i
    JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
    WHERE i.is_primary_key = 1 AND ic.key_ordinal > 0
) AS pk ON pk.object_id = c.object_id AND pk.column_id = c.column_id
OUTER APPLY (
    SELECT TOP (1) rt.name AS ref_table, rc.name AS ref_column
    FROM sys.foreign_key_columns AS fkc
    JOIN sys.foreign_keys AS f ON f.object_id = fkc.constraint_object_id
    JOIN sys.objects AS rt ON rt.object_id = fkc.referenced_object_id AND rt.schema_id = o.schema_id
    JOIN sys.columns AS rc ON rc.object_id = fkc.referenced_object_id AND rc.column_id = fkc.referenced_column_id
    WHERE fkc.parent_object_id = c.object_id AND fkc.parent_column_id = c.column_id
      AND NOT EXISTS (SELECT 1 FROM sys.foreign_key_columns AS k2
                      WHERE k2.constraint_object_id = fkc.constraint_object_id AND k2.constraint_column_id <> 1)
    ORDER BY f.name COLLATE Latin1_General_BIN2
) AS fk
WHERE s.name = @p1
  AND o.type IN ('U', 'V')
  AND o.is_ms_shipped = 0
ORDER BY o.object_id, c.column_id`

// introspected is one row of tablesSQL.
type introspected struct {
	objectID                                int64
	table, column, declared, base           string
	maxLen, precision, scale                int64
	nullable, pk, identity, computed, hasDC bool
	definition                              string
	refTable, refColumn                     string
}

// toColumn turns a catalog row into a dialects.Column.
func (r introspected) toColumn() dialects.Column {
	base := strings.ToLower(r.base)
	return dialects.Column{
		Name:       r.column,
		DBType:     dbType(r.declared, r.base, int(r.maxLen), int(r.precision), int(r.scale)),
		Kind:       kindOf(base),
		Nullable:   r.nullable,
		PrimaryKey: r.pk,
		// rowversion (timestamp) is filled by the server on every write.
		HasDefault: r.hasDC || r.identity || r.computed || base == "timestamp",
		Default:    r.definition,
		RefTable:   r.refTable,
		RefColumn:  r.refColumn,
	}
}

// Tables introspects the schema from the sys catalog views, tables sorted
// by name (byte order, whatever the server's collation) and columns in
// their declared order.
func (s *Source) Tables(ctx context.Context) ([]dialects.Table, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rs, err := s.db.QueryContext(ctx, tablesSQL, s.schema)
	if err != nil {
		return nil, s.err(ctx, err)
	}
	defer rs.Close()
	var out []dialects.Table
	last := int64(-1)
	for rs.Next() {
		var r introspected
		if err := rs.Scan(&r.objectID, &r.table, &r.column, &r.declared, &r.base, &r.maxLen, &r.precision, &r.scale,
			&r.nullable, &r.pk, &r.identity, &r.computed, &r.hasDC, &r.definition, &r.refTable, &r.refColumn); err != nil {
			return nil, s.err(ctx, err)
		}
		if r.objectID != last || len(out) == 0 {
			out = append(out, dialects.Table{Schema: s.schema, Name: r.table})
			last = r.objectID
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, r.toColumn())
	}
	if err := rs.Err(); err != nil {
		return nil, s.err(ctx, err)
	}
	slices.SortStableFunc(out, func(a, b dialects.Table) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Read renders and runs a read plan and streams its rows. The statement
// timeout covers the whole read, streaming included, and ends when the rows
// are closed.
func (s *Source) Read(ctx context.Context, p *query.Plan) (dialects.Rows, error) {
	p, err := s.plan(p)
	if err != nil {
		return nil, err
	}
	if p.Action != query.Read {
		return nil, fault.New(fault.Invalid, "Read needs a read plan, got %s", p.Action)
	}
	st, err := Dialect{}.Render(p)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	ctx, cancel := s.bound(ctx)
	r, err := s.query(ctx, s.db, st)
	if err != nil {
		cancel()
		return nil, err
	}
	r.cancel = cancel
	return r, nil
}

// querier is what a pool and a transaction share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Source) query(ctx context.Context, q querier, st dialects.Stmt) (*rows, error) {
	rs, err := q.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, s.err(ctx, err)
	}
	cts, err := rs.ColumnTypes()
	if err != nil {
		_ = rs.Close()
		return nil, s.err(ctx, err)
	}
	r := &rows{
		ctx:    ctx,
		cancel: func() {},
		src:    s,
		rows:   rs,
		cols:   make([]dialects.Column, len(cts)),
		dec:    make([]decodeFunc, len(cts)),
		raw:    make([]any, len(cts)),
		ptrs:   make([]any, len(cts)),
		vals:   make([]any, len(cts)),
	}
	for i, ct := range cts {
		typ := ct.DatabaseTypeName()
		kind, dec := decoderFor(typ, s.guidConv)
		nullable, ok := ct.Nullable()
		r.cols[i] = dialects.Column{Name: ct.Name(), DBType: strings.ToLower(typ), Kind: kind, Nullable: nullable || !ok}
		r.dec[i] = dec
		r.ptrs[i] = &r.raw[i]
	}
	// Fetch the first row now: a statement that fails (bad input, timeout,
	// constraint) fails here, before the caller has started to answer.
	r.peeked, r.hasRow = true, rs.Next()
	if !r.hasRow {
		if err := rs.Err(); err != nil {
			_ = rs.Close()
			return nil, s.err(ctx, err)
		}
	}
	return r, nil
}

// rows adapts *sql.Rows to dialects.Rows, normalizing each cell with its
// column's decoder.
type rows struct {
	ctx    context.Context
	cancel context.CancelFunc
	src    *Source
	rows   *sql.Rows
	cols   []dialects.Column
	dec    []decodeFunc
	raw    []any // scan destinations, through ptrs
	ptrs   []any
	vals   []any
	err    error

	// peeked is set while the first row, fetched by query, is unread;
	// hasRow tells whether there was one.
	peeked, hasRow bool
}

func (r *rows) Columns() []dialects.Column { return r.cols }

func (r *rows) Next() bool {
	if r.err != nil {
		return false
	}
	if r.peeked {
		r.peeked = false
		return r.hasRow
	}
	return r.rows.Next()
}

// Values normalizes the current row into a slice reused by the next call.
func (r *rows) Values() ([]any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		r.err = r.src.err(r.ctx, err)
		return nil, r.err
	}
	for i, v := range r.raw {
		if v == nil {
			r.vals[i] = nil
			continue
		}
		out, err := r.dec[i](v)
		if err != nil {
			r.err = fault.Wrap(fault.Internal, err, "cannot decode column %q", r.cols[i].Name)
			return nil, r.err
		}
		r.vals[i] = out
	}
	return r.vals, nil
}

func (r *rows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.src.err(r.ctx, r.rows.Err())
}

// Close ends the result and the statement timeout's context.
func (r *rows) Close() error {
	cerr := r.rows.Close()
	err := r.Err()
	if err == nil && cerr != nil {
		err = r.src.err(r.ctx, cerr)
	}
	r.cancel()
	return err
}

// Write runs an insert, update or delete. Update and delete are single
// statements, atomic on their own; an insert too large for one statement
// (2098 values or 1000 rows) is split into chunks run in one transaction.
func (s *Source) Write(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	p, err := s.plan(p)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	if s.closed.Load() {
		return dialects.WriteResult{}, fault.New(fault.Unavailable, "database source is closed")
	}
	switch p.Action {
	case query.Insert:
		return s.insert(ctx, p)
	case query.Update, query.Delete:
		st, err := Dialect{}.Render(p)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		ctx, cancel := s.bound(ctx)
		defer cancel()
		if p.Return { // … OUTPUT the affected rows (renderOutput)
			return s.insertChunks(ctx, s.db, []dialects.Stmt{st})
		}
		res, err := s.db.ExecContext(ctx, st.SQL, st.Args...)
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		return dialects.WriteResult{RowsAffected: n}, nil
	}
	return dialects.WriteResult{}, fault.New(fault.Invalid, "Write needs an insert, update or delete plan, got %s", p.Action)
}

func (s *Source) insert(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	chunks := chunkRows(p, maxParams, maxInsertRows)
	stmts := make([]dialects.Stmt, len(chunks))
	for i, c := range chunks {
		st, err := Dialect{}.Render(c)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		stmts[i] = st
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if len(stmts) == 1 {
		return s.insertChunks(ctx, s.db, stmts)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	// A no-op after Commit. It may also fail when the server has already
	// rolled back (a batch-aborting error): the work is undone either way.
	defer func() { _ = tx.Rollback() }()
	res, err := s.insertChunks(ctx, tx, stmts)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	if err := tx.Commit(); err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	return res, nil
}

// insertChunks runs statements with an OUTPUT list (INSERT … OUTPUT
// INSERTED.*, a MERGE, an update or delete answering its rows) and
// collects the rows they return; their number is the number of rows
// written.
func (s *Source) insertChunks(ctx context.Context, q querier, stmts []dialects.Stmt) (dialects.WriteResult, error) {
	var res dialects.WriteResult
	for _, st := range stmts {
		r, err := s.query(ctx, q, st)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		for r.Next() {
			vals, err := r.Values()
			if err != nil {
				_ = r.rows.Close()
				return dialects.WriteResult{}, err
			}
			res.Returned = append(res.Returned, append([]any(nil), vals...))
			res.RowsAffected++
		}
		if err := r.Close(); err != nil {
			return dialects.WriteResult{}, err
		}
		res.Columns = r.cols
	}
	return res, nil
}

// chunkRows splits an insert so no statement binds more than maxValues
// values or holds more than maxRows rows; DEFAULT and NULL cells bind none.
// A plan that fits is returned as is.
func chunkRows(p *query.Plan, maxValues, maxRows int) []*query.Plan {
	var out []*query.Plan
	start, n := 0, 0
	for i, row := range p.Rows {
		k := 0
		for _, v := range row {
			switch v.(type) {
			case query.Default, nil:
			default:
				k++
			}
		}
		if i > start && (n+k > maxValues || i-start == maxRows) {
			c := *p
			c.Rows = p.Rows[start:i]
			out = append(out, &c)
			start, n = i, 0
		}
		n += k
	}
	if start == 0 {
		return []*query.Plan{p}
	}
	c := *p
	c.Rows = p.Rows[start:]
	return append(out, &c)
}

var (
	_ dialects.Source = (*Source)(nil)
	_ dialects.Rows   = (*rows)(nil)
)
