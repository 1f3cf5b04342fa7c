package ch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func init() { dialects.Register("ch", Open) }

// defaultSchema is used when neither the registration nor the DSN names a
// database.
const defaultSchema = "default"

// defaultMutationWait bounds the wait for a mutation when the source has no
// statement timeout.
const defaultMutationWait = time.Minute

// insertSettings lift the parser limits for inserts, whose values travel in
// the statement text (maxInsertRows bounds them instead).
var insertSettings = clickhouse.Settings{
	"max_query_size":            1 << 30,
	"max_ast_elements":          1 << 24,
	"max_expanded_ast_elements": 1 << 24,
}

// Source is a clickhouse-go native connection pool limited to one
// ClickHouse database. It caches each table's column types, which it needs
// to render values ClickHouse will compare and store (see bindValue):
// Tables refreshes the cache, a table not in it is looked up on first use,
// and a statement failing on a missing column or a type forgets the table.
type Source struct {
	conn    driver.Conn
	schema  string
	timeout time.Duration
	closed  atomic.Bool
	opts    *clickhouse.Options // conn's, for the pool of custom statements

	runMu sync.Mutex
	run   driver.Conn // custom statements' pool, in the schema (see runConn)

	mu     sync.RWMutex
	tables map[string]*tableInfo
}

// Open creates the pool for cfg. The DSN is clickhouse-go's:
// clickhouse://user:password@host:9000/database?dial_timeout=5s. Only the
// native protocol is supported. It does not connect: the first statement
// (or Ping) does, so a database that is down at start-up is reported as
// Unavailable when used, not as a failed registration.
func Open(ctx context.Context, cfg dialects.Config) (dialects.Source, error) {
	opts, err := clickhouse.ParseDSN(cfg.DSN)
	if err != nil {
		// The driver redacts the password in its error; the message shown
		// to callers names nothing of the DSN.
		return nil, fault.Wrap(fault.Invalid, err, "invalid ClickHouse connection string (%s)", dsnForms)
	}
	if opts.Protocol != clickhouse.Native {
		return nil, fault.New(fault.Invalid, "ClickHouse is reached over its native protocol only: clickhouse://host:9000/database")
	}
	opts.MaxOpenConns = cfg.PoolSize()
	if opts.MaxIdleConns <= 0 || opts.MaxIdleConns > opts.MaxOpenConns {
		opts.MaxIdleConns = opts.MaxOpenConns
	}
	if cfg.StatementTimeout > 0 {
		if opts.Settings == nil {
			opts.Settings = clickhouse.Settings{}
		}
		// Whole seconds, at least one: old servers take no fraction.
		opts.Settings["max_execution_time"] = int(math.Ceil(cfg.StatementTimeout.Seconds()))
	}
	if opts.DialContext == nil {
		opts.DialContext = dialer(opts.TLS) // a handshake ends with its call
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, mapErr(ctx, err, false)
	}
	schema := cfg.Schema
	if schema == "" {
		schema = opts.Auth.Database
	}
	if schema == "" {
		schema = defaultSchema
	}
	return &Source{conn: conn, schema: schema, timeout: cfg.StatementTimeout, opts: opts, tables: map[string]*tableInfo{}}, nil
}

// Dialect returns the ClickHouse renderer.
func (s *Source) Dialect() dialects.Dialect { return Dialect{} }

// Ping checks that a connection can be had and answers.
func (s *Source) Ping(ctx context.Context) error {
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), nil)
	defer stop()
	if err := s.conn.Ping(qctx); err != nil {
		return s.failBounded(ctx, qctx, "", err)
	}
	return nil
}

// Close closes the pool; later calls fail as Unavailable.
func (s *Source) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		_ = s.conn.Close()
		s.runMu.Lock()
		if s.run != nil && s.run != s.conn {
			_ = s.run.Close()
		}
		s.runMu.Unlock()
	}
	return nil
}

// err maps an error; once the source is closed every failure is
// Unavailable, whatever the driver says.
func (s *Source) err(ctx context.Context, err error) error {
	if err != nil && s.closed.Load() {
		return fault.Wrap(fault.Unavailable, err, "database source is closed")
	}
	return mapErr(ctx, err, false)
}

// fail maps a statement's error and forgets the table's cached types when
// the error says they may be stale.
func (s *Source) fail(ctx context.Context, table string, err error) error {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		switch ex.Code {
		case codeUnknownTable, codeNoSuchColumn, codeUnknownIdentifier, codeTypeMismatch,
			codeIllegalType, codeNoCommonType, codeCannotConvert:
			s.mu.Lock()
			delete(s.tables, table)
			s.mu.Unlock()
		}
	}
	return s.err(ctx, err)
}

