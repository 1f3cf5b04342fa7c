package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// The session check of read-only calls (BeginReadCall) reads the session
// from the store on every call, so that a session ended, idled out or moved
// through any Store or replica refuses the next call at once. Concurrent
// calls share reads: a call that arrives while a check read is in flight
// waits for the next one, which reads every session the calls waiting for
// it name in one statement (checkSessions). A read is shared only by calls
// that arrived before it started, so it is as fresh as a read of their own:
// it sees every commit made before each of them arrived.
//
// On SQLite most checks read nothing: the checker maps the database's
// wal-index header (the first bytes of the -shm file, which every commit of
// every connection, in any process, rewrites — its change counter, last
// frame and salts) and keeps what its last reads found along with the
// header as it was before they read (checkSnap). A check that finds the
// header still the same is answered from there: nothing was committed
// since that read began, so a read now would find the same rows. Under
// load the journal writer commits every few milliseconds, and the calls in
// between skip the read transaction.

// maxCheckIDs bounds the sessions one check read covers; the statements
// are prepared for 1, 2, 4, … maxCheckIDs ids (checkSizes), a smaller set
// padded with its first id.
const maxCheckIDs = 64

// checkSizes are the numbers of ids the check statements take.
var checkSizes = []int{1, 2, 4, 8, 16, 32, maxCheckIDs}

// checkSessions returns the check statement for n ids (n in checkSizes).
func checkSessions(n int) string {
	return `SELECT id, project_id, identity_id, idle_ns, started_at, last_seen_at, ended_at FROM sessions WHERE id IN (?` +
		strings.Repeat(", ?", n-1) + `)`
}

// checkQueries are the check statements by size, in the order of
// checkSizes.
var checkQueries = func() []string {
	q := make([]string, len(checkSizes))
	for i, n := range checkSizes {
		q[i] = checkSessions(n)
	}
	return q
}()

// walHeader is one copy of SQLite's wal-index header: the change counter
// (every commit moves it), the last valid frame of the WAL, its salts and
// checksums (https://sqlite.org/walformat.html, 48 bytes, in the byte order
// of the host, the same for every version of SQLite).
type walHeader [12]uint32

// walIndexMapped is how much of the -shm file the checker maps: the page
// that holds the two copies of the header.
const walIndexMapped = 4096

// maxSnapSessions bounds the sessions a checkSnap keeps.
const maxSnapSessions = 1024

// checkSnap is what the checker's reads found with one wal-index header,
// taken before they read: each id read, with its session (a zero Session
// when there was none).
type checkSnap struct {
	hdr      walHeader
	sessions map[string]Session
}

// checkTimeout bounds a check read on PostgreSQL (a connection that hangs
// must not hold every later check). A SQLite read is bounded by its busy
// timeout and runs without a context that can end, which spares the
// goroutines database/sql and the driver start to watch one.
const checkTimeout = 10 * time.Second

// sessionChecker groups the session reads of concurrent read-only calls.
type sessionChecker struct {
	mu sync.Mutex
	// reading is true while a read is in flight.
	reading bool
	// next gathers the calls that wait for the next read; nil when none
	// does.
	next *checkGroup
	// afterRead, when set (by tests), runs after each read, before its
	// calls are answered, with the ids it read.
	afterRead func(ids []string)
	// On SQLite the reads in flight one after the other (lead) run on a
	// connection of their own, conn, through the driver's statements
	// prepared on it (stmts, by size): database/sql's pool, its rows and
	// its conversions cost about as much as SQLite's read. Only the lead
	// read, one at a time, uses them; rawMu keeps Close (closeRaw) from
	// taking them away under it.
	rawMu  sync.Mutex
	closed bool
	conn   *sql.Conn
	stmts  []driver.Stmt
	// wal maps the wal-index header of the database while conn is open
	// (conn keeps SQLite from removing or truncating the -shm file), nil
	// when not mapped; walMu keeps dropConn from unmapping it under a
	// check. snap is what the lead reads last found (cached), nil when
	// nothing is known.
	walMu sync.RWMutex
	wal   []byte
	snap  atomic.Pointer[checkSnap]
}

// cached returns session id as the checker's last reads found it (its ID
// empty when there is none) and true, when nothing was committed to the
// database since those reads began; false when a check must read.
func (c *sessionChecker) cached(id string) (Session, bool) {
	snap := c.snap.Load()
	if snap == nil {
		return Session{}, false
	}
	ss, ok := snap.sessions[id]
	if !ok {
		return Session{}, false
	}
	h, ok := c.header()
	if !ok || h != snap.hdr {
		return Session{}, false
	}
	return ss, true
}

// header reads the wal-index header, and false when it is not mapped or a
// commit was writing it.
func (c *sessionChecker) header() (walHeader, bool) {
	c.walMu.RLock()
	defer c.walMu.RUnlock()
	if c.wal == nil {
		return walHeader{}, false
	}
	return readWALHeader(c.wal)
}

