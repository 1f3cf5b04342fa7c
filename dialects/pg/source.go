package pg

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func init() { dialects.Register("pg", Open) }

// defaultSchema is used when the registration names none.
const defaultSchema = "public"

// Source is a pgxpool pool limited to one schema. Statements run in pgx's
// default mode, so each connection prepares a statement once and reuses it.
type Source struct {
	pool   *pgxpool.Pool
	schema string
	closed atomic.Bool
	// acquireTimeout bounds the wait for a pooled connection (0: none but
	// the request's deadline).
	acquireTimeout time.Duration
	// timeout is the statement timeout: the server's statement_timeout,
	// and, with dialects.TimeoutGrace, every call's deadline (bound).
	timeout time.Duration
	// customPlans is whether aggregate reads run in customPlan mode: when
	// the pool prepares statements (the default mode, not one the DSN
	// chose) and caches descriptions.
	customPlans bool

	// learned holds types introspection found that this package does not
	// know by OID (extension types like citext, enums, their arrays), so
	// that results of those types decode as their kind says.
	learned sync.Map // uint32 → *codec

	// shapes keeps the columns and decoders of each statement's results
	// (shapeOf), at most maxShapes of them, counted by shapeCount.
	shapes     sync.Map // string → *shape
	shapeCount atomic.Int64
}

// Open creates the pool for cfg. It does not connect: the first statement
// (or Ping) does, so a database that is down at start-up is reported as
// Unavailable when used, not as a failed registration.
func Open(ctx context.Context, cfg dialects.Config) (dialects.Source, error) {
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		// pgconn redacts the password in its message; the message shown
		// to callers names nothing of the DSN.
		return nil, fault.Wrap(fault.Invalid, err, "invalid PostgreSQL connection string (%s)", dsnForms)
	}
	pc.MaxConns = int32(cfg.PoolSize())
	rp := pc.ConnConfig.RuntimeParams
	if cfg.StatementTimeout > 0 {
		ms := max(cfg.StatementTimeout.Milliseconds(), 1)
		rp["statement_timeout"] = strconv.FormatInt(ms, 10)
	}
	// Text forms the decoders rely on (dates in the simple protocol, and
	// LIKE … ESCAPE '\'), unless the DSN chose otherwise.
	setDefault(rp, "DateStyle", "ISO, YMD")
	setDefault(rp, "standard_conforming_strings", "on")
	if !hasParam(rp, "jit") {
		pc.AfterConnect = jitOff
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, mapErr(ctx, err, false)
	}
	schema := cfg.Schema
	if schema == "" {
		schema = defaultSchema
	}
	cc := pc.ConnConfig
	return &Source{pool: pool, schema: schema, acquireTimeout: cfg.AcquireTimeout, timeout: max(cfg.StatementTimeout, 0),
		customPlans: cc.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement && cc.DescriptionCacheCapacity > 0}, nil
}

func setDefault(params map[string]string, key, value string) {
	if !hasParam(params, key) {
		params[key] = value
	}
}