// errBackstop is the cause of a statement context canceled by its
// client-side deadline.
var errBackstop = errors.New("ch: statement exceeded its time limit")

// failBounded maps the error of a statement run under bounded's context
// qctx: the caller's ctx decides whether the caller gave up, qctx's own
// deadline is the statement timeout's backstop. When the connection failed
// under the statement, the server, which may well be alive, is told to
// kill it.
func (s *Source) failBounded(ctx, qctx context.Context, table string, err error) error {
	if ctx.Err() == nil && errors.Is(context.Cause(qctx), errBackstop) {
		return fault.Wrap(fault.Timeout, err, "database statement timed out")
	}
	mapped := s.fail(ctx, table, err)
	if id, ok := qctx.Value(queryIDKey{}).(string); ok && fault.KindOf(mapped) == fault.Unavailable {
		go s.kill(id)
	}
	return mapped
}

// queryIDKey holds a bounded statement's query id in its context.
type queryIDKey struct{}

// bounded derives the context a statement runs under. clickhouse-go turns a
// context deadline into the max_execution_time setting (deadline + 5 s),
// overriding the source's statement timeout, so the statement's context
// has no deadline: it is canceled when ctx is done, or after limit (the
// backstop: ClickHouse enforces the timeout itself, in whole seconds). With
// no limit, ctx's deadline is passed to the server as max_execution_time.
// settings are added to the statement's. stop releases the context once
// the statement is over; abort cancels it while it runs.
//
// The statement gets its own query id. When it is canceled before stop is
// called, the server is told to kill it: 18.x does not always notice that
// a client went away, and would finish a long query for no one.
func (s *Source) bounded(ctx context.Context, limit time.Duration, settings clickhouse.Settings) (qctx context.Context, stop, abort func()) {
	id := newQueryID()
	qctx, cancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), queryIDKey{}, id))
	var once sync.Once
	kill := func(cause error) {
		cancel(cause)
		once.Do(func() { go s.kill(id) })
	}
	if ctx.Err() != nil {
		// AfterFunc would cancel qctx only later, in its own goroutine.
		cancel(context.Cause(ctx))
	}
	unwatch := context.AfterFunc(ctx, func() { kill(context.Cause(ctx)) })
	var timer *time.Timer
	if limit > 0 {
		timer = time.AfterFunc(limit, func() { kill(errBackstop) })
	}
	set := clickhouse.Settings{}
	for k, v := range settings {
		set[k] = v
	}
	if dl, ok := ctx.Deadline(); ok && s.timeout <= 0 {
		set["max_execution_time"] = max(1, int(math.Ceil(time.Until(dl).Seconds())))
	}
	qctx = clickhouse.Context(qctx, clickhouse.WithQueryID(id), clickhouse.WithSettings(set))
	stop = func() {
		unwatch()
		if timer != nil {
			timer.Stop()
		}
		cancel(context.Canceled)
	}
	return qctx, stop, func() { kill(context.Canceled) }
}

// killTimeout bounds the KILL QUERY sent for an abandoned statement.
const killTimeout = 5 * time.Second

// kill asks the server to stop the statement with query id id, if it still
// runs. It is best effort: errors (a server that is gone, a closed source,
// no right to kill) are ignored.
func (s *Source) kill(id string) {
	if s.closed.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	_ = s.conn.Exec(ctx, "KILL QUERY WHERE query_id = ? ASYNC", id)
}

// newQueryID is a random query id, unique enough to name one statement.
func newQueryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "minimal-" + hex.EncodeToString(b[:])
}

// statementLimit is the backstop of one statement: the statement timeout
// plus dialects.TimeoutGrace. ClickHouse enforces max_execution_time itself,
// in whole seconds; the backstop ends what it does not (a server that
// stopped answering).
func (s *Source) statementLimit() time.Duration {
	if s.timeout <= 0 {
		return 0
	}
	return s.timeout + dialects.TimeoutGrace
}