// remember keeps what a read that began with header h found of ids
// (rawMu held): added to the last snapshot when that has the same header,
// in place of it otherwise.
func (c *sessionChecker) remember(h walHeader, ids []string, found []Session) {
	old := c.snap.Load()
	n := len(ids)
	if old != nil && old.hdr == h {
		n += len(old.sessions)
	}
	snap := &checkSnap{hdr: h, sessions: make(map[string]Session, n)}
	if old != nil && old.hdr == h && len(old.sessions)+len(ids) <= maxSnapSessions {
		maps.Copy(snap.sessions, old.sessions)
	}
	for _, id := range ids {
		snap.sessions[id] = Session{}
	}
	for _, ss := range found {
		snap.sessions[ss.ID] = ss
	}
	c.snap.Store(snap)
}

// mapWAL maps the wal-index header of the database conn reads (rawMu
// held, conn open).
func (c *sessionChecker) mapWAL(ctx context.Context) {
	var path string
	if c.conn.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path) != nil || path == "" {
		return
	}
	if b := mapWALIndex(path); b != nil {
		c.walMu.Lock()
		c.wal = b
		c.walMu.Unlock()
	}
}

// checkGroup is one read and the calls that share it.
type checkGroup struct {
	ids   []string
	index map[string]int // id → position in ids, past a few ids
	// results, set before done is closed: found[i] is the session of
	// ids[i] (its ID empty when there is none), err the read's error.
	found []Session
	err   error
	done  chan struct{}
}

func (g *checkGroup) add(id string) {
	if g.index != nil {
		if _, ok := g.index[id]; !ok {
			g.index[id] = len(g.ids)
			g.ids = append(g.ids, id)
		}
		return
	}
	for _, have := range g.ids {
		if have == id {
			return
		}
	}
	g.ids = append(g.ids, id)
	if len(g.ids) > 8 {
		g.index = make(map[string]int, 2*len(g.ids))
		for i, have := range g.ids {
			g.index[have] = i
		}
	}
}

func (g *checkGroup) has(id string) bool {
	if g.index != nil {
		_, ok := g.index[id]
		return ok
	}
	for _, have := range g.ids {
		if have == id {
			return true
		}
	}
	return false
}

// session returns what the read found of id, and false when it found
// nothing.
func (g *checkGroup) session(id string) (Session, bool) {
	for _, ss := range g.found {
		if ss.ID == id {
			return ss, true
		}
	}
	return Session{}, false
}

// checkSession reads session id for a read-only call that arrived before
// the call: from a read of its own, or from one it shares with calls that
// arrived while another read was in flight, started after they all
// arrived. An unknown id is fault.NotFound. ctx bounds the wait, not the
// read, which others may share.
func (s *Store) checkSession(ctx context.Context, id string) (Session, error) {
	c := &s.checker
	if ss, ok := c.cached(id); ok {
		if ss.ID == "" {
			return Session{}, fault.New(fault.NotFound, "session %q not found", id)
		}
		return ss, nil
	}
	c.mu.Lock()
	g := c.next
	if g == nil || (len(g.ids) >= maxCheckIDs && !g.has(id)) {
		if g != nil {
			// Full: it is read now, alongside the read in flight.
			c.next = nil
			go s.readGroup(g, false)
		}
		g = &checkGroup{done: make(chan struct{})}
		c.next = g
	}
	g.add(id)
	if !c.reading {
		// Nothing in flight: this call reads, for itself and whoever
		// joined before it took the lock.
		c.reading, c.next = true, nil
		c.mu.Unlock()
		s.readGroup(g, true)
	} else {
		c.mu.Unlock()
		select {
		case <-g.done:
		case <-ctx.Done():
			return Session{}, fault.Wrap(fault.Timeout, ctx.Err(), "store: read session")
		}
	}
	if g.err != nil {
		return Session{}, g.err
	}
	ss, ok := g.session(id)
	if !ok {
		return Session{}, fault.New(fault.NotFound, "session %q not found", id)
	}
	return ss, nil
}

// readGroup reads the sessions of g and answers its calls. The one read
// that runs as the checker's read in flight (lead) then starts the next
// group, if calls gathered meanwhile, or marks the checker idle.
func (s *Store) readGroup(g *checkGroup, lead bool) {
	if lead && s.dia.lockSession == "" {
		g.found, g.err = s.readSessionsRaw(g.ids)
	} else {
		g.found, g.err = s.readSessions(g.ids)
	}
	if h := s.checker.afterRead; h != nil {
		h(g.ids)
	}
	close(g.done)
	if !lead {
		return
	}
	c := &s.checker
	c.mu.Lock()
	next := c.next
	c.next = nil
	c.reading = next != nil
	c.mu.Unlock()
	if next != nil {
		go s.readGroup(next, true)
	}
}