// hasParam reports whether params sets key (names compare as PostgreSQL
// compares them, ignoring case).
func hasParam(params map[string]string, key string) bool {
	for k := range params {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// jitOff turns PostgreSQL's JIT compilation off on a new connection of the
// pool, unless the DSN set jit itself (then Open leaves it). The gateway's
// statements are short API reads and writes, which JIT only slows: the
// catalog read alone spent 47 ms of its 65 ms compiling. Worse, once a
// backend has loaded the JIT library (llvmjit, LLVM), every parallel worker
// of every later statement on that connection loads it again at start
// (PostgreSQL restores the leader's libraries in each worker), which made a
// parallel COUNT(*) on a 1M-row table take 1.8 times as long as on a
// connection that never compiled anything (docs/performance.md). A server
// without the setting (before PostgreSQL 11, or a server that only speaks
// the protocol) answers undefined_object, which is not an error here.
func jitOff(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "SET jit = off")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == pgUndefinedObject {
		return nil
	}
	return err
}

// pgUndefinedObject is SQLSTATE 42704, what SET answers for a setting the
// server does not have.
const pgUndefinedObject = "42704"

// Dialect returns the PostgreSQL renderer.
func (s *Source) Dialect() dialects.Dialect { return Dialect{} }

// Ping checks that a connection can be had and answers.
func (s *Source) Ping(ctx context.Context) error {
	ctx, conn, l, err := s.acquireBound(ctx, nil)
	if err != nil {
		return err
	}
	defer l.done()
	return s.err(ctx, conn.Ping(ctx))
}

// acquireBound bounds a call and takes a connection for it, waiting at
// most the acquire timeout; the lease's done releases both. c, if not nil,
// is the memory of the call, unused until then (see Read); else
// acquireBound allocates it.
//
// One timer serves both bounds (a call): it ends the wait for a
// connection at the acquire timeout and, once the connection is had, the
// call at the statement timeout and its grace from the call's start,
// which is when bound's deadline would end it. Two contexts with a timer
// each, one made and dropped for every acquisition, cost a request of a
// few microseconds more.
//
// The call watches the caller's context itself, once, for the wait and
// the statement both, and only once it has run for watchAfter; pgx, given
// a context it does not watch (call.Done), registers nothing more under
// it (see call).
func (s *Source) acquireBound(ctx context.Context, c *call) (context.Context, *pgxpool.Conn, *lease, error) {
	start := time.Now()
	var deadline time.Time // the call's (bound); zero: none
	if s.timeout > 0 {
		deadline = start.Add(s.timeout + dialects.TimeoutGrace)
	}
	// The wait ends at the acquire timeout, or at the call's deadline
	// when that comes first or there is no acquire timeout.
	end, acquireFirst := deadline, false
	if s.acquireTimeout > 0 {
		if a := start.Add(s.acquireTimeout); deadline.IsZero() || a.Before(deadline) {
			end, acquireFirst = a, true
		}
	}
	if c == nil {
		c = new(call)
	}
	c.start(ctx, start, end)
	conn, err := s.pool.Acquire(c.wait())
	if err == nil && c.attach(conn.Conn().PgConn(), deadline) {
		c.lease = lease{conn: conn, call: c}
		return c, conn, &c.lease, nil
	}
	// The call ended while it waited, or as the connection came.
	c.end()
	if c.expired {
		// The wait's end passed: the wait ended at it, or the connection
		// came as it passed.
		if err != nil {
			if acquireFirst {
				return nil, nil, nil, s.acquireErr(ctx, err, true)
			}
			return nil, nil, nil, s.err(c, err)
		}
		// The connection came in time after all: the call gets a
		// context of its own, with the deadline bound gives it.
		var bctx context.Context
		var cancel context.CancelFunc
		if deadline.IsZero() {
			bctx, cancel = context.WithCancel(ctx)
		} else {
			bctx, cancel = context.WithDeadline(ctx, deadline)
		}
		return bctx, conn, &lease{conn: conn, cancel: cancel}, nil
	}
	if err != nil {
		return nil, nil, nil, s.acquireErr(ctx, err, false)
	}
	// The caller's context ended as the connection came: the call fails
	// as pgx fails a statement under a context already ended, and the
	// connection, untouched, goes back.
	conn.Release()
	return nil, nil, nil, s.err(c, c.Err())
}

// lease is a connection taken for a call and the call's bound; done gives
// both back.
type lease struct {
	conn *pgxpool.Conn
	// call bounds the call when it is one (acquireBound); else cancel
	// ends the call's context.
	call   *call
	cancel context.CancelFunc
}

func (l *lease) done() {
	if l.call != nil {
		// The call ends first: past it, nothing of it cuts the
		// connection, which another call may have next.
		l.call.end()
		l.conn.Release()
		return
	}
	l.conn.Release()
	l.cancel()
}

// acquire takes a connection from the pool, waiting at most the acquire
// timeout. Past it, a pool whose every connection is in use is exhausted
// (fault.Timeout, 504: the database is up but too busy for this pool); a
// pool with room that still got no connection is waiting on a database
// that does not answer (fault.Unavailable, 503). A database that refuses
// connections fails at once, as Unavailable.
func (s *Source) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	if s.acquireTimeout <= 0 {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return nil, s.err(ctx, err)
		}
		return c, nil
	}
	actx, cancel := context.WithTimeout(ctx, s.acquireTimeout)
	defer cancel()
	c, err := s.pool.Acquire(actx)
	if err == nil {
		return c, nil
	}
	return nil, s.acquireErr(ctx, err, actx.Err() != nil)
}

// acquireErr is the error of an acquisition under ctx that failed with
// err; expired tells whether the acquire timeout had passed.
func (s *Source) acquireErr(ctx context.Context, err error, expired bool) error {
	if ctx.Err() == nil && expired && !s.closed.Load() {
		st := s.pool.Stat()
		if st.AcquiredConns() >= st.MaxConns() {
			return fault.Wrap(fault.Timeout, err, "connection pool exhausted: all %d connections to this database stayed busy for %s; retry later", st.MaxConns(), s.acquireTimeout)
		}
		return fault.Wrap(fault.Unavailable, err, "database unavailable: no connection within %s", s.acquireTimeout)
	}
	return s.err(ctx, err)
}