// plan binds a plan to this source's database: an empty schema means ours,
// any other is not found here.
func (s *Source) plan(ctx context.Context, p *query.Plan) (*query.Plan, error) {
	if err := ctx.Err(); err != nil {
		// Nothing is sent for a caller that has already given up.
		return nil, s.err(ctx, err)
	}
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

// tablesSQL lists the columns of every table and view of a database, in
// their order, leaving out the hidden .inner tables of materialized views.
// (system.columns has no position column on old servers; it lists a
// table's columns in order.)
const tablesSQL = `
SELECT table, name, type, default_kind, default_expression, is_in_primary_key
FROM system.columns
WHERE database = ?
  AND table IN (SELECT name FROM system.tables WHERE database = ? AND NOT is_temporary AND NOT startsWith(name, '.inner'))`

// Tables introspects the database from system.tables and system.columns,
// and refreshes the cached column types.
func (s *Source) Tables(ctx context.Context) ([]dialects.Table, error) {
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), nil)
	defer stop()
	rows, err := s.conn.Query(qctx, tablesSQL, s.schema, s.schema)
	if err != nil {
		return nil, s.failBounded(ctx, qctx, "", err)
	}
	defer rows.Close()
	byName := map[string]*dialects.Table{}
	infos := map[string]*tableInfo{}
	var names []string
	for rows.Next() {
		var (
			table, typ, kind, expr string
			col                    dialects.Column
			pk                     uint8
		)
		if err := rows.Scan(&table, &col.Name, &typ, &kind, &expr, &pk); err != nil {
			return nil, s.failBounded(ctx, qctx, "", err)
		}
		ct := parseType(typ)
		col.DBType, col.Kind, col.Nullable, col.PrimaryKey = typ, ct.kind, ct.nullable, pk != 0
		col.HasDefault, col.Default = kind != "", expr
		t, ok := byName[table]
		if !ok {
			t = &dialects.Table{Schema: s.schema, Name: table}
			byName[table] = t
			infos[table] = &tableInfo{cols: map[string]*colInfo{}}
			names = append(names, table)
		}
		t.Columns = append(t.Columns, col)
		infos[table].cols[col.Name] = &colInfo{typ: ct, defaultKind: kind, defaultExpr: expr}
	}
	if err := rows.Err(); err != nil {
		return nil, s.failBounded(ctx, qctx, "", err)
	}
	sort.Strings(names)
	out := make([]dialects.Table, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	s.mu.Lock()
	s.tables = infos
	s.mu.Unlock()
	return out, nil
}

// columnsSQL reads one table's column types.
const columnsSQL = `SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = ? AND table = ?`

// info returns a table's column types, from the cache or the server.
func (s *Source) info(ctx context.Context, table string) (*tableInfo, error) {
	s.mu.RLock()
	ti, ok := s.tables[table]
	s.mu.RUnlock()
	if ok {
		return ti, nil
	}
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), nil)
	defer stop()
	rows, err := s.conn.Query(qctx, columnsSQL, s.schema, table)
	if err != nil {
		return nil, s.failBounded(ctx, qctx, "", err)
	}
	defer rows.Close()
	ti = &tableInfo{cols: map[string]*colInfo{}}
	for rows.Next() {
		var name, typ, kind, expr string
		if err := rows.Scan(&name, &typ, &kind, &expr); err != nil {
			return nil, s.failBounded(ctx, qctx, "", err)
		}
		ti.cols[name] = &colInfo{typ: parseType(typ), defaultKind: kind, defaultExpr: expr}
	}
	if err := rows.Err(); err != nil {
		return nil, s.failBounded(ctx, qctx, "", err)
	}
	if len(ti.cols) == 0 {
		return nil, fault.New(fault.NotFound, "table %q not found", table)
	}
	s.mu.Lock()
	s.tables[table] = ti
	s.mu.Unlock()
	return ti, nil
}