// readSessionsRaw is readSessions on the checker's own SQLite connection,
// through the driver. When that connection fails it is let go, and the
// read runs again through the pool (a busy or failing database fails
// there too, with its own error).
func (s *Store) readSessionsRaw(ids []string) ([]Session, error) {
	c := &s.checker
	ctx := context.Background()
	c.rawMu.Lock()
	defer c.rawMu.Unlock()
	if c.closed {
		return s.readSessions(ids)
	}
	if c.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return s.readSessions(ids)
		}
		c.conn, c.stmts = conn, make([]driver.Stmt, len(checkSizes))
	}
	// The header before the read: what it finds holds as long as the
	// header stays the same (cached).
	h, fresh := c.header()
	k, args := checkArgs(ids)
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	found := make([]Session, 0, len(ids))
	err := c.conn.Raw(func(dc any) error {
		st := c.stmts[k]
		if st == nil {
			prep, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return errNoRaw
			}
			var err error
			if st, err = prep.PrepareContext(ctx, checkQueries[k]); err != nil {
				return err
			}
			c.stmts[k] = st
		}
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			return errNoRaw
		}
		rows, err := q.QueryContext(ctx, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		row := make([]driver.Value, 7)
		for {
			if err := rows.Next(row); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			ss, err := rawSession(row)
			if err != nil {
				return err
			}
			found = append(found, ss)
		}
	})
	if err != nil {
		c.dropConn()
		return s.readSessions(ids)
	}
	switch {
	case c.wal == nil:
		c.mapWAL(ctx)
	case fresh:
		c.remember(h, ids, found)
	}
	return found, nil
}

// errNoRaw: the driver lacks what readSessionsRaw needs.
var errNoRaw = errors.New("store: the driver runs no prepared query with a context")

// closeRaw closes the checker's connection for good (Close).
func (c *sessionChecker) closeRaw() {
	c.rawMu.Lock()
	defer c.rawMu.Unlock()
	c.closed = true
	c.dropConn()
}

// dropConn closes the checker's connection and its statements, rawMu
// held.
func (c *sessionChecker) dropConn() {
	if c.conn == nil {
		return
	}
	c.snap.Store(nil)
	c.walMu.Lock()
	if c.wal != nil {
		unmapWALIndex(c.wal)
		c.wal = nil
	}
	c.walMu.Unlock()
	_ = c.conn.Raw(func(any) error {
		for _, st := range c.stmts {
			if st != nil {
				st.Close()
			}
		}
		return nil
	})
	c.conn.Close()
	c.conn, c.stmts = nil, nil
}

// rawSession is a row of a check statement as the driver gives it.
func rawSession(row []driver.Value) (Session, error) {
	var ss Session
	var ok [7]bool
	ss.ID, ok[0] = rawText(row[0])
	ss.ProjectID, ok[1] = rawText(row[1])
	ss.IdentityID, ok[2] = rawText(row[2])
	var idle, started, seen int64
	idle, ok[3] = row[3].(int64)
	started, ok[4] = row[4].(int64)
	seen, ok[5] = row[5].(int64)
	switch v := row[6].(type) {
	case nil:
		ok[6] = true
	case int64:
		ss.EndedAt, ok[6] = fromNanos(v), true
	}
	for _, good := range ok {
		if !good {
			return Session{}, fmt.Errorf("store: a session row of unexpected types %T", row)
		}
	}
	ss.setTimes(idle, started, seen)
	return ss, nil
}

// setTimes sets the durations and times of a session read from its row
// (nanoseconds), but EndedAt.
func (ss *Session) setTimes(idle, started, seen int64) {
	ss.IdleTimeout = time.Duration(idle)
	ss.StartedAt = fromNanos(started)
	ss.LastSeenAt = fromNanos(seen)
}

func rawText(v driver.Value) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// checkArgs is the index in checkSizes of the statement for ids and its
// arguments: ids, padded with the first.
func checkArgs(ids []string) (int, []any) {
	k := 0
	for checkSizes[k] < len(ids) {
		k++
	}
	args := make([]any, checkSizes[k])
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	return k, args
}

// readSessions reads the sessions of ids (at most maxCheckIDs, distinct)
// in one statement: those found, in any order.
func (s *Store) readSessions(ids []string) ([]Session, error) {
	k, args := checkArgs(ids)
	ctx := context.Background()
	if s.dia.lockSession != "" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, checkTimeout)
		defer cancel()
	}
	rows, err := (prepared{s: s}).QueryContext(ctx, checkQueries[k], args...)
	if err != nil {
		return nil, dbErr(err, "store: read session")
	}
	defer rows.Close()
	found := make([]Session, 0, len(ids))
	for rows.Next() {
		var ss Session
		var idle, started, seen int64
		var ended sql.NullInt64
		if err := rows.Scan(&ss.ID, &ss.ProjectID, &ss.IdentityID, &idle, &started, &seen, &ended); err != nil {
			return nil, dbErr(err, "store: read session")
		}
		ss.setTimes(idle, started, seen)
		if ended.Valid {
			ss.EndedAt = fromNanos(ended.Int64)
		}
		found = append(found, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "store: read session")
	}
	return found, nil
}