// call is one database call (acquireBound): it ends when the caller's
// context does, at its deadline (one timer: the wait for a connection and
// the statement are bounded by one deadline, moved once the connection is
// had), or when it is done (end); the first end stays, as Err.
//
// It is two contexts in one memory: its wait for a connection (wait), an
// ordinary context whose Done closes at the call's end, and itself, the
// context its statements run under, whose Done is nil so that pgx does
// not watch it. The call watches the caller's context instead, with one
// context.AfterFunc for both: pgx would register a second under its own
// context (pgconn's ContextWatcher), and a context.WithCancel of the
// caller's its own — two registrations and two lazily made channels more
// a call. When the call ends while a statement has its connection, it
// does what pgx's default handler of an ended context does
// (pgconn.DeadlineContextWatcherHandler): it sets the socket's deadline
// to now, so that pgx's read or write fails, pgx closes the connection
// and asks PostgreSQL to cancel the statement (a cancel request); pgx then
// reads Err to tell why, as it reads the context's error after a
// deadline it set itself, so its errors are the same. end undoes the
// deadline on a connection still open and no longer lets anything cut it,
// before the connection goes back to the pool.
//
// The watch starts late: a call looks at the caller's context when it
// starts (one that has ended fails the call at once), and registers its
// context.AfterFunc only when its timer first goes off, at watchAfter
// (or at the caller's own deadline, if that comes first), then sets the
// timer again for its deadline. Most calls are done well before, and so
// neither register with the caller's context nor make its Done channel;
// a caller that goes away in the meantime has its call ended at most
// watchAfter after the call started, and so no later than watchAfter
// after it went away.
type call struct {
	parent context.Context // the caller's
	// deadline is the call's, on the calls' clock (mono); 0: none but
	// the caller's.
	deadline atomic.Int64

	mu sync.Mutex
	// timer is the call's from its start until its end (nil after; the
	// timer alone sets itself again: alarm).
	timer *callTimer
	// watchAt is when the call starts to watch parent, on the calls'
	// clock; 0 once it has.
	watchAt int64
	// stop ends the watch on parent (context.AfterFunc); nil without one.
	stop func() bool
	// err is why the call ended; nil while it runs.
	err error
	// done is the wait's Done, made when asked for.
	done chan struct{}
	// pg is the statement's connection while the call may cut it
	// (attach); cut tells whether it did.
	pg  *pgconn.PgConn
	cut bool
	// expired tells whether the call ended at its deadline (alarm).
	expired bool

	// lease is the call's once it has its connection, in the call's
	// memory.
	lease lease
}

// watchAfter is how long a call runs before it watches its caller's
// context (see call). A 1-row read is done in well under a millisecond;
// a call that never registers with the caller's context spares a request
// the registration and its undoing, the caller's Done channel and the map
// of its children (six allocations, about 500 bytes). The
// price is that a caller who goes away during a call's first watchAfter
// (a client that disconnected) has the call's statement cut, or its wait
// for a connection ended, up to watchAfter later than at once.
const watchAfter = 5 * time.Millisecond

// epoch is the origin of the calls' clock: a call keeps its times as
// nanoseconds since epoch on the monotonic clock (mono), which a change
// of the wall clock does not move.
var epoch = time.Now()

// mono is t on the calls' clock.
func mono(t time.Time) int64 { return int64(t.Sub(epoch)) }

// start makes c, unused until then, the call of parent, started at now
// and ending at deadline (the zero time: none but parent's).
func (c *call) start(parent context.Context, now, deadline time.Time) {
	c.parent = parent
	if err := parent.Err(); err != nil {
		c.err = err
		return
	}
	n := mono(now)
	watchAt := n + int64(watchAfter)
	if pd, ok := parent.Deadline(); ok {
		// The caller's deadline ends the call when it passes, not
		// watchAfter past the start.
		watchAt = min(watchAt, mono(pd))
	}
	next := watchAt
	if !deadline.IsZero() {
		d := mono(deadline)
		c.deadline.Store(d)
		next = min(next, d)
	}
	c.mu.Lock()
	c.watchAt = watchAt
	c.timer = startTimer(c, time.Duration(next-n))
	c.mu.Unlock()
}

