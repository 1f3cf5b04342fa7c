package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// AuditEntry is one data operation as the audit log keeps it: who (identity
// and the roles the token held), through which face, what (object, action),
// how much (rows) and how it ended (outcome, message), with the request id
// found on the request's log lines.
type AuditEntry struct {
	// ID is a time-ordered UUID, set by the store (or by the AuditWriter
	// when the entry is queued) when empty: a version 7 UUID of At, or of
	// a moment after the id made before it (see idSeq).
	ID string
	// At is when the operation started (UTC).
	At time.Time
	// ProjectID is the project the operation ran in.
	ProjectID string
	// IdentityID and Identity name who acted; Roles are the roles its token
	// held.
	IdentityID, Identity string
	Roles                []string
	// Face is "rest" or "mcp" ("" for neither).
	Face string
	// Object is "type/schema/table" (a custom API: "custom:" and its key);
	// Action one of create, read, update, delete (the permission actions),
	// or write for a custom API that writes.
	Object, Action string
	// Rows counts the rows read or affected.
	Rows int64
	// Outcome is "ok" or the error code the caller got; Message the
	// caller-safe error text.
	Outcome, Message string
	// RequestID is the request's X-Request-Id.
	RequestID string
	// Duration is how long the operation took.
	Duration time.Duration
}

// AuditFilter narrows AuditLog. Zero fields do not filter.
type AuditFilter struct {
	// Identity is an identity name; Object an exact "type/schema/table";
	// Action create, read, update, delete or write.
	Identity, Object, Action string
	// Outcome is "ok", "error" (every outcome but ok) or an error code.
	Outcome string
	// Since and Until bound At (Since inclusive, Until exclusive).
	Since, Until time.Time
	// Before pages backwards: only entries older than the entry of this id.
	Before string
	// Limit caps the entries returned: DefaultAuditLimit when 0, at most
	// MaxAuditLimit.
	Limit int
}

// Limits of AuditLog.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// auditCols is the column list of audit_log, in AuditEntry order.
const auditCols = `id, at, project_id, identity_id, identity, roles, face, object, action, rows_count, outcome, message, request_id, duration_ns`

// auditRowsPerInsert keeps one INSERT at 14 × 50 = 700 bound values, well
// under the limits of SQLite (32766) and PostgreSQL (65535).
const auditRowsPerInsert = 50

// auditChunks are the prepared INSERTs of AppendAudit, by chunk size,
// largest first: a batch is written in chunks of auditRowsPerInsert rows,
// and its rest in at most one chunk of each smaller size, a power of two
// (49 rows: 32 + 16 + 1, three statements rather than 49 of one row). Each
// is prepared once per connection (prepared.go): parsing a 50-row INSERT
// cost about a third of writing it.
var auditChunks = auditChunksOf(auditRowsPerInsert, 32, 16, 8, 4, 2, 1)

// auditChunk is the INSERT of n audit rows, and the INSERT of n rows that
// share their principal, face, object, action and outcome ("" for one row).
type auditChunk struct {
	n              int
	insert, shared string
}

// auditChunkFor is the largest chunk of at most n rows (n > 0).
func auditChunkFor(n int) *auditChunk {
	i := 0
	for auditChunks[i].n > n {
		i++
	}
	return &auditChunks[i]
}

func auditChunksOf(sizes ...int) []auditChunk {
	cs := make([]auditChunk, len(sizes))
	for i, n := range sizes {
		cs[i] = auditChunk{n: n, insert: auditInsert(n)}
		if n > 1 {
			cs[i].shared = auditInsertSharing(n)
		}
	}
	return cs
}