// Read renders and runs a read plan and streams its rows.
func (s *Source) Read(ctx context.Context, p *query.Plan) (dialects.Rows, error) {
	p, err := s.plan(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Action != query.Read {
		return nil, fault.New(fault.Invalid, "Read needs a read plan, got %s", p.Action)
	}
	info, err := s.info(ctx, p.Table)
	if err != nil {
		return nil, err
	}
	st, err := render(p, info)
	if err != nil {
		return nil, err
	}
	qctx, stop, abort := s.bounded(ctx, s.statementLimit(), nil)
	cr, err := s.conn.Query(qctx, st.SQL, st.Args...)
	if err != nil {
		err = s.failBounded(ctx, qctx, p.Table, err)
		stop()
		return nil, err
	}
	return s.newRows(ctx, qctx, stop, abort, p.Table, cr)
}

// newRows prepares the rows of a statement run under bounded's qctx, stop
// and abort, and fetches the first row. table is forgotten from the cache
// when an error says its types may be stale ("" for none).
func (s *Source) newRows(ctx, qctx context.Context, stop, abort func(), table string, cr driver.Rows) (*rows, error) {
	cts := cr.ColumnTypes()
	r := &rows{
		ctx:   ctx,
		qctx:  qctx,
		stop:  stop,
		abort: abort,
		src:   s,
		table: table,
		rows:  cr,
		cols:  make([]dialects.Column, len(cts)),
		types: make([]*colType, len(cts)),
		dest:  make([]any, len(cts)),
		vals:  make([]any, len(cts)),
	}
	for i, ct := range cts {
		t := parseType(ct.DatabaseTypeName())
		r.types[i] = t
		r.cols[i] = dialects.Column{Name: ct.Name(), DBType: t.full, Kind: t.kind, Nullable: t.nullable}
		r.dest[i] = reflect.New(ct.ScanType()).Interface()
	}
	// Fetch the first row now: a statement that fails (bad input, timeout)
	// fails here, before the caller has started to answer.
	r.peeked, r.hasRow = true, cr.Next()
	if !r.hasRow {
		r.done = true
		if err := cr.Err(); err != nil {
			err = s.failBounded(ctx, qctx, table, err)
			_ = cr.Close()
			stop()
			return nil, err
		}
	}
	return r, nil
}

// rows adapts clickhouse-go's rows to dialects.Rows, scanning each row into
// values of the driver's types and normalizing them (see normalize).
type rows struct {
	ctx   context.Context // the caller's
	qctx  context.Context // the statement's
	stop  func()          // releases qctx
	abort func()          // cancels the statement and kills it on the server
	src   *Source
	table string
	rows  driver.Rows
	cols  []dialects.Column
	types []*colType
	dest  []any
	vals  []any
	err   error

	// peeked is set while the first row, fetched by Read, is unread;
	// hasRow tells whether there was one. done is set once Next has
	// reported the end.
	peeked, hasRow, done bool
}

func (r *rows) Columns() []dialects.Column { return r.cols }

func (r *rows) Next() bool {
	if r.err != nil || r.done && !r.peeked {
		return false
	}
	if r.peeked {
		r.peeked = false
		return r.hasRow
	}
	if !r.rows.Next() {
		r.done = true
		return false
	}
	return true
}

// Values scans and normalizes the current row into a slice reused by the
// next call.
func (r *rows) Values() ([]any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.rows.Scan(r.dest...); err != nil {
		r.err = fault.Wrap(fault.Internal, err, "cannot read row")
		return nil, r.err
	}
	for i, d := range r.dest {
		v, err := normalize(r.types[i], reflect.ValueOf(d).Elem().Interface())
		if err != nil {
			r.err = fault.Wrap(fault.Internal, err, "cannot decode column %q", r.cols[i].Name)
			return nil, r.err
		}
		r.vals[i] = v
	}
	return r.vals, nil
}

func (r *rows) Err() error {
	if r.err != nil {
		return r.err
	}
	if err := r.rows.Err(); err != nil {
		return r.src.failBounded(r.ctx, r.qctx, r.table, err)
	}
	return nil
}

// Close ends the read. Rows not read are not fetched: the query is
// canceled rather than drained.
func (r *rows) Close() error {
	early := !r.done
	r.done, r.peeked = true, false
	if early {
		// Canceling the statement's context kills it on the server.
		r.abort()
		_ = r.rows.Close()
		r.stop()
		return r.err
	}
	err := r.rows.Close()
	if r.err == nil && err != nil {
		r.err = r.src.failBounded(r.ctx, r.qctx, r.table, err)
	}
	if r.err == nil {
		r.err = r.Err()
	}
	r.stop()
	return r.err
}

// Write runs an insert, update or delete. ClickHouse has no transactions:
//
//   - An insert is one INSERT … SELECT statement. A MergeTree table writes
//     it as one block, one new part, which appears whole or not at all (up
//     to max_insert_block_size rows, far above maxInsertRows). RowsAffected
//     is the number of rows sent.
//   - An update or delete is a mutation (ALTER TABLE … UPDATE/DELETE),
//     which ClickHouse applies in the background part by part: each part
//     changes atomically, the table as a whole does not, and readers may
//     see some parts changed before others. Write counts the matching rows
//     first (that count is RowsAffected, so it is the rows that matched
//     just before the mutation was submitted), submits the mutation, and
//     waits until the server reports it done, so a read after Write sees
//     the change. It waits at most the statement timeout (a minute without
//     one); past that it answers Timeout, and the mutation, already
//     submitted, still completes later. A filter matching no row submits
//     no mutation.
func (s *Source) Write(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	p, err := s.plan(ctx, p)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	switch p.Action {
	case query.Insert:
		return s.insert(ctx, p)
	case query.Update, query.Delete:
		return s.mutate(ctx, p)
	}
	return dialects.WriteResult{}, fault.New(fault.Invalid, "Write needs an insert, update or delete plan, got %s", p.Action)
}

func (s *Source) insert(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	info, err := s.info(ctx, p.Table)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	st, err := render(p, info)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), insertSettings)
	defer stop()
	if err := s.conn.Exec(qctx, st.SQL, st.Args...); err != nil {
		return dialects.WriteResult{}, s.failBounded(ctx, qctx, p.Table, err)
	}
	return dialects.WriteResult{RowsAffected: int64(len(p.Rows))}, nil
}