// alarm is the call's timer t going off: past watchAt the call starts to
// watch its caller's context; past its deadline it ends, as expired; else
// the timer is set again for the earlier of the two still to come. A
// timer that goes off early, or once more, does only the last.
func (c *call) alarm(t *callTimer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != t || c.err != nil {
		return // the call has ended
	}
	now := mono(time.Now())
	if c.watchAt != 0 && now >= c.watchAt {
		c.watchAt = 0
		// If parent has ended, parentDone runs at once (in a goroutine
		// of its own, as it always does).
		c.stop = context.AfterFunc(c.parent, c.parentDone)
	}
	d := c.deadline.Load()
	if d != 0 && now >= d {
		c.expireLocked()
		return
	}
	next := c.watchAt
	if d != 0 && (next == 0 || d < next) {
		next = d
	}
	if next != 0 {
		t.t.Reset(time.Duration(next - now))
	}
}

// parentDone ends the call as its caller's context ended.
func (c *call) parentDone() { c.endWith(c.parent.Err()) }

// expire ends the call at its deadline.
func (c *call) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
}

// expireLocked is expire with c.mu held.
func (c *call) expireLocked() {
	if c.err == nil {
		c.expired = true
	}
	c.endLocked(context.DeadlineExceeded)
}

// endWith ends the call with err unless it has ended: it closes the
// wait's Done and cuts the statement's connection, if any.
func (c *call) endWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

// endLocked is endWith with c.mu held.
func (c *call) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.pg != nil {
		_ = c.pg.Conn().SetDeadline(time.Now())
		c.cut = true
	}
}

// attach lets the call cut pg, its statement's connection, when it ends,
// and moves its deadline to deadline (the zero time: none but the
// caller's), which is never earlier than the deadline the call started
// with (the wait's end); false if it has ended already (pg is left as it
// is).
//
// The timer stays as it is: set for the wait's end or watchAt, whichever
// comes first, it goes off no later than the call needs it to, and sets
// itself again (alarm).
func (c *call) attach(pg *pgconn.PgConn, deadline time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.pg = pg
	var d int64
	if !deadline.IsZero() {
		d = mono(deadline)
	}
	c.deadline.Store(d)
	return true
}

// end ends the call (as canceled, unless it had ended) and releases its
// timer and its watch on the caller's context. Past it, nothing of the
// call cuts its connection; one it cut and pgx did not close (the cut
// came between statements) has its deadline undone, as pgx undoes its own.
func (c *call) end() {
	c.mu.Lock()
	if t := c.timer; t != nil {
		c.timer = nil
		// A timer stopped before it went off goes back to timers: its
		// function will not run, and no earlier run of it is still
		// under way (only alarm sets it again, holding c.mu, after
		// which it does nothing more). One that went off is left to the
		// collector, as its function may still be running.
		if t.t.Stop() {
			t.call.Store(nil)
			timers.Put(t)
		}
	}
	stop := c.stop
	c.stop = nil
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
	pg, cut := c.pg, c.cut
	c.pg, c.cut = nil, false
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cut && !pg.IsClosed() {
		_ = pg.Conn().SetDeadline(time.Time{})
	}
}

// callTimer is a timer that goes off for a call (alarm). Timers are kept
// for later calls (timers): a call takes one and gives it back once it
// has stopped it in time (end), when nothing but the pool refers to it
// any more: its function will not run for that call, and the call itself
// is never kept, so whoever still holds a call sees it as it ended. A
// call's timer and its function (time.AfterFunc) are two allocations less
// a call.
type callTimer struct {
	t *time.Timer
	// call is the call the timer goes off for; nil while kept.
	call atomic.Pointer[call]
}

// timers keeps stopped callTimers.
var timers sync.Pool

// startTimer sets a timer to go off for c after d.
func startTimer(c *call, d time.Duration) *callTimer {
	t, _ := timers.Get().(*callTimer)
	if t == nil {
		t = &callTimer{}
		t.call.Store(c)
		t.t = time.AfterFunc(d, t.fire)
		return t
	}
	t.call.Store(c)
	t.t.Reset(d)
	return t
}

func (t *callTimer) fire() {
	if c := t.call.Load(); c != nil {
		c.alarm(t)
	}
}

// Deadline is the earlier of the call's deadline and the caller's.
func (c *call) Deadline() (time.Time, bool) {
	pd, ok := c.parent.Deadline()
	n := c.deadline.Load()
	if n == 0 {
		return pd, ok
	}
	if d := epoch.Add(time.Duration(n)); !ok || d.Before(pd) {
		return d, true
	}
	return pd, true
}

// Done is nil: pgx does not watch the call, which cuts its connection
// itself when it ends (see call).
func (c *call) Done() <-chan struct{} { return nil }