// auditInsertSharing is the INSERT of a chunk whose rows share their
// principal, face, object, action and outcome (the common chunk: a busy
// caller's reads): those values are bound once for the chunk, in a one-row
// SELECT joined to the VALUES of the rows, and each row binds only its own
// five (id, at, rows_count, request_id, duration_ns). Binding a text value
// costs the SQLite driver a C allocation and a copy: a chunk of 50 binds
// 259 values, 109 of them text, rather than 700 and 550. Its placeholders
// are all '?': the SQLite driver looks up the name of every parameter it
// binds, and a numbered one ($n) costs a scan of all the statement's
// names. The CASTs type the integers of the VALUES for PostgreSQL; the
// columns of a VALUES list are named column1, column2, … on both.
// auditShared is how many values the rows of auditInsertSharing share.
const auditShared = 9

func auditInsertSharing(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_log (` + auditCols + `)
SELECT v.column1, v.column2, s.project_id, s.identity_id, s.identity, s.roles, s.face, s.object, s.action, v.column3, s.outcome, s.message, v.column4, v.column5
FROM (SELECT ? AS project_id, ? AS identity_id, ? AS identity, ? AS roles, ? AS face, ? AS object, ? AS action, ? AS outcome, ? AS message) AS s
CROSS JOIN (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, CAST(? AS BIGINT))")
	}
	b.WriteString(") AS v")
	return b.String()
}

// sharedChunk reports whether the entries share every value
// auditInsertSharing binds once.
func sharedChunk(es []AuditEntry) bool {
	f := &es[0]
	for i := 1; i < len(es); i++ {
		e := &es[i]
		if e.ProjectID != f.ProjectID || e.IdentityID != f.IdentityID || e.Identity != f.Identity || e.Face != f.Face ||
			e.Object != f.Object || e.Action != f.Action || e.Outcome != f.Outcome || e.Message != f.Message ||
			!slices.Equal(e.Roles, f.Roles) {
			return false
		}
	}
	return true
}