// pendingSQL counts the table's mutations not yet done that were submitted
// no later than ours (mutations are applied in order).
const pendingSQL = `SELECT count() FROM system.mutations
WHERE database = ? AND table = ? AND is_done = 0 AND toUInt32(create_time) <= ?`

func (s *Source) mutate(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	info, err := s.info(ctx, p.Table)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	mut, err := render(p, info)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	count, err := renderCount(p, info)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	wctx, run, stop := s.boundedWrite(ctx, p.Table)
	defer stop()

	var n uint64
	err = run(func(qctx context.Context) error { return s.conn.QueryRow(qctx, count.SQL, count.Args...).Scan(&n) })
	if err != nil {
		var ex *clickhouse.Exception
		if p.Action == query.Update && errors.As(err, &ex) && ex.Code == codeIllegalColumn {
			// if() refused the new value next to the column: the mutation
			// would fail the same way, forever (18.x cannot mutate an Enum
			// column, for one).
			return dialects.WriteResult{}, fault.Wrap(fault.Unsupported, err, "this ClickHouse server cannot update the column(s) to these values")
		}
		return dialects.WriteResult{}, err
	}
	if n == 0 {
		return dialects.WriteResult{}, nil
	}
	if err := run(func(qctx context.Context) error { return s.conn.Exec(qctx, mut.SQL, mut.Args...) }); err != nil {
		return dialects.WriteResult{}, err
	}
	if err := s.waitMutations(ctx, wctx, run, s.conn, p.Table, pendingSQL, s.schema, p.Table); err != nil {
		return dialects.WriteResult{}, err
	}
	return dialects.WriteResult{RowsAffected: int64(min(n, math.MaxInt64))}, nil
}

// boundedWrite bounds a write: wctx covers the whole of it (the statement
// timeout, or defaultMutationWait without one), and run runs each
// statement under a context of its own (a query id is used once), naming
// table in its failure.
func (s *Source) boundedWrite(ctx context.Context, table string) (wctx context.Context, run func(func(qctx context.Context) error) error, stop func()) {
	wait := s.timeout
	if wait <= 0 {
		wait = defaultMutationWait
	}
	wctx, stop, _ = s.bounded(ctx, wait, nil)
	run = func(f func(qctx context.Context) error) error {
		qctx, stop, _ := s.bounded(wctx, 0, nil)
		defer stop()
		if err := f(qctx); err != nil {
			return s.failBounded(ctx, qctx, table, err)
		}
		return nil
	}
	return wctx, run, stop
}

// waitMutations waits, within wctx, until the mutations pending counts
// (pending takes args and then the server time of submission) are done:
// those submitted no later than the one just sent. Failures are marked
// submitted.
func (s *Source) waitMutations(ctx, wctx context.Context, run func(func(qctx context.Context) error) error, conn driver.Conn, table, pending string, args ...any) error {
	var submitted uint32
	err := run(func(qctx context.Context) error {
		return conn.QueryRow(qctx, "SELECT toUInt32(now())").Scan(&submitted)
	})
	if err != nil {
		return submittedErr(err)
	}
	args = append(args, submitted)
	delay := 5 * time.Millisecond
	for {
		var n uint64
		err := run(func(qctx context.Context) error {
			return conn.QueryRow(qctx, pending, args...).Scan(&n)
		})
		if err != nil {
			return submittedErr(err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-wctx.Done():
			return submittedErr(s.failBounded(ctx, wctx, table, context.Cause(wctx)))
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// submittedErr marks a failure after the mutation was submitted: the caller
// must know that the change may still happen.
func submittedErr(err error) error {
	fe := fault.As(err)
	return &fault.Error{Kind: fe.Kind, Code: fe.Code, Err: fe.Err,
		Message: fe.Message + "; the mutation was submitted and ClickHouse may still apply it"}
}

var (
	_ dialects.Source = (*Source)(nil)
	_ dialects.Rows   = (*rows)(nil)
)