// Err is why the call ended: context.DeadlineExceeded past the call's
// deadline, the caller's context's error when that ended it, else
// context.Canceled once done; nil while it runs.
func (c *call) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value is the caller's context's.
func (c *call) Value(key any) any { return c.parent.Value(key) }

// wait is the call as the context of its wait for a connection.
func (c *call) wait() context.Context { return (*callWait)(c) }

// callWait is a call as an ordinary context (call.wait): its Done closes
// when the call ends, for the pool's wait (and the pool's work for the
// waiter after it: a connection made, or checked, for it).
type callWait call

func (w *callWait) Deadline() (time.Time, bool) { return (*call)(w).Deadline() }

func (w *callWait) Done() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		w.done = make(chan struct{})
		if w.err != nil {
			close(w.done)
		}
	}
	return w.done
}

func (w *callWait) Err() error { return (*call)(w).Err() }

func (w *callWait) Value(key any) any { return w.parent.Value(key) }

// PoolStats reports the pool, for metrics.
func (s *Source) PoolStats() dialects.PoolStats {
	st := s.pool.Stat()
	return dialects.PoolStats{
		MaxConns:         int64(st.MaxConns()),
		Idle:             int64(st.IdleConns()),
		Acquired:         int64(st.AcquiredConns()),
		Constructing:     int64(st.ConstructingConns()),
		Acquires:         st.AcquireCount(),
		EmptyAcquires:    st.EmptyAcquireCount(),
		CanceledAcquires: st.CanceledAcquireCount(),
		AcquireWait:      st.AcquireDuration(),
	}
}

// Close closes the pool; later calls fail as Unavailable.
func (s *Source) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.pool.Close()
	}
	return nil
}

func (s *Source) err(ctx context.Context, err error) error {
	return mapErr(ctx, err, s.closed.Load())
}

// bound gives a call its deadline (dialects.Bound): statement_timeout ends
// what the server runs too long, the deadline what it never answers (a
// hung server, a connection lost without a reset), as fault.Timeout.
func (s *Source) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return dialects.Bound(ctx, s.timeout)
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

// tablesSQL lists the columns of every table, view, materialized view and
// foreign table of a schema (partitions are reached through their parent).
// Domains are described by their base type. A column that is alone a
// foreign key to a table of the same schema names the column it references.
const tablesSQL = `
SELECT c.relname,
       a.attname,
       pg_catalog.format_type(a.atttypid, a.atttypmod),
       bt.oid,
       bt.typname::text,
       bt.typcategory = 'A' AND bt.typelem <> 0,
       bt.typelem,
       bt.typdelim::text,
       NOT a.attnotnull,
       COALESCE(pk.yes, false),
       a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '',
       COALESCE(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ''),
       COALESCE(fk.ref_table, ''),
       COALESCE(fk.ref_column, '')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
JOIN pg_catalog.pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
LEFT JOIN LATERAL (
    SELECT true AS yes FROM pg_catalog.pg_index i
    WHERE i.indrelid = c.oid AND i.indisprimary AND a.attnum = ANY (i.indkey)
    LIMIT 1
) pk ON true
LEFT JOIN LATERAL (
    SELECT rc.relname::text AS ref_table, ra.attname::text AS ref_column
    FROM pg_catalog.pg_constraint k
    JOIN pg_catalog.pg_class rc ON rc.oid = k.confrelid AND rc.relnamespace = c.relnamespace
    JOIN pg_catalog.pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = k.confkey[1]
    WHERE k.conrelid = c.oid AND k.contype = 'f' AND k.conkey = ARRAY[a.attnum]
    ORDER BY k.conname
    LIMIT 1
) fk ON true
WHERE n.nspname = $1
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND NOT c.relispartition
ORDER BY c.relname, a.attnum`