// auditInsert is the INSERT of n audit rows.
func auditInsert(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_log (` + auditCols + `) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

// AppendAudit writes entries in one transaction, without moving the change
// counter: the audit log is a record, not configuration. Entries without an
// ID get one.
func (s *Store) AppendAudit(ctx context.Context, entries []AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	for i := range entries {
		if entries[i].ID == "" {
			entries[i].ID = auditIDs.next(entries[i].At)
		}
	}
	if s.pgcfg == nil { // SQLite
		if ok, err := s.appendAuditRaw(ctx, entries); ok {
			return err
		}
	}
	// Prepared before the transaction begins (see hotQueries).
	for rest := len(entries); rest > 0; {
		c := auditChunkFor(rest)
		_, _ = s.stmt(ctx, c.insert)
		if c.shared != "" {
			_, _ = s.stmt(ctx, c.shared)
		}
		rest %= c.n
	}
	return s.record(ctx, opAppendAudit, func(tx *sql.Tx) error {
		p := prepared{s, tx}
		args := make([]any, 0, min(len(entries), auditRowsPerInsert)*14)
		return auditArgs(entries, args, func(query string, args []any) error {
			_, err := p.ExecContext(ctx, query, args...)
			return err
		})
	})
}

const opAppendAudit = "store: append audit log"

// auditArgs calls exec with the INSERT of each chunk of entries, in order,
// and its bound values (in args, reused from chunk to chunk).
func auditArgs(entries []AuditEntry, args []any, exec func(query string, args []any) error) error {
	// A batch's entries mostly share a principal, a face, an object, an
	// action and an outcome: those values are boxed (and the roles encoded)
	// once per run of equal ones, not once per row.
	var lastRoles []string
	var lastText any
	var project, identityID, identity, face, object, action, outcome boxed
	for start := 0; start < len(entries); {
		c := auditChunkFor(len(entries) - start)
		n := c.n
		args = args[:0]
		chunk := entries[start : start+n]
		start += n
		if c.shared != "" && sharedChunk(chunk) {
			e := &chunk[0]
			roles, err := json.Marshal(nonNil(e.Roles))
			if err != nil {
				return fault.Wrap(fault.Internal, err, "store: encode audit roles")
			}
			args = append(args, e.ProjectID, e.IdentityID, e.Identity, string(roles), e.Face, e.Object, e.Action, e.Outcome, e.Message)
			for i := range chunk {
				e := &chunk[i]
				args = append(args, e.ID, e.At.UnixNano(), e.Rows, e.RequestID, int64(e.Duration))
			}
			if err := exec(c.shared, args); err != nil {
				return err
			}
			continue
		}
		for _, e := range chunk {
			if lastText == nil || !slices.Equal(e.Roles, lastRoles) {
				roles, err := json.Marshal(nonNil(e.Roles))
				if err != nil {
					return fault.Wrap(fault.Internal, err, "store: encode audit roles")
				}
				lastRoles, lastText = e.Roles, string(roles)
			}
			args = append(args, e.ID, e.At.UnixNano(), project.of(e.ProjectID), identityID.of(e.IdentityID), identity.of(e.Identity), lastText,
				face.of(e.Face), object.of(e.Object), action.of(e.Action), e.Rows, outcome.of(e.Outcome), e.Message, e.RequestID, int64(e.Duration))
		}
		if err := exec(c.insert, args); err != nil {
			return err
		}
	}
	return nil
}

// auditConn is the SQLite connection AppendAudit writes on, through the
// driver: its INSERTs prepared on it once, their values bound without
// database/sql's conversions, its pool and its transaction, which cost
// about as much CPU as binding them (a third of the writer's CPU before).
// One batch at a time writes on it (mu); a batch that fails lets the
// connection go, and the next takes a new one. PostgreSQL writes through
// the pool: there a batch costs its round trips, not database/sql.
type auditConn struct {
	mu     sync.Mutex
	closed bool
	conn   *sql.Conn
	// stmts are the statements prepared on conn, by query.
	stmts map[string]driver.Stmt
	// args and named are reused from batch to batch.
	args  []any
	named []driver.NamedValue
}

// errAuditNoRaw: the driver lacks what appendAuditRaw needs.
var errAuditNoRaw = errors.New("store: the driver cannot run the audit log's statements directly")

// appendAuditRaw is AppendAudit on the store's audit connection. It reports
// false, having written nothing, when that connection cannot be used (the
// store closed, or a driver without prepared statements, transactions or
// execution with a context); AppendAudit then writes through the pool.
func (s *Store) appendAuditRaw(ctx context.Context, entries []AuditEntry) (bool, error) {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false, nil
	}
	if a.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return true, dbErr(err, opAppendAudit)
		}
		a.conn, a.stmts = conn, map[string]driver.Stmt{}
	}
	var werr error
	err := a.conn.Raw(func(dc any) error {
		if werr = a.write(ctx, dc, entries); werr != nil {
			// A connection a write failed on may be left in any state:
			// database/sql closes it rather than pooling it again.
			a.closeStmts()
			return driver.ErrBadConn
		}
		return nil
	})
	if werr == nil {
		werr = err
	}
	if werr != nil {
		a.conn.Close()
		a.conn, a.stmts = nil, nil
	}
	// Keep no entry's strings alive until the next batch.
	clear(a.args[:cap(a.args)])
	clear(a.named[:cap(a.named)])
	switch {
	case werr == nil:
		return true, nil
	case errors.Is(werr, errAuditNoRaw):
		return false, nil
	}
	var fe *fault.Error
	if errors.As(werr, &fe) {
		return true, werr
	}
	return true, dbErr(werr, opAppendAudit)
}

// write writes entries in one transaction on the driver connection dc.
func (a *auditConn) write(ctx context.Context, dc any, entries []AuditEntry) error {
	prep, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return errAuditNoRaw
	}
	begin, ok := dc.(driver.ConnBeginTx)
	if !ok {
		return errAuditNoRaw
	}
	// Prepared before the transaction begins, so that the write lock is
	// held only while writing.
	for rest := len(entries); rest > 0; {
		c := auditChunkFor(rest)
		for _, q := range []string{c.insert, c.shared} {
			if _, ok := a.stmts[q]; !ok && q != "" {
				st, err := prep.PrepareContext(ctx, auditOrFail(q))
				if err != nil {
					return err
				}
				if _, ok := st.(driver.StmtExecContext); !ok {
					st.Close()
					return errAuditNoRaw
				}
				a.stmts[q] = st
			}
		}
		rest %= c.n
	}
	tx, err := begin.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	if a.args == nil {
		a.args = make([]any, 0, auditRowsPerInsert*14)
	}
	err = auditArgs(entries, a.args, func(query string, args []any) error {
		named := a.named[:0]
		for i, v := range args {
			named = append(named, driver.NamedValue{Ordinal: i + 1, Value: v})
		}
		a.named = named
		_, err := a.stmts[query].(driver.StmtExecContext).ExecContext(ctx, named)
		return err
	})
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// auditOrFail is q, an INSERT of audit rows, as the audit connection
// prepares it: INSERT OR FAIL. A row that breaks a constraint still ends
// the statement with an error, and the batch is rolled back (write); but
// SQLite need not be able to undo the statement's own rows apart from the
// transaction's, as it must for an INSERT of many rows that aborts, so it
// keeps no statement journal: no copy of each page the statement changes
// that the transaction had changed before.
func auditOrFail(q string) string {
	return "INSERT OR FAIL" + strings.TrimPrefix(q, "INSERT")
}

// closeStmts closes the statements prepared on the audit connection, mu
// held.
func (a *auditConn) closeStmts() {
	for q, st := range a.stmts {
		st.Close()
		delete(a.stmts, q)
	}
}

// close lets the audit connection go for good (Close).
func (a *auditConn) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.conn == nil {
		return
	}
	_ = a.conn.Raw(func(any) error {
		a.closeStmts()
		return nil
	})
	a.conn.Close()
	a.conn, a.stmts = nil, nil
}

// boxed keeps the last string of a column of an audit batch as a bound
// value: a run of equal strings shares one.
type boxed struct {
	s string
	v any
}