// Tables introspects the schema from pg_catalog.
func (s *Source) Tables(ctx context.Context) ([]dialects.Table, error) {
	ctx, conn, l, err := s.acquireBound(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer l.done()
	rows, err := conn.Query(ctx, tablesSQL, s.schema)
	if err != nil {
		return nil, s.err(ctx, err)
	}
	defer rows.Close()
	var out []dialects.Table
	for rows.Next() {
		var (
			table, typname, delim string
			col                   dialects.Column
			oid, elem             uint32
			isArray               bool
		)
		if err := rows.Scan(&table, &col.Name, &col.DBType, &oid, &typname, &isArray, &elem, &delim,
			&col.Nullable, &col.PrimaryKey, &col.HasDefault, &col.Default, &col.RefTable, &col.RefColumn); err != nil {
			return nil, s.err(ctx, err)
		}
		col.Kind = s.learn(oid, typname, isArray, elem, delim)
		if n := len(out); n == 0 || out[n-1].Name != table {
			out = append(out, dialects.Table{Schema: s.schema, Name: table})
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, col)
	}
	if err := rows.Err(); err != nil {
		return nil, s.err(ctx, err)
	}
	return out, nil
}

// learn returns the kind of a column's base type and remembers types not
// known by OID, so Read decodes them (arrays of them in particular).
func (s *Source) learn(oid uint32, typname string, isArray bool, elem uint32, delim string) dialects.Kind {
	if c, ok := codecs[oid]; ok {
		return c.kind
	}
	if c, ok := s.learned.Load(oid); ok {
		return c.(*codec).kind
	}
	c := &codec{name: typname, kind: dialects.KindOther, text: textString, copied: asString}
	switch {
	case isArray:
		d := byte(',')
		if len(delim) == 1 {
			d = delim[0]
		}
		ec := s.codec(elem)
		c.kind = dialects.KindArray
		c.text, c.copied = textArray(elemText(ec), d), decoded
		if ec != nil {
			c.name = ec.name + "[]"
		}
	case typname == "citext":
		c.kind = dialects.KindString
	}
	s.learned.Store(oid, c)
	return c.kind
}

// codec finds what is known about a type, built in or learned.
func (s *Source) codec(oid uint32) *codec {
	if c, ok := codecs[oid]; ok {
		return c
	}
	if c, ok := s.learned.Load(oid); ok {
		return c.(*codec)
	}
	return nil
}

// Read renders and runs a read plan and streams its rows.
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
	// The rows and the call are one allocation.
	rc := new(readCall)
	ctx, conn, l, err := s.acquireBound(ctx, &rc.call)
	if err != nil {
		return nil, err
	}
	var opts []any
	if s.customPlans && p.IsAggregate() {
		// An aggregate (and a count) is planned for its bound values each
		// time: see customPlan.
		opts = append(opts, customPlan)
	}
	r := &rc.rows
	if err := s.run(r, ctx, conn, st, opts...); err != nil {
		l.done()
		return nil, err
	}
	// The deadline covers reading the rows; the connection goes back when
	// they close.
	r.release = l
	return r, nil
}

// readCall is the memory of a read: its rows and its call (acquireBound).
type readCall struct {
	rows rows
	call call
}

// customPlan is the execution mode of aggregate reads: the unnamed
// statement with its description cached, still one round trip, which
// PostgreSQL plans for the values bound to it every time. A named prepared
// statement (the pool's default mode) is planned for its values five times
// and then, if the plan without them is estimated no dearer, with a generic
// plan: for an aggregate that plan guesses the page (LIMIT $n) will stop
// after a tenth of the groups, and prefers reading the groups in order
// (an index scan feeding a GroupAggregate) to hashing the whole table,
// which costs more when every group is read. A filter's value likewise
// decides whether an index pays off. The planning an aggregate pays per
// call is small beside the rows it reads. A DSN that chose another mode
// (default_query_exec_mode) keeps it.
const customPlan = pgx.QueryExecModeCacheDescribe

// querier is what a pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// query runs st on q; opts are pgx query options (an execution mode) sent
// before its arguments.
func (s *Source) query(ctx context.Context, q querier, st dialects.Stmt, opts ...any) (*rows, error) {
	r := new(rows)
	if err := s.run(r, ctx, q, st, opts...); err != nil {
		return nil, err
	}
	return r, nil
}

// run is query in r, unused until then.
func (s *Source) run(r *rows, ctx context.Context, q querier, st dialects.Stmt, opts ...any) error {
	// The rows, the arguments and the values of a short row are one
	// allocation.
	r.ctx, r.src = ctx, s
	args := r.argBuf[:0]
	if n := len(st.Args) + 1 + len(opts); n > len(r.argBuf) {
		args = make([]any, 0, n)
	}
	args = append(args, resultFormats)
	args = append(args, opts...)
	args = append(args, st.Args...)
	pr, err := q.Query(ctx, st.SQL, args...)
	if err != nil {
		return s.err(ctx, err)
	}
	fds := pr.FieldDescriptions()
	r.rows, r.sh = pr, s.shapeOf(st.SQL, fds, pr)
	if len(fds) <= len(r.valBuf) {
		r.vals = r.valBuf[:len(fds)]
	} else {
		r.vals = make([]any, len(fds))
	}
	// Fetch the first row now: a statement that fails (bad input, timeout,
	// constraint) fails here, before the caller has started to answer.
	r.peeked, r.hasRow = true, pr.Next()
	if !r.hasRow {
		if err := pr.Err(); err != nil {
			pr.Close()
			return s.err(ctx, err)
		}
	}
	return nil
}