// of returns s as a bound value, the one of the previous row when equal.
func (b *boxed) of(s string) any {
	if b.v == nil || b.s != s {
		b.s, b.v = s, s
	}
	return b.v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// AuditLog returns a project's audit entries matching f, newest first. The
// result is never nil. Page backwards by passing the last entry's ID as
// f.Before.
func (s *Store) AuditLog(ctx context.Context, projectID string, f AuditFilter) ([]AuditEntry, error) {
	limit := f.Limit
	switch {
	case limit < 0:
		return nil, fault.New(fault.Invalid, "audit limit %d is negative", limit)
	case limit == 0:
		limit = DefaultAuditLimit
	case limit > MaxAuditLimit:
		return nil, fault.New(fault.Invalid, "audit limit %d is over the maximum of %d", limit, MaxAuditLimit)
	}
	where := []string{"project_id = ?"}
	args := []any{projectID}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.Identity != "" {
		add("identity = ?", f.Identity)
	}
	if f.Object != "" {
		add("object = ?", f.Object)
	}
	if f.Action != "" {
		switch f.Action {
		case "create", "read", "update", "delete", "write":
		default:
			return nil, fault.New(fault.Invalid, "audit action %q is not one of create, read, update, delete, write", f.Action)
		}
		add("action = ?", f.Action)
	}
	switch f.Outcome {
	case "":
	case "error":
		add("outcome <> ?", "ok")
	default:
		add("outcome = ?", f.Outcome)
	}
	if !f.Since.IsZero() {
		add("at >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("at < ?", f.Until.UnixNano())
	}
	if f.Before != "" {
		add("id < ?", f.Before)
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_log WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, dbErr(err, "store: read audit log")
	}
	return collect(rows, scanAuditEntry, "store: read audit log")
}

func scanAuditEntry(row interface{ Scan(...any) error }) (AuditEntry, error) {
	var e AuditEntry
	var at, dur int64
	var roles string
	if err := row.Scan(&e.ID, &at, &e.ProjectID, &e.IdentityID, &e.Identity, &roles, &e.Face, &e.Object, &e.Action,
		&e.Rows, &e.Outcome, &e.Message, &e.RequestID, &dur); err != nil {
		return AuditEntry{}, err
	}
	e.At, e.Duration = fromNanos(at), time.Duration(dur)
	if err := json.Unmarshal([]byte(roles), &e.Roles); err != nil {
		return AuditEntry{}, err
	}
	return e, nil
}

// LiveSessions counts the AI sessions open at the given time across the
// store: not ended, and not idled out (a session without idle timeout
// counts until it is ended).
func (s *Store) LiveSessions(ctx context.Context, at time.Time) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE ended_at IS NULL AND (idle_ns = 0 OR last_seen_at + idle_ns > ?)`,
		at.UnixNano()).Scan(&n)
	if err != nil {
		return 0, dbErr(err, "store: count live sessions")
	}
	return n, nil
}

// auditIDs makes the ids of audit entries.
var auditIDs idSeq

// idSeq makes version 7 UUIDs (RFC 9562) that sort in the order it makes
// them: the time of an id is the millisecond of the time it is given, and
// its 12 bits after the version the fraction of that millisecond in
// 1/4096ths; an id that would not sort after the one made before it is
// made 1/4096 ms after that one. The 62 bits after the variant are random
// (math/rand/v2: ChaCha8 seeded by the system). Given the entry's time, an
// id costs neither a clock reading nor a system call: about a fifth of
// newID.
type idSeq struct {
	last atomic.Int64 // the time of the last id: ms<<12 | fraction
}

const hexDigits = "0123456789abcdef"

// next returns a new id of time at (of now when at is zero).
func (q *idSeq) next(at time.Time) string {
	if at.IsZero() {
		at = time.Now()
	}
	ns := at.UnixNano()
	t := ns/1e6<<12 | ns%1e6*4096/1e6
	for {
		last := q.last.Load()
		n := max(t, last+1)
		if q.last.CompareAndSwap(last, n) {
			t = n
			break
		}
	}
	hi := uint64(t>>12)<<16 | 0x7000 | uint64(t&0xfff) // unix_ts_ms, ver, rand_a
	lo := rand.Uint64()>>2 | 1<<63                     // var, rand_b
	var b [36]byte
	hexInto(b[0:8], hi>>32)
	b[8] = '-'
	hexInto(b[9:13], hi>>16)
	b[13] = '-'
	hexInto(b[14:18], hi)
	b[18] = '-'
	hexInto(b[19:23], lo>>48)
	b[23] = '-'
	hexInto(b[24:36], lo)
	return string(b[:])
}

// hexInto writes the low 4×len(b) bits of v into b as lower-case hex.
func hexInto(b []byte, v uint64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

// Defaults of the AuditWriter.
const (
	DefaultAuditQueue = 10000
	auditBatch        = 500
	// auditLinger is how long a batch waits for more entries before it is
	// written: entries reach the log within about this long.
	auditLinger       = 100 * time.Millisecond
	auditWriteTimeout = 5 * time.Second
	auditRetryPause   = 200 * time.Millisecond
	auditErrorLogGap  = 10 * time.Second
)

// AuditWriter writes audit entries to the store in the background, so that
// no request ever waits for the audit log. Record never blocks: entries go
// to a bounded queue and, when it is full, are dropped and counted (the log
// line of each operation is written regardless). A batch the store refuses
// twice is dropped and counted too. Close flushes what is queued.
type AuditWriter struct {
	st  *Store
	log *slog.Logger
	q   chan AuditEntry

	closed                            atomic.Bool
	written, droppedFull, droppedFail atomic.Uint64

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	lastLog  time.Time
}

// AuditStats is the state of an AuditWriter.
type AuditStats struct {
	// Queued entries wait to be written.
	Queued int
	// Written entries reached the store; DroppedFull were refused by a full
	// queue; DroppedError were lost to failed writes.
	Written, DroppedFull, DroppedError uint64
}

// NewAuditWriter starts a writer with room for size queued entries
// (DefaultAuditQueue when size is 0 or less). log receives write failures,
// at most one line every 10 s; nil means slog.Default().
func NewAuditWriter(st *Store, size int, log *slog.Logger) *AuditWriter {
	if size <= 0 {
		size = DefaultAuditQueue
	}
	if log == nil {
		log = slog.Default()
	}
	w := &AuditWriter{st: st, log: log, q: make(chan AuditEntry, size), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Record queues an entry without blocking. It reports false when the entry
// was dropped: the queue was full or the writer closed.
func (w *AuditWriter) Record(e AuditEntry) bool {
	if w.closed.Load() {
		w.droppedFull.Add(1)
		return false
	}
	if e.ID == "" {
		e.ID = auditIDs.next(e.At) // ids sort as entries came
	}
	select {
	case w.q <- e:
		return true
	default:
		w.droppedFull.Add(1)
		return false
	}
}

// Stats reports the queue and the counters.
func (w *AuditWriter) Stats() AuditStats {
	return AuditStats{Queued: len(w.q), Written: w.written.Load(), DroppedFull: w.droppedFull.Load(), DroppedError: w.droppedFail.Load()}
}

// Close stops accepting entries and writes what is queued, until ctx ends;
// entries still queued then are counted as dropped. It is safe to call
// more than once.
func (w *AuditWriter) Close(ctx context.Context) error {
	w.closed.Store(true)
	w.stopOnce.Do(func() { close(w.stop) })
	select {
	case <-w.done:
	case <-ctx.Done():
		return fault.Wrap(fault.Timeout, ctx.Err(), "audit writer: %d entries not flushed", len(w.q))
	}
	// Entries that raced Close into the queue after the final drain.
	var late []AuditEntry
	for {
		select {
		case e := <-w.q:
			late = append(late, e)
			continue
		default:
		}
		break
	}
	w.write(ctx, late)
	return nil
}

// run writes batches as entries arrive. The first entry after a quiet
// moment wakes it; it then lets the entries of the next auditLinger queue
// up — a Record is one send on a buffered channel, which wakes nobody —
// and writes all that is queued, auditBatch entries a transaction: a busy
// server commits a few times a second rather than once per request.
func (w *AuditWriter) run() {
	defer close(w.done)
	batch := make([]AuditEntry, 0, auditBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		select {
		case e := <-w.q:
			batch = append(batch[:0], e)
		case <-w.stop:
			w.drain(batch[:0])
			return
		}
		linger.Reset(auditLinger)
		select {
		case <-linger.C:
		case <-w.stop:
			linger.Stop()
		}
		w.drain(batch)
	}
}

// drain writes the entries of batch and every queued one, in batches of
// auditBatch.
func (w *AuditWriter) drain(batch []AuditEntry) {
	for {
	fill:
		for len(batch) < auditBatch {
			select {
			case e := <-w.q:
				batch = append(batch, e)
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			return
		}
		w.write(context.Background(), batch)
		batch = batch[:0]
	}
}

// write stores one batch, trying twice; a batch that fails both times is
// counted as dropped and logged (rate-limited).
func (w *AuditWriter) write(parent context.Context, batch []AuditEntry) {
	if len(batch) == 0 {
		return
	}
	var err error
	for try := 0; try < 2; try++ {
		if try > 0 {
			select {
			case <-time.After(auditRetryPause):
			case <-parent.Done():
			}
		}
		ctx, cancel := context.WithTimeout(parent, auditWriteTimeout)
		err = w.st.AppendAudit(ctx, batch)
		cancel()
		if err == nil {
			w.written.Add(uint64(len(batch)))
			return
		}
	}
	w.droppedFail.Add(uint64(len(batch)))
	if now := time.Now(); now.Sub(w.lastLog) > auditErrorLogGap {
		w.lastLog = now
		w.log.Error("audit entries not stored; they remain in the log", "entries", len(batch), "err", err)
	}
}