// shape is what a result's field descriptions make of it: its columns and
// each column's decoder. Both are read only once made.
type shape struct {
	fds  []pgconn.FieldDescription // a copy of the fields it was made from
	cols []dialects.Column
	dec  []decodeFunc
	// text tells the columns sent as text whose text is their value.
	text []cellText
	// keep is whether the shape may serve later results of the same
	// fields: every column has a type known by OID and a decoder of its
	// own (a fallback decoder belongs to one connection's type map).
	keep bool
}

// maxShapes bounds Source.shapes: past it the kept shapes are forgotten
// and made again as statements run (a statement per filter form is
// usually a few dozen).
const maxShapes = 1024

// shapeOf returns the shape of a result of sql with fields fds: the one
// kept for sql when its fields are the same (name, type, wire format),
// else a new one, kept when it can be. A prepared statement answers with
// the same fields until the table changes, so a read makes its columns and
// decoders once rather than once per query.
func (s *Source) shapeOf(sql string, fds []pgconn.FieldDescription, pr pgx.Rows) *shape {
	if v, ok := s.shapes.Load(sql); ok {
		if sh := v.(*shape); sameFields(sh.fds, fds) {
			return sh
		}
	}
	sh := &shape{
		fds:  slices.Clone(fds),
		cols: make([]dialects.Column, len(fds)),
		dec:  make([]decodeFunc, len(fds)),
		text: make([]cellText, len(fds)),
		keep: true,
	}
	for i, fd := range fds {
		c := s.codec(fd.DataTypeOID)
		sh.cols[i] = dialects.Column{Name: fd.Name, Kind: dialects.KindOther, Nullable: true}
		if c != nil {
			sh.cols[i].DBType = c.name
			sh.cols[i].Kind = c.kind
		}
		sh.dec[i] = pickDecoder(c, fd, pr)
		if fd.Format == pgx.TextFormatCode {
			sh.text[i] = asString // textString, for a type not known
			if c != nil {
				sh.text[i] = c.copied
			}
		}
		if c == nil || fd.Format != pgx.TextFormatCode && c.bin == nil {
			sh.keep = false
		}
	}
	if sh.keep {
		if s.shapeCount.Add(1) > maxShapes {
			s.shapes.Clear()
			s.shapeCount.Store(1)
		}
		s.shapes.Store(sql, sh)
	}
	return sh
}

// sameFields reports whether two results have the same columns: names,
// types and wire formats, in order.
func sameFields(a, b []pgconn.FieldDescription) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].DataTypeOID != b[i].DataTypeOID || a[i].Format != b[i].Format {
			return false
		}
	}
	return true
}

// pickDecoder chooses a column's decoder once per query from its type and
// wire format.
func pickDecoder(c *codec, fd pgconn.FieldDescription, pr pgx.Rows) decodeFunc {
	if fd.Format == pgx.TextFormatCode {
		if c != nil {
			return c.text
		}
		return textString
	}
	if c != nil && c.bin != nil {
		return c.bin
	}
	// A binary column we do not decode ourselves (only if the result
	// formats were overridden).
	return binFallback(pr.Conn().TypeMap(), fd.DataTypeOID)
}

// rows adapts pgx.Rows to dialects.Rows, decoding each cell with the
// column's decoder from the raw wire bytes.
type rows struct {
	ctx  context.Context
	src  *Source
	rows pgx.Rows
	sh   *shape // its columns, decoders and text cells
	vals []any
	err  error
	// release returns the connection of a read to the pool on Close.
	release *lease

	// peeked is set while the first row, fetched by query, is unread;
	// hasRow tells whether there was one.
	peeked, hasRow bool

	// argBuf holds the arguments of a statement of few values, valBuf
	// the values of a row of few columns (vals), in the rows' own memory.
	argBuf [4]any
	valBuf [16]any
}

func (r *rows) Columns() []dialects.Column { return r.sh.cols }

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

// Values decodes the current row into a slice reused by the next call.
func (r *rows) Values() ([]any, error) {
	if r.err != nil {
		return nil, r.err
	}
	raw := r.rows.RawValues()
	sh := r.sh
	if len(raw) != len(sh.dec) {
		r.err = fault.New(fault.Internal, "row has %d values for %d columns", len(raw), len(sh.dec))
		return nil, r.err
	}
	// The cells whose text is their value share one copy of the row's
	// text: one allocation a row rather than one a cell.
	n := 0
	for i, src := range raw {
		if sh.text[i] != decoded {
			n += len(src)
		}
	}
	var text []byte
	if n > 0 {
		text = make([]byte, 0, n)
	}
	for i, src := range raw {
		if src == nil {
			r.vals[i] = nil
			continue
		}
		if t := sh.text[i]; t != decoded {
			// text never grows past n: its strings stay as written.
			start := len(text)
			text = append(text, src...)
			r.vals[i] = textValue(t, unsafe.String(unsafe.SliceData(text[start:]), len(src)))
			continue
		}
		v, err := sh.dec[i](src)
		if err != nil {
			r.err = fault.Wrap(fault.Internal, err, "cannot decode column %q", sh.cols[i].Name)
			return nil, r.err
		}
		r.vals[i] = v
	}
	return r.vals, nil
}

// textValue is the value of a cell whose text is s, taken as t says.
func textValue(t cellText, s string) any {
	if t == asNumber {
		switch s {
		case "NaN", "Infinity", "-Infinity":
			return s
		}
		return json.Number(s)
	}
	return s
}

func (r *rows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.src.err(r.ctx, r.rows.Err())
}

func (r *rows) Close() error {
	r.rows.Close()
	err := r.Err()
	if r.release != nil {
		r.release.done()
		r.release = nil
	}
	return err
}

// Write runs an insert, update or delete. Update and delete are single
// statements, atomic on their own; an insert too large for one statement is
// split into chunks run in one transaction.
func (s *Source) Write(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	p, err := s.plan(p)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	switch p.Action {
	case query.Insert:
		return s.insert(ctx, p)
	case query.Update, query.Delete:
		st, err := Dialect{}.Render(p)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		conn, err := s.acquire(ctx)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		defer conn.Release()
		if p.Return { // … RETURNING the affected rows
			return s.insertChunks(ctx, conn, []dialects.Stmt{st})
		}
		tag, err := conn.Exec(ctx, st.SQL, st.Args...)
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		return dialects.WriteResult{RowsAffected: tag.RowsAffected()}, nil
	}
	return dialects.WriteResult{}, fault.New(fault.Invalid, "Write needs an insert, update or delete plan, got %s", p.Action)
}

func (s *Source) insert(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	chunks := chunkRows(p, maxParams)
	stmts := make([]dialects.Stmt, len(chunks))
	for i, c := range chunks {
		st, err := Dialect{}.Render(c)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		stmts[i] = st
	}
	conn, err := s.acquire(ctx)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	defer conn.Release()
	if len(stmts) == 1 {
		return s.insertChunks(ctx, conn, stmts)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // no-op after Commit
	res, err := s.insertChunks(ctx, tx, stmts)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	return res, nil
}

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
				r.rows.Close()
				return dialects.WriteResult{}, err
			}
			res.Returned = append(res.Returned, append([]any(nil), vals...))
		}
		if err := r.Close(); err != nil {
			return dialects.WriteResult{}, err
		}
		res.Columns = r.sh.cols
		res.RowsAffected += r.rows.CommandTag().RowsAffected()
	}
	return res, nil
}

// chunkRows splits an insert so no statement binds more than limit values;
// DEFAULT cells bind none. A plan that fits is returned as is.
func chunkRows(p *query.Plan, limit int) []*query.Plan {
	var out []*query.Plan
	start, n := 0, 0
	for i, row := range p.Rows {
		k := 0
		for _, v := range row {
			if _, ok := v.(query.Default); !ok {
				k++
			}
		}
		if n+k > limit && i > start {
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
	_ dialects.Stats  = (*Source)(nil)
	_ dialects.Rows   = (*rows)(nil)
)

// CheckValues decides each test with PostgreSQL's own conversion (a CAST
// to the column's declared type, typmod and domain included, as an insert
// converts) and comparisons; see dialects.ValueChecker.
func (s *Source) CheckValues(ctx context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	st, err := sqlgen.CastChecks(&syntax, t, tests)
	if err != nil {
		return nil, err
	}
	ctx, conn, l, err := s.acquireBound(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer l.done()
	rs, err := conn.Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, s.err(ctx, err)
	}
	var got []int64
	for rs.Next() {
		var i int64
		if err := rs.Scan(&i); err != nil {
			rs.Close()
			return nil, s.err(ctx, err)
		}
		got = append(got, i)
	}
	if err := rs.Err(); err != nil {
		return nil, s.err(ctx, err)
	}
	return sqlgen.CheckedIndexes(len(tests), got)
}
